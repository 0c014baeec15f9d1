//! Retrieval evaluation on real repositories: `loupe eval`, its own crate
//! (the `loupe` binary only hands it the command line's arguments).
//!
//! ```text
//! dataset (JSONL) → per repository, examples in commit order
//!   → git mirror → one work tree updated incrementally (read-tree + index file)
//!   → Project::index (incremental) → retrieve (with ablations) → assemble per budget
//!   → Prediction (ranked files; packed files, line spans, tokens per budget)
//! predictions + dataset → Scores (the definitions of `score_predictions.py`)
//! ```
//!
//! Pure pieces ([`dataset`], [`predict`], [`score`], and the engine's
//! [`loupe_engine::asking::ablate`], which `Project::ask` applies) take data in and
//! give data out; [`git`] shells out to the `git` CLI and only reads the
//! mirror; [`run`](mod@run) is the driving loop, the files and the printing.

pub mod dataset;
pub mod features;
pub mod git;
pub mod predict;
pub mod run;
pub mod score;

pub use run::{EvalArgs, EvalContext, run};

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
    #[error(transparent)]
    UnknownAblation(#[from] loupe_engine::asking::ablate::UnknownAblation),
}

/// Results of evaluation steps.
pub type EvalResult<T> = std::result::Result<T, EvalError>;
