//! Shared helpers: temp projects, a deterministic fake embedder, opening.

use loupe_engine::progress::no_progress;
use loupe_engine::signals::embed::Embedder;
use loupe_engine::{CancelToken, IndexReport, Project, ProjectConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A project folder and a data folder, both temporary.
pub struct Env {
    pub project: tempfile::TempDir,
    pub data: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            project: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> &Path {
        self.project.path()
    }

    pub fn write(&self, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    pub fn config(&self, embedder: Option<Arc<dyn Embedder>>) -> ProjectConfig {
        let mut cfg = ProjectConfig::new(self.data.path());
        cfg.embedder = embedder;
        cfg
    }

    pub async fn open(&self, embedder: Option<Arc<dyn Embedder>>) -> Project {
        Project::open(self.root(), self.config(embedder))
            .await
            .unwrap()
    }
}

pub async fn index(p: &Project) -> IndexReport {
    p.index(&no_progress, &CancelToken::new()).await.unwrap()
}

/// `question` asked with the default knobs and a fresh cache.
pub async fn ask(p: &Project, question: &str) -> loupe_engine::Answer {
    p.ask(
        &loupe_engine::AskRequest::new(question, loupe_assemble::Knobs::default()),
        &mut loupe_engine::AskCache::default(),
    )
    .await
    .unwrap()
}

/// Deterministic vectors from the text's bytes; counts how many texts it saw.
#[derive(Default)]
pub struct CountingEmbedder {
    pub calls: AtomicUsize,
}

impl Embedder for CountingEmbedder {
    fn model_id(&self) -> &str {
        "test:counting"
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[String]) -> loupe_engine::Result<Vec<Vec<f32>>> {
        self.calls.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| fake_vector(t)).collect())
    }
}

/// Bag-of-bytes vector: texts sharing words end up close.
pub fn fake_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; 16];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = blake3::hash(word.to_lowercase().as_bytes());
        v[(h.as_bytes()[0] % 16) as usize] += 1.0;
    }
    v[0] += 0.01;
    v
}

/// A small Rust + Python + Markdown project.
pub fn sample_project(env: &Env) {
    env.write(
        "src/pack.rs",
        "/// Greedily pack items under a token budget.\npub fn pack_items(budget: usize) -> usize {\n    let used = measure_tokens(budget);\n    used.min(budget)\n}\n\nfn measure_tokens(n: usize) -> usize {\n    n / 2\n}\n",
    );
    env.write(
        "src/render.rs",
        "use crate::pack::pack_items;\n\npub fn render_prompt() -> String {\n    format!(\"{}\", pack_items(10))\n}\n",
    );
    env.write(
        "tools/report.py",
        "import json\n\ndef write_report(rows):\n    \"\"\"Write rows as JSON.\"\"\"\n    return json.dumps(rows)\n",
    );
    env.write(
        "README.md",
        "# Sample\n\nA sample project about packing.\n\n## Usage\n\nRun it.\n",
    );
}

pub use loupe_testkit::git;
