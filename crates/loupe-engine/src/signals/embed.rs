//! Embedders: turn chunk text into unit vectors.
//!
//! Implementations of [`Embedder`]: [`CodeEmbedder`] (the default: Loupe's
//! own static code model, `code.rs`), [`HttpEmbedder`] for any
//! OpenAI-compatible `/v1/embeddings` endpoint (Ollama, LM Studio, OpenAI),
//! and, in a build with the `minilm` feature, the bundled `PocketEmbedder`
//! (paraphrase-MiniLM-L3-v2 compiled into the binary via `pocket-encoder`;
//! no download, `pocket.rs`) and `StaticEmbedder` (the same model distilled
//! into one vector per token, lazily, `distill.rs`).
//!
//! Does not cache: the catalog caches vectors by (content hash, model id).

mod code;
#[cfg(feature = "minilm")]
mod distill;
#[cfg(feature = "minilm")]
mod pocket;
#[cfg(feature = "minilm")]
mod table;

pub use code::{CodeEmbedder, CodeModel, code_words};
#[cfg(feature = "minilm")]
pub use distill::{
    MEAN_TXT, SAVE_INTERVAL, StaticEmbedder, TABLE_FILE, Vocabulary, all_ids, distill, models_dir,
    shipped_mean, table_id,
};
#[cfg(feature = "minilm")]
pub use pocket::PocketEmbedder;
#[cfg(feature = "minilm")]
pub use table::{TableFileError, TokenTable, round_f16};

/// What a door says when asked for a MiniLM embedder this build lacks.
pub const NO_MINILM: &str = "this build has no MiniLM embedders: rebuild with \
    `--features loupe-engine/minilm` (README, \"Building\")";

/// The bundled MiniLM (`--embedder bundled`), or an error saying this
/// build lacks it: the doors name it in every build, and only a build with
/// the `minilm` feature has it.
pub fn bundled() -> Result<std::sync::Arc<dyn Embedder>> {
    #[cfg(feature = "minilm")]
    return Ok(std::sync::Arc::new(PocketEmbedder::new()?));
    #[cfg(not(feature = "minilm"))]
    Err(Error::Embed(NO_MINILM.into()))
}

/// The distilled MiniLM table under `data_root` (`--embedder static`), or
/// an error saying this build lacks it (see [`bundled`]).
pub fn static_table(data_root: &std::path::Path) -> Result<std::sync::Arc<dyn Embedder>> {
    #[cfg(feature = "minilm")]
    return Ok(std::sync::Arc::new(StaticEmbedder::open(data_root)?));
    #[cfg(not(feature = "minilm"))]
    {
        let _ = data_root;
        Err(Error::Embed(NO_MINILM.into()))
    }
}

use crate::{Error, Result};
use loupe_assemble::Chunk;
use std::time::Duration;

/// The bundled model sees at most 128 word pieces; ~1 KB of code is already
/// more than that, so longer text is cut before tokenizing to save time.
const MAX_EMBED_TEXT_BYTES: usize = 1024;

/// Something that turns texts into vectors of one fixed dimension.
pub trait Embedder: Send + Sync {
    /// The complete identity of the model: vectors from different ids are
    /// never compared.
    fn model_id(&self) -> &str;
    /// Vector dimension.
    fn dim(&self) -> usize;
    /// Embed non-empty texts, one vector per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
    /// Whether the catalog keeps this model's vectors by content, so that
    /// content seen before is not embedded again: worth it for a model that
    /// costs more to run than SQLite does to store and read back a vector
    /// (a transformer, an HTTP service). A table lookup such as the code
    /// model says no: it embeds the chunks again faster than the catalog
    /// returns their vectors, and its vectors live in the vector index only.
    /// The same answer says whether the team's shared store keeps them
    /// (`stores/shared.rs`): pulling the code model's vectors of the vendor
    /// corpus took as long as computing them (BENCHMARKS.md).
    fn caches_vectors(&self) -> bool {
        true
    }
    /// Called by an index run before it embeds `texts` texts in batches;
    /// what it returns is dropped when the run ends. A model that reads its
    /// weights from disk as it needs them keeps them in memory while the
    /// hold lives, for a run large enough to pay for reading them whole.
    fn hold(&self, _texts: usize) -> Option<Hold> {
        None
    }
}

/// What [`Embedder::hold`] keeps alive for an index run.
pub type Hold = Box<dyn std::any::Any + Send + Sync>;

/// The text embedded for a chunk: its path and symbol, then its content, cut
/// at a char boundary.
pub fn embed_text(chunk: &Chunk) -> String {
    embed_text_of(&chunk.path, chunk.symbol.as_deref(), &chunk.text)
}

/// [`embed_text`] from the parts of a chunk not yet in the catalog.
pub fn embed_text_of(path: &str, symbol: Option<&str>, text: &str) -> String {
    let mut out = String::with_capacity(MAX_EMBED_TEXT_BYTES + 64);
    out.push_str(path);
    if let Some(symbol) = symbol {
        out.push(' ');
        out.push_str(symbol);
    }
    out.push('\n');
    out.push_str(text);
    truncate_at_char(&mut out, MAX_EMBED_TEXT_BYTES);
    out
}

fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

/// How long one request to an embeddings endpoint may take, unless said.
pub const HTTP_EMBED_TIMEOUT_SECS: u64 = 60;

/// Settings of an OpenAI-compatible embeddings endpoint.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HttpEmbedderConfig {
    /// Base URL, e.g. `http://localhost:11434/v1`; `/embeddings` is appended.
    pub base_url: String,
    /// Model name sent in the request.
    pub model: String,
    /// Bearer token, if the server wants one.
    pub api_key: Option<String>,
    /// Per-request timeout in seconds.
    pub timeout_secs: u64,
}

/// An OpenAI-compatible `/embeddings` client.
pub struct HttpEmbedder {
    cfg: HttpEmbedderConfig,
    agent: ureq::Agent,
    id: String,
    dim: usize,
}

#[derive(serde::Deserialize)]
struct EmbeddingResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(serde::Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl HttpEmbedder {
    /// Connect and probe the endpoint once to learn the dimension.
    pub fn new(cfg: HttpEmbedderConfig) -> Result<Self> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(cfg.timeout_secs.max(1))))
            .build()
            .into();
        let id = format!("http:{}@{}", cfg.model, cfg.base_url.trim_end_matches('/'));
        let mut me = Self {
            cfg,
            agent,
            id,
            dim: 0,
        };
        let probe = me.request(&["dimension probe".to_owned()])?;
        me.dim = probe.first().map(Vec::len).unwrap_or(0);
        if me.dim == 0 {
            return Err(Error::Embed("endpoint returned an empty vector".into()));
        }
        Ok(me)
    }

    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let url = format!("{}/embeddings", self.cfg.base_url.trim_end_matches('/'));
        let body = serde_json::json!({ "model": self.cfg.model, "input": texts });
        let mut req = self.agent.post(&url);
        if let Some(key) = &self.cfg.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = req
            .send_json(&body)
            .map_err(|e| Error::Embed(format!("{url}: {e}")))?;
        let parsed: EmbeddingResponse = resp
            .body_mut()
            .read_json()
            .map_err(|e| Error::Embed(format!("{url}: bad response: {e}")))?;
        if parsed.data.len() != texts.len() {
            return Err(Error::Embed(format!(
                "{url}: asked for {} vectors, got {}",
                texts.len(),
                parsed.data.len()
            )));
        }
        let mut items = parsed.data;
        if items.iter().all(|i| i.index.is_some()) {
            items.sort_by_key(|i| i.index);
        }
        Ok(items
            .into_iter()
            .map(|i| {
                let mut v = i.embedding;
                crate::stores::vectors::normalize(&mut v);
                v
            })
            .collect())
    }
}

impl Embedder for HttpEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let out = self.request(texts)?;
        if out.iter().any(|v| v.len() != self.dim) {
            return Err(Error::Embed("endpoint changed its vector dimension".into()));
        }
        Ok(out)
    }
}
