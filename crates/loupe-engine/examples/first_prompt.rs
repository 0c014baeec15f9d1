//! Time to a first prompt, the way the app gets one: open the project on a
//! fresh data dir, index it, ask a question as soon as the run reports
//! [`Stage::Ready`], then again once the run (vectors included) is over.
//! The same engine calls the app's `open_project` and `assemble` make,
//! without the window. Prints one JSON line of milliseconds, and the
//! process's resident memory after the last answer (what the app's engine
//! holds while the user reads; Linux only, `null` elsewhere).
//!
//! `cargo run --release -p loupe-engine --example first_prompt -- \
//!   PROJECT DATA_DIR code|none "QUESTION"` (`scripts/bench-first-prompt.sh`
//! runs it on fresh data dirs, medians of several runs).

use loupe_assemble::Knobs;
use loupe_engine::embed::{CodeEmbedder, Embedder};
use loupe_engine::progress::{CancelToken, Progress, Stage};
use loupe_engine::{AskCache, AskRequest, Project, ProjectConfig};
use std::sync::Arc;
use std::time::Instant;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [project, data, embedder, question] = args.as_slice() else {
        return Err("usage: first_prompt PROJECT DATA_DIR code|none QUESTION".into());
    };
    let started = Instant::now();
    let ms = |t: Instant| t.duration_since(started).as_secs_f64() * 1000.0;
    let mut cfg = ProjectConfig::new(data);
    cfg.embedder = match embedder.as_str() {
        "none" => None,
        _ => Some(Arc::new(CodeEmbedder::new()?) as Arc<dyn Embedder>),
    };
    let project = Arc::new(Project::open(project.as_ref(), cfg).await?);
    let opened = Instant::now();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let ready_tx = std::sync::Mutex::new(Some(ready_tx));
    let run = {
        let project = Arc::clone(&project);
        tokio::spawn(async move {
            let sink = move |p: Progress| {
                if p.stage == Stage::Ready
                    && let Some(tx) = ready_tx.lock().ok().and_then(|mut t| t.take())
                {
                    let _ = tx.send(Instant::now());
                }
            };
            project.index(&sink, &CancelToken::new()).await
        })
    };
    let ready = ready_rx.await?;
    let request = AskRequest::new(question.clone(), Knobs::default());
    let mut cache = AskCache::default();
    let first = project.ask(&request, &mut cache).await?;
    let first_prompt = Instant::now();
    let report = run.await??;
    let complete = Instant::now();
    let again = project.ask(&request, &mut cache).await?;
    let with_all = Instant::now();
    let line = serde_json::json!({
        "open_ms": ms(opened),
        "ready_ms": ms(ready),
        "first_prompt_ms": ms(first_prompt),
        "first_prompt_partial": first.signals.vectors_partial(),
        "complete_ms": ms(complete),
        "prompt_with_all_ms": ms(with_all),
        "files": report.files_seen,
        "chunks": report.chunks_added,
        "tokens": again.assembly.report.used,
        "rss_after_kb": resident_kb(),
    });
    println!("{line}");
    Ok(())
}

/// `VmRSS` of this process in KiB, from `/proc/self/status`.
fn resident_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
