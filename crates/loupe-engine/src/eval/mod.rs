//! Retrieval evaluation on real repositories: the engine side of `loupe eval`.
//!
//! ```text
//! dataset (JSONL) → per repository, examples in commit order
//!   → git mirror → one work tree updated incrementally (read-tree + index file)
//!   → Project::index (incremental) → retrieve (with ablations) → assemble per budget
//!   → Prediction (ranked files; packed files, line spans, tokens per budget)
//! predictions + dataset → Scores (the definitions of `score_predictions.py`)
//! ```
//!
//! Pure pieces ([`dataset`], [`predict`], [`score`], [`ablate`]) take data in
//! and give data out; [`git`] shells out to the `git` CLI and only reads the
//! mirror. The driving loop, files and printing live in the CLI.

pub mod ablate;
pub mod dataset;
pub mod features;
pub mod git;
pub mod predict;
pub mod score;

use std::path::PathBuf;

/// What can stop an evaluation step.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A git command failed or could not run.
    #[error("git {args}: {detail}")]
    Git {
        /// The arguments, for the message.
        args: String,
        /// stderr or the spawn error.
        detail: String,
    },
    /// An I/O error.
    #[error("{what} ({path}): {source}")]
    Io {
        /// What we were doing.
        what: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A dataset or prediction line did not parse.
    #[error("line {line}: {detail}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        detail: String,
    },
    /// An unknown ablation name.
    #[error("unknown ablation {0:?} (known: {known})", known = ablate::NAMES.join(", "))]
    UnknownAblation(String),
}

/// Results of evaluation steps.
pub type EvalResult<T> = std::result::Result<T, EvalError>;
