//! Loupe's chunks and code words for the vector trainer
//! (`tools/train/pairs.py`), so training sees exactly what indexing embeds.
//!
//! Reads JSON lines on stdin and answers each with one line on stdout:
//! - `{"q": TEXT}` → `{"w": "word word …"}`: the [`code_words`] of a
//!   question;
//! - `{"path": P, "text": T}` → `{"chunks": [[first, last, "word …"], …]}`:
//!   the chunks Loupe cuts from the file (default settings, 1-based
//!   inclusive lines) and the words of each chunk's embedded text
//!   ([`embed_text_of`]: path, symbol, content, cut like at index time).
//!
//! A bad line gets `{"error": …}`; the stream goes on.
//! `cargo run --release -p loupe-engine --example code_corpus`

use loupe_engine::indexing::chunk::{ChunkConfig, chunk_file};
use loupe_engine::signals::embed::{code_words, embed_text_of};
use std::io::{BufRead, BufWriter, Write};

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Request {
    Question { q: String },
    File { path: String, text: String },
}

fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() / 2);
    code_words(text, |w| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    });
    out
}

fn answer(line: &str, cfg: &ChunkConfig) -> serde_json::Value {
    match serde_json::from_str::<Request>(line) {
        Err(e) => serde_json::json!({ "error": e.to_string() }),
        Ok(Request::Question { q }) => serde_json::json!({ "w": words(&q) }),
        Ok(Request::File { path, text }) => {
            let parsed = chunk_file(&path, &text, cfg);
            let chunks: Vec<serde_json::Value> = parsed
                .chunks
                .iter()
                .filter_map(|c| {
                    let body = text.get(c.start_byte as usize..c.end_byte as usize)?;
                    let embedded = embed_text_of(&path, c.symbol.as_deref(), body);
                    Some(serde_json::json!([
                        c.start_line,
                        c.end_line,
                        words(&embedded)
                    ]))
                })
                .collect();
            serde_json::json!({ "chunks": chunks })
        }
    }
}

fn main() -> std::io::Result<()> {
    let cfg = ChunkConfig::default();
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let line = line?;
        serde_json::to_writer(&mut out, &answer(&line, &cfg))?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}
