//! Embedding throughput of the bundled model on real chunk texts: how the
//! batch is split across threads, and how input length matters.
//!
//! Run: `LOUPE_BENCH_CORPUS=DIR cargo bench -p loupe-engine --bench embed`

use loupe_engine::chunk::{ChunkConfig, chunk_file};
use loupe_engine::embed::{Embedder, PocketEmbedder};
use std::time::Instant;

/// Texts embedded per measurement.
const SAMPLE: usize = 192;

fn main() {
    let Some(corpus) = std::env::var_os("LOUPE_BENCH_CORPUS") else {
        eprintln!("set LOUPE_BENCH_CORPUS to a folder of code");
        return;
    };
    let root = std::path::PathBuf::from(corpus);
    let walked = match loupe_engine::walk::walk(
        &root,
        &Default::default(),
        &loupe_engine::progress::no_progress,
        &Default::default(),
    ) {
        Ok(w) => w,
        Err(e) => return eprintln!("walk: {e}"),
    };
    let mut texts = Vec::new();
    for f in walked.files.iter().step_by(7) {
        let Ok(text) = std::fs::read_to_string(&f.abs) else {
            continue;
        };
        for c in chunk_file(&f.rel, &text, &ChunkConfig::default()).chunks {
            let piece = text
                .get(c.start_byte as usize..c.end_byte as usize)
                .unwrap_or("");
            if !piece.trim().is_empty() {
                texts.push(format!("{}\n{}", f.rel, piece));
            }
        }
        if texts.len() >= SAMPLE {
            break;
        }
    }
    texts.truncate(SAMPLE);
    let embedder = match PocketEmbedder::new() {
        Ok(e) => e,
        Err(e) => return eprintln!("embedder: {e}"),
    };
    let _ = embedder.embed(&texts[..4]);
    for max in [1024usize, 512, 256] {
        let cut: Vec<String> = texts.iter().map(|t| cut(t, max)).collect();
        let t = Instant::now();
        if let Err(e) = embedder.embed(&cut) {
            return eprintln!("embed: {e}");
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{} texts cut at {max:>4} bytes: {:>6.1} texts/s",
            cut.len(),
            cut.len() as f64 / secs
        );
    }
}

fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}
