//! Loupe's engine: everything that touches files, databases and indexes.
//!
//! ```text
//! walk → read + chunk (tree-sitter) → catalog (SQLite) ─┬→ lexical (tantivy BM25)
//!                                                      └→ embed → vectors (int8 rows, exact)
//! question → retrieve (BM25 ∪ vectors ∪ symbols ∪ paths ∪ graph) → candidates
//! ```
//!
//! [`Project`] is the entry point: open a folder, index it, and ask it a
//! question ([`Project::ask`], the one door every shell uses). Transport-free: no CLI, IPC or JSON DTOs
//! live here.
//!
//! The modules follow the pipeline, one folder per stage, each depending
//! only on the ones before it: [`indexing`] (files → chunks) → [`stores`]
//! (catalog, lexical and vector indexes) → [`signals`] (embeddings, commit
//! history) → [`project`] (the facade that runs them and snapshots the
//! result) → [`asking`] (retrieval, the one door, golden questions, the
//! token map). What every stage uses stays here at the root: [`error`],
//! [`diagnostic`], [`progress`] and cancellation, the process's allocator
//! ([`alloc`]) and assembly thread ([`assembler`]: started by
//! [`Project::open`], used by [`Project::ask`]), the team file ([`team`]),
//! and the watcher ([`watch`]), which drives a [`Project`] and so sits
//! above it.
//!
//! ```
//! use loupe_engine::{AskCache, AskRequest, CancelToken, Project, ProjectConfig, progress::no_progress};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let code = tempfile::tempdir()?;
//! std::fs::write(code.path().join("lib.rs"), "/// Adds.\npub fn add(a: i32, b: i32) -> i32 { a + b }\n")?;
//! let data = tempfile::tempdir()?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! runtime.block_on(async {
//!     let project = Project::open(code.path(), ProjectConfig::new(data.path())).await?;
//!     project.index(&no_progress, &CancelToken::new()).await?;
//!     let request = AskRequest::new("what does add do?", Default::default());
//!     let answer = project.ask(&request, &mut AskCache::default()).await?;
//!     assert!(answer.assembly.prompt.contains("pub fn add"));
//!     Ok::<_, loupe_engine::Error>(())
//! })?;
//! # Ok(())
//! # }
//! ```

pub mod alloc;
pub mod asking;
pub mod assembler;
pub mod diagnostic;
mod error;
pub mod indexing;
pub mod progress;
pub mod project;
pub mod signals;
pub mod stores;
pub mod team;
pub mod watch;

/// The environment variable whose `tracing` filter says what every Loupe
/// process (the CLI, `loupe mcp`, the app) logs, e.g. `debug`.
pub const LOG_ENV: &str = "LOUPE_LOG";
/// What is logged when [`LOG_ENV`] is unset: warnings, without sqlx's
/// warning for every statement over 1 s (reading a large project at open)
/// or tantivy's: noise on a user's terminal.
pub const DEFAULT_LOG_FILTER: &str = "warn,tantivy=error,sqlx=error";

pub use asking::ask::{Answer, AskCache, AskRequest, Reading, SignalsUsed, Unindexed, UnknownPins};
pub use asking::retrieve::{RetrieveLimits, RetrieveQuery, Retrieved};
pub use asking::selection::{
    Completion, CompletionKind, IndexedSource, Selected, Selection, Target,
};
pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use error::{Error, Result};
pub use progress::{CancelToken, Progress, ProgressSink, Stage};
pub use project::{IndexReport, Project, ProjectConfig, Status, Until};
