-- Definers of a name, in chunk-id order, straight from the index: nothing
-- keeps every (name, chunk) pair in memory any more (a one-shot `loupe
-- query` read 3 M of them before retrieving on the vendor benchmark
-- corpus); a question looks the names it needs up here. The old
-- one-column index is a prefix of this one.
DROP INDEX IF EXISTS symbols_name;
CREATE INDEX IF NOT EXISTS symbols_name_chunk ON symbols(name_lower, chunk_id);
