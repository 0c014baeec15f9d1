//! Vector search: every point's int4 code scored (both cores), the best
//! 5 × k rescored from their int8 rows, at the sizes of tokio (6,800
//! chunks), a mid-sized repository and the `cargo vendor` corpus
//! (544,000). Random unit vectors of the code model's 256 dimensions; the
//! insert time, and the median and p95 of 201 queries, first on the index
//! as built (codes and rows in memory), then on it saved and loaded back
//! (codes and rows read from their files, as an open project's are; the
//! files are in the page cache, having just been written and read).
//!
//! Run: `cargo bench -p loupe-engine --bench vectors`

use loupe_engine::stores::vectors::VectorIndex;
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

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() {
    println!("k = {K}, {DIM} dims, {QUERIES} queries");
    let queries = random(QUERIES, 0xBEEF);
    for n in [6_800usize, 50_000, 544_000] {
        let items = random(n, 0x5EED + n as u64);
        let t = Instant::now();
        let mut index = VectorIndex::new("bench", DIM, n);
        index.insert(&items);
        let insert = t.elapsed().as_secs_f64();
        drop(items);
        // A live set as retrieval passes it: a hash lookup per asked point.
        let live: std::collections::HashSet<i64> =
            (1..=n as i64).filter(|id| id % 50 != 0).collect();
        let live = |id: i64| live.contains(&id);
        let search = |index: &VectorIndex| {
            let mut times = Vec::new();
            for (_, q) in &queries {
                let t = Instant::now();
                let hits = index.search(q, K, &live).expect("search");
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                assert_eq!(hits.len(), K);
            }
            quantiles(times)
        };
        let (p50, p95) = search(&index);
        let dir = tempfile::tempdir().expect("temp dir");
        index.save(dir.path(), 1).expect("save");
        drop(index);
        let saved = VectorIndex::load(dir.path(), 1, "bench")
            .expect("load")
            .expect("intact");
        let (saved_p50, saved_p95) = search(&saved);
        println!(
            "{n:>7} points: inserted in {insert:.2} s; search p50 {p50:.2} ms, p95 {p95:.2} ms; \
             saved: p50 {saved_p50:.2} ms, p95 {saved_p95:.2} ms"
        );
    }
}
