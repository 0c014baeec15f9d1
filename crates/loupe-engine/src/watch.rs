//! The watcher: notify + a debouncer feed changed paths to the index.
//!
//! A burst of file events (a save, a branch switch) becomes one debounced
//! batch; every batch that touches a path outside the data directory and
//! `.git/` triggers one [`Project::update_paths`] run: files already in the
//! index are re-read without walking the folder; anything new falls back to
//! a full incremental walk. Runs never overlap: while one
//! is in progress, further batches are coalesced into the next run.

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

/// What the watcher tells its owner.
#[derive(Debug)]
pub enum WatchEvent {
    /// Changes were seen; a run is starting.
    Changed(Vec<PathBuf>),
    /// A run finished.
    Indexed(Box<IndexReport>),
    /// A run failed (the watcher keeps going).
    Failed(String),
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
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<PathBuf>>();
    let root = project.root().to_path_buf();
    let data_dir = project.data_dir().to_path_buf();
    let mut debouncer = {
        let root = root.clone();
        new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
            let Ok(events) = result else { return };
            let paths: Vec<PathBuf> = events
                .iter()
                // inotify reports every open and close-without-write: a
                // reader (an editor, grep, the app showing a file) changes
                // nothing. A write still arrives as Modify or Create.
                .filter(|e| !matches!(e.kind, EventKind::Access(_)))
                .flat_map(|e| e.paths.iter())
                .filter(|p| relevant(p, &root, &data_dir))
                .cloned()
                .collect();
            if !paths.is_empty() {
                let _ = tx.send(paths);
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
            while let Some(mut paths) = rx.recv().await {
                // Coalesce everything that arrived while we were busy.
                while let Ok(more) = rx.try_recv() {
                    paths.extend(more);
                }
                if cancel.is_cancelled() {
                    break;
                }
                paths.sort();
                paths.dedup();
                on_event(WatchEvent::Changed(paths.clone()));
                match project.update_paths(&paths, &no_progress, &cancel).await {
                    Ok(report) => on_event(WatchEvent::Indexed(Box::new(report))),
                    Err(Error::Cancelled) => break,
                    Err(e) => on_event(WatchEvent::Failed(e.to_string())),
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
