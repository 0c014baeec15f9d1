-- The code model (`loupe-code:…`) no longer caches its vectors here: it
-- embeds faster than SQLite stores and returns them, and its vectors live
-- in the vector index only (`Embedder::caches_vectors`). Rows an older
-- version wrote are never read again; on the vendor benchmark corpus they
-- were 1.5 GB. The freed pages are reused by later writes.
DELETE FROM embeddings WHERE model LIKE 'loupe-code:%';
