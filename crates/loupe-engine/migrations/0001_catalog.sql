-- The catalog: Loupe's source of truth for an indexed project. The tantivy
-- and HNSW indexes are derived from it and rebuilt when they disagree.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE files (
    id       INTEGER PRIMARY KEY,
    path     TEXT NOT NULL UNIQUE,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash     TEXT NOT NULL,
    language TEXT NOT NULL,
    role     TEXT NOT NULL
);

-- AUTOINCREMENT: chunk ids are never reused, so a stale vector-index entry can
-- never point at a different chunk.
CREATE TABLE chunks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id     INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    symbol      TEXT,
    parent      TEXT,
    start_byte  INTEGER NOT NULL,
    end_byte    INTEGER NOT NULL,
    start_line  INTEGER NOT NULL,
    end_line    INTEGER NOT NULL,
    text        TEXT NOT NULL,
    outline     BLOB NOT NULL,
    hash        TEXT NOT NULL,
    tokens      INTEGER NOT NULL
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE INDEX chunks_hash ON chunks(hash);

CREATE TABLE symbols (
    chunk_id   INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    name_lower TEXT NOT NULL,
    kind       TEXT NOT NULL,
    line       INTEGER NOT NULL
);
CREATE INDEX symbols_name ON symbols(name_lower);
CREATE INDEX symbols_chunk ON symbols(chunk_id);

CREATE TABLE refs (
    chunk_id   INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    name_lower TEXT NOT NULL,
    kind       TEXT NOT NULL,
    line       INTEGER NOT NULL
);
CREATE INDEX refs_name ON refs(name_lower);
CREATE INDEX refs_chunk ON refs(chunk_id);

-- Keyed by content, not by chunk: re-indexing an unchanged chunk (or a moved
-- one) never re-embeds it.
CREATE TABLE embeddings (
    hash   TEXT NOT NULL,
    model  TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (hash, model)
) WITHOUT ROWID;

CREATE TABLE diagnostics (
    path    TEXT NOT NULL,
    kind    TEXT NOT NULL,
    message TEXT NOT NULL
);

-- User settings (knobs, pins, presets). Survive index rebuilds.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
