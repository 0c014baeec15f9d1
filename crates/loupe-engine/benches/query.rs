//! Question → candidates → assembly latency on an existing index, knob
//! change → new assembly over those real candidates, and one-file change →
//! searchable. The last edits files of the corpus and restores them.
//!
//! Run after `loupe index` with the same data dir and embedder:
//! `LOUPE_BENCH_CORPUS=DIR LOUPE_BENCH_DATA=DATA cargo bench -p loupe-engine --bench query`
//! (`make bench` does this on the `cargo vendor` corpus, vectors off).
//! `LOUPE_BENCH_EMBEDDER=code` asks with Loupe's code vectors, as the app
//! and the CLI do by default (index with the default embedder first);
//! `LOUPE_BENCH_COMPACT=1` first merges the lexical segments, as the app
//! does after an index run.

use loupe_assemble::{Budget, Knobs};
use loupe_engine::progress::no_progress;
use loupe_engine::{CancelToken, Project, ProjectConfig, RetrieveQuery, assembler};
use std::time::{Duration, Instant};

/// Questions asked: identifier-style ones are built from symbols in the index.
const QUESTIONS: usize = 40;

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() {
    let (Some(corpus), Some(data)) = (
        std::env::var_os("LOUPE_BENCH_CORPUS"),
        std::env::var_os("LOUPE_BENCH_DATA"),
    ) else {
        eprintln!("set LOUPE_BENCH_CORPUS (an indexed folder) and LOUPE_BENCH_DATA (its data dir)");
        return;
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => return eprintln!("runtime: {e}"),
    };
    if let Err(e) = runtime.block_on(run(corpus.into(), data.into())) {
        eprintln!("query bench failed: {e}");
    }
}

async fn run(corpus: std::path::PathBuf, data: std::path::PathBuf) -> loupe_engine::Result<()> {
    let started = Instant::now();
    let mut cfg = ProjectConfig::new(data);
    if std::env::var("LOUPE_BENCH_EMBEDDER").as_deref() == Ok("code") {
        cfg.embedder = Some(
            std::sync::Arc::new(loupe_engine::signals::embed::CodeEmbedder::new()?)
                as std::sync::Arc<dyn loupe_engine::signals::embed::Embedder>,
        );
    }
    let project = Project::open(&corpus, cfg).await?;
    println!("open: {:.2} s", started.elapsed().as_secs_f64());
    // `LOUPE_BENCH_COMPACT=1`: merge the lexical index's segments first, as
    // the app and `loupe mcp` do once their index run is over (a one-shot
    // `loupe index` leaves them as the run left them).
    if std::env::var_os("LOUPE_BENCH_COMPACT").is_some() {
        let started = Instant::now();
        let merged = project.compact_after(0).await?;
        println!(
            "compact: {} in {:.2} s",
            if merged {
                "merged"
            } else {
                "already one segment"
            },
            started.elapsed().as_secs_f64()
        );
    }
    let status = project.status().await?;
    println!("index: {} files, {} chunks", status.files, status.chunks);
    let names = project.catalog().symbol_table().await?;
    let step = (names.len() / QUESTIONS).max(1);
    let prose = [
        "how does the parser handle errors?",
        "where is the configuration loaded from environment variables",
        "why does the connection pool time out under load",
        "serialize a map with custom keys",
    ];
    // `LOUPE_BENCH_QUESTION` replaces the generated set (to profile one),
    // asked `LOUPE_BENCH_REPEAT` times (5).
    let questions: Vec<String> = match std::env::var("LOUPE_BENCH_QUESTION") {
        Ok(q) => {
            let times = std::env::var("LOUPE_BENCH_REPEAT")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(5);
            vec![q; times]
        }
        Err(_) => names
            .iter()
            .step_by(step)
            .take(QUESTIONS - prose.len())
            .map(|(n, _)| format!("how does {n} work and who calls it?"))
            .chain(prose.iter().map(|s| (*s).to_owned()))
            .collect(),
    };

    let mut retrieve = Vec::new();
    let mut full = Vec::new();
    let mut knob = Vec::new();
    let mut first_assembly = Vec::new();
    let mut candidates_seen = Vec::new();
    // Each step of the warm retrieval, in order.
    let mut stages: Vec<(&'static str, Vec<Duration>)> = Vec::new();
    for q in &questions {
        // The question as a user asks it: nothing for this question is warm
        // yet. The separate retrieval below runs after it.
        let t = Instant::now();
        let knobs = Knobs {
            budget: Some(Budget::Tokens(8000)),
            ..Knobs::default()
        };
        let request = loupe_engine::AskRequest::new(q.clone(), knobs);
        let _ = project
            .ask(&request, &mut loupe_engine::AskCache::default())
            .await?;
        full.push(t.elapsed());
        let t = Instant::now();
        let retrieved = project
            .retrieve_noting(&RetrieveQuery::from_question(q))
            .await?;
        retrieve.push(t.elapsed());
        for &(name, took) in &retrieved.stages {
            match stages.iter_mut().find(|(n, _)| *n == name) {
                Some((_, times)) => times.push(took),
                None => stages.push((name, vec![took])),
            }
        }
        let candidates = retrieved.candidates;
        candidates_seen.push(candidates.len());
        if std::env::var_os("LOUPE_BENCH_VERBOSE").is_some() {
            eprintln!(
                "{:>7.1} ms total {:>7.1} ms retrieve again  {} candidates  {q}",
                full.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
                t.elapsed().as_secs_f64() * 1e3,
                candidates.len()
            );
        }
        // A knob change re-runs only the pure assembly over the same
        // candidates, reusing the body sizes the first assembly measured, on
        // the assembly thread as the app does.
        let at = |budget| loupe_assemble::AssembleRequest {
            question: q.clone(),
            knobs: Knobs {
                budget: Some(Budget::Tokens(budget)),
                now: 1,
                ..Knobs::default()
            },
            ..Default::default()
        };
        let (first, second) = (at(8000), at(12000));
        let (candidates, sizes, took) = assembler::run(move || {
            let t = Instant::now();
            let mut sizes = loupe_assemble::SizeCache::default();
            let _ = loupe_assemble::assemble_with(&candidates, &first, &mut sizes);
            (candidates, sizes, t.elapsed())
        })
        .await?;
        first_assembly.push(took);
        let t = Instant::now();
        assembler::run(move || {
            let mut sizes = sizes;
            std::hint::black_box(loupe_assemble::assemble_with(
                &candidates,
                &second,
                &mut sizes,
            ));
        })
        .await?;
        knob.push(t.elapsed());
    }
    candidates_seen.sort_unstable();
    println!(
        "{} questions; candidates per question p50 {}, max {}",
        questions.len(),
        candidates_seen[candidates_seen.len() / 2],
        candidates_seen.last().copied().unwrap_or(0)
    );
    report("retrieve again (same question, warm)", &mut retrieve);
    for (name, times) in &mut stages {
        report(&format!("  of which {name}"), times);
    }
    report(
        "question -> assembly (cold: retrieve + assemble)",
        &mut full,
    );
    report(
        "first assembly (no sizes measured yet)",
        &mut first_assembly,
    );
    report("knob change -> assembly (same candidates)", &mut knob);

    // One-file change → searchable, in process (the watcher's path): append
    // a uniquely named function to an indexed file, update, search for it.
    let paths = project.catalog().paths().await?;
    let mut change = Vec::new();
    for (i, rel) in paths
        .iter()
        .filter(|p| p.ends_with(".rs"))
        .step_by(97)
        // `LOUPE_BENCH_CHANGES` files changed (10).
        .take(
            std::env::var("LOUPE_BENCH_CHANGES")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(10),
        )
        .enumerate()
    {
        let abs = corpus.join(rel);
        let Ok(original) = std::fs::read_to_string(&abs) else {
            continue;
        };
        let name = format!("loupe_bench_marker_{i}_{}", std::process::id());
        let t = Instant::now();
        let edited = format!("{original}\npub fn {name}() {{}}\n");
        if std::fs::write(&abs, edited).is_err() {
            continue;
        }
        let r = project
            .update_paths(
                std::slice::from_ref(&abs),
                &no_progress,
                &CancelToken::new(),
            )
            .await?;
        if std::env::var_os("LOUPE_BENCH_VERBOSE").is_some() {
            eprintln!("{:?}", r.times);
        }
        let found = project
            .retrieve(&RetrieveQuery::from_question(&name))
            .await?;
        let ok = found.first().is_some_and(|c| c.chunk.text.contains(&name));
        change.push(t.elapsed());
        // Put the file back (and the index with it) for the next run.
        let _ = std::fs::write(&abs, original);
        project
            .update_paths(&[abs], &no_progress, &CancelToken::new())
            .await?;
        if !ok {
            eprintln!("marker {name} was not the top hit in {rel}");
        }
    }
    if !change.is_empty() {
        report("one-file change -> searchable (in process)", &mut change);
    }
    Ok(())
}

fn report(what: &str, times: &mut [Duration]) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{what:<44} p50 {:>7.1} ms  p95 {:>7.1} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3
    );
}
