//! Stores: where index data lives on disk and how it is read back.
//!
//! ```text
//! ParsedFile batches → catalog (SQLite, generation N) ─┬→ lexical (tantivy, lexical_dir)
//!                                                     └→ vectors (int8 rows, int4 codes)
//! store: the data directory and its write lock; chunk_set: the live chunk ids
//! ```
//!
//! In: what [`indexing`](crate::indexing) produced (chunks, symbols,
//! references, roles) and the vectors [`signals`](crate::signals) computed.
//! Out: the catalog's rows, BM25 hits, nearest neighbours and the set of
//! live chunk ids that [`Project`](crate::project::Project)'s snapshots and
//! [`asking`](crate::asking) read. Each store knows its own format and
//! nothing about ranking or questions. Depends on `indexing` for the chunk
//! and symbol types it stores, never the other way round.

pub mod catalog;
pub mod chunk_set;
pub mod graph;
pub mod lexical;
pub mod lexical_dir;
pub mod shared;
pub mod store;
pub mod vectors;
