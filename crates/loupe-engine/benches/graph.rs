//! The vector graph against the scan, per index size: for each size, the
//! scan's and the graph's per-question p50/p95 (k = 50, as the engine
//! asks), the graph's recall of the exact top 50, its build time (serial,
//! as the engine builds it), its size on disk, its load time, and the
//! resident memory the build and the load added.
//!
//! Vectors: a real rows file (`LOUPE_BENCH_ROWS=…/vectors/chunks.i8`, e.g.
//! the one `loupe index` of the `cargo vendor` corpus writes) repeated
//! with perturbation up to each size; without it, clustered pseudo-random
//! vectors. Questions: the eval questions of `LOUPE_BENCH_QUESTIONS`
//! embedded by the code model; without it, 101 rows taken at even steps
//! and perturbed, so each lies near some chunk but is none of them.
//!
//! Run: `LOUPE_BENCH_ROWS=… LOUPE_BENCH_SIZES=100000,432000 cargo bench -p
//! loupe-engine --bench graph`

use loupe_engine::signals::embed::{CodeEmbedder, Embedder};
use loupe_engine::stores::graph::{Graph, GraphParams, yield_to_questions};
use loupe_engine::stores::vectors::{VectorIndex, rescored};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Instant;

const K: usize = 50;
const QUERIES: usize = 101;

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

/// xorshift in [-1, 1].
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 2001) as f32 / 1000.0 - 1.0
    }
}

/// The real rows file's vectors, or clustered ones of 256 dimensions.
fn base_vectors() -> Vec<Vec<f32>> {
    if let Ok(path) = std::env::var("LOUPE_BENCH_ROWS") {
        let bytes = std::fs::read(&path).expect("read the rows file");
        let dim = 256;
        return bytes
            .chunks_exact(8 + 4 + dim)
            .map(|r| {
                let scale = f32::from_le_bytes(r[8..12].try_into().expect("scale"));
                r[12..]
                    .iter()
                    .map(|b| f32::from(b.cast_signed()) * scale)
                    .collect()
            })
            .collect();
    }
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let centres: Vec<Vec<f32>> = (0..500)
        .map(|_| (0..256).map(|_| noise.next()).collect())
        .collect();
    (0..200_000)
        .map(|i| {
            centres[i % centres.len()]
                .iter()
                .map(|c| c + 0.5 * noise.next())
                .collect()
        })
        .collect()
}

/// Point `i` of an index of any size: base vector `i % len`, perturbed
/// from its second copy on.
fn point(base: &[Vec<f32>], i: usize, noise: &mut Noise) -> Vec<f32> {
    let v = &base[i % base.len()];
    if i < base.len() {
        return v.clone();
    }
    v.iter().map(|c| c + 0.02 * noise.next()).collect()
}

/// The questions of `LOUPE_BENCH_QUESTIONS` (eval files, comma-separated:
/// each line's `query`), embedded by the code model, as retrieval embeds
/// them; without it, rows taken at even steps and perturbed.
fn questions(base: &[Vec<f32>]) -> Vec<Vec<f32>> {
    if let Ok(files) = std::env::var("LOUPE_BENCH_QUESTIONS") {
        let mut texts = Vec::new();
        for file in files.split(',') {
            let text = std::fs::read_to_string(file).expect("read the questions");
            for line in text.lines() {
                let row: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                if let Some(q) = row["query"].as_str() {
                    texts.push(q.to_owned());
                }
            }
        }
        let embedder = CodeEmbedder::new().expect("the code model");
        return embedder.embed(&texts).expect("embed the questions");
    }
    let mut noise = Noise(0x5EED);
    (0..QUERIES)
        .map(|i| {
            let v = &base[(i * 7919) % base.len()];
            v.iter().map(|c| c + 0.05 * noise.next()).collect()
        })
        .collect()
}

/// The graphs to build, as `LOUPE_BENCH_GRAPHS=16x100,32x200`
/// (connections × ef_construction); the engine's by default.
fn builds() -> Vec<(usize, usize)> {
    let default = GraphParams::default();
    std::env::var("LOUPE_BENCH_GRAPHS")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|p| {
                    let (m, ef) = p.split_once('x')?;
                    Some((m.trim().parse().ok()?, ef.trim().parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_else(|| vec![(default.connections, default.ef_construction)])
}

fn quantiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 95 / 100])
}

/// Resident memory of this process, in MiB.
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1024.0 * 1024.0))
}

fn dir_mib(dir: &std::path::Path) -> f64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len() as f64)
                .sum::<f64>()
        })
        .unwrap_or(0.0)
        / (1024.0 * 1024.0)
}

fn main() {
    let sizes: Vec<usize> = std::env::var("LOUPE_BENCH_SIZES")
        .unwrap_or_else(|_| "25000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let base = base_vectors();
    let queries = questions(&base);
    println!(
        "{} base vectors; k = {K}; {} questions; sizes {sizes:?}",
        base.len(),
        queries.len()
    );
    let everything = |_: i64| true;
    for n in sizes {
        let tmp = tempfile::tempdir().expect("temp dir");
        let mut index = VectorIndex::new("bench", 256, n);
        let mut noise = Noise(0xC0FFEE);
        for first in (0..n).step_by(100_000) {
            let batch: Vec<(i64, Vec<f32>)> = (first..n.min(first + 100_000))
                .map(|i| (i as i64 + 1, point(&base, i, &mut noise)))
                .collect();
            index.insert(&batch);
        }
        index.save(&tmp.path().join("vectors"), 1).expect("save");
        drop(index);
        let mut index = VectorIndex::load(&tmp.path().join("vectors"), 1, "bench")
            .expect("load")
            .expect("intact");
        let exact: Vec<Vec<(i64, f32)>> = queries
            .iter()
            .map(|q| {
                index
                    .search_rescoring(q, K, &everything, usize::MAX)
                    .expect("exact")
            })
            .collect();
        // A hit counts when it is one of the exact top 50 or scores as
        // high as the 50th (equal vectors tie: either copy is as good).
        let run = |index: &VectorIndex| {
            let mut times = Vec::new();
            let mut found = 0;
            for (q, want) in queries.iter().zip(&exact) {
                let t = Instant::now();
                let hits = index.search(q, K, &everything).expect("search");
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                let floor = want.last().map_or(f32::MIN, |h| h.1);
                found += hits
                    .iter()
                    .filter(|h| h.1 >= floor || want.iter().any(|w| w.0 == h.0))
                    .count()
                    .min(want.len());
            }
            let (p50, p95) = quantiles(times);
            (p50, p95, found as f64 * 100.0 / (K * queries.len()) as f64)
        };
        let (scan50, scan95, scan_recall) = run(&index);
        println!(
            "{n:>8} points: scan p50 {scan50:.2} ms, p95 {scan95:.2} ms, recall@50 {scan_recall:.2} %"
        );
        let rows = index.rows().expect("rows file");
        // The scan while a graph builds beside it, as a question asked
        // while the app builds one in the background meets it.
        let (done, cancel) = (AtomicUsize::new(0), AtomicBool::new(false));
        let (busy50, busy95, _) = std::thread::scope(|scope| {
            let builder = scope.spawn(|| {
                if std::env::var_os("LOUPE_BENCH_NORMAL_PRIORITY").is_none() {
                    yield_to_questions();
                }
                Graph::build(&rows, GraphParams::default(), &done, &cancel)
            });
            std::thread::sleep(std::time::Duration::from_secs(2));
            let measured = run(&index);
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = builder.join();
            measured
        });
        println!(
            "    scan while a graph builds beside it: p50 {busy50:.2} ms, p95 {busy95:.2} ms \
             ({:+.0} % / {:+.0} %)",
            (busy50 / scan50 - 1.0) * 100.0,
            (busy95 / scan95 - 1.0) * 100.0
        );
        for (connections, ef_construction) in builds() {
            let params = GraphParams {
                connections,
                ef_construction,
                ..GraphParams::default()
            };
            let before = rss_mib();
            let t = Instant::now();
            let graph = Graph::build(&rows, params, &AtomicUsize::new(0), &AtomicBool::new(false))
                .expect("build")
                .expect("not cancelled");
            let build = t.elapsed().as_secs_f64();
            let built_rss = rss_mib() - before;
            let graph_dir = tmp.path().join("graph");
            let t = Instant::now();
            graph.save(&graph_dir).expect("save graph");
            let save = t.elapsed().as_secs_f64();
            drop(graph);
            let before = rss_mib();
            let t = Instant::now();
            let mut loaded = Graph::load(&graph_dir, &rows, params).expect("the saved graph loads");
            let load = t.elapsed().as_secs_f64();
            let loaded_rss = rss_mib() - before;
            println!(
                "    graph M {connections}, ef_construction {ef_construction}: build {build:.1} s \
                 (+{built_rss:.0} MiB resident), save {save:.1} s, {:.0} MiB on disk, \
                 load {load:.1} s (+{loaded_rss:.0} MiB resident)",
                dir_mib(&graph_dir)
            );
            for factor in [1usize, 2, 4, 8] {
                loaded.set_search_factor(factor);
                let graph = Arc::new(loaded);
                assert!(index.attach_graph(Arc::<Graph>::clone(&graph)));
                let (p50, p95, recall) = run(&index);
                println!(
                    "      search ef {}: p50 {p50:.2} ms, p95 {p95:.2} ms, recall@50 {recall:.2} %",
                    factor * rescored(K)
                );
                // Detach it: the next save-free attach takes it back.
                index = VectorIndex::load(&tmp.path().join("vectors"), 1, "bench")
                    .expect("load")
                    .expect("intact");
                loaded = Arc::into_inner(graph).expect("the index let go of the graph");
            }
        }
    }
}
