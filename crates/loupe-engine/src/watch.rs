//! The watcher: notify + a debouncer feed changed paths to the index.
//!
//! A burst of file events (a save, a branch switch) becomes one debounced
//! batch (batches a tick apart are gathered into one); every batch that touches a path outside the data directory and
//! `.git/` triggers one [`Project::update_paths`] run: files already in the
//! index are re-read without walking the folder; anything new falls back to
//! a full incremental walk. Runs never overlap: while one
//! is in progress, further batches are coalesced into the next run.
//!
//! Inside `.git/`, only a moved branch or `HEAD` counts: a commit, checkout
//! or pull made while the project is open re-reads the commit history
//! (when the project's root is the repository's, so `.git/` is watched).

use crate::progress::{CancelToken, no_progress};
use crate::project::{IndexReport, Project};
use crate::{Error, Result};
use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Quiet time after the last event of a burst before re-indexing. 250 ms
/// merges an editor's write-rename-chmod sequence into one batch.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Quiet time between the debouncer's batches before a run starts: longer
/// than its tick (a quarter of [`DEBOUNCE`]), so one burst is one run.
const SETTLE: Duration = Duration::from_millis(150);

/// What the watcher tells its owner.
#[derive(Debug)]
pub enum WatchEvent {
    /// Changes were seen; a run is starting.
    Changed(Vec<PathBuf>),
    /// A run finished.
    Indexed(Box<IndexReport>),
    /// A run failed (the watcher keeps going).
    Failed(String),
    /// `HEAD` moved and the commit history was read again: this many commits.
    History(usize),
}

/// One debounced batch: changed project files, and whether `HEAD` may have moved.
#[derive(Default)]
struct Batch {
    paths: Vec<PathBuf>,
    head: bool,
}

/// Keeps the watcher alive; dropping it stops watching.
pub struct WatchHandle {
    _debouncer: Box<dyn std::any::Any + Send>,
    cancel: CancelToken,
    task: tokio::task::JoinHandle<()>,
}

impl WatchHandle {
    /// Stop watching and wait for a running index pass to end.
    pub async fn stop(self) {
        self.cancel.cancel();
        drop(self._debouncer);
        let _ = self.task.await;
    }
}

/// `.git/HEAD`, `.git/packed-refs` or a branch under `.git/refs/heads/`:
/// what a commit, checkout, reset or pull rewrites (lock files excluded).
fn moves_head(path: &Path, root: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let Ok(git) = rel.strip_prefix(".git") else {
        return false;
    };
    if path.extension().is_some_and(|e| e == "lock") {
        return false;
    }
    git == Path::new("HEAD") || git == Path::new("packed-refs") || git.starts_with("refs/heads")
}

fn relevant(path: &Path, root: &Path, data_dir: &Path) -> bool {
    if path.starts_with(data_dir) {
        return false;
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    !rel.components().any(|c| c.as_os_str() == ".git")
}

/// Watch `project`'s folder and re-index on change, reporting through
/// `on_event` (called from a background task).
pub fn watch(
    project: Arc<Project>,
    on_event: impl Fn(WatchEvent) + Send + Sync + 'static,
) -> Result<WatchHandle> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Batch>();
    let root = project.root().to_path_buf();
    let data_dir = project.data_dir().to_path_buf();
    let mut debouncer = {
        let root = root.clone();
        new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let mut batch = Batch::default();
            // inotify reports every open and close-without-write: a reader
            // (an editor, grep, the app showing a file) changes nothing. A
            // write still arrives as Modify or Create.
            let written = events
                .iter()
                .filter(|e| !matches!(e.kind, EventKind::Access(_)))
                .flat_map(|e| e.paths.iter());
            for path in written {
                if relevant(path, &root, &data_dir) {
                    batch.paths.push(path.clone());
                } else if moves_head(path, &root) {
                    batch.head = true;
                }
            }
            if !batch.paths.is_empty() || batch.head {
                let _ = tx.send(batch);
            }
        })
        .map_err(|e| Error::Watch(e.to_string()))?
    };
    debouncer
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| Error::Watch(e.to_string()))?;
    let cancel = CancelToken::new();
    let task = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            while let Some(mut batch) = rx.recv().await {
                // Coalesce everything that arrived while we were busy, and
                // the rest of a burst: the debouncer flushes each path once
                // *it* has been quiet, so a checkout arrives as several
                // batches a tick apart.
                while let Ok(Some(more)) = tokio::time::timeout(SETTLE, rx.recv()).await {
                    batch.paths.extend(more.paths);
                    batch.head |= more.head;
                }
                if cancel.is_cancelled() {
                    break;
                }
                let mut paths = batch.paths;
                paths.sort();
                paths.dedup();
                if !paths.is_empty() {
                    on_event(WatchEvent::Changed(paths.clone()));
                    match project.update_paths(&paths, &no_progress, &cancel).await {
                        Ok(report) => on_event(WatchEvent::Indexed(Box::new(report))),
                        Err(Error::Cancelled) => break,
                        Err(e) => on_event(WatchEvent::Failed(e.to_string())),
                    }
                }
                // After the files: the history's paths then name indexed files.
                if batch.head && project.refresh_history().await {
                    on_event(WatchEvent::History(project.history_commits()));
                }
            }
        })
    };
    Ok(WatchHandle {
        _debouncer: Box::new(debouncer),
        cancel,
        task,
    })
}
