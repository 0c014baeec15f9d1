//! How much of the exact answer the vector search's two passes find: the
//! int4 codes keep `R` points, their int8 rows are scored exactly, and the
//! best `k` are returned. For questions embedded by the code model, the
//! share of the exact top `k` (every point scored) each `R` finds, and
//! the median milliseconds of a search. Prints one JSON line per `R`.
//!
//! `cargo run --release -p loupe-engine --example vector_recall -- \
//!   VECTORS_DIR QUESTIONS.jsonl…` (`VECTORS_DIR` is a project's
//! `vectors` directory under the data dir; each line of a questions file
//! has a `query`, as the eval sets do).

use loupe_engine::signals::embed::{CodeEmbedder, Embedder};
use loupe_engine::stores::vectors::{VectorIndex, rescored};
use std::collections::HashSet;
use std::io::BufRead;
use std::time::Instant;

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, files @ ..] = args.as_slice() else {
        return Err("usage: vector_recall VECTORS_DIR QUESTIONS.jsonl…".into());
    };
    let dir = std::path::Path::new(dir);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json"))?)?;
    let generation = manifest["generation"].as_u64().ok_or("no generation")?;
    let model = manifest["model"].as_str().ok_or("no model")?;
    let index = VectorIndex::load(dir, generation, model)?.ok_or("the index is stale")?;
    let embedder = CodeEmbedder::new()?;
    let mut questions = Vec::new();
    for file in files {
        for line in std::io::BufReader::new(std::fs::File::open(file)?).lines() {
            let row: serde_json::Value = serde_json::from_str(&line?)?;
            if let Some(q) = row["query"].as_str() {
                questions.push(q.to_owned());
            }
        }
    }
    let vectors = embedder.embed(&questions)?;
    // Every point live, asked as retrieval asks it: of a hash set.
    let live_set: HashSet<i64> = index.ids().iter().copied().collect();
    let live = |id: i64| live_set.contains(&id);
    let exact: Vec<Vec<i64>> = vectors
        .iter()
        .map(|q| {
            let hits = index.search_rescoring(q, 50, &live, usize::MAX)?;
            Ok(hits.into_iter().map(|(id, _)| id).collect())
        })
        .collect::<Result<_, loupe_engine::Error>>()?;
    let mut counts: Vec<usize> = vec![50, 100, 250, 500, 1000];
    counts.push(rescored(50));
    counts.sort_unstable();
    counts.dedup();
    for r in counts {
        let (mut found10, mut found50) = (0usize, 0usize);
        let mut ms = Vec::new();
        for (q, want) in vectors.iter().zip(&exact) {
            let t = Instant::now();
            let hits = index.search_rescoring(q, 50, &live, r)?;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            let got: HashSet<i64> = hits.iter().map(|h| h.0).collect();
            found50 += want.iter().filter(|id| got.contains(id)).count();
            let got10: HashSet<i64> = hits.iter().take(10).map(|h| h.0).collect();
            found10 += want.iter().take(10).filter(|id| got10.contains(id)).count();
        }
        ms.sort_by(f64::total_cmp);
        let n = vectors.len().max(1);
        println!(
            "{}",
            serde_json::json!({
                "points": index.points(),
                "questions": vectors.len(),
                "rescored": r,
                "recall_at_10": found10 as f64 / (10 * n) as f64,
                "recall_at_50": found50 as f64 / (50 * n) as f64,
                "search_ms_p50": ms.get(ms.len() / 2),
            })
        );
    }
    Ok(())
}
