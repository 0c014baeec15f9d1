//! Loupe's engine: everything that touches files, databases and indexes.
//!
//! ```text
//! walk → read + chunk (tree-sitter) → catalog (SQLite) ─┬→ lexical (tantivy BM25)
//!                                                      └→ embed → vectors (HNSW)
//! question → retrieve (BM25 ∪ vectors ∪ symbols ∪ paths ∪ graph) → candidates
//! ```
//!
//! [`Project`] is the entry point: open a folder, index it, retrieve for a
//! question. Transport-free: no CLI, IPC or JSON DTOs live here.

pub mod catalog;
pub mod chunk;
pub mod diagnostic;
pub mod embed;
mod error;
pub mod lang;
pub mod lexical;
pub mod progress;
pub mod project;
pub mod retrieve;
pub mod role;
pub mod store;
pub mod vectors;
pub mod walk;
pub mod watch;

pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use error::{Error, Result};
pub use progress::{CancelToken, Progress, ProgressSink, Stage};
pub use project::{IndexReport, Project, ProjectConfig, Status};
pub use retrieve::{RetrieveLimits, RetrieveQuery};
