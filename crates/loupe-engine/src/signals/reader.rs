//! The re-ranker, "read by the model": a small cross-encoder that reads the
//! question and one candidate file together and scores how likely the
//! change the question asks for is in that file.
//!
//! ```text
//! question + [path, best BM25 chunks…] → word pieces ([CLS] q [SEP] c [SEP], window) → BERT (3 layers) → [CLS] → linear → logit
//! ```
//!
//! In: the question and, per file, the text [`candidate_text`] makes of its
//! retrieved chunks. Out: one logit per file (higher: more likely), cached
//! per (model, question, text), so a knob change never reads a pair again.
//! Which files are read and how the logits join the ranking is the door's
//! job (`asking::ask`, `Project::read_leading`).
//!
//! The model is one file, `reader.safetensors`, made by `make
//! train-reranker` (TRAINING.md, "The re-ranker"): int8 matrices with one
//! f32 scale per row, f32 vectors, and in its metadata the BERT config,
//! the tokenizer, the encoding's window and the blend fitted on the
//! validation repositories. It is read on first use, never compiled in.
//!
//! *Invariant:* the encoding here and the trainer's
//! (`tools/train/train_reranker.py`, `Encoder.pair`) are the same: the
//! question's pieces cut to `question_tokens`, the candidate's cut to fill
//! `window`; the candidate text is `tools/train/rerank_data.py`'s
//! `candidate_text`. The probe test checks the logits against the trainer's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use candle_core::{D, DType, Device, IndexOp, Module, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use loupe_assemble::Candidate;
use tokenizers::Tokenizer;

use crate::error::{Error, Result};

/// The model file's name, beside an installed binary and in the source tree.
pub const FILE_NAME: &str = "reader.safetensors";
/// The format its metadata names.
const FORMAT: &str = "loupe-reader-1";
/// A candidate text stops taking chunks once it is this long: far past
/// any window the tokenizer keeps (the trainer's `MAX_TEXT_BYTES`).
pub const MAX_TEXT_BYTES: usize = 4096;
/// Scores kept in the cache before it starts afresh (about 40 bytes each).
const CACHE_ENTRIES: usize = 200_000;

fn bad(what: impl std::fmt::Display) -> Error {
    Error::Embed(format!("re-ranker model: {what}"))
}

/// The text the model reads for one file: its path, then its chunks among
/// `chunks` from the best BM25 match down (those without a BM25 match
/// after, in line order), each on its own lines, until the text is
/// [`MAX_TEXT_BYTES`] long.
pub fn candidate_text<'c>(path: &str, chunks: impl IntoIterator<Item = &'c Candidate>) -> String {
    let mut chunks: Vec<&Candidate> = chunks.into_iter().collect();
    chunks.sort_by(|a, b| {
        let (x, y) = (a.signals.bm25.unwrap_or(0.0), b.signals.bm25.unwrap_or(0.0));
        y.total_cmp(&x)
            .then(a.chunk.start_line.cmp(&b.chunk.start_line))
    });
    let mut out = path.to_owned();
    for c in chunks {
        if out.len() >= MAX_TEXT_BYTES {
            break;
        }
        out.push('\n');
        out.push_str(&c.chunk.text);
    }
    out
}

/// How the model's logits join the ranking, fitted on the validation
/// repositories with the model (`tools/train/fit_blend.py`): each read
/// file's chunks gain `weight × exp((logit − best logit) / temperature)`
/// of relevance.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct Blend {
    /// Relevance the best-read file gains.
    pub weight: f32,
    /// How fast the gain falls with the logit's distance from the best.
    pub temperature: f32,
    /// Files read per question when the knob does not say.
    pub files: usize,
}

impl Blend {
    /// Each logit's gain of relevance.
    pub fn gains(&self, logits: &[f32]) -> Vec<f32> {
        let best = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let t = self.temperature.max(1e-3);
        logits
            .iter()
            .map(|l| self.weight * ((l - best) / t).exp())
            .collect()
    }
}

/// A loaded model.
pub struct ReaderModel {
    bert: BertModel,
    head: candle_nn::Linear,
    tokenizer: Tokenizer,
    window: usize,
    question_tokens: usize,
    special: [u32; 3],
    positions: usize,
    id: String,
    blend: Blend,
}

impl std::fmt::Debug for ReaderModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReaderModel")
            .field("id", &self.id)
            .field("window", &self.window)
            .field("blend", &self.blend)
            .finish()
    }
}

impl ReaderModel {
    /// Reads a model file's bytes; an error says what is wrong with them.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let file = safetensors::SafeTensors::deserialize(bytes).map_err(bad)?;
        let (_, header) = safetensors::SafeTensors::read_metadata(bytes).map_err(bad)?;
        let meta = header
            .metadata()
            .as_ref()
            .ok_or_else(|| bad("no metadata"))?;
        let get = |key: &str| {
            meta.get(key)
                .map(String::as_str)
                .ok_or_else(|| bad(format!("no `{key}` in its metadata")))
        };
        if get("format")? != FORMAT {
            return Err(bad(format!("format {:?}, not {FORMAT}", get("format")?)));
        }
        let number = |key: &str| -> Result<usize> {
            get(key)?.parse().map_err(|e| bad(format!("`{key}`: {e}")))
        };
        let window = number("window")?;
        let question_tokens = number("question_tokens")?;
        if !(16..=512).contains(&window) || question_tokens + 3 >= window {
            return Err(bad(format!(
                "window {window} with {question_tokens} question tokens"
            )));
        }
        let blend: Blend =
            serde_json::from_str(get("blend")?).map_err(|e| bad(format!("blend: {e}")))?;
        let config: Config =
            serde_json::from_str(get("config")?).map_err(|e| bad(format!("config: {e}")))?;
        let tokenizer: Tokenizer = get("tokenizer")?
            .parse()
            .map_err(|e| bad(format!("tokenizer: {e}")))?;
        let token = |t: &str| {
            tokenizer
                .token_to_id(t)
                .ok_or_else(|| bad(format!("the tokenizer has no {t}")))
        };
        let special = [token("[CLS]")?, token("[SEP]")?, token("[PAD]")?];

        let tensors = dequantize(&file)?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let bert = BertModel::load(vb.pp("bert"), &config).map_err(bad)?;
        let head = candle_nn::linear(config.hidden_size, 1, vb.pp("head")).map_err(bad)?;
        let id = blake3::hash(bytes).to_hex()[..16].to_owned();
        Ok(ReaderModel {
            bert,
            head,
            tokenizer,
            window,
            question_tokens,
            special,
            positions: config.max_position_embeddings,
            id,
            blend,
        })
    }

    /// Reads the model file at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
        Self::from_bytes(&bytes).map_err(|e| bad(format!("{}: {e}", path.display())))
    }

    /// The shipped model: the first of [`crate::signals::shipped_files`]
    /// that exists. An error names each place looked at.
    pub fn shipped() -> Result<Self> {
        let paths = crate::signals::shipped_files(FILE_NAME);
        match paths.iter().find(|p| p.is_file()) {
            Some(path) => Self::open(path),
            None => Err(bad(format!(
                "no model file ({})",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// The model's id: the first 16 hex digits of its file's blake3.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The blend fitted with it.
    pub fn blend(&self) -> Blend {
        self.blend
    }

    /// Word pieces of `text` (no special tokens).
    fn pieces(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode(text, false)
            .map_err(|e| bad(format!("tokenizer: {e}")))?
            .get_ids()
            .to_vec())
    }

    /// The window it was trained with: word pieces per pair.
    pub fn window(&self) -> usize {
        self.window
    }

    /// One logit per text of `texts`, read with `question` in pairs of at
    /// most `window` word pieces (the model's own when 0; never past its
    /// position table).
    pub fn score(&self, question: &str, texts: &[&str], window: usize) -> Result<Vec<f32>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let [cls, sep, pad] = self.special;
        let mut q = self.pieces(question)?;
        q.truncate(self.question_tokens);
        let window = match window {
            0 => self.window,
            w => w.min(self.positions),
        };
        let room = window.saturating_sub(q.len() + 3);
        let mut rows = Vec::with_capacity(texts.len());
        for text in texts {
            let mut c = self.pieces(text)?;
            c.truncate(room);
            let mut ids = Vec::with_capacity(q.len() + c.len() + 3);
            ids.push(cls);
            ids.extend_from_slice(&q);
            ids.push(sep);
            let first = ids.len();
            ids.extend_from_slice(&c);
            ids.push(sep);
            rows.push((ids, first));
        }
        let width = rows.iter().map(|(ids, _)| ids.len()).max().unwrap_or(0);
        let n = rows.len();
        let (mut ids, mut types, mut mask) = (
            vec![pad; n * width],
            vec![0u32; n * width],
            vec![0u32; n * width],
        );
        for (r, (row, first)) in rows.iter().enumerate() {
            let at = r * width;
            ids[at..at + row.len()].copy_from_slice(row);
            types[at + first..at + row.len()].fill(1);
            mask[at..at + row.len()].fill(1);
        }
        let tensor = |v: Vec<u32>| Tensor::from_vec(v, (n, width), &Device::Cpu).map_err(bad);
        let (ids, types, mask) = (tensor(ids)?, tensor(types)?, tensor(mask)?);
        let hidden = self.bert.forward(&ids, &types, Some(&mask)).map_err(bad)?;
        let first = hidden.i((.., 0)).map_err(bad)?;
        let logits = self
            .head
            .forward(&first)
            .and_then(|t| t.squeeze(D::Minus1))
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(bad)?;
        Ok(logits)
    }
}

/// The file's tensors as f32: `name.q8` (int8, one row per output) times
/// `name.scale` becomes `name`; f32 tensors stay.
fn dequantize(file: &safetensors::SafeTensors) -> Result<HashMap<String, Tensor>> {
    use safetensors::Dtype;
    let mut out = HashMap::new();
    for (name, view) in file.tensors() {
        let shape = view.shape().to_vec();
        if let Some(base) = name.strip_suffix(".q8") {
            let scale = file
                .tensor(&format!("{base}.scale"))
                .map_err(|_| bad(format!("{base} has no scale")))?;
            if view.dtype() != Dtype::I8 || scale.dtype() != Dtype::F32 || shape.len() != 2 {
                return Err(bad(format!("{name}: not an int8 matrix with f32 scales")));
            }
            let scales = f32s(scale.data());
            if scales.len() != shape[0] || view.data().len() != shape[0] * shape[1] {
                return Err(bad(format!("{name}: {shape:?} does not match its data")));
            }
            let data: Vec<f32> = view
                .data()
                .chunks_exact(shape[1])
                .zip(&scales)
                .flat_map(|(row, s)| row.iter().map(move |&q| f32::from(q as i8) * s))
                .collect();
            let t = Tensor::from_vec(data, shape, &Device::Cpu).map_err(bad)?;
            out.insert(base.to_owned(), t);
        } else if name.ends_with(".scale") {
            continue;
        } else {
            let data = f32s(view.data());
            if view.dtype() != Dtype::F32 || data.len() != shape.iter().product::<usize>() {
                return Err(bad(format!("{name}: not f32 of shape {shape:?}")));
            }
            let t = Tensor::from_vec(data, shape, &Device::Cpu).map_err(bad)?;
            out.insert(name, t);
        }
    }
    Ok(out)
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The re-ranker as a project holds it: the model, loaded on first use
/// (once: a missing or damaged file is one error, kept), and the scores
/// already read.
#[derive(Debug, Default)]
pub struct Reader {
    path: Option<PathBuf>,
    model: OnceLock<std::result::Result<Arc<ReaderModel>, String>>,
    cache: Mutex<HashMap<[u8; 32], f32>>,
}

impl Reader {
    /// The process's reader of the shipped model: one load and one cache
    /// for every project the process opens.
    pub fn shipped() -> Arc<Reader> {
        static SHIPPED: OnceLock<Arc<Reader>> = OnceLock::new();
        SHIPPED.get_or_init(|| Arc::new(Reader::default())).clone()
    }

    /// A reader of the model file at `path` (tests, experiments).
    pub fn at(path: PathBuf) -> Self {
        Reader {
            path: Some(path),
            ..Reader::default()
        }
    }

    /// The model, loading it on first use.
    pub fn model(&self) -> std::result::Result<Arc<ReaderModel>, String> {
        self.model
            .get_or_init(|| {
                let model = match &self.path {
                    Some(p) => ReaderModel::open(p),
                    None => ReaderModel::shipped(),
                };
                model.map(Arc::new).map_err(|e| e.to_string())
            })
            .clone()
    }

    /// One logit per text, from the cache where this model already read
    /// the pair; the rest are read in one batch.
    pub fn score(&self, question: &str, texts: &[String], window: usize) -> Result<Vec<f32>> {
        let model = self.model().map_err(Error::Embed)?;
        let keys: Vec<[u8; 32]> = texts
            .iter()
            .map(|t| {
                let mut h = blake3::Hasher::new();
                h.update(model.id.as_bytes());
                h.update(&(window as u64).to_le_bytes());
                h.update(&(question.len() as u64).to_le_bytes());
                h.update(question.as_bytes());
                h.update(t.as_bytes());
                *h.finalize().as_bytes()
            })
            .collect();
        let mut out: Vec<Option<f32>> = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            keys.iter().map(|k| cache.get(k).copied()).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let read: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
            let logits = model.score(question, &read, window)?;
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if cache.len() + logits.len() > CACHE_ENTRIES {
                cache.clear();
            }
            for (&i, l) in missing.iter().zip(logits) {
                cache.insert(keys[i], l);
                out[i] = Some(l);
            }
        }
        Ok(out.into_iter().map(|l| l.unwrap_or(0.0)).collect())
    }

    /// How many pairs the cache holds (tests).
    pub fn cached(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use loupe_assemble::{Chunk, Signals};
    use safetensors::tensor::TensorView;

    /// A model file with random weights at a tiny size (one layer of
    /// width 8) and the real tokenizer: every part of the format, none of
    /// the training.
    pub(crate) fn tiny_model(blend: Blend) -> Vec<u8> {
        let config = serde_json::json!({
            "vocab_size": 30522, "hidden_size": 8, "num_hidden_layers": 1,
            "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.0, "max_position_embeddings": 64, "type_vocab_size": 2,
            "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
            "position_embedding_type": "absolute", "model_type": "bert",
            "classifier_dropout": null, "use_cache": false
        });
        let mut shapes: Vec<(String, Vec<usize>)> = vec![
            (
                "bert.embeddings.word_embeddings.weight".into(),
                vec![30522, 8],
            ),
            (
                "bert.embeddings.position_embeddings.weight".into(),
                vec![64, 8],
            ),
            (
                "bert.embeddings.token_type_embeddings.weight".into(),
                vec![2, 8],
            ),
            ("bert.embeddings.LayerNorm.weight".into(), vec![8]),
            ("bert.embeddings.LayerNorm.bias".into(), vec![8]),
            ("head.weight".into(), vec![1, 8]),
            ("head.bias".into(), vec![1]),
        ];
        let l = "bert.encoder.layer.0";
        for (name, shape) in [
            ("attention.self.query", vec![8, 8]),
            ("attention.self.key", vec![8, 8]),
            ("attention.self.value", vec![8, 8]),
            ("attention.output.dense", vec![8, 8]),
            ("intermediate.dense", vec![16, 8]),
            ("output.dense", vec![8, 16]),
        ] {
            shapes.push((format!("{l}.{name}.bias"), vec![shape[0]]));
            shapes.push((format!("{l}.{name}.weight"), shape));
        }
        for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
            shapes.push((format!("{l}.{norm}.weight"), vec![8]));
            shapes.push((format!("{l}.{norm}.bias"), vec![8]));
        }
        // A fixed pseudo-random sequence: the same file every run.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as u8
        };
        let mut buffers: Vec<(String, safetensors::Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
        for (name, shape) in shapes {
            if shape.len() == 2 {
                let q: Vec<u8> = (0..shape[0] * shape[1]).map(|_| next()).collect();
                let scale: Vec<u8> = (0..shape[0]).flat_map(|_| 0.01f32.to_le_bytes()).collect();
                buffers.push((
                    format!("{name}.scale"),
                    safetensors::Dtype::F32,
                    vec![shape[0]],
                    scale,
                ));
                buffers.push((format!("{name}.q8"), safetensors::Dtype::I8, shape, q));
            } else {
                let ones = name.contains("LayerNorm.weight");
                let v: Vec<u8> = (0..shape[0])
                    .flat_map(|_| {
                        let x = if ones {
                            1.0f32
                        } else {
                            f32::from(next() as i8) / 1000.0
                        };
                        x.to_le_bytes()
                    })
                    .collect();
                buffers.push((name, safetensors::Dtype::F32, shape, v));
            }
        }
        let views: Vec<(String, TensorView)> = buffers
            .iter()
            .map(|(n, d, s, b)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
            .collect();
        let meta: HashMap<String, String> = [
            ("format", FORMAT.to_owned()),
            ("config", config.to_string()),
            (
                "tokenizer",
                include_str!("../../assets/minilm-l3-tokenizer.json").to_owned(),
            ),
            ("window", "48".to_owned()),
            ("question_tokens", "16".to_owned()),
            ("blend", serde_json::to_string(&blend).unwrap()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        safetensors::serialize(views, Some(meta)).unwrap()
    }

    pub(crate) const BLEND: Blend = Blend {
        weight: 0.3,
        temperature: 1.0,
        files: 5,
    };

    fn cand(path: &str, line: u32, bm25: Option<f32>, text: &str) -> Candidate {
        Candidate {
            chunk: Chunk {
                start_line: line,
                end_line: line + 1,
                tokens: 1,
                ..Chunk::sample(i64::from(line), path, text)
            },
            signals: Signals {
                bm25,
                ..Signals::default()
            },
        }
    }

    #[test]
    fn a_file_is_read_from_its_best_bm25_chunk_down() {
        let cands = [
            cand("a.rs", 30, None, "fn unmatched() {}"),
            cand("a.rs", 10, Some(1.0), "fn weak() {}"),
            cand("a.rs", 20, Some(3.0), "fn strong() {}"),
            cand("a.rs", 5, None, "fn first() {}"),
        ];
        assert_eq!(
            candidate_text("a.rs", &cands),
            "a.rs\nfn strong() {}\nfn weak() {}\nfn first() {}\nfn unmatched() {}"
        );
        let long = "x".repeat(MAX_TEXT_BYTES);
        let cands = [
            cand("b.rs", 1, Some(2.0), &long),
            cand("b.rs", 9, Some(1.0), "y"),
        ];
        assert!(!candidate_text("b.rs", &cands).ends_with('y'));
    }

    #[test]
    fn a_model_file_reads_pairs_and_names_itself() {
        let bytes = tiny_model(BLEND);
        let model = ReaderModel::from_bytes(&bytes).unwrap();
        assert_eq!(model.id().len(), 16);
        assert_eq!(model.blend(), BLEND);
        let texts = ["src/parse.rs\nfn parse_header() {}", "README.md\n# Hello"];
        let a = model
            .score("why does parse_header fail?", &texts, 0)
            .unwrap();
        let b = model
            .score("why does parse_header fail?", &texts, 0)
            .unwrap();
        assert_eq!(a, b, "reading is deterministic");
        assert_eq!(a.len(), 2);
        assert!(a.iter().all(|l| l.is_finite()));
        assert_ne!(a[0], a[1]);
        // Alone or in a batch with a longer text: padding changes nothing.
        let alone = model
            .score("why does parse_header fail?", &texts[1..], 0)
            .unwrap();
        assert!((alone[0] - a[1]).abs() < 1e-4, "{alone:?} vs {a:?}");
        // A window past the position table is cut to it.
        let long = "word ".repeat(500);
        assert!(model.score("q", &[long.as_str()], 4096).unwrap()[0].is_finite());
        assert!(model.score("q", &[], 0).unwrap().is_empty());
    }

    #[test]
    fn a_damaged_model_file_is_an_error_that_says_what() {
        let bytes = tiny_model(BLEND);
        let err = ReaderModel::from_bytes(&bytes[..bytes.len() / 2]).unwrap_err();
        assert!(err.to_string().contains("re-ranker model"), "{err}");
        assert!(ReaderModel::from_bytes(b"not a model").is_err());
        let dir = tempfile::tempdir().unwrap();
        let err = ReaderModel::open(&dir.path().join("none.safetensors")).unwrap_err();
        assert!(err.to_string().contains("none.safetensors"), "{err}");
        // A reader of a missing file fails once and says so each time.
        let reader = Reader::at(dir.path().join("none.safetensors"));
        assert!(reader.score("q", &["t".into()], 0).is_err());
        assert!(reader.model().is_err());
    }

    #[test]
    fn the_cache_reads_each_pair_once_per_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, tiny_model(BLEND)).unwrap();
        let reader = Reader::at(path);
        let texts: Vec<String> = vec!["a.rs\nfn a() {}".into(), "b.rs\nfn b() {}".into()];
        let first = reader.score("question", &texts, 0).unwrap();
        assert_eq!(reader.cached(), 2);
        let more: Vec<String> = vec![texts[1].clone(), "c.rs\nfn c() {}".into()];
        let second = reader.score("question", &more, 0).unwrap();
        assert_eq!(reader.cached(), 3, "only the new pair was read");
        assert_eq!(second[0], first[1]);
        reader.score("question", &texts, 32).unwrap();
        assert_eq!(reader.cached(), 5, "another window reads again");
        reader.score("another question", &texts[..1], 0).unwrap();
        assert_eq!(reader.cached(), 6);
    }

    #[test]
    fn the_blend_gives_the_best_file_the_weight_and_the_rest_less() {
        let g = BLEND.gains(&[2.0, 0.0, 2.0, -5.0]);
        assert_eq!(g[0], 0.3);
        assert_eq!(g[2], 0.3);
        assert!(g[1] < 0.3 && g[1] > g[3] && g[3] > 0.0);
    }

    /// The shipped model reads the pairs its trainer wrote with the same
    /// logits: same weights, same word pieces, same encoding.
    #[test]
    fn the_shipped_model_agrees_with_its_trainer() {
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
        let model = ReaderModel::open(&assets.join(FILE_NAME)).unwrap();
        let probe: Vec<serde_json::Value> = serde_json::from_str(
            &std::fs::read_to_string(assets.join("reader.probe.json")).unwrap(),
        )
        .unwrap();
        assert!(probe.len() >= 4);
        for p in &probe {
            let (q, t) = (p["question"].as_str().unwrap(), p["text"].as_str().unwrap());
            let want = p["logit"].as_f64().unwrap() as f32;
            let got = model.score(q, &[t], 0).unwrap()[0];
            assert!((got - want).abs() < 2e-3, "{got} vs {want} for {q:?}");
        }
        let size = std::fs::metadata(assets.join(FILE_NAME)).unwrap().len();
        assert!(
            size <= 20 << 20,
            "{size} bytes: the model must stay within 20 MB"
        );
    }
}
