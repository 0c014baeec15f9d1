//! The read side of a [`Project`]: the [`Snapshot`] a question reads, and
//! what the shells ask about the index (status, coverage, paths, history).
//! Retrieval itself, one module per signal, is `asking/retrieve/`; the write path
//! is `project/write.rs`; opening and catching up with other processes
//! stay in `project.rs`.
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

impl Project {
    /// Follow other processes' runs (and wait for the history read `open`
    /// started), then take what a question reads.
    pub(crate) async fn snapshot(&self) -> Result<Snapshot> {
        self.history_settled().await;
        let generation = self.catch_up().await?;
        Ok(Snapshot {
            generation,
            live: Arc::clone(&lock(&self.live)),
            paths: Arc::clone(&lock(&self.paths)),
            history: self.held_history(),
            vector_points: self.vector_points(),
        })
    }

    /// Commits in the history retrieval uses (0 when the project is not in
    /// a git repository, git is missing, or history is turned off).
    pub fn history_commits(&self) -> usize {
        self.held_history().map_or(0, |h| h.commits())
    }

    /// The commit the history retrieval uses was read at (`None` without
    /// history): with the index generation, what a cache of retrieved
    /// candidates must key on.
    pub fn history_head(&self) -> Option<String> {
        self.held_history().map(|h| h.head().to_owned())
    }

    fn held_history(&self) -> Option<Arc<History>> {
        lock(&self.history).history.clone()
    }

    /// The project folder (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What opening had to repair (a damaged catalog rebuilt, …), one
    /// sentence each; also in [`Status::recovered`], without waiting for
    /// the history read as [`Project::status`] does.
    pub fn recovered(&self) -> &[String] {
        &self.recovered
    }

    /// The project's data directory.
    pub fn data_dir(&self) -> &Path {
        &self.dir
    }

    /// The catalog (read access for callers that list files or settings).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Every indexed path, sorted, as of the last index run: what a shell
    /// checks a named file against before it asks (pins, bans, "is this
    /// file in the prompt?").
    pub fn indexed_paths(&self) -> Arc<BTreeSet<String>> {
        Arc::clone(&lock(&self.paths))
    }

    /// Points in the held vector index (0 while none is held): it moves
    /// when vectors land, so a cached retrieval made without them is not
    /// re-used.
    fn vector_points(&self) -> usize {
        lock(&self.vectors).as_ref().map_or(0, VectorIndex::points)
    }

    /// Live chunks with a vector in the held vector index, and live
    /// chunks; `None` without an embedder.
    pub(crate) fn vector_coverage(&self) -> Option<(u64, u64)> {
        self.cfg.embedder.as_ref()?;
        // The epoch is read before the index and bumped after a swap, so a
        // count is never filed under a newer epoch than the index it saw.
        let epoch = self.vectors_epoch.load(Ordering::SeqCst);
        let live = Arc::clone(&lock(&self.live));
        let mut memo = self.coverage.lock().unwrap_or_else(|e| e.into_inner());
        if memo.epoch == epoch && std::ptr::eq(memo.live.as_ptr(), Arc::as_ptr(&live)) {
            return Some(memo.value);
        }
        // Every vector id against the live set: half a million lookups on
        // a large project, once per index change rather than per question.
        let with = match lock(&self.vectors).as_ref() {
            Some(v) => v.ids().iter().filter(|id| live.contains(**id)).count() as u64,
            None => 0,
        };
        let value = (with, live.len() as u64);
        *memo = CoverageMemo {
            live: Arc::downgrade(&live),
            epoch,
            value,
        };
        Some(value)
    }

    /// What is indexed and which signals are ready.
    pub async fn status(&self) -> Result<Status> {
        // The generation questions are answered from, and its counts: while
        // a run is between its catalog commit and taking its tables in, the
        // catalog is ahead of both.
        let snapshot = self.snapshot().await?;
        let generation = snapshot.generation;
        let (files, chunks) = (snapshot.paths.len() as u64, snapshot.live.len() as u64);
        let vector_model = lock(&self.vectors).as_ref().map(|v| v.model().to_owned());
        let vector_chunks = self.vector_coverage().map_or(0, |(with, _)| with);
        Ok(Status {
            root: self.root.clone(),
            data_dir: self.dir.clone(),
            files,
            chunks,
            generation,
            lexical_chunks: self.lexical.len(),
            vectors_ready: vector_model.is_some() && vector_chunks == chunks,
            vector_model,
            vector_chunks,
            diagnostics: self.catalog.diagnostics_count().await?,
            recovered: self.recovered.clone(),
            history_commits: snapshot.history_commits() as u64,
            history_note: {
                let s = lock(&self.history);
                match (&s.source, &s.history) {
                    (None, _) => Some("turned off".into()),
                    (Some(_), Some(_)) => None,
                    (Some(_), None) => s.note.clone(),
                }
            },
        })
    }

    /// Diagnostics of the last run.
    pub async fn diagnostics(&self) -> Result<Vec<Diagnostic>> {
        self.catalog.diagnostics().await
    }
}

/// The last [`Project::vector_coverage`] count, and what it was counted
/// over: the live set (held weakly, as `PrimerMemo` holds the paths: an
/// update moves it, so pointer equality means "the same set") and the
/// vector index's epoch.
#[derive(Debug, Default)]
pub(super) struct CoverageMemo {
    live: std::sync::Weak<ChunkSet>,
    epoch: u64,
    value: (u64, u64),
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
