-- Callers of a name, in chunk-id order, straight from the index: the graph
-- hop asks for the first few referrers of each name, and for common names
-- (`new`: 43k references in the vendor benchmark corpus) sorting them all
-- took most of a question's time. The old one-column index is a prefix of
-- this one.
DROP INDEX IF EXISTS refs_name;
CREATE INDEX IF NOT EXISTS refs_name_chunk ON refs(name_lower, chunk_id);
