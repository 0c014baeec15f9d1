//! Loupe's own code-search vectors: a static model (one vector per word of a
//! code-aware vocabulary) trained by `tools/train/train_vectors.py` on
//! (commit message or pull-request text → changed chunk) pairs mined from
//! public repositories (TRAINING.md). Embedding a text is splitting it into
//! [`code_words`] and summing their rows; there is no network, no download
//! and no first-run work: the table ships compiled into the binary.
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

use super::Embedder;
use crate::{Error, Result};
use std::borrow::Cow;
use std::collections::HashMap;

/// The shipped model file (see the module doc for its layout). A static,
/// not a const: each use of a const may get its own copy of the 16 MB.
static SHIPPED: &[u8] = include_bytes!("../../assets/code-vectors.bin");

/// The first 16 hex digits of [`SHIPPED`]'s blake3 hash, which name the
/// model (its [`Embedder::model_id`]). Recorded rather than computed at
/// start: hashing the file would page all 16 MB of it into the process,
/// where they would stay resident, while a question reads only the rows of
/// its own words. A unit test checks it against the file.
const SHIPPED_HASH: &str = "eeb09aa1d2a623d7";

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

/// A decoded model file: the vocabulary and one f32 row per word.
#[derive(Clone, Debug)]
pub struct CodeModel {
    /// Coordinates per row.
    pub dim: usize,
    /// Word → row.
    index: HashMap<String, u32>,
    /// `rows × dim` int8 coordinates (as bytes), row-major, as stored;
    /// pooling scales them on the fly. The shipped model's are borrowed
    /// from the binary rather than copied (15 MB): only the rows a text
    /// uses are paged in, and the kernel can drop them again.
    quantized: Cow<'static, [u8]>,
    /// One scale per row.
    scales: Vec<f32>,
    /// `loupe-code:` and a hash of the file bytes and the words version.
    id: String,
}

impl CodeModel {
    /// The model compiled into the binary.
    pub fn shipped() -> Result<Self> {
        Self::decode(SHIPPED, SHIPPED_HASH, Cow::Borrowed)
    }

    /// The shipped model file as the binary holds it, for measuring how
    /// much of it is resident (`examples/first_prompt`). The model is
    /// read in place: whatever reads these bytes pages them in.
    pub fn shipped_file() -> &'static [u8] {
        SHIPPED
    }

    /// Decode a model file, checking every length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let hash = blake3::hash(bytes).to_hex();
        Self::decode(bytes, &hash[..16], |rows| Cow::Owned(rows.to_vec()))
    }

    /// Decode `bytes`, whose hash (16 hex digits) is `hash`; `keep` turns
    /// the coordinates' bytes into the model's own (borrowed when they live
    /// as long as the program).
    fn decode<'a>(
        bytes: &'a [u8],
        hash: &str,
        keep: impl FnOnce(&'a [u8]) -> Cow<'static, [u8]>,
    ) -> Result<Self> {
        let bad = |what: &str| Error::Embed(format!("code vectors file: {what}"));
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
        let quantized = take(rows * dim)?;
        if at != bytes.len() {
            return Err(bad("trailing bytes"));
        }
        if scales.iter().any(|s| !s.is_finite()) {
            return Err(bad("non-finite scale"));
        }
        let mut index = HashMap::with_capacity(rows);
        for (r, w) in words.iter().enumerate() {
            if index.insert((*w).to_owned(), r as u32).is_some() {
                return Err(bad("a word appears twice"));
            }
        }
        Ok(Self {
            dim,
            index,
            quantized: keep(quantized),
            scales,
            id: format!("loupe-code:{hash}/w{WORDS_VERSION}"),
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

    /// The pooled, L2-normalized vector of `text`.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut tf: HashMap<u32, u32> = HashMap::new();
        code_words(text, |w| {
            if let Some(&r) = self.index.get(w) {
                *tf.entry(r).or_default() += 1;
            }
        });
        // Sum in row order so the result does not depend on hash order.
        let mut counts: Vec<(u32, u32)> = tf.into_iter().collect();
        counts.sort_unstable();
        let mut v = vec![0f32; self.dim];
        for (r, n) in counts {
            let r = r as usize;
            let weight = 1.0 + (n as f32).ln();
            let scale = self.scales[r];
            let row = &self.quantized[r * self.dim..(r + 1) * self.dim];
            // `q × scale` first, as the trainer dequantizes, so the sums match.
            v.iter_mut()
                .zip(row)
                .for_each(|(x, &q)| *x += weight * (f32::from(q as i8) * scale));
        }
        if crate::vectors::normalize(&mut v) {
            v
        } else {
            self.blank()
        }
    }
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
        Ok(texts.par_iter().map(|t| self.model.embed_one(t)).collect())
    }
    fn caches_vectors(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_hash_is_the_shipped_files() {
        let hash = blake3::hash(SHIPPED).to_hex();
        assert_eq!(
            SHIPPED_HASH,
            &hash[..16],
            "assets/code-vectors.bin changed: set SHIPPED_HASH to its hash"
        );
        let model = CodeModel::shipped().unwrap();
        assert_eq!(model.id, CodeModel::from_bytes(SHIPPED).unwrap().id);
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
        let v = m.embed_one("parse");
        assert_eq!(v, vec![1.0, 0.0]);
        let v = m.embed_one("parseHeader");
        let s = 2f32.sqrt();
        assert!((v[0] - 2.0 / (2.0 * s)).abs() < 1e-6 && (v[1] - v[0]).abs() < 1e-6);
        assert_eq!(m.embed_one("nothing known"), m.blank());
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
            serde_json::from_str(include_str!("../../assets/code-vectors.probe.json")).unwrap();
        let m = CodeModel::shipped().unwrap();
        assert!(!probes.is_empty());
        for p in probes {
            let v = m.embed_one(&p.text);
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
        let m = CodeModel::shipped().unwrap();
        assert!(m.dim <= 256 && m.vocabulary_size() > 1000);
        let v = m.embed_one("fn spawn_blocking");
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
        // The rows stay in the binary; a file read at run time is copied,
        // and both pool alike.
        assert!(matches!(m.quantized, Cow::Borrowed(_)));
        let copy = CodeModel::from_bytes(SHIPPED).unwrap();
        assert!(matches!(copy.quantized, Cow::Owned(_)));
        assert_eq!(copy.embed_one("fn spawn_blocking"), v);
    }
}
