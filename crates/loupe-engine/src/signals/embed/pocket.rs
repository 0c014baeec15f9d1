//! The bundled MiniLM (paraphrase-MiniLM-L3-v2, compiled into the binary by
//! `pocket-encoder`; no download), run on every core. Built with the
//! `minilm` feature only.

use super::Embedder;
use crate::{Error, Result};

/// The bundled encoder, run on every core.
#[derive(Clone)]
pub struct PocketEmbedder {
    encoder: pocket_encoder::Encoder,
    id: String,
    dim: usize,
}

impl PocketEmbedder {
    /// Load the compiled-in weights (once per process).
    pub fn new() -> Result<Self> {
        let encoder = pocket_encoder::Encoder::new().map_err(|e| Error::Embed(e.to_string()))?;
        Ok(Self {
            encoder,
            id: pocket_model_id(),
            dim: pocket_encoder::model_info().dimensions,
        })
    }
}

/// The bundled model's id, without loading its weights. The crate asks that
/// its complete model identity be persisted with the vectors; its Debug
/// form contains every field.
pub(super) fn pocket_model_id() -> String {
    let info = pocket_encoder::model_info();
    format!(
        "pocket:{}",
        blake3::hash(format!("{info:?}").as_bytes()).to_hex()
    )
}

impl Embedder for PocketEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        // pocket-encoder encodes one text at a time; split the batch across cores.
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let per = texts.len().div_ceil(threads.max(1)).max(1);
        let results: Vec<Result<Vec<Vec<f32>>>> = std::thread::scope(|s| {
            let handles: Vec<_> = texts
                .chunks(per)
                .map(|part| {
                    let enc = self.encoder.clone();
                    s.spawn(move || {
                        let safe: Vec<&str> = part
                            .iter()
                            .map(|t| {
                                if t.trim().is_empty() {
                                    "(empty)"
                                } else {
                                    t.as_str()
                                }
                            })
                            .collect();
                        enc.embed(&safe).map_err(|e| Error::Embed(e.to_string()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::Embed("encoder thread panicked".into())))
                })
                .collect()
        });
        let mut out = Vec::with_capacity(texts.len());
        for r in results {
            out.extend(r?);
        }
        Ok(out)
    }
}
