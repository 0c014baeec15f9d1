//! The app's managed state: the open projects, their running index jobs,
//! watchers, pins and bans, and the candidates of the last question per project.
//!
//! *Architecture invariant:* a knob change never re-retrieves. Each open
//! project keeps one [`AskCache`] for the engine's `Project::ask`, which
//! retrieves once per (question, primers, index generation, commit history)
//! and then only re-assembles, which is what makes a slider move cheap.
//!
//! This module knows no IPC: it hands out engine types and engine errors.

use crate::prefs::{self, Mark, PrefsError, ProjectPrefs};
use loupe_engine::asking::agent_log::{self, AgentLog};
use loupe_engine::asking::golden::{GoldenCache, GoldenFile, GoldenReport};
use loupe_engine::watch::WatchHandle;
use loupe_engine::{
    Answer, AskCache, AskRequest, CancelToken, Project, ProjectConfig, Selection, Target,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// One open project.
pub struct OpenProject {
    /// The engine's handle (shared with the watcher).
    pub project: Arc<Project>,
    /// The token of the indexing runs in progress, if any, and how many
    /// share it (a page reloaded mid-run follows the run with a second one,
    /// which waits for the first: one cancel stops both).
    indexing: Mutex<Option<(CancelToken, usize)>>,
    /// The question the panel asked last and its token: `cancel_question`
    /// stops its answer (a scan of an unindexed folder reads every file)
    /// once the user has asked something else.
    question: Mutex<Option<(String, CancelToken)>>,
    /// The same for the token map's ask of its question: it shares the
    /// answer lock with the panel's, so one left running holds the next
    /// question back.
    map_question: Mutex<Option<(String, CancelToken)>>,
    /// The last question's retrieval and measured sizes.
    asked: tokio::sync::Mutex<AskCache>,
    /// What the app stores for this project (knob changes, pins, bans).
    prefs: Mutex<ProjectPrefs>,
    /// The running watcher, if the UI asked for one.
    watcher: tokio::sync::Mutex<Option<WatchHandle>>,
    /// The agent log as last read, with its fingerprint: re-read only when
    /// its files change.
    agent_log: Mutex<Option<(u64, Arc<AgentLog>)>>,
    /// The golden questions' retrievals, kept between runs.
    golden: tokio::sync::Mutex<GoldenCache>,
}

/// Register a new token for `question` in `slot`, in place of the last.
fn begin(slot: &Mutex<Option<(String, CancelToken)>>, question: &str) -> CancelToken {
    let token = CancelToken::new();
    *guard(slot) = Some((question.to_owned(), token.clone()));
    token
}

/// Cancel the token in `slot` if it was registered for `question`.
fn cancel(slot: &Mutex<Option<(String, CancelToken)>>, question: &str) -> bool {
    match guard(slot).as_ref() {
        Some((asked, token)) if asked == question => {
            token.cancel();
            true
        }
        _ => false,
    }
}

/// Lock `m`, recovering from a panic elsewhere (the data is a cache or a
/// copy of what is on disk, never half-updated).
pub fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl OpenProject {
    /// A token for a new indexing run, registered so `cancel` can reach it:
    /// the running one's while a run is in progress and not cancelled.
    pub fn begin_index(&self) -> CancelToken {
        let mut slot = guard(&self.indexing);
        match slot.as_mut() {
            Some((token, runs)) => {
                *runs += 1;
                if token.is_cancelled() {
                    *token = CancelToken::new();
                }
                token.clone()
            }
            None => {
                let token = CancelToken::new();
                *slot = Some((token.clone(), 1));
                token
            }
        }
    }

    /// One run ended; the token is forgotten when the last one did.
    pub fn end_index(&self) {
        let mut slot = guard(&self.indexing);
        if let Some((_, runs)) = slot.as_mut() {
            *runs -= 1;
            if *runs == 0 {
                *slot = None;
            }
        }
    }

    /// Whether an index run is in progress.
    pub fn is_indexing(&self) -> bool {
        guard(&self.indexing).is_some()
    }

    /// Cancel the running index job; `false` when none was running.
    pub fn cancel_index(&self) -> bool {
        match guard(&self.indexing).as_ref() {
            Some((token, _)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// A token for the panel's answer to `question`, registered so
    /// [`OpenProject::cancel_question`] can reach it.
    pub fn begin_question(&self, question: &str) -> CancelToken {
        begin(&self.question, question)
    }

    /// The question the panel asked last (empty before any).
    pub fn last_question(&self) -> String {
        guard(&self.question)
            .as_ref()
            .map(|(q, _)| q.clone())
            .unwrap_or_default()
    }

    /// [`OpenProject::begin_question`] for the token map's ask.
    pub fn begin_map_question(&self, question: &str) -> CancelToken {
        begin(&self.map_question, question)
    }

    /// Cancel the panel's and the token map's answers to `question` where
    /// it is the one each asked last; `false` when neither was (an answer
    /// to a later question is never stopped by a cancel meant for an
    /// earlier one that arrives late).
    pub fn cancel_question(&self, question: &str) -> bool {
        let panel = cancel(&self.question, question);
        let map = cancel(&self.map_question, question);
        panel || map
    }

    /// The stored prefs (knob changes, pins, bans).
    pub fn prefs(&self) -> ProjectPrefs {
        guard(&self.prefs).clone()
    }

    /// The pinned and banned targets.
    pub fn selection(&self) -> Selection {
        guard(&self.prefs).selection.clone()
    }

    /// Pin, ban or clear `target`, and store the result.
    pub fn mark(&self, target: Target, mark: Mark) -> Result<Selection, PrefsError> {
        let mut p = guard(&self.prefs);
        let mut next = p.clone();
        prefs::mark(&mut next.selection, target, mark);
        prefs::save_project(self.project.data_dir(), &next)?;
        *p = next;
        Ok(p.selection.clone())
    }

    /// Store the user's knob changes (over the team's defaults).
    pub fn set_knob_changes(
        &self,
        changes: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), PrefsError> {
        let mut p = guard(&self.prefs);
        if p.knobs == changes {
            return Ok(());
        }
        let mut next = p.clone();
        next.knobs = changes;
        prefs::save_project(self.project.data_dir(), &next)?;
        *p = next;
        Ok(())
    }

    /// Watch the project's folder, replacing (and stopping) an earlier
    /// watcher; `on_event` runs on a background task.
    pub async fn watch(
        &self,
        on_event: impl Fn(loupe_engine::watch::WatchEvent) + Send + Sync + 'static,
    ) -> loupe_engine::Result<()> {
        let mut slot = self.watcher.lock().await;
        if let Some(old) = slot.take() {
            old.stop().await;
        }
        *slot = Some(loupe_engine::watch::watch(
            Arc::clone(&self.project),
            on_event,
        )?);
        Ok(())
    }

    /// Stop watching; `false` when no watcher ran.
    pub async fn unwatch(&self) -> bool {
        match self.watcher.lock().await.take() {
            Some(w) => {
                w.stop().await;
                true
            }
            None => false,
        }
    }

    /// A candidate of the last question by chunk id, else the chunk from
    /// the catalog (a pinned chunk retrieval did not return).
    pub async fn chunk(
        &self,
        id: loupe_assemble::ChunkId,
    ) -> loupe_engine::Result<Option<loupe_assemble::Chunk>> {
        if let Some(c) = self
            .asked
            .lock()
            .await
            .candidates()
            .iter()
            .find(|c| c.chunk.id == id)
        {
            return Ok(Some(c.chunk.clone()));
        }
        self.project.chunk(id).await
    }

    /// The agents' calls on this project (what `loupe mcp` recorded) and
    /// the log's fingerprint. Blocking file I/O: call it off the async
    /// workers.
    pub fn agent_log(&self) -> loupe_engine::Result<(u64, Arc<AgentLog>)> {
        let dir = self.project.data_dir();
        let version = agent_log::fingerprint(dir);
        if let Some((v, log)) = guard(&self.agent_log).as_ref()
            && *v == version
        {
            return Ok((version, Arc::clone(log)));
        }
        let log = Arc::new(agent_log::read(dir)?);
        *guard(&self.agent_log) = Some((version, Arc::clone(&log)));
        Ok((version, log))
    }

    /// Asks the project `request` through the engine's one door, with
    /// this project's retrieval cache: a knob, pin or ban change re-uses
    /// the last question's candidates.
    pub async fn ask(&self, request: &AskRequest) -> loupe_engine::Result<Answer> {
        let mut cache = self.asked.lock().await;
        self.project.ask(request, &mut cache).await
    }

    /// The golden questions of `golden` under `base` knobs, each with its
    /// retrieval cached between runs.
    pub async fn golden(
        &self,
        golden: &GoldenFile,
        base: &loupe_assemble::Knobs,
    ) -> loupe_engine::Result<GoldenReport> {
        let mut cache = self.golden.lock().await;
        loupe_engine::asking::golden::check_cached(&self.project, golden, base, &mut cache).await
    }
}

/// Everything the commands share.
pub struct AppState {
    config: ProjectConfig,
    projects: Mutex<HashMap<PathBuf, Arc<OpenProject>>>,
    /// The project the page shows (the one it watches): the engine outlives
    /// a page whose process died, and the reloaded page asks for it.
    shown: Mutex<Option<PathBuf>>,
}

impl AppState {
    /// Where the index and the app's own files live.
    pub fn data_root(&self) -> &Path {
        &self.config.data_root
    }

    /// State that opens projects with `config` (data root, embedder, ...).
    pub fn new(config: ProjectConfig) -> Self {
        Self {
            config,
            projects: Mutex::new(HashMap::new()),
            shown: Mutex::new(None),
        }
    }

    /// Remember that the page shows `root` (it started watching it).
    pub fn show(&self, root: &Path) {
        *guard(&self.shown) = Some(root.to_path_buf());
    }

    /// The page stopped watching `root`: it no longer shows it (another
    /// project, shown meanwhile, stays the one shown).
    pub fn hide(&self, root: &Path) {
        let mut shown = guard(&self.shown);
        if shown.as_deref() == Some(root) {
            *shown = None;
        }
    }

    /// The open project the page shows, if any.
    pub fn shown(&self) -> Option<Arc<OpenProject>> {
        let root = guard(&self.shown).clone()?;
        guard(&self.projects).get(&root).cloned()
    }

    /// The open project at `path`, opening it on first use. Opening twice
    /// returns the same handle.
    pub async fn open(&self, path: &Path) -> loupe_engine::Result<Arc<OpenProject>> {
        let root = loupe_engine::stores::store::canonical_root(path)?;
        if let Some(open) = guard(&self.projects).get(&root) {
            return Ok(Arc::clone(open));
        }
        let mut config = self.config.clone();
        // The team's shared store: LOUPE_SHARED_URL, or the project's
        // `.loupe.toml`. A malformed one indexes alone and says why.
        config.shared = loupe_engine::stores::shared::SharedConfig::resolve(None, None, &root)
            .unwrap_or_else(|e| {
                tracing::warn!("shared store off for {}: {e}", root.display());
                None
            });
        let project = Project::open(&root, config).await?;
        let stored = prefs::load_project(project.data_dir());
        let open = Arc::new(OpenProject {
            project: Arc::new(project),
            indexing: Mutex::new(None),
            question: Mutex::new(None),
            map_question: Mutex::new(None),
            asked: tokio::sync::Mutex::new(AskCache::default()),
            golden: tokio::sync::Mutex::new(GoldenCache::default()),
            prefs: Mutex::new(stored),
            watcher: tokio::sync::Mutex::new(None),
            agent_log: Mutex::new(None),
        });
        // Two concurrent first opens: keep whichever registered first.
        let mut projects = guard(&self.projects);
        Ok(Arc::clone(projects.entry(root).or_insert(open)))
    }

    /// The already open project whose canonical root is `root`.
    pub fn get(&self, root: &str) -> Option<Arc<OpenProject>> {
        let key = std::fs::canonicalize(root).unwrap_or_else(|_| PathBuf::from(root));
        guard(&self.projects).get(&key).cloned()
    }
}

/// `chunk` as the prompt shows it at `lod`: sanitized and redacted as
/// `knobs` say (the same guard assembly runs), then compressed. Returns the
/// text and how many redactions were made.
pub fn render_as_in_prompt(
    chunk: &loupe_assemble::Chunk,
    lod: u8,
    knobs: &loupe_assemble::Knobs,
) -> (String, u32) {
    use loupe_assemble::{compress, guard};
    let config = guard::GuardConfig {
        sanitize: knobs.sanitize,
        injections: knobs.sanitize,
        secrets: knobs.redact_secrets,
    };
    let mut redactions = Vec::new();
    let guarded = guard::guard_chunk(chunk, config, &mut redactions);
    let text = compress::render(
        guarded.as_ref().unwrap_or(chunk),
        lod.min(compress::MAX_LOD),
        compress::RenderOptions::default(),
    );
    (text, u32::try_from(redactions.len()).unwrap_or(u32::MAX))
}
