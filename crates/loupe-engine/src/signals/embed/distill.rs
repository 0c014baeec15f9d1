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
//! **The table fills lazily.** A token's vector depends on that token alone,
//! so [`StaticEmbedder::open`] only loads what a previous run kept
//! (`models/` [`TABLE_FILE`] under the data root, `table.rs` has the
//! format) and [`Embedder::embed`] distills the ids its texts need that the
//! table lacks, before pooling. A small project pays for its own
//! vocabulary once; a large one pays for at most the whole vocabulary,
//! spread over its embedding stage. Grown tables are saved at most every
//! [`SAVE_INTERVAL`] and when the embedder is dropped; a missing, damaged or
//! mismatched file is treated as empty (with a warning) and replaced by the
//! next save.
//!
//! *Invariant:* a row is the same whether it was distilled alone, with any
//! other ids, by the full build ([`distill`]) or read back from the file
//! (rows are kept f16-rounded, as the file stores them), and the centring
//! mean is a constant of the distillation: the mean of the whole table,
//! shipped in [`MEAN_TXT`] (`cargo run --release -p loupe-engine --example
//! static_mean` recomputes it). So the model id names the distillation and
//! pooling, never which rows exist yet, and vectors cached under it stay
//! valid as the table grows.
//!
//! Does not cache chunk vectors (the catalog does, by content hash and
//! [`StaticEmbedder`]'s model id, which differs from the bundled model's).

use super::table::{TableFileError, TokenTable};
use super::{Embedder, PocketEmbedder};
use crate::progress::{CancelToken, Progress, ProgressSink, Stage, no_progress};
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The bundled model's tokenizer, byte for byte: pocket-encoder 0.1.2's
/// `assets/tokenizer.json` (Apache-2.0, see `assets/MODEL-LICENSE`). Its
/// SHA-256 equals `pocket_encoder::model_info().tokenizer_sha256` (a test
/// checks it), so this tokenizes exactly as the model does.
const TOKENIZER_JSON: &[u8] = include_bytes!("../../../assets/minilm-l3-tokenizer.json");

/// Version of the distillation recipe (which text stands for a token, how
/// it is pooled). Part of the table id: a change rebuilds the table and
/// needs a new [`MEAN_TXT`].
const DISTILL_VERSION: u32 = 1;

/// The mean of every row of the whole distilled table, which the pooling
/// subtracts from each row: the table id on the first line, then one `f32`
/// per line in Rust's shortest round-trip form (so parsing gives the exact
/// bits). Written by `examples/static_mean.rs` from a full table; a test
/// checks that its id is the current [`table_id`].
pub const MEAN_TXT: &str = include_str!("../../../assets/static-minilm-l3-mean.txt");

/// How often, at most, a growing table is saved: a save writes the whole
/// 23 MB file, so saving after each embedding batch would cost more than
/// distilling; a crash loses at most this much distillation work.
pub const SAVE_INTERVAL: Duration = Duration::from_secs(5);

/// Version of the pooling (centring, tf weighting). Part of the embedder's
/// model id: a change re-embeds chunks but keeps the table.
const POOL_VERSION: u32 = 1;

/// The table's file name under `models/`.
pub const TABLE_FILE: &str = "static-minilm-l3.table";

/// Texts per call to the bundled model while distilling (and ids per hold
/// of the lazy table's lock); a progress report and a cancellation check
/// follow each batch.
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

/// The id of the table distilled from the bundled model with this recipe:
/// what a table file must carry to be used, whichever rows it holds.
pub fn table_id() -> String {
    format!(
        "{}/distill-v{DISTILL_VERSION}",
        super::pocket::pocket_model_id()
    )
}

/// The shipped centring mean ([`MEAN_TXT`]), checked against the current
/// table id and dimension.
pub fn shipped_mean() -> Result<Vec<f32>> {
    let mut lines = MEAN_TXT.lines();
    let id = lines.next().unwrap_or("");
    if id != table_id() {
        return Err(Error::Embed(format!(
            "the shipped static mean is for `{id}`, not `{}`; recompute it \
             with the static_mean example",
            table_id()
        )));
    }
    let mean = lines
        .map(|l| l.trim().parse::<f32>())
        .collect::<std::result::Result<Vec<f32>, _>>()
        .map_err(|e| Error::Embed(format!("shipped static mean: {e}")))?;
    let dim = pocket_encoder::model_info().dimensions;
    if mean.len() != dim || mean.iter().any(|x| !x.is_finite()) {
        return Err(Error::Embed(format!(
            "shipped static mean has {} finite values, expected {dim}",
            mean.len()
        )));
    }
    Ok(mean)
}

/// Embed `ids`' source texts with the bundled model, calling `row(id,
/// vector)` for each id that has one. `##ing` and `ing` share a text, so
/// each text is embedded once. Reports [`Stage::Distill`] progress per
/// batch; stops with `Cancelled`.
fn distill_rows(
    encoder: &PocketEmbedder,
    vocab: &Vocabulary,
    ids: &[u32],
    progress: ProgressSink<'_>,
    cancel: &CancelToken,
    mut row: impl FnMut(u32, &[f32]),
) -> Result<()> {
    let mut by_text: BTreeMap<String, Vec<u32>> = BTreeMap::new();
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
                row(id, v);
            }
        }
        done += batch.len();
        report(done);
    }
    Ok(())
}

/// The full build: a table of the whole vocabulary in which exactly `ids`
/// (those that have a vector) are filled, all in one go. The lazy table
/// gives the same rows; this is its reference and the way to fill every
/// row at once.
pub fn distill(
    encoder: &PocketEmbedder,
    vocab: &Vocabulary,
    ids: &[u32],
    progress: ProgressSink<'_>,
    cancel: &CancelToken,
) -> Result<TokenTable> {
    let mut table = TokenTable::empty(table_id(), vocab.size(), encoder.dim());
    distill_rows(encoder, vocab, ids, progress, cancel, |id, v| {
        table.set_row(id as usize, v)
    })?;
    Ok(table)
}

/// Every id of the vocabulary.
pub fn all_ids(vocab: &Vocabulary) -> Vec<u32> {
    (0..u32::try_from(vocab.size()).unwrap_or(u32::MAX)).collect()
}

/// One token's slot: unset until decided, then `None` for a token with no
/// vector (no text produces it) or its f16-rounded vector. Set once (by
/// `open` before the embedder is shared, then only under the fill lock) and
/// read without a lock.
type Slot = OnceLock<Option<Box<[f32]>>>;

/// Chunk vectors as the sublinear-tf-weighted sum of centred token vectors
/// (see the module doc), over a token table that fills as texts need it.
/// Cheap to clone; clones share the table.
#[derive(Clone)]
pub struct StaticEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    vocab: Vocabulary,
    id: String,
    dim: usize,
    /// The whole table's mean ([`MEAN_TXT`]).
    mean: Vec<f32>,
    /// One slot per token id.
    slots: Vec<Slot>,
    /// The tokens of [`EMPTY_TEXT`], the stand-in for texts with none.
    empty_ids: Vec<u32>,
    /// The table file; `None` keeps the table in memory only.
    path: Option<PathBuf>,
    /// Held while distilling and saving, so each id is distilled once.
    fill: Mutex<Fill>,
}

/// What only the distilling thread touches.
#[derive(Default)]
struct Fill {
    /// The bundled model, loaded on the first miss.
    encoder: Option<PocketEmbedder>,
    /// Rows distilled since the last save.
    unsaved: usize,
    last_save: Option<Instant>,
}

impl StaticEmbedder {
    /// The embedder over the table kept under `data_root` (whatever rows it
    /// holds; none when there is no usable file). Cheap: never distills,
    /// never loads the bundled model.
    pub fn open(data_root: &Path) -> Result<Self> {
        let path = models_dir(data_root).join(TABLE_FILE);
        let me = Self::new(Some(path.clone()))?;
        let table = TokenTable::load(&path, &table_id(), me.inner.vocab.size(), me.inner.dim);
        match table {
            Ok(table) => {
                for (id, slot) in me.inner.slots.iter().enumerate() {
                    if let Some(row) = table.row(id) {
                        let _ = slot.set(Some(row.into()));
                    }
                }
            }
            Err(TableFileError::Missing) => {}
            Err(e) => tracing::warn!(
                "static embedding table {} not used ({e}); distilling as needed",
                path.display()
            ),
        }
        Ok(me)
    }

    /// An embedder whose table lives in memory only (starts empty).
    pub fn in_memory() -> Result<Self> {
        Self::new(None)
    }

    fn new(path: Option<PathBuf>) -> Result<Self> {
        let vocab = Vocabulary::bundled()?;
        let mean = shipped_mean()?;
        let empty_ids = vocab.ids(EMPTY_TEXT)?;
        Ok(Self {
            inner: Arc::new(Inner {
                id: format!("static:{}/pool-v{POOL_VERSION}", table_id()),
                dim: mean.len(),
                mean,
                slots: (0..vocab.size()).map(|_| Slot::new()).collect(),
                empty_ids,
                vocab,
                path,
                fill: Mutex::default(),
            }),
        })
    }

    /// Distill every row the table lacks (the full build, for benchmarks),
    /// with [`Stage::Distill`] progress, then save.
    /// Returns how many rows were distilled.
    pub fn fill_all(&self, progress: ProgressSink<'_>, cancel: &CancelToken) -> Result<usize> {
        let all = all_ids(&self.inner.vocab);
        let added = self.inner.fill(&all, progress, cancel)?;
        self.persist()?;
        Ok(added)
    }

    /// Save the rows distilled since the last save (nothing to do when there
    /// are none, or the table is in memory only).
    pub fn persist(&self) -> Result<()> {
        self.inner.save(&mut self.inner.lock_fill())
    }

    /// A copy of the table as it stands (rows not distilled yet are zeros).
    pub fn table(&self) -> TokenTable {
        self.inner.table()
    }

    /// Rows that have a vector.
    pub fn present(&self) -> usize {
        self.inner
            .slots
            .iter()
            .filter(|s| matches!(s.get(), Some(Some(_))))
            .count()
    }
}

impl Inner {
    fn lock_fill(&self) -> MutexGuard<'_, Fill> {
        // A panic while distilling leaves no half-set slot (each is set
        // whole, once), so the state behind a poisoned lock is still sound.
        self.fill.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ids among `ids` whose slot is not decided yet, sorted and distinct.
    fn missing<'a>(&self, ids: impl IntoIterator<Item = &'a u32>) -> Vec<u32> {
        let mut out: Vec<u32> = ids
            .into_iter()
            .copied()
            .filter(|&id| {
                self.slots
                    .get(id as usize)
                    .is_some_and(|s| s.get().is_none())
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Decide every slot among `ids`, distilling those that have a text, in
    /// parts of [`DISTILL_BATCH`] ids. The lock is taken per part, so a query
    /// needing a few tokens waits for one part of a long fill, not all of
    /// it. Reports [`Stage::Distill`] progress per part and stops with
    /// `Cancelled` between parts; returns how many rows were distilled.
    fn fill(&self, ids: &[u32], progress: ProgressSink<'_>, cancel: &CancelToken) -> Result<usize> {
        let missing = self.missing(ids);
        let total = Some(missing.len() as u64);
        let report = |done: usize| {
            progress(Progress {
                stage: Stage::Distill,
                done: done as u64,
                total,
            })
        };
        report(0);
        let (mut added, mut done) = (0, 0);
        for part in missing.chunks(DISTILL_BATCH) {
            cancel.check()?;
            added += self.fill_part(part)?;
            done += part.len();
            report(done);
        }
        Ok(added)
    }

    /// [`Inner::fill`] for one part, under the lock; saves when
    /// [`SAVE_INTERVAL`] has passed since the last save.
    fn fill_part(&self, ids: &[u32]) -> Result<usize> {
        let mut fill = self.lock_fill();
        // Another thread may have distilled some while this one waited.
        let mut to_distill = Vec::with_capacity(ids.len());
        for id in self.missing(ids) {
            match self.vocab.source_text(id) {
                Some(_) => to_distill.push(id),
                // No input produces this id: it never gets a vector.
                None => {
                    let _ = self.slots[id as usize].set(None);
                }
            }
        }
        if to_distill.is_empty() {
            return Ok(0);
        }
        if fill.encoder.is_none() {
            fill.encoder = Some(PocketEmbedder::new()?);
        }
        let Some(encoder) = fill.encoder.as_ref() else {
            return Ok(0);
        };
        let mut added = 0;
        let distilled = distill_rows(
            encoder,
            &self.vocab,
            &to_distill,
            &no_progress,
            &CancelToken::new(),
            |id, v| {
                let row: Box<[f32]> = v.iter().map(|&x| super::table::round_f16(x)).collect();
                if self.slots[id as usize].set(Some(row)).is_ok() {
                    added += 1;
                }
            },
        );
        fill.unsaved += added;
        let due = fill.last_save.is_none_or(|t| t.elapsed() >= SAVE_INTERVAL);
        if due && let Err(e) = self.save(&mut fill) {
            // The table is a cache: not keeping it costs time next run.
            tracing::warn!("static embedding table not saved: {e}");
        }
        distilled.map(|()| added)
    }

    fn table(&self) -> TokenTable {
        let mut table = TokenTable::empty(table_id(), self.slots.len(), self.dim);
        for (id, slot) in self.slots.iter().enumerate() {
            if let Some(Some(row)) = slot.get() {
                table.set_row(id, row);
            }
        }
        table
    }

    fn save(&self, fill: &mut Fill) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if fill.unsaved == 0 {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            crate::stores::store::ensure_dir(dir)?;
        }
        self.table().save(path)?;
        fill.unsaved = 0;
        fill.last_save = Some(Instant::now());
        Ok(())
    }

    /// The vector of a token, when it has one.
    fn row(&self, id: u32) -> Option<&[f32]> {
        self.slots.get(id as usize)?.get()?.as_deref()
    }

    /// The weighted sum of the centred rows of `ids`, normalized; `None`
    /// when no id has a vector.
    fn pooled(&self, mut ids: Vec<u32>) -> Option<Vec<f32>> {
        ids.sort_unstable();
        let mut sum = vec![0.0f32; self.dim];
        for run in ids.chunk_by(|a, b| a == b) {
            let Some(row) = self.row(run[0]) else {
                continue;
            };
            let weight = 1.0 + (run.len() as f32).ln();
            for ((s, x), m) in sum.iter_mut().zip(row).zip(&self.mean) {
                *s += weight * (x - m);
            }
        }
        crate::stores::vectors::normalize(&mut sum).then_some(sum)
    }

    fn one(&self, ids: Vec<u32>) -> Vec<f32> {
        if let Some(v) = self.pooled(ids) {
            return v;
        }
        if let Some(v) = self.pooled(self.empty_ids.clone()) {
            return v;
        }
        // Unreachable with the bundled vocabulary ("(empty)" has vectors);
        // any fixed unit vector keeps the contract.
        let mut v = vec![0.0; self.dim];
        v[0] = 1.0;
        v
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let fill = self.fill.get_mut().unwrap_or_else(PoisonError::into_inner);
        let mut fill = std::mem::take(fill);
        if let Err(e) = self.save(&mut fill) {
            tracing::warn!("static embedding table not saved: {e}");
        }
    }
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.inner.id
    }
    fn dim(&self) -> usize {
        self.inner.dim
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let inner = &*self.inner;
        let ids: Vec<Vec<u32>> = texts
            .par_iter()
            .map(|t| inner.vocab.ids(t))
            .collect::<Result<_>>()?;
        // Usually empty once a project's vocabulary is in the table.
        let missing = inner.missing(ids.iter().flatten().chain(&inner.empty_ids));
        if !missing.is_empty() {
            inner.fill(&missing, &no_progress, &CancelToken::new())?;
        }
        Ok(ids.into_par_iter().map(|ids| inner.one(ids)).collect())
    }
}
