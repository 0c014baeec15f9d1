//! Where indexing time goes before any store is touched: tree-sitter parse
//! alone vs Loupe's chunker vs chunker + hashing + exact token counts, on one
//! core, over a real corpus.
//!
//! Run: `LOUPE_BENCH_CORPUS=/path/to/vendor cargo bench -p loupe-engine --bench parse`
//! (`make bench` runs it on a `cargo vendor` of this workspace).

use loupe_assemble::tokens::{Encoding, count, count_with_tiktoken};
use loupe_engine::indexing::chunk::{ChunkConfig, chunk_file};
use loupe_engine::indexing::walk::{WalkConfig, walk};
use loupe_engine::progress::{CancelToken, no_progress};
use std::time::{Duration, Instant};

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() {
    let Some(corpus) = std::env::var_os("LOUPE_BENCH_CORPUS") else {
        eprintln!("set LOUPE_BENCH_CORPUS to a folder of code (e.g. a `cargo vendor` output)");
        return;
    };
    let root = std::path::PathBuf::from(corpus);
    let walked = match walk(
        &root,
        &WalkConfig::default(),
        &no_progress,
        &CancelToken::new(),
    ) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("walk failed: {e}");
            return;
        }
    };
    let files: Vec<(String, String)> = walked
        .files
        .iter()
        .filter_map(|f| {
            let bytes = std::fs::read(&f.abs).ok()?;
            if bytes[..bytes.len().min(8000)].contains(&0) {
                return None;
            }
            Some((f.rel.clone(), String::from_utf8(bytes).ok()?))
        })
        .collect();
    let parsed: Vec<&(String, String)> = files
        .iter()
        .filter(|(rel, _)| loupe_engine::indexing::lang::for_path(rel).is_some())
        .collect();
    let mb =
        |set: &[&(String, String)]| set.iter().map(|(_, t)| t.len()).sum::<usize>() as f64 / 1e6;
    let all: Vec<&(String, String)> = files.iter().collect();
    println!(
        "corpus: {} text files ({:.0} MB), {} with a grammar ({:.0} MB)",
        all.len(),
        mb(&all),
        parsed.len(),
        mb(&parsed)
    );

    let ts = timed(|| {
        let mut parser = tree_sitter::Parser::new();
        for (rel, text) in &parsed {
            if let Some(cfg) = loupe_engine::indexing::lang::for_path(rel)
                && parser.set_language(&cfg.language()).is_ok()
            {
                std::hint::black_box(parser.parse(text, None));
            }
        }
    });
    report("tree-sitter parse only (grammar files)", ts, mb(&parsed));

    // After the parse (not timed): the definitions-and-references query
    // pass the chunker runs, against a cursor walk that visits every node
    // and reads its kind id, the floor of any walk that could replace it.
    let (mut query_pass, mut walk_pass) = (Duration::ZERO, Duration::ZERO);
    let (mut captures, mut nodes) = (0usize, 0usize);
    let mut parser = tree_sitter::Parser::new();
    let mut cursor = tree_sitter::QueryCursor::new();
    for (rel, text) in &parsed {
        let Some(cfg) = loupe_engine::indexing::lang::for_path(rel) else {
            continue;
        };
        let (Ok(queries), Ok(())) = (cfg.queries(), parser.set_language(&cfg.language())) else {
            continue;
        };
        let Some(tree) = parser.parse(text, None) else {
            continue;
        };
        let t = Instant::now();
        let mut matches = cursor.matches(&queries.both, tree.root_node(), text.as_bytes());
        while let Some(m) = tree_sitter::StreamingIterator::next(&mut matches) {
            captures += m.captures.len();
        }
        query_pass += t.elapsed();
        let t = Instant::now();
        let mut walk = tree.walk();
        'walk: loop {
            nodes += 1;
            std::hint::black_box(walk.node().kind_id());
            if walk.goto_first_child() || walk.goto_next_sibling() {
                continue;
            }
            loop {
                if !walk.goto_parent() {
                    break 'walk;
                }
                if walk.goto_next_sibling() {
                    break;
                }
            }
        }
        walk_pass += t.elapsed();
    }
    report(
        "  after it: the definitions-and-references query",
        query_pass,
        mb(&parsed),
    );
    report(
        "  after it: a cursor walk over every node",
        walk_pass,
        mb(&parsed),
    );
    println!("  {captures} captures, {nodes} nodes");

    let cfg = ChunkConfig::default();
    let mut chunks = 0usize;
    let chunked = timed(|| {
        for (rel, text) in &parsed {
            chunks += chunk_file(rel, text, &cfg).chunks.len();
        }
    });
    report("chunk_file (grammar files)", chunked, mb(&parsed));

    let mut tokens = 0usize;
    let full = timed(|| {
        for (rel, text) in &all {
            let p = chunk_file(rel, text, &cfg);
            for c in &p.chunks {
                let piece = text
                    .get(c.start_byte as usize..c.end_byte as usize)
                    .unwrap_or("");
                std::hint::black_box(blake3::hash(piece.as_bytes()));
                tokens += count(Encoding::O200kBase, piece);
            }
        }
    });
    report(
        "chunk + hash + o200k count (all text files)",
        full,
        mb(&all),
    );
    println!("  {chunks} chunks in grammar files, {tokens} tokens in all");
    let counting = timed(|| {
        for (_, text) in &all {
            std::hint::black_box(count(Encoding::O200kBase, text));
        }
    });
    report("o200k count alone (all text files)", counting, mb(&all));
    let tiktoken = timed(|| {
        for (_, text) in &all {
            std::hint::black_box(count_with_tiktoken(Encoding::O200kBase, text));
        }
    });
    report("o200k count, tiktoken-rs's own split", tiktoken, mb(&all));
    // The fast split must agree with tiktoken-rs on every file, both encodings.
    let mut differ = 0;
    for (rel, text) in &all {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            if count(encoding, text) != count_with_tiktoken(encoding, text) {
                differ += 1;
                eprintln!("count differs from tiktoken-rs ({encoding:?}): {rel}");
            }
        }
    }
    println!(
        "  counts equal to tiktoken-rs's in {} of {} (file, encoding) pairs",
        2 * all.len() - differ,
        2 * all.len()
    );
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn report(what: &str, d: Duration, mb: f64) {
    println!(
        "{what:<46} {:>7.2} s  {:>6.1} MB/s (one core)",
        d.as_secs_f64(),
        mb / d.as_secs_f64()
    );
}
