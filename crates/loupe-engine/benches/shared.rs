//! The team's shared store under concurrent pulls (BENCHMARKS.md, "The
//! shared store"): the parse rows of every file of a corpus pulled by 1, 4
//! and 8 clients at once, each with its own pool, 1,000 keys a statement
//! as an index run asks, from a store that a push of that corpus filled.
//! Per client count: wall, rows and bytes per second over all clients, the
//! p50 / p95 time of a 1,000-key pull, and the CPU seconds of every other
//! process (on a quiet machine, the server's) and the bytes read from disk
//! over the round (`/proc`; the server runs on the same cores as the
//! clients: on two cores this measures contention as much as the server).
//!
//! Run: `LOUPE_BENCH_SHARED_URL=postgres://… LOUPE_BENCH_CORPUS=DIR cargo bench
//! -p loupe-engine --bench shared` (`LOUPE_BENCH_CLIENTS=1,4,8`,
//! `LOUPE_BENCH_ROUNDS=3`). `scripts/bench-shared.sh` fills such a store.

use loupe_engine::indexing::chunk::ChunkConfig;
use loupe_engine::indexing::derived::deriver;
use loupe_engine::indexing::walk::{WalkConfig, walk};
use loupe_engine::progress::{CancelToken, no_progress};
use loupe_engine::stores::shared::{
    Key, ROWS_PER_STATEMENT, Shared, SharedConfig, SharedMode, Table,
};
use std::time::{Duration, Instant};

/// The keys of the corpus's text files, as an index run asks for them.
fn keys(corpus: &std::path::Path) -> Vec<Key> {
    let walked = walk(
        corpus,
        &WalkConfig::default(),
        &no_progress,
        &CancelToken::new(),
    )
    .expect("walk the corpus");
    let cfg = ChunkConfig::default();
    walked
        .files
        .iter()
        .filter_map(|f| {
            let bytes = std::fs::read(&f.abs).ok()?;
            if bytes.contains(&0) || std::str::from_utf8(&bytes).is_err() {
                return None;
            }
            let hash = blake3::hash(&bytes).to_hex().to_string();
            Key::from_hex(&hash, &deriver(&f.rel, &cfg))
        })
        .collect()
}

/// CPU seconds spent by every process but this one, and sectors' bytes
/// read from disk, machine-wide so far: on a quiet machine, the server's
/// (its backends come and go with the clients' connections, so counting
/// its processes at the end would miss the ones that exited).
fn server_counters() -> (f64, u64) {
    let tick = 100.0; // USER_HZ on Linux
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let busy: f64 = stat
        .lines()
        .next()
        .map(|cpu| {
            cpu.split_whitespace()
                .skip(1)
                .enumerate()
                // user nice system (idle iowait) irq softirq steal
                .filter(|(i, _)| !matches!(i, 3 | 4) && *i < 8)
                .filter_map(|(_, v)| v.parse::<f64>().ok())
                .sum()
        })
        .unwrap_or(0.0);
    let own = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let own: f64 = own
        .rsplit_once(')')
        .map(|(_, rest)| {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // After the name: state is field 0, utime 11, stime 12.
            [11, 12]
                .iter()
                .filter_map(|i| fields.get(*i)?.parse::<f64>().ok())
                .sum()
        })
        .unwrap_or(0.0);
    let disks = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    let sectors: u64 = disks
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Whole disks only (vda, sda, nvme0n1), not their partitions.
            let name = f.get(2)?;
            let whole = !name.chars().last()?.is_ascii_digit()
                || name.starts_with("nvme") && !name.contains('p');
            if whole {
                f.get(5)?.parse::<u64>().ok()
            } else {
                None
            }
        })
        .sum();
    ((busy - own) / tick, sectors * 512)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// One client: its own pool, every key once in pages; each page's time
/// and the bytes pulled.
async fn client(url: String, keys: std::sync::Arc<Vec<Key>>) -> (Vec<f64>, u64, u64) {
    let mut cfg = SharedConfig::new(&url, SharedMode::Read, true).expect("the store's URL");
    cfg.timeout = Duration::from_secs(60);
    let store = Shared::new(cfg).expect("a pool");
    let (mut times, mut rows, mut bytes) = (Vec::new(), 0, 0);
    for page in keys.chunks(ROWS_PER_STATEMENT) {
        let started = Instant::now();
        let (found, _) = store.pull(Table::Parses, page).await.expect("a pull");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        rows += found.len() as u64;
        bytes += found.values().map(|b| b.len() as u64).sum::<u64>();
    }
    (times, rows, bytes)
}

fn main() {
    let (Ok(url), Ok(corpus)) = (
        std::env::var("LOUPE_BENCH_SHARED_URL"),
        std::env::var("LOUPE_BENCH_CORPUS"),
    ) else {
        println!("shared: set LOUPE_BENCH_SHARED_URL and LOUPE_BENCH_CORPUS (see the file's docs)");
        return;
    };
    let clients: Vec<usize> = std::env::var("LOUPE_BENCH_CLIENTS")
        .unwrap_or_else(|_| "1,4,8".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let rounds: usize = std::env::var("LOUPE_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let keys = std::sync::Arc::new(keys(std::path::Path::new(&corpus)));
    println!("{} keys from {corpus}", keys.len());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    for &n in &clients {
        for round in 1..=rounds {
            let (cpu0, read0) = server_counters();
            let started = Instant::now();
            let results = runtime.block_on(async {
                let tasks: Vec<_> = (0..n)
                    .map(|_| tokio::spawn(client(url.clone(), keys.clone())))
                    .collect();
                let mut out = Vec::new();
                for t in tasks {
                    out.push(t.await.expect("a client"));
                }
                out
            });
            let wall = started.elapsed().as_secs_f64();
            let (cpu1, read1) = server_counters();
            let mut times: Vec<f64> = results.iter().flat_map(|r| r.0.clone()).collect();
            times.sort_by(f64::total_cmp);
            let rows: u64 = results.iter().map(|r| r.1).sum();
            let bytes: u64 = results.iter().map(|r| r.2).sum();
            println!(
                "clients {n} round {round}: {wall:.2} s, {:.0} rows/s, {:.1} MB/s; \
                 per 1,000 keys p50 {:.1} ms, p95 {:.1} ms; others' CPU {:.1} s (the server's), {:.1} MB read from disk",
                rows as f64 / wall,
                bytes as f64 / wall / 1e6,
                quantile(&times, 0.5),
                quantile(&times, 0.95),
                cpu1 - cpu0,
                read1.saturating_sub(read0) as f64 / 1e6,
            );
        }
    }
}
