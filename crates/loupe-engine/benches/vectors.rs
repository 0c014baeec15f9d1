//! Vector search: exact (every point scored, what indexes up to
//! `EXACT_SEARCH_MAX_POINTS` use, so answers do not depend on how the graph
//! was built) against the HNSW graph, on the same index, side by side.
//! Random unit vectors of the code model's 256 dimensions; 201 queries per
//! size, the median and p95 of each.
//!
//! Run: `cargo bench -p loupe-engine --bench vectors`

use loupe_engine::vectors::{EXACT_SEARCH_MAX_POINTS, VectorIndex};
use std::time::Instant;

const DIM: usize = 256;
const QUERIES: usize = 201;
const K: usize = 50;

fn random(n: usize, seed: u64) -> Vec<(i64, Vec<f32>)> {
    let mut x = seed | 1;
    (0..n)
        .map(|i| {
            let v = (0..DIM)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 2001) as f32 / 1000.0 - 1.0
                })
                .collect();
            (i as i64 + 1, v)
        })
        .collect()
}

fn quantiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 95 / 100])
}

fn main() {
    println!("exact search up to {EXACT_SEARCH_MAX_POINTS} points; k = {K}, {DIM} dims");
    for n in [6_800usize, 20_000, 50_000] {
        let items = random(n, 0x5EED + n as u64);
        let t = Instant::now();
        let mut index = VectorIndex::new("bench", DIM, n);
        index.insert(&items);
        let flat = t.elapsed().as_secs_f64();
        // Indexes up to the limit stay flat: build the graph to compare.
        let t = Instant::now();
        index.build_graph();
        let build = t.elapsed().as_secs_f64();
        let queries = random(QUERIES, 0xBEEF);
        let live = |_: i64| true;
        let mut exact = Vec::new();
        let mut graph = Vec::new();
        let mut same = 0;
        for (_, q) in &queries {
            let t = Instant::now();
            let a = index.exact_search(q, K, &live);
            exact.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            let b = index.graph_search(q, K, &live);
            graph.push(t.elapsed().as_secs_f64() * 1000.0);
            same += usize::from(a.iter().map(|x| x.0).eq(b.iter().map(|x| x.0)));
        }
        let (e50, e95) = quantiles(exact);
        let (g50, g95) = quantiles(graph);
        println!(
            "{n:>6} points (flat in {flat:.2} s, graph built in {build:.1} s): exact p50 {e50:.2} ms p95 {e95:.2} ms; graph p50 {g50:.2} ms p95 {g95:.2} ms; exact/graph {:.1}x; graph gave the exact top {K} for {same}/{QUERIES}",
            e50 / g50
        );
    }
}
