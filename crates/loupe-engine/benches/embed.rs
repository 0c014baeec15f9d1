//! Embedding throughput of the bundled model on real chunk texts: how the
//! batch is split across threads, and how input length matters; then the
//! static (distilled) embedder and Loupe's own code model on the same texts,
//! and on every chunk of the corpus with `LOUPE_BENCH_ALL=1`, in one run so
//! they compare as ratios. `LOUPE_BENCH_SKIP_BUNDLED=1` leaves out the
//! bundled model (minutes on a large corpus).
//!
//! Run: `LOUPE_BENCH_CORPUS=DIR cargo bench -p loupe-engine --bench embed`
//! (the static table fills into `LOUPE_BENCH_DATA`, default a temp dir:
//! first the sample's vocabulary, then every other row, each timed; the
//! throughput is measured on the full table).

use loupe_engine::indexing::chunk::{ChunkConfig, chunk_file};
use loupe_engine::signals::embed::{CodeEmbedder, Embedder, embed_text_of};
#[cfg(feature = "minilm")]
use loupe_engine::signals::embed::{PocketEmbedder, StaticEmbedder};
use std::time::Instant;

/// Texts embedded per measurement.
const SAMPLE: usize = 192;

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() {
    let Some(corpus) = std::env::var_os("LOUPE_BENCH_CORPUS") else {
        eprintln!("set LOUPE_BENCH_CORPUS to a folder of code");
        return;
    };
    let root = std::path::PathBuf::from(corpus);
    let walked = match loupe_engine::indexing::walk::walk(
        &root,
        &Default::default(),
        &loupe_engine::progress::no_progress,
        &Default::default(),
    ) {
        Ok(w) => w,
        Err(e) => return eprintln!("walk: {e}"),
    };
    let mut texts = Vec::new();
    let mut all = Vec::new();
    let every = std::env::var_os("LOUPE_BENCH_ALL").is_some();
    for (i, f) in walked.files.iter().enumerate() {
        if every && let Ok(text) = std::fs::read_to_string(&f.abs) {
            let parsed = chunk_file(&f.rel, &text, &ChunkConfig::default());
            all.extend(parsed.chunks.iter().map(|c| {
                let piece = text
                    .get(c.start_byte as usize..c.end_byte as usize)
                    .unwrap_or("");
                embed_text_of(&f.rel, c.symbol.as_deref(), piece)
            }));
        }
        if i % 7 != 0 || texts.len() >= SAMPLE {
            continue;
        }
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
    }
    texts.truncate(SAMPLE);
    // The MiniLM embedders only in a build with them (`--features
    // loupe-engine/minilm`).
    #[cfg(feature = "minilm")]
    {
        if std::env::var_os("LOUPE_BENCH_SKIP_BUNDLED").is_none() {
            bench_bundled(&texts, &all);
        }
        bench_static(&texts, &all);
    }
    bench_code(&texts, &all);
}

/// Loupe's own code model: nothing to build, so the open time is the whole
/// first-run cost.
fn bench_code(texts: &[String], all: &[String]) {
    let t = Instant::now();
    let embedder = match CodeEmbedder::new() {
        Ok(e) => e,
        Err(e) => return eprintln!("code embedder: {e}"),
    };
    println!("code: opened in {:.3} s", t.elapsed().as_secs_f64());
    by_length("code", &embedder, texts);
    embed_all("code", &embedder, all);
}

#[cfg(feature = "minilm")]
fn bench_bundled(texts: &[String], all: &[String]) {
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
            "bundled: {} texts cut at {max:>4} bytes: {:>6.1} texts/s",
            cut.len(),
            cut.len() as f64 / secs
        );
    }
    embed_all("bundled", &embedder, all);
}

/// Repetitions of the sample for the static embedders, which are too fast
/// to time on 192 texts once.
const STATIC_ROUNDS: usize = 20;

#[cfg(feature = "minilm")]
fn bench_static(texts: &[String], all: &[String]) {
    let data = match std::env::var_os("LOUPE_BENCH_DATA") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::temp_dir().join("loupe-bench-embed"),
    };
    let t = Instant::now();
    let embedder = match StaticEmbedder::open(&data) {
        Ok(e) => e,
        Err(e) => return eprintln!("static embedder: {e}"),
    };
    println!(
        "static: opened with {} table rows from {} in {:.2} s",
        embedder.present(),
        data.display(),
        t.elapsed().as_secs_f64()
    );
    // The lazy table: the sample's own vocabulary first, then the rest.
    let (before, t) = (embedder.present(), Instant::now());
    if let Err(e) = embedder.embed(texts) {
        return eprintln!("embed: {e}");
    }
    println!(
        "static: first embedding of the sample distilled {} rows in {:.1} s",
        embedder.present() - before,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    match embedder.fill_all(&loupe_engine::progress::no_progress, &Default::default()) {
        Ok(n) => println!(
            "static: the other {n} rows distilled in {:.1} s",
            t.elapsed().as_secs_f64()
        ),
        Err(e) => return eprintln!("static table: {e}"),
    }
    by_length("static", &embedder, texts);
    embed_all("static", &embedder, all);
}

/// A static embedder's throughput on the sample cut at three lengths,
/// [`STATIC_ROUNDS`] times each (too fast to time once).
fn by_length(name: &str, embedder: &dyn Embedder, texts: &[String]) {
    for max in [1024usize, 512, 256] {
        let cut: Vec<String> = texts.iter().map(|t| cut(t, max)).collect();
        let t = Instant::now();
        for _ in 0..STATIC_ROUNDS {
            if let Err(e) = embedder.embed(&cut) {
                return eprintln!("embed: {e}");
            }
        }
        let n = cut.len() * STATIC_ROUNDS;
        println!(
            "{name}: {n} texts cut at {max:>4} bytes: {:>8.1} texts/s",
            n as f64 / t.elapsed().as_secs_f64()
        );
    }
}

/// Every chunk of the corpus as indexing embeds it (`embed_text`, batches
/// of `EMBED_BATCH`), when `LOUPE_BENCH_ALL` collected them.
fn embed_all(name: &str, embedder: &dyn Embedder, all: &[String]) {
    if all.is_empty() {
        return;
    }
    let t = Instant::now();
    for batch in all.chunks(EMBED_BATCH) {
        if let Err(e) = embedder.embed(batch) {
            return eprintln!("embed: {e}");
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{name}: all {} chunks of the corpus: {secs:.2} s, {:.1} chunks/s",
        all.len(),
        all.len() as f64 / secs
    );
}

/// Texts per `embed` call when indexing (`project.rs`'s batch).
const EMBED_BATCH: usize = 64;

fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}
