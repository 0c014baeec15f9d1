-- The team's shared store (`stores/shared.rs`). Content-addressed: no
-- row names a path, a machine or a user. Rows are immutable once written;
-- two writers of the same key write the same bytes, and the second one's
-- insert does nothing.

-- What indexing derives from one file's bytes (chunks with spans, kinds
-- and outlines, token counts, symbols and references), as the deriver
-- named by `deriver` (chunking code, settings, language) wrote it.
CREATE TABLE loupe_parses (
    content bytea NOT NULL,     -- blake3 of the file's bytes
    deriver text NOT NULL,
    payload bytea NOT NULL,     -- zstd-compressed JSON (`Derived::to_row`)
    digest bytea NOT NULL,      -- blake3 of (key, payload): a damaged row is told apart
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (content, deriver)
);

-- A code vector: what `model` made of the text whose blake3 is `input`.
CREATE TABLE loupe_vectors (
    input bytea NOT NULL,
    model text NOT NULL,
    vector bytea NOT NULL,      -- little-endian f32
    digest bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (input, model)
);
