//! The app's managed state: the open projects, their running index jobs, and
//! the candidates of the last question per project.
//!
//! *Architecture invariant:* a knob change never re-retrieves. Retrieval
//! runs once per (question, primers, index generation) and its candidates are
//! kept here; `assemble` is then a pure function of them and the knobs, which
//! is what makes a slider move cheap.
//!
//! This module knows no IPC: it hands out engine types and engine errors.

use loupe_assemble::Candidate;
use loupe_engine::{CancelToken, Project, ProjectConfig, RetrieveQuery};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The candidates retrieved for one question.
struct Retrieved {
    question: String,
    primers: Vec<String>,
    generation: u64,
    candidates: Arc<Vec<Candidate>>,
}

/// One open project.
pub struct OpenProject {
    /// The engine's handle.
    pub project: Project,
    /// The token of the indexing run in progress, if any.
    indexing: Mutex<Option<CancelToken>>,
    /// Candidates of the last question.
    retrieved: tokio::sync::Mutex<Option<Retrieved>>,
}

fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl OpenProject {
    /// A token for a new indexing run, registered so `cancel` can reach it.
    pub fn begin_index(&self) -> CancelToken {
        let token = CancelToken::new();
        *guard(&self.indexing) = Some(token.clone());
        token
    }

    /// Forget the finished run's token.
    pub fn end_index(&self) {
        *guard(&self.indexing) = None;
    }

    /// Cancel the running index job; `false` when none was running.
    pub fn cancel_index(&self) -> bool {
        match guard(&self.indexing).as_ref() {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The candidates for `question`, retrieved once per question, primer
    /// list and index generation.
    pub async fn candidates(
        &self,
        question: &str,
        primers: &[String],
    ) -> loupe_engine::Result<Arc<Vec<Candidate>>> {
        if question.trim().is_empty() {
            return Err(loupe_engine::Error::Request("the question is empty".into()));
        }
        let generation = self.project.catalog().generation().await?;
        let mut last = self.retrieved.lock().await;
        if let Some(r) = last.as_ref()
            && r.question == question
            && r.primers == primers
            && r.generation == generation
        {
            return Ok(Arc::clone(&r.candidates));
        }
        let mut query = RetrieveQuery::from_question(question);
        query.primers = Some(primers.to_vec());
        let candidates = Arc::new(self.project.retrieve(&query).await?);
        *last = Some(Retrieved {
            question: question.to_owned(),
            primers: primers.to_vec(),
            generation,
            candidates: Arc::clone(&candidates),
        });
        Ok(candidates)
    }
}

/// Everything the commands share.
pub struct AppState {
    config: ProjectConfig,
    projects: Mutex<HashMap<PathBuf, Arc<OpenProject>>>,
}

impl AppState {
    /// State that opens projects with `config` (data root, embedder, ...).
    pub fn new(config: ProjectConfig) -> Self {
        Self {
            config,
            projects: Mutex::new(HashMap::new()),
        }
    }

    /// The open project at `path`, opening it on first use. Opening twice
    /// returns the same handle.
    pub async fn open(&self, path: &Path) -> loupe_engine::Result<Arc<OpenProject>> {
        let root = loupe_engine::store::canonical_root(path)?;
        if let Some(open) = guard(&self.projects).get(&root) {
            return Ok(Arc::clone(open));
        }
        let project = Project::open(&root, self.config.clone()).await?;
        let open = Arc::new(OpenProject {
            project,
            indexing: Mutex::new(None),
            retrieved: tokio::sync::Mutex::new(None),
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
