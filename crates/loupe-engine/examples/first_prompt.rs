//! Time to a first prompt, the way the app gets one: open the project on a
//! fresh data dir, index it, ask a question as soon as the run reports
//! [`Stage::Ready`], then again once the run (vectors included) is over.
//! A first index that reads [`SCAN_MIN_FILES`] files or more is asked at
//! once when its parse stage starts, as the app does: that first prompt
//! comes from a scan of the files while the index is built beside it.
//! The same engine calls the app's `open_project` and `assemble` make,
//! without the window. Prints one JSON line of milliseconds, and the
//! process's resident memory right after the last answer and after
//! [`IDLE`] more (what the app's engine holds while the user reads; Linux
//! only, `null` elsewhere).
//!
//! `cargo run --release -p loupe-engine --example first_prompt -- \
//!   PROJECT DATA_DIR code|none "QUESTION"` (`scripts/bench-first-prompt.sh`
//! runs it on fresh data dirs, medians of several runs). Built with
//! `--features heap-profile` and run with
//! `MALLOC_CONF=prof:true,prof_final:true,prof_prefix:P` it leaves a heap
//! profile of the idle engine for `jeprof`.

use loupe_assemble::Knobs;
use loupe_engine::progress::{CancelToken, Progress, Stage};
use loupe_engine::signals::embed::{CodeEmbedder, Embedder};
use loupe_engine::{AskCache, AskRequest, Project, ProjectConfig, Unindexed};
use std::sync::Arc;
use std::time::Instant;

/// The app shows a first open this large before its index lands
/// (`SCAN_MIN_FILES` in `ui/src/lib/stores/project.svelte.ts`).
const SCAN_MIN_FILES: u64 = 2000;

/// How long the process idles after the last answer before its resident
/// memory is read again.
const IDLE: std::time::Duration = std::time::Duration::from_secs(15);

// The allocator the app and the CLI run on.
#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    loupe_engine::alloc::return_freed_memory();
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
    // Only a folder without an index is shown before its run (the app opens
    // an indexed one at once and brings it up to date in the background).
    let first_index = project.status().await?.generation == 0;
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let ready_tx = std::sync::Mutex::new(Some(ready_tx));
    let (large_tx, large_rx) = tokio::sync::oneshot::channel();
    let large_tx = std::sync::Mutex::new(Some(large_tx));
    let run = {
        let project = Arc::clone(&project);
        tokio::spawn(async move {
            let sink = move |p: Progress| {
                let tx = match p.stage {
                    Stage::Ready => ready_tx.lock().ok().and_then(|mut t| t.take()),
                    Stage::Parse if first_index && p.total.unwrap_or(0) >= SCAN_MIN_FILES => {
                        large_tx.lock().ok().and_then(|mut t| t.take())
                    }
                    _ => None,
                };
                if let Some(tx) = tx {
                    let _ = tx.send(Instant::now());
                }
            };
            project.index(&sink, &CancelToken::new()).await
        })
    };
    let request = AskRequest {
        unindexed: Unindexed::Scan,
        ..AskRequest::new(question.clone(), Knobs::default())
    };
    let mut cache = AskCache::default();
    // A large folder is asked as soon as its files are listed (from a
    // scan); any other at the ready report.
    let mut ready_rx = ready_rx;
    let scanned = tokio::select! {
        biased;
        ready = &mut ready_rx => Err(ready?),
        large = large_rx => Ok(large?),
    };
    let (first, first_prompt, from_scan, ready) = match scanned {
        Ok(_) => {
            let first = project.ask(&request, &mut cache).await?;
            let at = Instant::now();
            (first, at, true, ready_rx.await?)
        }
        Err(ready) => (
            project.ask(&request, &mut cache).await?,
            Instant::now(),
            false,
            ready,
        ),
    };
    let at_ready = match from_scan {
        true => Some(project.ask(&request, &mut cache).await?),
        false => None,
    };
    let index_prompt = Instant::now();
    let report = run.await??;
    let complete = Instant::now();
    let again = project.ask(&request, &mut cache).await?;
    let with_all = Instant::now();
    let rss_after_kb = resident_kb();
    // The user reads: what the process holds once it has been idle a while
    // (an allocator may give freed memory back only after a decay time).
    tokio::time::sleep(IDLE).await;
    let line = serde_json::json!({
        "open_ms": ms(opened),
        "ready_ms": ms(ready),
        "first_prompt_ms": ms(first_prompt),
        "first_prompt_from": if from_scan { "scan" } else { "index" },
        "first_prompt_partial": first.signals.vectors_partial() || first.signals.scan.is_some(),
        "index_prompt_ms": ms(if at_ready.is_some() { index_prompt } else { first_prompt }),
        "complete_ms": ms(complete),
        "prompt_with_all_ms": ms(with_all),
        "files": report.files_seen,
        "chunks": report.chunks_added,
        "tokens": again.assembly.report.used,
        "rss_after_kb": rss_after_kb,
        "rss_idle_kb": resident_kb(),
        "allocator_kb": allocator_kb(),
        "resident_by_mapping_kb": resident_by_mapping(),
    });
    println!("{line}");
    // Out with everything still held: a heap profile's final dump (a
    // `heap-profile` build run with `MALLOC_CONF=prof:true,prof_final:true`)
    // then shows what the idle engine keeps, not what dropping it leaves.
    std::process::exit(0)
}

/// jemalloc's own account in KiB: bytes the program holds (`allocated`),
/// pages of slabs with anything live (`active`), pages it has not given
/// back (`resident`, which also holds its `metadata`). Only a
/// `heap-profile` build keeps these statistics.
fn allocator_kb() -> serde_json::Value {
    #[cfg(all(feature = "heap-profile", not(target_env = "msvc")))]
    {
        use tikv_jemalloc_ctl::{epoch, stats};
        if epoch::advance().is_err() {
            return serde_json::Value::Null;
        }
        let kb = |r: tikv_jemalloc_ctl::Result<usize>| r.ok().map(|b| b / 1024);
        serde_json::json!({
            "allocated": kb(stats::allocated::read()),
            "active": kb(stats::active::read()),
            "resident": kb(stats::resident::read()),
            "metadata": kb(stats::metadata::read()),
        })
    }
    #[cfg(not(all(feature = "heap-profile", not(target_env = "msvc"))))]
    serde_json::Value::Null
}

/// The eight mappings (a file, the lexical index's files of one kind, or
/// `[heap]`, `[anon]`, …) that hold the most resident KiB, from
/// `/proc/self/smaps`.
fn resident_by_mapping() -> Vec<(String, u64)> {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return Vec::new();
    };
    let mut by_name = std::collections::HashMap::<String, u64>::new();
    let mut name = String::new();
    for line in smaps.lines() {
        if let Some(kb) = line.strip_prefix("Rss:") {
            let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            *by_name.entry(name.clone()).or_default() += kb;
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|f| f.contains('-'))
        {
            // A mapping's header: range, perms, offset, device, inode, [path].
            let path = line.split_whitespace().nth(5).unwrap_or("[anon]");
            // The lexical index's files by kind (`*.term`, `*.idx`, …).
            name = match path.split_once("/lexical/") {
                Some((_, file)) => format!(
                    "lexical *.{}",
                    file.rsplit_once('.').map_or("", |(_, ext)| ext)
                ),
                None => path.to_owned(),
            };
        }
    }
    let mut top: Vec<(String, u64)> = by_name.into_iter().collect();
    top.sort_by_key(|m| std::cmp::Reverse(m.1));
    top.truncate(8);
    top
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
