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

pub mod ablate;
pub mod agent_log;
pub mod alloc;
pub mod ask;
pub mod assembler;
pub mod catalog;
pub mod change;
pub mod chunk;
pub mod chunk_set;
pub mod diagnostic;
pub mod embed;
mod error;
pub mod expand;
pub mod golden;
pub mod history;
pub mod lang;
pub mod lexical;
pub mod lexical_dir;
pub mod map;
pub mod progress;
pub mod project;
pub mod retrieve;
pub mod role;
pub mod selection;
pub mod store;
pub mod team;
pub mod vectors;
pub mod walk;
pub mod watch;

/// The environment variable whose `tracing` filter says what every Loupe
/// process (the CLI, `loupe mcp`, the app) logs, e.g. `debug`.
pub const LOG_ENV: &str = "LOUPE_LOG";
/// What is logged when [`LOG_ENV`] is unset: warnings, without sqlx's
/// warning for every statement over 1 s (reading a large project at open)
/// or tantivy's: noise on a user's terminal.
pub const DEFAULT_LOG_FILTER: &str = "warn,tantivy=error,sqlx=error";

pub use ask::{Answer, AskCache, AskRequest, SignalsUsed, Unindexed, UnknownPins};
pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use error::{Error, Result};
pub use progress::{CancelToken, Progress, ProgressSink, Stage};
pub use project::{IndexReport, Project, ProjectConfig, Status, Until};
pub use retrieve::{RetrieveLimits, RetrieveQuery, Retrieved};
pub use selection::{Completion, CompletionKind, IndexedSource, Selected, Selection, Target};
