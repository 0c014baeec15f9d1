//! Loupe's own code-search vectors: a static model (one vector per word of a
//! code-aware vocabulary) trained by `tools/train/train_vectors.py` on
//! (commit message or pull-request text → changed chunk) pairs mined from
//! public repositories (TRAINING.md). Embedding a text is splitting it into
//! [`code_words`] and summing their rows; there is no network, no download
//! and no first-run work: the table ships once, as a file beside the binary
//! (a question reads only its words' rows from disk; see
//! [`CodeModel::shipped`]). Without that file there are no code vectors:
//! the doors say so once and answer from the other signals.
//!
//! **Words** ([`code_words`]): the ASCII identifier runs of the text
//! (`[A-Za-z0-9_]+`; a run with a non-ASCII letter is skipped), split at underscores and at case changes
//! (`parseHTTPHeader` → `parse`, `http`, `header`), lowercased; a run of
//! two to [`MAX_COMPOUND_PARTS`] parts also yields the parts joined by `_`
//! (`parse_http_header`), so `spawn_blocking` and `spawnBlocking` are the
//! same word and a name is more than its pieces. Digits stay with their
//! letters (`u8`, `sha256`, `http2`). The trainer gets its words from this
//! function too (`examples/code_corpus.rs`), so training and use cannot
//! disagree on a single token.
//!
//! **Pooling** ([`CodeEmbedder::embed`]): each distinct word in the
//! vocabulary adds its row weighted by `1 + ln(tf)`; the sum is
//! L2-normalized. There is no separate per-word weight: a row's length is
//! its weight, learned with it. A text with no known word gets
//! [`CodeModel::blank`], the same constant unit vector for every such text.
//!
//! **File** (`assets/code-vectors.bin`, little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `LPCODEV1` |
//! | 4 | dims (`u32`) |
//! | 4 | rows (`u32`) |
//! | 4 | vocabulary bytes (`u32`) |
//! | vocabulary bytes | the rows' words, UTF-8, each followed by `\n` |
//! | rows × 4 | per-row scale (`f32`) |
//! | rows × dims | coordinates (`i8`); row r is `scale[r] × q[r]` |
//!
//! Provenance, licence and measurements: `assets/code-vectors.md`.

use super::{Embedder, Hold};
use crate::{Error, Result};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The first 16 hex digits of the shipped model file's blake3 hash, which
/// name the model (its [`Embedder::model_id`]), and its length: the file a
/// binary finds is used only if it is this model. Recorded, not compiled
/// in: the binary carries no copy of the 16 MB (the `.deb` carries the
/// file once). A unit test checks both against `assets/code-vectors.bin`.
const SHIPPED_HASH: &str = "b9c43179bb33e17a";
/// The shipped model file's length in bytes (see [`SHIPPED_HASH`]).
const SHIPPED_LEN: u64 = 16_333_036;

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"LPCODEV1";

/// A run with more parts than this yields only its parts: long generated
/// names would otherwise fill the vocabulary with one-off compounds.
pub const MAX_COMPOUND_PARTS: usize = 4;

/// Longer parts (hashes, base64, minified names) are skipped.
pub const MAX_PART_CHARS: usize = 32;

/// Version of [`code_words`] and the pooling: part of the model id, so a
/// change re-embeds every chunk.
const WORDS_VERSION: u32 = 1;

/// Call `word` with each word of `text`, in order (see the module doc).
pub fn code_words(text: &str, mut word: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
        let run = &text[start..i];
        if !run.is_ascii() {
            continue;
        }
        parts.clear();
        split_run(run, &mut parts);
        for p in &parts {
            word(p);
        }
        if (2..=MAX_COMPOUND_PARTS).contains(&parts.len()) {
            word(&parts.join("_"));
        }
    }
}

/// Identifier bytes: ASCII letters, digits, `_`, and any byte of a
/// non-ASCII character, so that a word with one (`qué`, `naïve_impl`) is one
/// run, skipped whole rather than cut into misleading ASCII pieces. Runs
/// therefore start and end at char boundaries.
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Split one identifier run into lowercased parts: at `_`, before an upper
/// case letter that follows a lower case letter or digit (`fooBar`), and
/// before the last capital of an acronym followed by a lower case letter
/// (`HTTPServer` → `http`, `server`).
fn split_run(run: &str, out: &mut Vec<String>) {
    for segment in run.split('_').filter(|s| !s.is_empty()) {
        let b = segment.as_bytes();
        let mut start = 0;
        for k in 1..b.len() {
            let (prev, cur) = (b[k - 1], b[k]);
            let next_lower = b.get(k + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = cur.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower));
            if boundary {
                push_part(&segment[start..k], out);
                start = k;
            }
        }
        push_part(&segment[start..], out);
    }
}

fn push_part(part: &str, out: &mut Vec<String>) {
    if !part.is_empty() && part.len() <= MAX_PART_CHARS {
        out.push(part.to_ascii_lowercase());
    }
}

/// A decoded model file: the vocabulary and one int8 row per word.
#[derive(Clone, Debug)]
pub struct CodeModel {
    /// Coordinates per row.
    pub dim: usize,
    /// Word → row.
    index: FxHashMap<String, u32>,
    /// The `rows × dim` int8 coordinates, row-major, as stored; pooling
    /// scales them on the fly.
    rows: Rows,
    /// One scale per row.
    scales: Vec<f32>,
    /// `loupe-code:` and a hash of the file bytes and the words version.
    id: String,
}

/// Where a model's coordinates are read from.
#[derive(Clone, Debug)]
enum Rows {
    /// In memory: a model decoded from bytes.
    Memory(Vec<u8>),
    /// The shipped model's file on disk ([`CodeModel::shipped`]).
    File(Arc<FileRows>),
}

/// The shipped model's coordinates in its file: a question reads the rows
/// of its words (a few hundred bytes each, through the page cache, which
/// is not the process's memory); an index run, which needs every row,
/// reads them whole while it holds them ([`Embedder::hold`]).
#[derive(Debug)]
struct FileRows {
    file: std::fs::File,
    /// Byte offset of row 0.
    at: usize,
    /// `rows × dim`.
    len: usize,
    /// The rows read whole, while an index run holds them.
    held: Mutex<Weak<Vec<u8>>>,
    /// Whether a failed row read was logged (once is enough).
    warned: std::sync::atomic::AtomicBool,
}

/// Where a batch's rows come from: chosen once per batch.
enum RowSource<'a> {
    Memory(&'a [u8]),
    Held(Arc<Vec<u8>>),
    File(&'a FileRows),
}

impl RowSource<'_> {
    /// Row `r` (`dim` bytes), read into `buf` when it comes from disk. A
    /// file that went bad under an open model (truncated or emptied in
    /// place) is an error, logged once: a wrong row would be a wrong
    /// vector, kept in the index as if it were right.
    fn row<'b>(&'b self, r: usize, dim: usize, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
        let span = r * dim..(r + 1) * dim;
        match self {
            RowSource::Memory(bytes) => Ok(&bytes[span]),
            RowSource::Held(bytes) => Ok(&bytes[span]),
            RowSource::File(f) => {
                buf.resize(dim, 0);
                match crate::stores::vectors::read_at(&f.file, buf, (f.at + span.start) as u64) {
                    Ok(()) => Ok(buf),
                    Err(e) => {
                        if !f.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            tracing::warn!("reading the code model's file: {e}");
                        }
                        Err(bad(&format!("reading a row: {e}")))
                    }
                }
            }
        }
    }
}

/// The shipped model file's name, beside an installed binary and in the
/// source tree.
const SHIPPED_FILE_NAME: &str = "code-vectors.bin";

/// An index run embedding fewer texts than this reads the rows it needs
/// one by one rather than the file whole (a text has a few dozen distinct
/// words; a watcher's update of a file or two is far below it, a first
/// index far above; not tuned between: either way costs milliseconds).
const HOLD_MIN_TEXTS: usize = 256;

/// A model file's parts before its coordinates.
struct Head {
    dim: usize,
    rows: usize,
    index: FxHashMap<String, u32>,
    scales: Vec<f32>,
    /// Byte offset of row 0.
    rows_at: usize,
}

impl Head {
    /// Bytes of the whole file.
    fn file_len(&self) -> usize {
        self.rows_at + self.rows * self.dim
    }
}

/// Bytes of a model file before its vocabulary.
const HEADER_BYTES: usize = 20;

fn bad(what: &str) -> Error {
    Error::Embed(format!("code vectors file: {what}"))
}

impl CodeModel {
    /// The shipped model, read from its file beside an installed binary
    /// (`../share/loupe/`) or in the source tree the binary was built from,
    /// where that file is the model this binary was built for: only the
    /// rows in use are ever in the process's memory. An error says where
    /// it looked and what it found there (a binary copied away from its
    /// package or source tree has no model; the doors then run without
    /// code vectors and say so).
    pub fn shipped() -> Result<Self> {
        Self::first_shipped_file(&crate::signals::shipped_files(SHIPPED_FILE_NAME))
    }

    /// The first of `paths` that holds the shipped model, or an error that
    /// names each and what was there.
    fn first_shipped_file(paths: &[PathBuf]) -> Result<Self> {
        let mut seen = Vec::new();
        for path in paths {
            match Self::open_shipped_file(path) {
                Ok(Some(model)) => return Ok(model),
                Ok(None) => seen.push(format!("{}: missing", path.display())),
                Err(e) => seen.push(e.to_string()),
            }
        }
        Err(bad(&format!("no usable model file ({})", seen.join("; "))))
    }

    /// The shipped model from `path` if the file there is the model this
    /// binary was built for, byte for byte (`None`: no file there).
    fn open_shipped_file(path: &Path) -> Result<Option<Self>> {
        use std::io::Read;
        let io = |e: std::io::Error| bad(&format!("{}: {e}", path.display()));
        // Checked before the open: opening a FIFO would wait for a writer.
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(bad(&format!("{} is not a file", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        }
        let mut file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len != SHIPPED_LEN {
            return Err(bad(&format!(
                "{} is not the model this binary was built with ({len} bytes, not {SHIPPED_LEN})",
                path.display(),
            )));
        }
        // The whole file, through a small buffer: its pages stay in the
        // page cache, not in this process.
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match file.read(&mut buf).map_err(io)? {
                0 => break,
                n => {
                    hasher.update(&buf[..n]);
                }
            }
        }
        if hasher.finalize().to_hex()[..16] != *SHIPPED_HASH {
            return Err(bad(&format!(
                "{} is not the model this binary was built with (its hash differs)",
                path.display()
            )));
        }
        let mut header = [0u8; HEADER_BYTES];
        crate::stores::vectors::read_at(&file, &mut header, 0).map_err(io)?;
        let field = |at: usize| {
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
                as usize
        };
        let head_len = HEADER_BYTES + field(16) + field(12) * 4;
        let mut head_bytes = vec![0u8; head_len.min(len as usize)];
        crate::stores::vectors::read_at(&file, &mut head_bytes, 0).map_err(io)?;
        let head = Self::decode_head(&head_bytes)?;
        let rows = Rows::File(Arc::new(FileRows {
            file,
            at: head.rows_at,
            len: head.rows * head.dim,
            held: Mutex::new(Weak::new()),
            warned: Default::default(),
        }));
        Ok(Some(Self::with_rows(head, rows, SHIPPED_HASH)))
    }

    /// Decode a model file, checking every length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let hash = blake3::hash(bytes).to_hex();
        let head = Self::decode_head(bytes)?;
        if bytes.len() < head.file_len() {
            return Err(bad("truncated"));
        }
        if bytes.len() > head.file_len() {
            return Err(bad("trailing bytes"));
        }
        let rows = Rows::Memory(bytes[head.rows_at..].to_vec());
        Ok(Self::with_rows(head, rows, &hash[..16]))
    }

    fn with_rows(head: Head, rows: Rows, hash: &str) -> Self {
        Self {
            dim: head.dim,
            index: head.index,
            rows,
            scales: head.scales,
            id: format!("loupe-code:{hash}/w{WORDS_VERSION}"),
        }
    }

    /// Decode the parts of a model file before its coordinates from
    /// `bytes`, which hold at least those parts.
    fn decode_head(bytes: &[u8]) -> Result<Head> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8]> {
            let end = at
                .checked_add(n)
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| bad("truncated"))?;
            let out = &bytes[at..end];
            at = end;
            Ok(out)
        };
        if take(8)? != MAGIC {
            return Err(bad("not a Loupe code vectors file"));
        }
        let mut u32_at = || -> Result<usize> {
            let b = take(4)?;
            Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        let dim = u32_at()?;
        let rows = u32_at()?;
        let vocab_bytes = u32_at()?;
        if dim == 0 || dim > 4096 || rows == 0 {
            return Err(bad("implausible dimensions"));
        }
        let vocab = std::str::from_utf8(take(vocab_bytes)?).map_err(|_| bad("vocabulary"))?;
        let words: Vec<&str> = vocab.split_terminator('\n').collect();
        if words.len() != rows {
            return Err(bad("vocabulary size differs from the row count"));
        }
        let scales: Vec<f32> = take(rows * 4)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if scales.iter().any(|s| !s.is_finite()) {
            return Err(bad("non-finite scale"));
        }
        let mut index = FxHashMap::with_capacity_and_hasher(rows, Default::default());
        for (r, w) in words.iter().enumerate() {
            if index.insert((*w).to_owned(), r as u32).is_some() {
                return Err(bad("a word appears twice"));
            }
        }
        Ok(Head {
            dim,
            rows,
            index,
            scales,
            rows_at: at,
        })
    }

    /// Words in the vocabulary.
    pub fn vocabulary_size(&self) -> usize {
        self.index.len()
    }

    /// The unit vector of a text with no known word.
    pub fn blank(&self) -> Vec<f32> {
        vec![1.0 / (self.dim as f32).sqrt(); self.dim]
    }

    /// The pooled, L2-normalized vector of `text` (an error only when the
    /// model's file went bad under it).
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        self.pool(text, &self.source())
    }

    /// Where the rows come from now: memory, the rows an index run holds,
    /// or the file.
    fn source(&self) -> RowSource<'_> {
        match &self.rows {
            Rows::Memory(bytes) => RowSource::Memory(bytes),
            Rows::File(f) => match held(&f.held).upgrade() {
                Some(rows) => RowSource::Held(rows),
                None => RowSource::File(f),
            },
        }
    }

    /// Keep every row in memory until the returned value is dropped (a
    /// file-backed model's; `None` for one already in memory, or if the
    /// read fails, when rows are read one by one as before).
    fn hold(&self) -> Option<Arc<Vec<u8>>> {
        let Rows::File(f) = &self.rows else {
            return None;
        };
        let mut slot = held(&f.held);
        if let Some(rows) = slot.upgrade() {
            return Some(rows);
        }
        let mut rows = vec![0u8; f.len];
        match crate::stores::vectors::read_at(&f.file, &mut rows, f.at as u64) {
            Ok(()) => {
                let rows = Arc::new(rows);
                *slot = Arc::downgrade(&rows);
                Some(rows)
            }
            Err(e) => {
                tracing::warn!("reading the code model's file: {e}; reading rows one by one");
                None
            }
        }
    }

    /// [`Self::embed_one`] with the rows from `rows`.
    fn pool(&self, text: &str, rows: &RowSource<'_>) -> Result<Vec<f32>> {
        let mut tf: FxHashMap<u32, u32> = FxHashMap::default();
        code_words(text, |w| {
            if let Some(&r) = self.index.get(w) {
                *tf.entry(r).or_default() += 1;
            }
        });
        // Sum in row order so the result does not depend on hash order.
        let mut counts: Vec<(u32, u32)> = tf.into_iter().collect();
        counts.sort_unstable();
        let mut v = vec![0f32; self.dim];
        let mut buf = Vec::new();
        for (r, n) in counts {
            let r = r as usize;
            let weight = 1.0 + (n as f32).ln();
            let scale = self.scales[r];
            let row = rows.row(r, self.dim, &mut buf)?;
            // `q × scale` first, as the trainer dequantizes, so the sums match.
            v.iter_mut()
                .zip(row)
                .for_each(|(x, &q)| *x += weight * (f32::from(q as i8) * scale));
        }
        Ok(if crate::stores::vectors::normalize(&mut v) {
            v
        } else {
            self.blank()
        })
    }
}

/// The held rows' slot, whatever a panicking holder left in it (a weak
/// reference cannot be left half-written).
fn held(slot: &Mutex<Weak<Vec<u8>>>) -> std::sync::MutexGuard<'_, Weak<Vec<u8>>> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// [`CodeModel`] as an [`Embedder`]: cheap enough to run on one core per
/// batch; batches are split across cores like the bundled model's.
#[derive(Clone, Debug)]
pub struct CodeEmbedder {
    model: std::sync::Arc<CodeModel>,
}

impl CodeEmbedder {
    /// The shipped model (decoding it takes a few milliseconds).
    pub fn new() -> Result<Self> {
        Ok(Self {
            model: std::sync::Arc::new(CodeModel::shipped()?),
        })
    }

    /// An embedder over any decoded model (tests, experiments).
    pub fn with_model(model: CodeModel) -> Self {
        Self {
            model: std::sync::Arc::new(model),
        }
    }
}

impl Embedder for CodeEmbedder {
    fn model_id(&self) -> &str {
        &self.model.id
    }
    fn dim(&self) -> usize {
        self.model.dim
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        use rayon::prelude::*;
        let rows = self.model.source();
        texts
            .par_iter()
            .map(|t| self.model.pool(t, &rows))
            .collect()
    }
    fn hold(&self, texts: usize) -> Option<Hold> {
        if texts < HOLD_MIN_TEXTS {
            return None;
        }
        self.model.hold().map(|rows| Box::new(rows) as Hold)
    }
    fn caches_vectors(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped model's bytes, read from the source tree.
    fn shipped_bytes() -> Vec<u8> {
        std::fs::read(crate::signals::file_candidates(None, SHIPPED_FILE_NAME)[0].as_path())
            .unwrap()
    }

    #[test]
    fn the_recorded_hash_and_length_are_the_shipped_files() {
        let bytes = shipped_bytes();
        let hash = blake3::hash(&bytes).to_hex();
        assert_eq!(
            (SHIPPED_HASH, SHIPPED_LEN),
            (&hash[..16], bytes.len() as u64),
            "assets/code-vectors.bin changed: set SHIPPED_HASH and SHIPPED_LEN to its own"
        );
        let model = CodeModel::shipped().unwrap();
        assert_eq!(model.id, CodeModel::from_bytes(&bytes).unwrap().id);
    }

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        code_words(text, |w| out.push(w.to_owned()));
        out
    }

    #[test]
    fn identifiers_split_at_underscores_and_case() {
        assert_eq!(
            words("spawn_blocking(parseHTTPHeader) u8"),
            [
                "spawn",
                "blocking",
                "spawn_blocking",
                "parse",
                "http",
                "header",
                "parse_http_header",
                "u8"
            ]
        );
        assert_eq!(words("spawnBlocking"), words("spawn_blocking"));
        assert_eq!(
            words("__init__ sha256 IOError"),
            ["init", "sha256", "io", "error", "io_error"]
        );
    }

    #[test]
    fn long_parts_and_long_runs_stay_out() {
        let hash = "a".repeat(MAX_PART_CHARS + 1);
        assert_eq!(words(&format!("x {hash} y")), ["x", "y"]);
        assert_eq!(words("a_b_c_d_e"), ["a", "b", "c", "d", "e"]);
        assert_eq!(words("¿qué? — naïve_impl ok"), ["ok"]);
    }

    fn tiny_model() -> Vec<u8> {
        model_with_words("parse\nheader\nparse_header\n")
    }

    fn model_with_words(words: &str) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        for n in [2u32, 3, words.len() as u32] {
            b.extend(n.to_le_bytes());
        }
        b.extend(words.as_bytes());
        for s in [0.5f32, 0.25, 1.0] {
            b.extend(s.to_le_bytes());
        }
        b.extend([2i8 as u8, 0, 0, 4, 1, 1]);
        b
    }

    #[test]
    fn pooling_sums_known_rows_and_normalizes() {
        let m = CodeModel::from_bytes(&tiny_model()).unwrap();
        assert_eq!(m.vocabulary_size(), 3);
        // parse → (1, 0); header → (0, 1); parse_header → (1, 1).
        let v = m.embed_one("parse").unwrap();
        assert_eq!(v, vec![1.0, 0.0]);
        let v = m.embed_one("parseHeader").unwrap();
        let s = 2f32.sqrt();
        assert!((v[0] - 2.0 / (2.0 * s)).abs() < 1e-6 && (v[1] - v[0]).abs() < 1e-6);
        assert_eq!(m.embed_one("nothing known").unwrap(), m.blank());
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_panic() {
        let good = tiny_model();
        for cut in 0..good.len() {
            assert!(CodeModel::from_bytes(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert!(CodeModel::from_bytes(&trailing).is_err());
        let dup = model_with_words("parse\nheader\nparse\n");
        assert!(CodeModel::from_bytes(&dup).is_err());
        assert!(CodeModel::from_bytes(&model_with_words("parse\nheader\nparse_header\n")).is_ok());
    }

    /// The trainer writes what its own pooling gives for a few texts
    /// (`train_vectors.py --probes`); Rust must give the same vectors.
    #[test]
    fn the_shipped_model_pools_as_the_trainer_does() {
        #[derive(serde::Deserialize)]
        struct Probe {
            text: String,
            vector: Vec<f32>,
        }
        let probes: Vec<Probe> =
            serde_json::from_str(include_str!("../../../assets/code-vectors.probe.json")).unwrap();
        let m = CodeModel::shipped().unwrap();
        assert!(!probes.is_empty());
        for p in probes {
            let v = m.embed_one(&p.text).unwrap();
            assert_eq!(v.len(), p.vector.len(), "{}", p.text);
            let worst = v
                .iter()
                .zip(&p.vector)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(worst < 1e-5, "{}: off by {worst}", p.text);
        }
    }

    #[test]
    fn the_shipped_model_decodes() {
        let m = CodeModel::from_bytes(&shipped_bytes()).unwrap();
        assert!(m.dim <= 256 && m.vocabulary_size() > 1000);
        let v = m.embed_one("fn spawn_blocking").unwrap();
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(matches!(m.rows, Rows::Memory(_)));
    }

    /// The tests run from the source tree, where the model's file is.
    #[test]
    fn the_shipped_model_reads_its_file_and_pools_alike() {
        let texts: Vec<String> = ["fn spawn_blocking", "parse an HTTP header", "nothing"]
            .into_iter()
            .map(String::from)
            .collect();
        let binary = CodeEmbedder::with_model(CodeModel::from_bytes(&shipped_bytes()).unwrap());
        let file = CodeEmbedder::new().unwrap();
        assert!(matches!(file.model.rows, Rows::File(_)));
        assert_eq!(file.model_id(), binary.model_id());
        let want = binary.embed(&texts).unwrap();
        // Row by row from disk.
        assert!(file.hold(HOLD_MIN_TEXTS - 1).is_none());
        assert!(matches!(file.model.source(), RowSource::File(_)));
        assert_eq!(file.embed(&texts).unwrap(), want);
        // Whole, while an index run holds the rows; from disk again after.
        let hold = file.hold(HOLD_MIN_TEXTS).unwrap();
        assert!(matches!(file.model.source(), RowSource::Held(_)));
        let again = file.hold(HOLD_MIN_TEXTS).unwrap();
        assert_eq!(file.embed(&texts).unwrap(), want);
        drop((hold, again));
        assert!(matches!(file.model.source(), RowSource::File(_)));
        // A model in memory holds nothing more.
        assert!(binary.hold(usize::MAX).is_none());
    }

    /// The `.deb` installs the binaries in /usr/bin and the model in
    /// /usr/share/loupe (the app's test `package` checks that side).
    #[test]
    fn the_model_file_is_looked_for_beside_an_installed_binary() {
        let found = crate::signals::file_candidates(Some(Path::new("/usr/bin")), SHIPPED_FILE_NAME);
        // `..` resolved by hand: /usr/bin is no symlink on a Debian system.
        let mut resolved = PathBuf::new();
        for part in found[0].components() {
            match part {
                std::path::Component::ParentDir => {
                    resolved.pop();
                }
                other => resolved.push(other),
            }
        }
        assert_eq!(resolved, Path::new("/usr/share/loupe/code-vectors.bin"));
        assert!(found[1].ends_with("assets/code-vectors.bin") && found[1].is_file());
        assert_eq!(
            crate::signals::file_candidates(None, SHIPPED_FILE_NAME).len(),
            1
        );
    }

    #[test]
    fn a_file_that_is_not_the_binarys_model_is_not_used() {
        let shipped = shipped_bytes();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SHIPPED_FILE_NAME);
        assert!(CodeModel::open_shipped_file(&path).unwrap().is_none());
        std::fs::create_dir(&path).unwrap();
        let err = CodeModel::open_shipped_file(&path).unwrap_err().to_string();
        assert!(err.contains("not a file"), "{err}");
        std::fs::remove_dir(&path).unwrap();
        let mut changed = shipped.clone();
        let last = changed.len() - 1;
        changed[last] ^= 1;
        std::fs::write(&path, &changed).unwrap();
        let err = CodeModel::open_shipped_file(&path).unwrap_err().to_string();
        assert!(err.contains("hash differs"), "{err}");
        std::fs::write(&path, &shipped[..shipped.len() / 2]).unwrap();
        let err = CodeModel::open_shipped_file(&path).unwrap_err().to_string();
        assert!(err.contains("bytes, not"), "{err}");
        std::fs::write(&path, &shipped).unwrap();
        let m = CodeModel::open_shipped_file(&path).unwrap().unwrap();
        assert!(matches!(m.rows, Rows::File(_)));
        let want = CodeModel::from_bytes(&shipped).unwrap().embed_one("spawn");
        assert_eq!(m.embed_one("spawn").unwrap(), want.unwrap());
        // Emptied under the open model: an error, not a wrong vector, and
        // no panic; an embedder over it fails the batch the same way.
        std::fs::write(&path, b"").unwrap();
        let err = m.embed_one("spawn").unwrap_err().to_string();
        assert!(err.contains("reading a row"), "{err}");
        let embedder = CodeEmbedder::with_model(m);
        assert!(embedder.embed(&["spawn".to_owned()]).is_err());
        // Texts with no known word read no row.
        assert!(embedder.embed(&["¿qué?".to_owned()]).is_ok());
    }

    /// No usable file where a binary looks: no model, and the error names
    /// each place and what was there; the first good one wins.
    #[test]
    fn without_its_file_there_is_no_model_and_the_error_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.bin");
        let short = dir.path().join("short.bin");
        std::fs::write(&short, b"LPCODEV1").unwrap();
        let err = CodeModel::first_shipped_file(&[missing.clone(), short.clone()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.bin: missing"), "{err}");
        assert!(err.contains("short.bin is not the model"), "{err}");
        let good = crate::signals::file_candidates(None, SHIPPED_FILE_NAME).remove(0);
        let m = CodeModel::first_shipped_file(&[missing, good, short]).unwrap();
        assert!(matches!(m.rows, Rows::File(_)));
    }
}
