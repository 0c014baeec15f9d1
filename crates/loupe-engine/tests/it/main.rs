//! The engine's integration tests: one binary, one module per stage.
#![allow(
    clippy::unwrap_used,
    missing_docs,
    reason = "tests fail loudly on unwrap; helpers need no docs"
)]

mod chunk;
mod concurrency;
mod embed;
mod expand;
mod graph;
mod history;
mod index;
mod selection;
mod shared;
mod staged;
#[cfg(feature = "minilm")]
mod static_embed;
mod support;
mod vectors;
