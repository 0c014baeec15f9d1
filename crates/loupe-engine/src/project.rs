//! `Project`: one indexed folder, the facade that owns the handles —
//! opening (with recovery), catching up with other processes, the
//! in-memory tables, and the read doors (the [`Snapshot`] a question
//! reads, status, coverage; the snapshot's type is `project/read.rs`).
//! `impl Project` lives in three files: here, the write path
//! (`project/write.rs`), and the asking doors (`asking/ask.rs`: the one
//! door from a question to a prompt, and the look-ups, retrieval and token
//! map it hands to their own types).
//!
//! *Architecture invariant:* one write path. [`Project::index`] is the only
//! writer; it holds an in-process mutex and a cross-process lock file, commits
//! the catalog in one transaction (bumping the generation), then brings the
//! lexical and vector indexes to that generation. The tantivy writer is fed
//! on a second thread while the catalog transaction writes its rows, but it
//! commits only after the catalog did, and not at all when the catalog
//! fails. A crash between those steps leaves derived indexes at an older
//! generation, which [`Project::open`] detects and rebuilds from the
//! catalog. The user's folder is only read.

mod memo;
mod read;
mod write;

pub use memo::FileTokens;
pub(crate) use memo::{PrimerMemo, TokensMemo};
use read::CoverageMemo;
pub(crate) use read::Snapshot;
pub(crate) use write::{ReadOutcome, read_and_chunk};

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::error::panic_message;
use crate::indexing::chunk::ChunkConfig;
use crate::indexing::walk::{self, WalkConfig, WalkedFile};
use crate::progress::{CancelToken, Progress, ProgressSink, Stage};
use crate::signals::embed::{Embedder, embed_text};
use crate::signals::history::{History, HistorySource};
use crate::stores::catalog::{
    Applied, Catalog, FileState, FileUpdate, INDEX_VERSION, Inserted, Staging,
};
use crate::stores::chunk_set::ChunkSet;
use crate::stores::graph::{GraphKeeper, GraphPolicy, VectorSearch};
use crate::stores::lexical::{LexicalIndex, LexicalWriter, OpenState};
use crate::stores::shared::{Shared, SharedConfig, SharedReport};
use crate::stores::store::{self, WriteLock};
use crate::stores::vectors::VectorIndex;
use crate::{Error, Result};
use loupe_assemble::{Chunk, ChunkId};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Bytes sniffed for NUL to call a file binary (git uses the same 8,000).
pub(crate) const BINARY_SNIFF_BYTES: usize = 8000;
/// Chunks embedded per call; large enough to keep both cores busy, small
/// enough that cancel and progress stay responsive.
const EMBED_BATCH: usize = 64;
/// Embeddings stored per catalog transaction, at most; and the longest
/// embedded vectors wait to be stored.
const EMBED_STORE_ROWS: usize = 2048;
const EMBED_STORE_EVERY: Duration = Duration::from_secs(2);
/// Vectors read from the catalog at a time when the vector index is
/// rebuilt (8 MB of 256-dimensional floats).
const VECTOR_PAGE: usize = 8192;
/// How long a question waits for another process's lexical commit, once
/// its catalog commit is seen, before answering from what it holds.
pub(crate) const CATCH_UP_WAIT: Duration = Duration::from_secs(2);
/// Chunks loaded per page when rebuilding the lexical index.
const REBUILD_PAGE: u32 = 2000;

/// The write lock for a repair at open: waits while another process writes.
async fn wait_for_writer(dir: &Path) -> Result<WriteLock> {
    WriteLock::acquire(dir, &CancelToken::new(), || {
        tracing::info!(
            "waiting for another Loupe process to finish writing {}",
            dir.display()
        );
    })
    .await
}

/// A file beside the catalog saying a command found it damaged; the next
/// [`Project::open`] sets the catalog aside and rebuilds it.
const DAMAGED_MARKER: &str = "catalog.damaged";

/// Set a damaged catalog aside (with its WAL; one damaged copy is kept, an
/// older one goes), create a fresh one holding what the old one still
/// gives (settings, cached vectors) and say, in words, what happened.
async fn heal_catalog(path: &Path, why: &str) -> Result<String> {
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let prefix = format!("{}.corrupt-", name.to_string_lossy());
        let prefix_wal = format!("{}-wal.corrupt-", name.to_string_lossy());
        let prefix_shm = format!("{}-shm.corrupt-", name.to_string_lossy());
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let n = entry.file_name().to_string_lossy().into_owned();
            if n.starts_with(&prefix) || n.starts_with(&prefix_wal) || n.starts_with(&prefix_shm) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    // The WAL goes with the file, named after the copy (`<copy>-wal`), so
    // attaching the copy replays it: the last settings written may be only
    // there. The shared-memory index is rebuilt from the WAL by SQLite.
    let wal = crate::stores::catalog::companion(path, "-wal");
    let shm = crate::stores::catalog::companion(path, "-shm");
    let aside = if path.exists() {
        let moved = store::quarantine(path)?;
        // Tried rather than looked for: the last connection of another
        // handle on the old file may fold the WAL in and delete it at any
        // moment, and a WAL gone is nothing to move.
        let target = crate::stores::catalog::companion(&moved, "-wal");
        match std::fs::rename(&wal, &target) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::Io {
                    what: "move damaged catalog's WAL aside",
                    path: wal.clone(),
                    source: e,
                });
            }
            _ => {}
        }
        Some(moved)
    } else {
        None
    };
    for stale in [&wal, &shm] {
        if stale.exists() {
            let _ = std::fs::remove_file(stale);
        }
    }
    let catalog = Catalog::open(path).await?;
    let kept = match &aside {
        Some(old) => catalog.salvage(old).await,
        None => String::new(),
    };
    catalog.close().await;
    let aside = aside
        .map(|a| format!("; the damaged file is kept as {}", a.display()))
        .unwrap_or_default();
    Ok(format!(
        "the catalog {} was damaged ({why}): re-indexing the project from its files{kept}{aside}",
        path.display()
    ))
}

/// How a project is opened.
#[derive(Clone)]
pub struct ProjectConfig {
    /// Root of all projects' data (see [`store::default_data_root`]).
    pub data_root: PathBuf,
    /// Walk settings.
    pub walk: WalkConfig,
    /// Chunking settings.
    pub chunk: ChunkConfig,
    /// The embedder; `None` disables vectors.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Read the project's commit history (`git log`) as evidence.
    pub history: bool,
    /// After an index run, fold a write-ahead log larger than this into
    /// the catalog file (default [`crate::stores::catalog::FOLD_WAL_BYTES`]).
    pub fold_wal_bytes: u64,
    /// The re-ranker that reads the leading files with the question
    /// (`Reader::shipped()` in the doors); `None`: today's ranking alone.
    pub reader: Option<Arc<crate::signals::reader::Reader>>,
    /// When the vectors get a graph (`stores/graph.rs`): from
    /// [`GRAPH_MIN_POINTS`](crate::stores::graph::GRAPH_MIN_POINTS)
    /// points, built in the background by default.
    pub graph: GraphPolicy,
    /// The team's shared store (`stores/shared.rs`): index runs pull what
    /// it holds for their files' bytes and push what they derive. `None`
    /// (the default): everything is derived here.
    pub shared: Option<SharedConfig>,
}

impl std::fmt::Debug for ProjectConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectConfig")
            .field("data_root", &self.data_root)
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.model_id().to_owned()),
            )
            .finish()
    }
}

impl ProjectConfig {
    /// Defaults with the given data root and no embedder.
    pub fn new(data_root: impl Into<PathBuf>) -> Self {
        Self {
            data_root: data_root.into(),
            walk: WalkConfig::default(),
            chunk: ChunkConfig::default(),
            embedder: None,
            history: true,
            fold_wal_bytes: crate::stores::catalog::FOLD_WAL_BYTES,
            reader: None,
            graph: GraphPolicy::default(),
            shared: None,
        }
    }
}

/// Time spent per stage of an indexing run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTimes {
    /// Listing files.
    pub walk: Duration,
    /// Reading, hashing, chunking, counting tokens (the time the reading
    /// thread spent on batches; it overlaps the two below).
    pub parse: Duration,
    /// The catalog transaction's writes and its commit.
    pub catalog: Duration,
    /// Feeding the lexical writer, committing it once the catalog has
    /// committed (the rest of tantivy's indexing and its flush), and the
    /// in-memory tables.
    pub lexical: Duration,
    /// Embedding new chunks.
    pub embed: Duration,
    /// Updating and saving the vector index.
    pub vectors: Duration,
}

/// How far an index run goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Until {
    /// Stop once questions can be asked: files read, the catalog, the
    /// lexical index, symbols and graph committed. The vectors are left
    /// for a later [`Until::Complete`] run (one-shot CLI queries).
    Searchable,
    /// Every signal, vectors included.
    #[default]
    Complete,
}

/// What one indexing run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexReport {
    /// Files the walk listed.
    pub files_seen: u64,
    /// Files (re)chunked because they were new or their content changed.
    pub files_changed: u64,
    /// Files skipped because size and mtime (or, failing that, hash) matched.
    pub files_unchanged: u64,
    /// Files removed from the index.
    pub files_deleted: u64,
    /// Chunks written.
    pub chunks_added: u64,
    /// Chunks embedded in this run.
    pub chunks_embedded: u64,
    /// Chunks whose vector came from the cache.
    pub embeddings_cached: u64,
    /// Whether embedding stopped early (cancelled); lexical search is complete.
    pub embedding_incomplete: bool,
    /// Whether the run stopped before the vectors ([`Until::Searchable`]).
    pub vectors_deferred: bool,
    /// Skipped or degraded paths.
    pub diagnostics: Vec<Diagnostic>,
    /// Timings.
    pub times: StageTimes,
    /// The catalog generation after the run.
    pub generation: u64,
    /// What came from the shared store and went to it, when there is one.
    pub shared: Option<SharedReport>,
}

/// Which signals can be used right now.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    /// The project folder.
    pub root: PathBuf,
    /// Where its index lives.
    pub data_dir: PathBuf,
    /// Indexed files, in the generation questions are answered from.
    pub files: u64,
    /// Indexed chunks, in the generation questions are answered from.
    pub chunks: u64,
    /// The catalog generation questions are answered from (a run in
    /// progress may have committed a later one it has not taken in yet).
    pub generation: u64,
    /// Chunks in the lexical index.
    pub lexical_chunks: u64,
    /// Embedding model, if vectors are enabled.
    pub vector_model: Option<String>,
    /// Live chunks present in the vector index.
    pub vector_chunks: u64,
    /// Whether every chunk has a vector.
    pub vectors_ready: bool,
    /// How a question's vector search finds its candidates: the exact
    /// scan, or a graph (built in the background on a large project).
    pub vector_search: VectorSearch,
    /// Diagnostics of the last full run.
    pub diagnostics: u64,
    /// What `open` had to repair.
    pub recovered: Vec<String>,
    /// Commits whose messages retrieval uses as evidence.
    pub history_commits: u64,
    /// Why there is no commit history, when there is none.
    pub history_note: Option<String>,
    /// What the last index run got from the shared store (and gave it),
    /// whichever process ran it; `None` without a store configured.
    pub shared: Option<SharedReport>,
}

/// The catalog's meta key of the last run's [`SharedReport`] (JSON).
pub(crate) const SHARED_LAST: &str = "shared_last";

/// An open project.
pub struct Project {
    pub(crate) root: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) cfg: ProjectConfig,
    pub(crate) catalog: Catalog,
    pub(crate) lexical: LexicalIndex,
    /// Shared with the blocking task that scans it while a question's
    /// other signals are gathered (`retrieve::vectors`).
    pub(crate) vectors: Arc<RwLock<Option<VectorIndex>>>,
    /// Gives `vectors` a graph once its rows file is large enough.
    graph: GraphKeeper,
    /// The team's shared store, when configured.
    pub(crate) shared: Option<Arc<Shared>>,
    pub(crate) live: RwLock<Arc<ChunkSet>>,
    /// Every indexed path, sorted: path mentions and primers are matched
    /// against it on every question.
    pub(crate) paths: RwLock<Arc<BTreeSet<String>>>,
    write: tokio::sync::Mutex<()>,
    /// Held (written) by this process's run from its catalog commit to its
    /// lexical commit, when the catalog is ahead of the lexical reader: a
    /// question that found chunks deleted under it waits for it to close
    /// before asking again (`Project::retrieve_from`).
    pub(crate) committing: tokio::sync::RwLock<()>,
    /// The catalog generation the lexical reader and the in-memory tables
    /// (live ids, paths) reflect. Another process's index run
    /// moves the catalog past it; [`Project::catch_up`] follows.
    loaded: AtomicU64,
    /// Another process committed a generation whose vectors were not saved
    /// yet when this one caught up: look for them again on the next question.
    vectors_behind: AtomicBool,
    recovered: Vec<String>,
    /// Commit history: read when the project opens and again after a full
    /// index run that finds a new `HEAD`.
    pub(crate) history: Arc<RwLock<HistoryState>>,
    /// The history read `open` started, until someone waited for it.
    history_read: tokio::sync::Mutex<Option<tokio::task::JoinHandle<bool>>>,
    /// The last primer-file lookup (see [`PrimerMemo`]).
    pub(crate) primers: std::sync::Mutex<PrimerMemo>,
    /// Bumped after every swap of the held vector index
    /// ([`Project::hold_vectors`]), so [`Project::vector_coverage`] knows
    /// when to count again.
    vectors_epoch: AtomicU64,
    coverage: std::sync::Mutex<CoverageMemo>,
    /// Each file's tokens for the token map (see [`TokensMemo`]).
    pub(crate) file_tokens: TokensMemo,
}

/// [`Project::refresh_history`] on the shared state, so `open` can run it
/// in the background.
async fn refresh_history_of(state: Arc<RwLock<HistoryState>>) -> bool {
    let (source, known) = {
        let s = lock(&state);
        let Some(source) = s.source.clone() else {
            return false;
        };
        (source, s.history.as_ref().map(|h| h.head().to_owned()))
    };
    let read = tokio::task::spawn_blocking(move || {
        if known.is_some() && crate::signals::history::head(&source) == known {
            return None;
        }
        let read = History::read(&source);
        let failed = read.is_err();
        Some((history_outcome(&source, read), failed, source))
    })
    .await;
    let Ok(Some(((history, note), failed, source))) = read else {
        return false;
    };
    let mut s = lock_mut(&state);
    if s.source.as_ref() != Some(&source) {
        return false; // replaced by `use_history` meanwhile
    }
    (s.history, s.note) = (history, note);
    !failed
}

/// Where the history is read from, and what was read.
#[derive(Default)]
pub(crate) struct HistoryState {
    source: Option<HistorySource>,
    pub(crate) history: Option<Arc<History>>,
    /// Why there is none, when a read found none or failed.
    note: Option<String>,
}

/// A read of `source`'s history as (history, why there is none). Runs git
/// again when there is none, so call it outside the state's lock.
fn history_outcome(
    source: &HistorySource,
    read: Result<Option<History>>,
) -> (Option<Arc<History>>, Option<String>) {
    match read {
        Ok(Some(h)) => (Some(Arc::new(h)), None),
        Ok(None) => (None, Some(crate::signals::history::why_none(source))),
        // History is extra evidence: without it retrieval goes on.
        Err(e) => {
            tracing::warn!("commit history not read: {e}");
            (None, Some(format!("not read: {e}")))
        }
    }
}

impl std::fmt::Debug for Project {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Project")
            .field("root", &self.root)
            .field("dir", &self.dir)
            .finish()
    }
}

fn lock<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn lock_mut<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Project {
    /// Open the index of the folder `root`, creating, repairing or rebuilding
    /// derived data as needed. Never writes inside `root`.
    pub async fn open(root: &Path, cfg: ProjectConfig) -> Result<Self> {
        let root = store::canonical_root(root)?;
        // The first question should not wait for the BPE table and the
        // guard's patterns: the assembly thread builds them now.
        crate::assembler::start();
        let dir = store::project_dir(&cfg.data_root, &root);
        store::ensure_dir(&dir)?;
        let info = serde_json::json!({ "root": root.to_string_lossy() });
        let _ = std::fs::write(dir.join("project.json"), info.to_string());
        let catalog_path = dir.join("catalog.sqlite");
        let damaged_marker = dir.join(DAMAGED_MARKER);
        let mut recovered = Vec::new();
        if damaged_marker.exists() {
            recovered.push(heal_catalog(&catalog_path, "a command found it damaged").await?);
            let _ = std::fs::remove_file(&damaged_marker);
        }
        let first =
            Self::open_with(root.clone(), dir.clone(), cfg.clone(), recovered.clone()).await;
        match first {
            Err(e) if e.is_catalog_damage() => {
                recovered.push(heal_catalog(&catalog_path, &e.to_string()).await?);
                Self::open_with(root, dir, cfg, recovered).await
            }
            other => other,
        }
    }

    /// [`Project::open`] once the project's folder exists; fails with a
    /// catalog-damage error (see [`Error::is_catalog_damage`]) for the
    /// caller to heal and retry.
    async fn open_with(
        root: PathBuf,
        dir: PathBuf,
        cfg: ProjectConfig,
        mut recovered: Vec<String>,
    ) -> Result<Self> {
        let catalog_path = dir.join("catalog.sqlite");
        let catalog = match Catalog::open(&catalog_path).await {
            Ok(c) => c,
            Err(e) if e.is_catalog_damage() => return Err(e),
            // Migrations that cannot apply to this file (a checksum or
            // version mismatch, a dirty migration): derived data, start
            // over. Anything else (busy, locked, an I/O error, a full disk)
            // is reported: setting a healthy catalog aside would lose
            // settings for nothing.
            Err(Error::Migrate(m)) if !matches!(m, sqlx::migrate::MigrateError::Execute(_)) => {
                recovered
                    .push(heal_catalog(&catalog_path, &format!("catalog migration: {m}")).await?);
                Catalog::open(&catalog_path).await?
            }
            Err(e) => return Err(e),
        };
        // On failure every connection is closed before returning, so a
        // caller that sets the file aside never races a connection that
        // would checkpoint into (or delete) the new catalog's WAL by name.
        let handle = catalog.clone();
        let opened = Self::load(root, dir, cfg, recovered, catalog).await;
        if opened.is_err() {
            handle.close().await;
        }
        opened
    }

    /// The rest of [`Project::open_with`], once the catalog is open.
    // Long: opening's steps in order (version, lexical, vectors, history, repairs); each may wait for another process's run and repair what it finds.
    async fn load(
        root: PathBuf,
        dir: PathBuf,
        cfg: ProjectConfig,
        mut recovered: Vec<String>,
        catalog: Catalog,
    ) -> Result<Self> {
        let version = catalog.meta("index_version").await?;
        // Repairs write: they wait for another process's run to end, and
        // what that run committed may have made them unnecessary.
        let mut repair_lock = None;
        if version.as_deref() != Some(INDEX_VERSION) {
            repair_lock = Some(wait_for_writer(&dir).await?);
        }
        let version = match repair_lock {
            Some(_) => catalog.meta("index_version").await?,
            None => version,
        };
        if version.as_deref() != Some(INDEX_VERSION) {
            // A fresh catalog has nothing to clear; an old one is re-indexed.
            if version.is_some() {
                recovered.push("index format changed; re-indexing".into());
                catalog.clear_index().await?;
            }
            for sub in ["lexical", "vectors"] {
                let p = dir.join(sub);
                if p.exists() {
                    std::fs::remove_dir_all(&p).map_err(|e| Error::Io {
                        what: "remove old index",
                        path: p.clone(),
                        source: e,
                    })?;
                }
            }
            catalog.set_meta("index_version", INDEX_VERSION).await?;
        }
        let mut generation = catalog.generation().await?;
        let mut opened = LexicalIndex::open(&dir.join("lexical"), generation)?;
        if opened.1 != OpenState::Current && repair_lock.is_none() {
            // Behind the catalog may only mean another process is between
            // its catalog and lexical commits: wait for it, then look again.
            let first = std::mem::replace(&mut opened.1, OpenState::Current);
            drop(opened);
            repair_lock = Some(wait_for_writer(&dir).await?);
            generation = catalog.generation().await?;
            opened = LexicalIndex::open(&dir.join("lexical"), generation)?;
            // The first look replaced a damaged or outdated index with an
            // empty one, which the second finds merely behind: report why.
            if let (OpenState::Recreated(_), OpenState::Stale) = (&first, &opened.1) {
                opened.1 = first;
            }
        }
        let (lexical, state) = opened;
        let history_from = cfg.history;
        let graph = GraphKeeper::new(dir.join("graph"), cfg.graph);
        // Opened lazily: nothing here waits on the server.
        let shared = cfg.shared.clone().and_then(|c| match Shared::new(c) {
            Ok(store) => Some(Arc::new(store)),
            Err(e) => {
                tracing::warn!("shared store off: {e}");
                None
            }
        });
        let project = Self {
            cfg,
            catalog,
            lexical,
            vectors: Arc::new(RwLock::new(None)),
            graph,
            shared,
            live: RwLock::new(Arc::new(ChunkSet::new())),
            paths: RwLock::new(Arc::new(BTreeSet::new())),
            write: tokio::sync::Mutex::new(()),
            committing: tokio::sync::RwLock::new(()),
            loaded: AtomicU64::new(generation),
            vectors_behind: AtomicBool::new(false),
            recovered,
            primers: std::sync::Mutex::default(),
            vectors_epoch: AtomicU64::new(0),
            coverage: std::sync::Mutex::default(),
            file_tokens: TokensMemo::default(),
            history: Arc::new(RwLock::new(HistoryState {
                source: history_from.then(|| HistorySource::Repo(root.clone())),
                history: None,
                note: None,
            })),
            history_read: tokio::sync::Mutex::new(None),
            root,
            dir,
        };
        let mut project = project;
        match state {
            OpenState::Current => {}
            OpenState::Stale => {
                project
                    .recovered
                    .push("lexical index was behind the catalog; rebuilt".into());
                project.rebuild_lexical(generation).await?;
            }
            OpenState::Recreated(reason) => {
                if generation > 0 {
                    project
                        .recovered
                        .push(format!("lexical index rebuilt: {reason}"));
                }
                project.rebuild_lexical(generation).await?;
            }
        }
        project.refresh_memory().await?;
        if let Err(e) = project.lexical.warm() {
            // The first question computes them, and reports what fails.
            tracing::debug!("lexical statistics not computed at open: {e}");
        }
        if !project.try_load_vectors(generation).await? {
            // Rebuilt below: not beside another process's run, which may
            // be about to save the file it is missing.
            if repair_lock.is_none() {
                repair_lock = Some(wait_for_writer(&project.dir).await?);
                let now = project.catalog.generation().await?;
                if now != generation {
                    // It committed while we waited: start from what it wrote.
                    project.catch_up_locked(now).await?;
                    generation = now;
                }
            }
            if !project.try_load_vectors(generation).await? {
                project.rebuild_vectors(generation).await?;
            }
        }
        drop(repair_lock);
        let read = tokio::spawn(refresh_history_of(Arc::clone(&project.history)));
        *project.history_read.get_mut() = Some(read);
        Ok(project)
    }

    /// Re-reads the commit history when its source now points at another
    /// commit (one `git rev-parse`), so a question sees the history as of
    /// the last open, full index run or watched move of `HEAD`, the same
    /// every time it is asked. True when it was read again.
    pub(crate) async fn refresh_history(&self) -> bool {
        self.history_settled().await;
        refresh_history_of(Arc::clone(&self.history)).await
    }

    /// Waits for the history read `open` started in the background (off
    /// the first index run's critical path: git runs while files are
    /// parsed), so every answer sees the history as of the open, never
    /// sometimes without it.
    pub(crate) async fn history_settled(&self) {
        // Held while waiting: a second caller waits for the same read.
        let mut pending = self.history_read.lock().await;
        if let Some(read) = pending.take()
            && let Err(e) = read.await
        {
            tracing::warn!("commit history not read: {e}");
        }
    }

    /// Reads the commit history from `source` now (instead of the project's
    /// own repository) and uses it from the next question on. Returns how
    /// many commits were indexed (0: none to read).
    pub async fn use_history(&self, source: HistorySource) -> Result<usize> {
        // The read `open` started must not land over this one.
        self.history_settled().await;
        let (history, note) = tokio::task::block_in_place(|| {
            History::read(&source).map(|read| history_outcome(&source, Ok(read)))
        })?;
        let commits = history.as_ref().map_or(0, |h| h.commits());
        let mut s = lock_mut(&self.history);
        (s.history, s.note, s.source) = (history, note, Some(source));
        Ok(commits)
    }

    async fn rebuild_lexical(&self, generation: u64) -> Result<()> {
        let mut writer = self.lexical.writer()?;
        writer.delete_all()?;
        let mut after = 0;
        loop {
            let page = self.catalog.chunk_page(after, REBUILD_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.id;
            let ids: Vec<ChunkId> = page.iter().map(|c| c.id).collect();
            let rows = self.catalog.defined_names(&ids).await?;
            let defined = group_names(&rows);
            for chunk in &page {
                writer.add(
                    chunk,
                    defined.get(&chunk.id).map(Vec::as_slice).unwrap_or(&[]),
                )?;
            }
        }
        writer.commit(generation)
    }

    /// Reload the in-memory live-id set and path list from the catalog.
    async fn refresh_memory(&self) -> Result<()> {
        let live: ChunkSet = self.catalog.chunk_ids().await?.into_iter().collect();
        *lock_mut(&self.live) = Arc::new(live);
        let paths: BTreeSet<String> = self.catalog.paths().await?.into_iter().collect();
        *lock_mut(&self.paths) = Arc::new(paths);
        Ok(())
    }

    /// Update the in-memory live set and path list from one applied
    /// change, instead of reloading them.
    fn follow(&self, applied: &Applied) {
        if applied.removed_paths.is_empty() && applied.inserted.is_empty() {
            return;
        }
        let mut guard = lock_mut(&self.live);
        let live = Arc::make_mut(&mut guard);
        for id in &applied.removed_ids {
            live.remove(*id);
        }
        live.extend(applied.inserted.iter().copied());
        drop(guard);
        let mut guard = lock_mut(&self.paths);
        let paths = Arc::make_mut(&mut guard);
        for p in &applied.removed_paths {
            paths.remove(p);
        }
        paths.extend(applied.inserted_paths.iter().cloned());
    }

    /// Load the vector index saved at `generation` for this embedder. False
    /// when there is none to load (another generation, another model, a
    /// damaged file); true too when there is no embedder.
    async fn try_load_vectors(&self, generation: u64) -> Result<bool> {
        let Some(embedder) = self.cfg.embedder.clone() else {
            return Ok(true);
        };
        let dir = self.dir.join("vectors");
        let model = embedder.model_id().to_owned();
        let loaded =
            tokio::task::spawn_blocking(move || VectorIndex::load(&dir, generation, &model))
                .await??;
        let found = loaded.is_some();
        if let Some(index) = loaded {
            self.hold_vectors(index);
        }
        Ok(found)
    }

    /// Bring this process's lexical reader and in-memory tables to
    /// `generation`, which another process's index run committed; the
    /// caller holds the write lock, so that run is over. A lexical index
    /// still behind (that run died between its catalog and lexical
    /// commits) is rebuilt. Vectors saved at `generation` are loaded;
    /// otherwise the next [`Project::update_vectors`] reconciles the ones
    /// held.
    async fn catch_up_locked(&self, generation: u64) -> Result<()> {
        if self.lexical.committed_generation() == Some(generation) {
            self.lexical.reload()?;
        } else {
            self.rebuild_lexical(generation).await?;
        }
        self.refresh_memory().await?;
        // When none were saved at `generation`, a run reconciles the ones
        // held at its end; a question looks for a saved file again.
        let behind = !self.try_load_vectors(generation).await?;
        self.vectors_behind.store(behind, Ordering::Release);
        self.loaded.store(generation, Ordering::Release);
        Ok(())
    }

    /// Follow another process's index run before answering: when the
    /// catalog moved past what this process holds and that run's lexical
    /// commit is there too, reload the reader and the in-memory tables
    /// (and the vectors, when saved at that generation). Until then, and
    /// while this process is writing itself, what is held keeps answering:
    /// one whole generation, never half of one. Returns the generation
    /// answers come from.
    pub(crate) async fn catch_up(&self) -> Result<u64> {
        let held = self.loaded.load(Ordering::Acquire);
        let generation = self.catalog.generation().await?;
        if generation == held && !self.vectors_behind.load(Ordering::Acquire) {
            return Ok(held);
        }
        // Our own run updates what we hold as it commits.
        let Ok(_guard) = self.write.try_lock() else {
            return Ok(held);
        };
        if generation == held {
            // The other run saves its vectors after its commits.
            let behind = !self.try_load_vectors(held).await?;
            self.vectors_behind.store(behind, Ordering::Release);
            return Ok(held);
        }
        // The other run commits its lexical index right after its catalog.
        let deadline = Instant::now() + CATCH_UP_WAIT;
        while self.lexical.committed_generation() != Some(generation) {
            if let Some(_lock) = WriteLock::try_acquire(&self.dir)? {
                // Nobody is writing: that run died between its commits.
                let now = self.catalog.generation().await?;
                self.catch_up_locked(now).await?;
                return Ok(now);
            }
            if Instant::now() >= deadline {
                return Ok(held);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.lexical.reload()?;
        self.refresh_memory().await?;
        let behind = !self.try_load_vectors(generation).await?;
        self.vectors_behind.store(behind, Ordering::Release);
        self.loaded.store(generation, Ordering::Release);
        Ok(generation)
    }

    /// Build the vector index from the catalog's cached vectors and save it.
    async fn rebuild_vectors(&self, generation: u64) -> Result<()> {
        let Some(embedder) = self.cfg.embedder.clone() else {
            return Ok(());
        };
        let model = embedder.model_id();
        let mut index = VectorIndex::new(model, embedder.dim(), lock(&self.live).len());
        let mut after = 0;
        loop {
            let page = self
                .catalog
                .chunk_vectors_after(model, after, VECTOR_PAGE)
                .await?;
            let Some(&(last, _)) = page.last() else {
                break;
            };
            after = last;
            tokio::task::block_in_place(|| index.insert(&page));
        }
        self.save_and_hold_vectors(index, generation).await
    }

    /// Save a newly built `index` as `generation`'s, off the async
    /// threads, then hold it in place of the old one (questions keep the
    /// old one until then).
    async fn save_and_hold_vectors(&self, mut index: VectorIndex, generation: u64) -> Result<()> {
        let dir = self.dir.join("vectors");
        let index = tokio::task::spawn_blocking(move || -> Result<VectorIndex> {
            index.save(&dir, generation)?;
            Ok(index)
        })
        .await??;
        self.hold_vectors(index);
        Ok(())
    }

    /// Insert `vectors` into the held index in place and save it as
    /// `generation`'s; `false` when none is held. A question waits for
    /// this (inserting a few changed files' points and writing their delta
    /// file) rather than be answered without vectors while it lasts.
    pub(crate) fn extend_held_vectors(
        &self,
        vectors: &[(ChunkId, Vec<f32>)],
        generation: u64,
    ) -> Result<bool> {
        if !self.insert_held_vectors(vectors) {
            return Ok(false);
        }
        self.save_held_vectors(generation)?;
        Ok(true)
    }

    /// Insert `vectors` into the held index in place, unsaved; `false`
    /// when none is held. Nothing to insert leaves the held index, and the
    /// answers cached against it, as they are.
    pub(crate) fn insert_held_vectors(&self, vectors: &[(ChunkId, Vec<f32>)]) -> bool {
        tokio::task::block_in_place(|| {
            let mut held = lock_mut(&self.vectors);
            let Some(index) = held.as_mut() else {
                return false;
            };
            if vectors.is_empty() {
                return true;
            }
            index.insert(vectors);
            self.vectors_epoch.fetch_add(1, Ordering::SeqCst);
            true
        })
    }

    /// Save the held index as `generation`'s (nothing when none is held).
    pub(crate) fn save_held_vectors(&self, generation: u64) -> Result<()> {
        let dir = self.dir.join("vectors");
        tokio::task::block_in_place(|| match lock_mut(&self.vectors).as_mut() {
            Some(index) => index.save(&dir, generation),
            None => Ok(()),
        })?;
        // A save that wrote the rows file anew left the index without a
        // graph.
        self.graph.consider(&self.vectors);
        Ok(())
    }

    /// Drop the held index's points whose chunks are gone (see
    /// `VectorGaps::mostly_dead`): the live points keep their rows, so
    /// nothing is read from the catalog or embedded again. When the rows
    /// file cannot be read back, the index stays as it was, tombstones
    /// and all, and the next save says why.
    pub(crate) fn compact_held_vectors(&self) {
        let live = Arc::clone(&lock(&self.live));
        tokio::task::block_in_place(|| {
            if let Some(index) = lock_mut(&self.vectors).as_mut() {
                match index.retain(|id| live.contains(id)) {
                    Ok(()) => {
                        self.vectors_epoch.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(err) => tracing::warn!(%err, "the vector index keeps its tombstones"),
                }
            }
        })
    }

    /// When `e` is SQLite reporting the catalog damaged: leave a mark so the
    /// next open heals it, and say so, with the path, in the error.
    pub(crate) fn damage_seen(&self, e: Error) -> Error {
        if !e.is_catalog_damage() {
            return e;
        }
        if let Err(w) = std::fs::write(self.dir.join(DAMAGED_MARKER), e.to_string()) {
            tracing::warn!("could not mark the catalog as damaged: {w}");
        }
        Error::Corrupt {
            what: "catalog",
            detail: format!(
                "{} ({e}); it will be set aside and rebuilt from the project's files \
                 the next time the project is opened",
                self.dir.join("catalog.sqlite").display()
            ),
        }
    }

    /// Hold `index` as the project's vector index (see `vectors_epoch`).
    pub(crate) fn hold_vectors(&self, index: VectorIndex) {
        *lock_mut(&self.vectors) = Some(index);
        self.vectors_epoch.fetch_add(1, Ordering::SeqCst);
        self.graph.consider(&self.vectors);
    }

    /// Wait for the vector graph under way, if any, calling `progress`
    /// with the points done and in all every tenth of a second.
    pub async fn wait_for_graph(&self, progress: impl Fn(u64, u64)) {
        while let Some((done, total)) = self.graph.pending() {
            progress(done, total);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Names per chunk, from (chunk id, name) rows.
fn group_names(rows: &[(ChunkId, String)]) -> HashMap<ChunkId, Vec<&str>> {
    let mut out: HashMap<ChunkId, Vec<&str>> = HashMap::new();
    for (id, name) in rows {
        out.entry(*id).or_default().push(name);
    }
    out
}

/// The read side: the snapshot a question reads, and what the shells ask
/// about the index (`project/read.rs` has the types).
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
            vector_search: self.graph.state(&self.vectors),
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
            // A store no longer configured says nothing of its last run.
            shared: match &self.shared {
                Some(_) => self
                    .catalog
                    .meta(SHARED_LAST)
                    .await?
                    .and_then(|json| serde_json::from_str(&json).ok()),
                None => None,
            },
        })
    }

    /// Diagnostics of the last run.
    pub async fn diagnostics(&self) -> Result<Vec<Diagnostic>> {
        self.catalog.diagnostics().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog whose last writes are still in its WAL (the process died
    /// before a checkpoint) keeps them through healing: the WAL goes aside
    /// with the file, under the name SQLite looks for.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn healing_reads_what_only_the_wal_holds() {
        let live = tempfile::tempdir().expect("tempdir");
        let catalog = Catalog::open(&live.path().join("catalog.sqlite"))
            .await
            .expect("open");
        catalog
            .set_setting("knobs", "{\"budget\":7000}")
            .await
            .expect("write");
        // A crash copy: the file and its WAL as they are, connection open.
        let crashed = tempfile::tempdir().expect("tempdir");
        let path = crashed.path().join("catalog.sqlite");
        std::fs::copy(live.path().join("catalog.sqlite"), &path).expect("copy");
        let wal = live.path().join("catalog.sqlite-wal");
        assert!(wal.exists(), "the write is in the WAL");
        std::fs::copy(&wal, crashed.path().join("catalog.sqlite-wal")).expect("copy wal");
        catalog.close().await;

        let note = heal_catalog(&path, "test").await.expect("heal");
        assert!(note.contains("kept 1 settings"), "{note}");
        let healed = Catalog::open(&path).await.expect("reopen");
        assert_eq!(
            healed.setting("knobs").await.expect("read").as_deref(),
            Some("{\"budget\":7000}")
        );
        healed.close().await;
        let names: Vec<String> = std::fs::read_dir(crashed.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with("catalog.sqlite-wal.corrupt")),
            "{names:?}"
        );
    }
}
