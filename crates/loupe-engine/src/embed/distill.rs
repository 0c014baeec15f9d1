//! The static embedder: the bundled model distilled into one vector per
//! vocabulary token (Model2Vec's idea), so embedding a chunk is tokenizing it
//! and averaging table rows — no transformer at index or query time.
//!
//! **Distillation** ([`distill`]): for each token id, the bundled model
//! embeds the token's text alone, with the special tokens it always adds
//! (`[CLS] token [SEP]`, attention-masked mean, L2-normalized). pocket-encoder
//! only takes text, not token ids, so:
//! - a word-initial token whose text tokenizes back to exactly that id is
//!   embedded exactly as the model sees it alone;
//! - a continuation piece (`##ing`) cannot stand alone in text; it gets the
//!   model's vector of its surface text (`ing`), whatever that tokenizes to;
//! - a token whose text never tokenizes to itself (`[unused7]`) is
//!   unreachable from any input and gets no vector.
//!
//! **Pooling** ([`StaticEmbedder::embed`]): the text is tokenized with the
//! model's own tokenizer (no special tokens, no length cap). There is no
//! token frequency to derive a Zipf/SIF weight from (the vocabulary's order
//! is not a frequency ranking), so two principled stand-ins are used:
//! - every vector is **centred** on the mean of all token vectors, and not
//!   renormalized: a token near the common direction (punctuation, stop
//!   words — what every text shares) has a short centred vector and counts
//!   little; a distinctive one counts fully. This is SIF's common-component
//!   removal with the mean as the common component.
//! - repeats count sublinearly: each distinct token weighs `1 + ln(tf)`
//!   (the standard sublinear tf of IR), so `self` forty times in a Python
//!   class does not drown its names.
//!
//! The sum is L2-normalized.
//!
//! **The table** is not shipped: it is computed on first use and cached as
//! `models/` [`TABLE_FILE`] under the data root (`table.rs` has the format);
//! a missing, damaged or mismatched file is rebuilt with a warning.
//!
//! Does not cache chunk vectors (the catalog does, by content hash and
//! [`StaticEmbedder`]'s model id, which differs from the bundled model's).

use super::table::{TableFileError, TokenTable};
use super::{Embedder, PocketEmbedder};
use crate::progress::{CancelToken, Progress, ProgressSink, Stage};
use crate::{Error, Result};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bundled model's tokenizer, byte for byte: pocket-encoder 0.1.2's
/// `assets/tokenizer.json` (Apache-2.0, see `assets/MODEL-LICENSE`). Its
/// SHA-256 equals `pocket_encoder::model_info().tokenizer_sha256` (a test
/// checks it), so this tokenizes exactly as the model does.
const TOKENIZER_JSON: &[u8] = include_bytes!("../../assets/minilm-l3-tokenizer.json");

/// Version of the distillation recipe (which text stands for a token, how
/// it is pooled). Part of the table id: a change rebuilds the table.
const DISTILL_VERSION: u32 = 1;

/// Version of the pooling (centring, tf weighting). Part of the embedder's
/// model id: a change re-embeds chunks but keeps the table.
const POOL_VERSION: u32 = 1;

/// The table's file name under `models/`.
pub const TABLE_FILE: &str = "static-minilm-l3.table";

/// Texts per call to the bundled model while distilling; a progress report
/// and a cancellation check follow each batch.
const DISTILL_BATCH: usize = 256;

/// What stands in for a chunk with no known token (blank, or only tokens
/// without vectors); the bundled embedder embeds the same text for blanks.
const EMPTY_TEXT: &str = "(empty)";

/// Where distilled tables live: `models/` next to `projects/` under the
/// data root, so `LOUPE_DATA_DIR` / `--data-dir` move it too.
pub fn models_dir(data_root: &Path) -> PathBuf {
    data_root.join("models")
}

/// The bundled model's tokenizer, configured for whole texts: no padding,
/// no truncation (a static model has no length limit).
#[derive(Clone)]
pub struct Vocabulary {
    tokenizer: Arc<tokenizers::Tokenizer>,
}

impl Vocabulary {
    /// The tokenizer compiled into the binary.
    pub fn bundled() -> Result<Self> {
        let fail = |e: tokenizers::Error| Error::Embed(format!("bundled tokenizer: {e}"));
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(TOKENIZER_JSON).map_err(fail)?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(fail)?;
        Ok(Self {
            tokenizer: Arc::new(tokenizer),
        })
    }

    /// Number of token ids (rows of the table).
    pub fn size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    /// Token ids of `text`, without special tokens.
    pub fn ids(&self, text: &str) -> Result<Vec<u32>> {
        self.tokenizer
            .encode_fast(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| Error::Embed(format!("tokenize: {e}")))
    }

    /// The token's text, when `id` exists.
    pub fn token(&self, id: u32) -> Option<String> {
        self.tokenizer.id_to_token(id)
    }

    /// The text the model embeds to stand for token `id` (see the module
    /// doc), or `None` when no input ever produces the id.
    pub fn source_text(&self, id: u32) -> Option<String> {
        let token = self.token(id)?;
        if let Some(rest) = token.strip_prefix("##") {
            return (!rest.trim().is_empty()).then(|| rest.to_owned());
        }
        let ids = self.ids(&token).ok()?;
        (ids == [id]).then_some(token)
    }
}

/// The id of the table of `ids` distilled from the bundled model with this
/// recipe. A subset of the vocabulary (tests) gets an id of its own, so it is
/// never mistaken for the whole table.
pub fn table_id(vocab: &Vocabulary, ids: &[u32]) -> String {
    let base = format!("{}/distill-v{DISTILL_VERSION}", super::pocket_model_id());
    if ids == all_ids(vocab) {
        return base;
    }
    let mut h = blake3::Hasher::new();
    for id in ids {
        h.update(&id.to_le_bytes());
    }
    format!("{base}/subset-{}", &h.finalize().to_hex()[..16])
}

/// Embed `ids`' source texts with the bundled model into a table of the
/// whole vocabulary (rows not in `ids` stay empty). Reports
/// [`Stage::Distill`] progress per batch; stops with `Cancelled`.
pub fn distill(
    encoder: &PocketEmbedder,
    vocab: &Vocabulary,
    ids: &[u32],
    progress: ProgressSink<'_>,
    cancel: &CancelToken,
) -> Result<TokenTable> {
    let mut table = TokenTable::empty(table_id(vocab, ids), vocab.size(), encoder.dim());
    // `##ing` and `ing` share a text: embed each text once.
    let mut by_text: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for &id in ids {
        if let Some(text) = vocab.source_text(id) {
            by_text.entry(text).or_default().push(id);
        }
    }
    let work: Vec<(String, Vec<u32>)> = by_text.into_iter().collect();
    let total = work.len() as u64;
    let report = |done: usize| {
        progress(Progress {
            stage: Stage::Distill,
            done: done as u64,
            total: Some(total),
        })
    };
    report(0);
    let mut done = 0;
    for batch in work.chunks(DISTILL_BATCH) {
        cancel.check()?;
        let texts: Vec<String> = batch.iter().map(|(t, _)| t.clone()).collect();
        let vectors = encoder.embed(&texts)?;
        for ((_, ids), v) in batch.iter().zip(&vectors) {
            for &id in ids {
                table.set_row(id as usize, v);
            }
        }
        done += batch.len();
        report(done);
    }
    Ok(table)
}

/// Every id of the vocabulary.
pub fn all_ids(vocab: &Vocabulary) -> Vec<u32> {
    (0..u32::try_from(vocab.size()).unwrap_or(u32::MAX)).collect()
}

/// Load the table of `ids` (normally [`all_ids`]) from
/// `models_dir(data_root)`, or distill and save it when it is missing,
/// damaged or made for another model or subset. Returns the table and how
/// long distilling took (`None` when it was loaded).
pub fn load_or_distill(
    data_root: &Path,
    vocab: &Vocabulary,
    ids: &[u32],
    progress: ProgressSink<'_>,
    cancel: &CancelToken,
) -> Result<(TokenTable, Option<Duration>)> {
    let dim = pocket_encoder::model_info().dimensions;
    let dir = models_dir(data_root);
    let path = dir.join(TABLE_FILE);
    let id = table_id(vocab, ids);
    match TokenTable::load(&path, &id, vocab.size(), dim) {
        Ok(table) => return Ok((table, None)),
        Err(TableFileError::Missing) => {}
        Err(e) => tracing::warn!(
            "static embedding table {} not used ({e}); distilling it again",
            path.display()
        ),
    }
    let started = Instant::now();
    let encoder = PocketEmbedder::new()?;
    let table = distill(&encoder, vocab, ids, progress, cancel)?;
    let took = started.elapsed();
    tracing::info!(
        "distilled {} token vectors in {:.1} s",
        table.present(),
        took.as_secs_f64()
    );
    // The table is a cache: failing to keep it costs time on the next run,
    // not this one.
    if let Err(e) = crate::store::ensure_dir(&dir).and_then(|()| table.save(&path)) {
        tracing::warn!("static embedding table not saved: {e}");
    }
    Ok((table, Some(took)))
}

/// Chunk vectors as the sublinear-tf-weighted sum of centred token vectors
/// (see the module doc).
#[derive(Clone)]
pub struct StaticEmbedder {
    vocab: Vocabulary,
    /// Centred rows; a token without a vector stays a zero row.
    centred: Arc<TokenTable>,
    id: String,
    distilled_in: Option<Duration>,
}

impl StaticEmbedder {
    /// Load (or distill once) the table under `data_root` and build the
    /// embedder. Distilling reports [`Stage::Distill`] progress.
    pub fn open(
        data_root: &Path,
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<Self> {
        let vocab = Vocabulary::bundled()?;
        let (table, took) = load_or_distill(data_root, &vocab, &all_ids(&vocab), progress, cancel)?;
        let mut me = Self::from_table(vocab, table)?;
        me.distilled_in = took;
        Ok(me)
    }

    /// An embedder over an existing table (e.g. a distilled subset).
    pub fn from_table(vocab: Vocabulary, table: TokenTable) -> Result<Self> {
        if table.rows() != vocab.size() || table.dim == 0 {
            return Err(Error::Embed(format!(
                "static table of {} rows for a vocabulary of {}",
                table.rows(),
                vocab.size()
            )));
        }
        let id = format!("static:{}/pool-v{POOL_VERSION}", table.id);
        Ok(Self {
            vocab,
            centred: Arc::new(centre(table)),
            id,
            distilled_in: None,
        })
    }

    /// How long distilling the table took when [`StaticEmbedder::open`]
    /// had to; `None` when it was loaded from disk.
    pub fn distilled_in(&self) -> Option<Duration> {
        self.distilled_in
    }

    fn pooled(&self, text: &str) -> Result<Option<Vec<f32>>> {
        let mut ids = self.vocab.ids(text)?;
        ids.sort_unstable();
        let mut sum = vec![0.0f32; self.centred.dim];
        for run in ids.chunk_by(|a, b| a == b) {
            let Some(row) = self.centred.row(run[0] as usize) else {
                continue;
            };
            let weight = 1.0 + (run.len() as f32).ln();
            for (s, x) in sum.iter_mut().zip(row) {
                *s += weight * x;
            }
        }
        Ok(crate::vectors::normalize(&mut sum).then_some(sum))
    }

    fn one(&self, text: &str) -> Result<Vec<f32>> {
        if let Some(v) = self.pooled(text)? {
            return Ok(v);
        }
        if let Some(v) = self.pooled(EMPTY_TEXT)? {
            return Ok(v);
        }
        // A table without even these tokens (a small test subset): any fixed
        // unit vector keeps the contract.
        let mut v = vec![0.0; self.centred.dim];
        v[0] = 1.0;
        Ok(v)
    }
}

/// Subtract the mean of the present rows from each present row.
fn centre(mut table: TokenTable) -> TokenTable {
    let dim = table.dim;
    let mut mean = vec![0.0f64; dim];
    let mut n = 0usize;
    for i in 0..table.rows() {
        if let Some(row) = table.row(i) {
            mean.iter_mut().zip(row).for_each(|(m, &x)| *m += x as f64);
            n += 1;
        }
    }
    if n == 0 {
        return table;
    }
    let mean: Vec<f32> = mean.iter().map(|m| (m / n as f64) as f32).collect();
    for row in table.data.chunks_exact_mut(dim) {
        if row.iter().any(|&x| x != 0.0) {
            row.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m);
        }
    }
    table
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.centred.dim
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        texts.par_iter().map(|t| self.one(t)).collect()
    }
}
