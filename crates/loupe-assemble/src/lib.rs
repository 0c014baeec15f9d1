//! Pure context assembly for Loupe.
//!
//! Input: retrieved [`Candidate`]s plus explicit configuration. Output: an
//! assembly (the prompt and a report of every decision).
//!
//! *Architecture invariant:* this crate does no I/O and knows no store. The
//! same input gives the same output, byte for byte.

pub mod classify;
pub mod compress;
pub mod error;
pub mod fit;
pub mod guard;
pub mod model;
pub mod models;
pub mod pack;
pub mod rank;
pub mod render;
pub mod report;
pub mod tokens;

pub use error::{Error, Result};
pub use model::{
    Candidate, Chunk, ChunkId, ChunkKind, Outline, OutlineSpan, Role, Signals, SpanKind,
};
