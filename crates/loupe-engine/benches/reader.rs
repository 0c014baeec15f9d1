//! The re-ranker's cost as the app pays it, on an existing index: the
//! model's first load and the memory it adds, then per question the first
//! answer (today's ranking, `Reading::Skip`), the re-ranked answer counted
//! from the question, and a knob change after it (the pairs come from the
//! reader's cache).
//!
//! `LOUPE_BENCH_CORPUS=DIR LOUPE_BENCH_DATA=DATA LOUPE_BENCH_QUESTIONS=a.jsonl,b.jsonl
//! cargo bench -p loupe-engine --bench reader` (questions: the `query`
//! field of each line, up to [`QUESTIONS`] spread over the files; the dev
//! sets' questions in BENCHMARKS.md). `LOUPE_BENCH_EMBEDDER=code` asks with
//! the code vectors, as the app does; `LOUPE_READER_MODEL` reads another
//! model file than the shipped one; `LOUPE_BENCH_READ_FILES` and
//! `LOUPE_BENCH_READ_WINDOW` set the two knobs (default: the files the
//! blend was fitted with, the default window).

use loupe_assemble::{Budget, Knobs};
use loupe_engine::signals::reader::Reader;
use loupe_engine::{AskCache, AskRequest, Project, ProjectConfig, Reading};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Questions asked at most.
const QUESTIONS: usize = 60;

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() {
    let (Some(corpus), Some(data), Ok(files)) = (
        std::env::var_os("LOUPE_BENCH_CORPUS"),
        std::env::var_os("LOUPE_BENCH_DATA"),
        std::env::var("LOUPE_BENCH_QUESTIONS"),
    ) else {
        eprintln!(
            "set LOUPE_BENCH_CORPUS (an indexed folder), LOUPE_BENCH_DATA (its data dir) and LOUPE_BENCH_QUESTIONS (JSONL files with a `query` field)"
        );
        return;
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => return eprintln!("runtime: {e}"),
    };
    if let Err(e) = runtime.block_on(run(corpus.into(), data.into(), &files)) {
        eprintln!("reader bench failed: {e}");
    }
}

/// Resident memory of this process in MiB (Linux).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1 << 20) as f64)
}

fn questions(files: &str) -> Vec<String> {
    let mut all = Vec::new();
    for file in files.split(',').filter(|f| !f.is_empty()) {
        let Ok(text) = std::fs::read_to_string(file) else {
            eprintln!("{file}: unreadable, skipped");
            continue;
        };
        let qs: Vec<String> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v.get("query")?.as_str().map(str::to_owned))
            .collect();
        all.push(qs);
    }
    let per = QUESTIONS / all.len().max(1);
    all.into_iter()
        .flat_map(|qs| {
            let step = (qs.len() / per.max(1)).max(1);
            qs.into_iter().step_by(step).take(per).collect::<Vec<_>>()
        })
        .collect()
}

async fn run(
    corpus: std::path::PathBuf,
    data: std::path::PathBuf,
    files: &str,
) -> loupe_engine::Result<()> {
    let mut cfg = ProjectConfig::new(data);
    if std::env::var("LOUPE_BENCH_EMBEDDER").as_deref() == Ok("code") {
        cfg.embedder = Some(Arc::new(loupe_engine::signals::embed::CodeEmbedder::new()?)
            as Arc<dyn loupe_engine::signals::embed::Embedder>);
    }
    let reader = match std::env::var_os("LOUPE_READER_MODEL") {
        Some(path) => Arc::new(Reader::at(path.into())),
        None => Reader::shipped(),
    };
    cfg.reader = Some(reader.clone());
    let project = Project::open(&corpus, cfg).await?;
    let questions = questions(files);
    println!("{} questions", questions.len());
    // The re-ranker is off by default: read as many files as its blend was
    // fitted with.
    let knob = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let knobs = Knobs {
        budget: Some(Budget::Tokens(27_000)),
        read_files: knob(
            "LOUPE_BENCH_READ_FILES",
            loupe_assemble::knobs::SUGGESTED_READ_FILES,
        ),
        read_window: knob(
            "LOUPE_BENCH_READ_WINDOW",
            loupe_assemble::knobs::DEFAULT_READ_WINDOW,
        ),
        ..Knobs::default()
    };
    // Warm the index as the app's first question would, then load the model.
    let _ = project
        .ask(
            &AskRequest {
                reading: Reading::Skip,
                ..AskRequest::new("warm up", knobs.clone())
            },
            &mut AskCache::default(),
        )
        .await?;
    let before = rss_mib();
    let t = Instant::now();
    let model = reader.model().map_err(loupe_engine::Error::Embed)?;
    println!(
        "model {}: first load {:.0} ms, resident memory +{:.0} MiB",
        model.id(),
        t.elapsed().as_secs_f64() * 1e3,
        rss_mib() - before
    );

    let (mut first, mut reranked, mut knob) = (Vec::new(), Vec::new(), Vec::new());
    // The same knob change with the re-ranker off: what the door costs
    // without it, on the same questions.
    let mut knob_off = Vec::new();
    for q in &questions {
        let mut cache = AskCache::default();
        let asked = Instant::now();
        let skip = AskRequest {
            reading: Reading::Skip,
            ..AskRequest::new(q.clone(), knobs.clone())
        };
        let _ = project.ask(&skip, &mut cache).await?;
        first.push(asked.elapsed());
        let wait = AskRequest::new(q.clone(), knobs.clone());
        let _ = project.ask(&wait, &mut cache).await?;
        reranked.push(asked.elapsed());
        let t = Instant::now();
        let mut changed = wait.clone();
        changed.knobs.sibling_share = 0.4;
        let _ = project.ask(&changed, &mut cache).await?;
        knob.push(t.elapsed());
        let mut off = skip.clone();
        off.knobs.read_files = 0;
        off.knobs.sibling_share = 0.45;
        let _ = project.ask(&off, &mut cache).await?;
        let t = Instant::now();
        off.knobs.sibling_share = 0.4;
        let _ = project.ask(&off, &mut cache).await?;
        knob_off.push(t.elapsed());
    }
    report("first answer (today's ranking)", &mut first);
    report("re-ranked answer, from the question", &mut reranked);
    report("knob change after it", &mut knob);
    report("knob change, re-ranker off", &mut knob_off);
    println!(
        "resident memory after: {:.0} MiB (+{:.0} MiB over the index before the model)",
        rss_mib(),
        rss_mib() - before
    );
    Ok(())
}

fn report(what: &str, times: &mut [Duration]) {
    if times.is_empty() {
        return;
    }
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{what:<40} p50 {:>7.1} ms  p95 {:>7.1} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3
    );
}
