//! Several processes on one project, and the watcher under an edit storm.
//!
//! Two `Project`s opened on the same folder and data dir stand for two
//! processes: the write lock is a `flock` on its own open file, which
//! conflicts between two opens in one process exactly as between two
//! processes. (`tests/mcp` runs real processes side by side.)

use crate::support::*;
use loupe_engine::progress::{Progress, Stage, no_progress};
use loupe_engine::{CancelToken, Project};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

async fn prompt(p: &Project, question: &str) -> String {
    ask(p, question).await.assembly.prompt
}

/// Everything an index holds that a fresh index of the same tree must
/// equal: each file's hash, each chunk's place and text, every defined name.
async fn fingerprint(p: &Project) -> (BTreeMap<String, String>, Vec<String>, Vec<String>, u64) {
    let files = p
        .catalog()
        .file_states()
        .await
        .unwrap()
        .into_iter()
        .map(|(path, s)| (path, s.hash))
        .collect();
    let mut chunks = Vec::new();
    let mut after = 0;
    loop {
        let page = p.catalog().chunk_page(after, 500).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.id;
        chunks.extend(page.iter().map(|c| {
            format!(
                "{}:{}-{} {}",
                c.path,
                c.start_line,
                c.end_line,
                blake3::hash(c.text.as_bytes())
            )
        }));
    }
    chunks.sort();
    let mut names: Vec<String> = p
        .catalog()
        .symbol_table()
        .await
        .unwrap()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    names.sort();
    let lexical = p.status().await.unwrap().lexical_chunks;
    (files, chunks, names, lexical)
}

/// One process writes, the other answers from what was written: its
/// lexical reader, symbol table and path list follow, with no re-open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_answers_from_what_the_first_wrote() {
    let env = Env::new();
    sample_project(&env);
    let writer = env.open(None).await;
    let reader = env.open(None).await;
    index(&writer).await;
    // Opened before anything was indexed, it still answers.
    assert!(
        prompt(&reader, "how are items packed")
            .await
            .contains("pack_items")
    );

    env.write(
        "src/zebra.rs",
        "/// Paints zebra stripes.\npub fn paint_zebra_stripes(w: u32) -> u32 {\n    w / 2\n}\n",
    );
    index(&writer).await;
    assert!(
        prompt(&reader, "paint_zebra_stripes")
            .await
            .contains("pub fn paint_zebra_stripes"),
        "a new file written by the other process is found by name"
    );
    assert_eq!(reader.status().await.unwrap().files, 5);

    // The reader writes next: its run starts from the other's generation,
    // and both end with the same index.
    std::fs::remove_file(env.root().join("src/zebra.rs")).unwrap();
    index(&reader).await;
    assert!(
        !prompt(&writer, "paint_zebra_stripes")
            .await
            .contains("pub fn paint_zebra_stripes")
    );
    assert_eq!(fingerprint(&writer).await, fingerprint(&reader).await);
    let fresh = Env::new();
    sample_project(&fresh);
    let fresh_p = fresh.open(None).await;
    index(&fresh_p).await;
    let (files, chunks, names, lexical) = fingerprint(&reader).await;
    let (f_files, f_chunks, f_names, f_lexical) = fingerprint(&fresh_p).await;
    assert_eq!(files, f_files);
    assert_eq!(chunks, f_chunks);
    assert_eq!(names, f_names);
    assert_eq!(lexical, f_lexical);
}

/// A write while another process's run holds the lock waits for it and
/// then runs: writes serialize, neither is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_waits_for_another_writers_run_instead_of_failing() {
    let env = Env::new();
    sample_project(&env);
    for n in 0..40 {
        env.write(
            &format!("src/gen/m{n}.rs"),
            format!("pub fn generated_{n}(x: u32) -> u32 {{\n    x + {n}\n}}\n"),
        );
    }
    let first = Arc::new(env.open(None).await);
    let second = Arc::new(env.open(Some(Arc::new(CountingEmbedder::default()))).await);
    let started = Arc::new(AtomicBool::new(false));
    let waiting = Arc::new(AtomicBool::new(false));

    // The first run stops in its parse stage until the second is waiting.
    let run_first = {
        let (first, started, waiting) = (first.clone(), started.clone(), waiting.clone());
        tokio::spawn(async move {
            let sink = move |p: Progress| {
                if p.stage == Stage::Parse && !started.swap(true, Ordering::SeqCst) {
                    let deadline = Instant::now() + Duration::from_secs(20);
                    while !waiting.load(Ordering::SeqCst) && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            };
            first.index(&sink, &CancelToken::new()).await
        })
    };
    while !started.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let sink = {
        let waiting = waiting.clone();
        move |p: Progress| {
            if p.stage == Stage::Wait {
                waiting.store(true, Ordering::SeqCst);
            }
        }
    };
    let second_report = second.index(&sink, &CancelToken::new()).await.unwrap();
    let first_report = run_first.await.unwrap().unwrap();
    assert!(
        waiting.load(Ordering::SeqCst),
        "the second run said it waited"
    );
    assert_eq!(first_report.files_changed, 44);
    // The first run indexed everything; the second found nothing new but
    // the vectors the first (without an embedder) did not compute.
    assert_eq!(second_report.files_changed, 0);
    assert!(second_report.chunks_embedded > 0);
    assert!(second.status().await.unwrap().vectors_ready);
    assert!(prompt(&first, "generated_7").await.contains("x + 7"));

    // A waiting run can be cancelled.
    let held = first.clone();
    let holding = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let blocker = {
        let holding = holding.clone();
        tokio::spawn(async move {
            let rx = std::sync::Mutex::new(rx);
            let sink = move |p: Progress| {
                // The walk runs under the lock: hold it there.
                if p.stage == Stage::Walk
                    && p.total.is_some()
                    && !holding.swap(true, Ordering::SeqCst)
                {
                    let _ = rx.lock().unwrap().recv_timeout(Duration::from_secs(20));
                }
            };
            held.index(&sink, &CancelToken::new()).await
        })
    };
    while !holding.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let cancel = CancelToken::new();
    let on_wait = {
        let cancel = cancel.clone();
        move |p: Progress| {
            if p.stage == Stage::Wait {
                cancel.cancel();
            }
        }
    };
    let cancelled = second.index(&on_wait, &cancel).await;
    assert!(
        matches!(cancelled, Err(loupe_engine::Error::Cancelled)),
        "{cancelled:?}"
    );
    tx.send(()).unwrap();
    blocker.await.unwrap().unwrap();
}

fn module(n: usize, flavour: &str) -> String {
    format!(
        "//! Module {n}, {flavour}.\n\n/// Scales by {n}.\npub fn {flavour}_scale_{n}(x: u64) -> u64 {{\n    x * {n}\n}}\n\n\
         /// Offsets by {n}.\npub fn {flavour}_offset_{n}(x: u64) -> u64 {{\n    x + {n}\n}}\n"
    )
}

/// A branch checkout rewriting 300 files, deleting 50 and adding 50 while
/// the watcher runs ends in the index a fresh index of that tree gives,
/// in a few index passes rather than one per file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_checkout_under_the_watcher_ends_equal_to_a_fresh_index() {
    let env = Env::new();
    let root = env.root();
    git(root, &["init", "-q"]);
    for n in 0..350 {
        env.write(&format!("src/m{n}.rs"), module(n, "main"));
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "main"]);
    git(root, &["checkout", "-q", "-b", "storm"]);
    for n in 0..300 {
        env.write(&format!("src/m{n}.rs"), module(n, "storm"));
    }
    for n in 300..350 {
        std::fs::remove_file(root.join(format!("src/m{n}.rs"))).unwrap();
    }
    for n in 0..50 {
        env.write(&format!("src/new/n{n}.rs"), module(n, "added"));
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "storm"]);
    git(root, &["checkout", "-q", "main"]);

    let p = Arc::new(env.open(None).await);
    index(&p).await;
    let runs = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
    let handle = {
        let (runs, failures) = (runs.clone(), failures.clone());
        loupe_engine::watch::watch(Arc::clone(&p), move |e| match e {
            loupe_engine::watch::WatchEvent::Indexed(_) => {
                runs.fetch_add(1, Ordering::SeqCst);
            }
            loupe_engine::watch::WatchEvent::Failed(e) => failures.lock().unwrap().push(e),
            _ => {}
        })
        .unwrap()
    };
    git(root, &["checkout", "-q", "storm"]);

    // What a fresh index of the final tree holds.
    let fresh_data = tempfile::tempdir().unwrap();
    let mut cfg = loupe_engine::ProjectConfig::new(fresh_data.path());
    cfg.embedder = None;
    let fresh = Project::open(root, cfg).await.unwrap();
    fresh
        .index(&no_progress, &CancelToken::new())
        .await
        .unwrap();
    let want = fingerprint(&fresh).await;
    assert_eq!(want.0.len(), 350);

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if fingerprint(&p).await == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watched index never matched a fresh one"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Events still in the debouncer would start another (empty) run.
    tokio::time::sleep(crate::concurrency::SETTLE).await;
    handle.stop().await;
    assert!(failures.lock().unwrap().is_empty(), "{failures:?}");
    let runs = runs.load(Ordering::SeqCst);
    eprintln!("a checkout of 400 changed paths: {runs} index run(s)");
    assert!(
        (1..=MAX_STORM_RUNS).contains(&runs),
        "{runs} index runs for one checkout"
    );
    assert!(prompt(&p, "storm_scale_7").await.contains("x * 7"));
    assert!(
        !prompt(&p, "main_scale_320")
            .await
            .contains("main_scale_320(x")
    );
}

/// Long enough for the debouncer to flush what is left of a burst.
const SETTLE: Duration = Duration::from_millis(1500);
/// Index runs a single checkout may cost: one per debounced burst, and a
/// loaded machine can split a checkout into two or three (here: 1 in 6 of 6).
const MAX_STORM_RUNS: usize = 3;
