//! The read side's data: the [`Snapshot`] a question reads and the memo
//! of the vector coverage count. The doors that take them
//! ([`Project::snapshot`], `status`, `indexed_paths`, …) are the facade's,
//! in `project.rs`; retrieval itself, one module per signal, is
//! `asking/retrieve/`; the write path is `project/write.rs`.
//!
//! *Invariant:* a question reads one snapshot. [`Project::snapshot`]
//! catches up with other processes' runs, then takes the generation, the
//! live chunk ids, the indexed paths and the commit history together
//! (reference counts, no copies); retrieval and the answer cache's key read
//! only it, so a run landing mid-question cannot give one signal the old
//! index and another the new one, nor file candidates under a key they were
//! not retrieved at. Two exceptions: the vector index is too large to
//! share by copy and a run inserts its new points in place, so it is
//! searched under its lock, and the snapshot records how many points it
//! held; and the catalog's rows are read as they are when the question
//! reads them, so a retrieval that finds chunks a newer run deleted is
//! asked again from a fresh snapshot (`Project::retrieve_from`).

use super::*;

/// What one question reads (see the module's invariant). Cheap to take;
/// never kept beyond the question.
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    /// The catalog generation answers come from.
    pub(crate) generation: u64,
    /// Live chunk ids (vector hits outside it are dropped).
    pub(crate) live: Arc<ChunkSet>,
    /// Every indexed path, sorted (mentions, pins, primers).
    pub(crate) paths: Arc<BTreeSet<String>>,
    /// The commit history retrieval uses, if any.
    pub(crate) history: Option<Arc<History>>,
    /// Points in the held vector index when the snapshot was taken: it
    /// moves when vectors land, so a cached retrieval made without them is
    /// not re-used.
    pub(crate) vector_points: usize,
}

impl Snapshot {
    /// The commit the history was read at (`None` without history).
    pub(crate) fn history_head(&self) -> Option<String> {
        self.history.as_ref().map(|h| h.head().to_owned())
    }

    /// Commits in the history (0 without).
    pub(crate) fn history_commits(&self) -> usize {
        self.history.as_ref().map_or(0, |h| h.commits())
    }
}

/// The last [`Project::vector_coverage`] count, and what it was counted
/// over: the live set (held weakly, as `PrimerMemo` holds the paths: an
/// update moves it, so pointer equality means "the same set") and the
/// vector index's epoch.
#[derive(Debug, Default)]
pub(super) struct CoverageMemo {
    pub(super) live: std::sync::Weak<ChunkSet>,
    pub(super) epoch: u64,
    pub(super) value: (u64, u64),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::no_progress;

    /// A snapshot does not move under the question that took it: an index
    /// run that lands meanwhile changes the project's tables, not the
    /// snapshot's (they are shared until written, then copied).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_snapshot_keeps_its_generation_while_a_run_lands() {
        let folder = tempfile::tempdir().expect("tempdir");
        let data = tempfile::tempdir().expect("tempdir");
        std::fs::write(folder.path().join("a.rs"), "fn alpha() {}\n").expect("write");
        let project = Project::open(folder.path(), ProjectConfig::new(data.path()))
            .await
            .expect("open");
        let cancel = CancelToken::new();
        project.index(&no_progress, &cancel).await.expect("index");
        let before = project.snapshot().await.expect("snapshot");
        assert_eq!(before.paths.iter().collect::<Vec<_>>(), ["a.rs"]);

        std::fs::write(folder.path().join("b.rs"), "fn beta() {}\n").expect("write");
        project.index(&no_progress, &cancel).await.expect("index");
        let after = project.snapshot().await.expect("snapshot");

        assert_eq!(before.paths.iter().collect::<Vec<_>>(), ["a.rs"]);
        assert_eq!(after.paths.iter().collect::<Vec<_>>(), ["a.rs", "b.rs"]);
        assert!(after.generation > before.generation);
        assert!(after.live.len() > before.live.len());
        assert!(before.live.iter().all(|id| after.live.contains(id)));
        assert_eq!(project.indexed_paths(), after.paths);
    }
}
