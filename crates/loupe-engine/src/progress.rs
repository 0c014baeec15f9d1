//! Progress reporting and cancellation for long operations.
//!
//! The engine calls a [`ProgressSink`] from worker threads; the CLI draws a
//! bar with it and the app streams it to the UI. Cancellation is cooperative:
//! stages poll a [`CancelToken`] between files and batches.

use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The stage an indexing run is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Listing files.
    Walk,
    /// Reading, hashing and chunking changed files.
    Parse,
    /// Writing catalog and lexical index.
    Commit,
    /// The lexical index, symbols and graph of this run are committed:
    /// questions can be asked now (reported once, with `done == total ==
    /// 1`). What follows (embedding, the vector index) lands later; an
    /// answer says which signals it had.
    Ready,
    /// Computing embeddings for new chunks.
    Embed,
    /// Distilling the whole static embedder token table at once
    /// (`StaticEmbedder::fill_all`); the lazy fill while embedding is part
    /// of [`Stage::Embed`].
    Distill,
    /// Writing the vector index.
    Vectors,
    /// Building the vector graph of a large project (`stores/graph.rs`):
    /// `loupe index` waits for it; elsewhere it is built in the
    /// background, and the scan answers meanwhile.
    Graph,
    /// Waiting for another Loupe process to finish writing this project's
    /// index (writes serialize through its lock).
    Wait,
    /// Finished.
    Done,
}

/// One progress report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Current stage.
    pub stage: Stage,
    /// Items done in this stage.
    pub done: u64,
    /// Items in this stage, when known.
    pub total: Option<u64>,
}

/// Receives progress reports; must be cheap (it is called per file).
pub type ProgressSink<'a> = &'a (dyn Fn(Progress) + Send + Sync);

/// A progress sink that ignores everything.
pub fn no_progress(_: Progress) {}

/// A cheap, cloneable cancellation flag.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask the operation to stop at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// `Err(Cancelled)` once cancellation was requested.
    pub fn check(&self) -> crate::Result<()> {
        if self.is_cancelled() {
            Err(crate::Error::Cancelled)
        } else {
            Ok(())
        }
    }
}
