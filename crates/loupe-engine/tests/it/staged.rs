//! Readiness in stages: questions are answered from the lexical index,
//! symbols and graph while the vectors are still being built, say so, and
//! are answered with the vectors once they land.

use crate::support::*;
use loupe_assemble::Knobs;
use loupe_engine::progress::{Progress, Stage, no_progress};
use loupe_engine::signals::embed::Embedder;
use loupe_engine::{AskCache, AskRequest, CancelToken, Until};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// [`CountingEmbedder`]'s vectors, held back until `open` is set.
#[derive(Default)]
struct GatedEmbedder {
    open: AtomicBool,
    inner: CountingEmbedder,
}

impl Embedder for GatedEmbedder {
    fn model_id(&self) -> &str {
        "test:gated"
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[String]) -> loupe_engine::Result<Vec<Vec<f32>>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.open.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.inner.embed(texts)
    }
}

/// An index run that stops at the ready point.
async fn searchable(p: &loupe_engine::Project) -> loupe_engine::IndexReport {
    p.index_until(Until::Searchable, &no_progress, &CancelToken::new())
        .await
        .unwrap()
}

/// Candidates the vector search found.
fn vector_hits(a: &loupe_engine::Answer) -> usize {
    a.selected
        .candidates
        .iter()
        .filter(|c| c.signals.vector_rank.is_some())
        .count()
}

const QUESTION: &str = "how are items packed under a token budget?";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_question_is_answered_before_the_vectors_land_and_again_after() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(GatedEmbedder::default());
    let project = Arc::new(env.open(Some(embedder.clone())).await);
    let stages = Arc::new(Mutex::new(Vec::new()));
    let run = {
        let (project, stages) = (project.clone(), stages.clone());
        tokio::spawn(async move {
            let sink = move |p: Progress| stages.lock().unwrap().push(p.stage);
            project.index(&sink, &CancelToken::new()).await
        })
    };
    // The run says when questions can be asked, and is still embedding.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !stages.lock().unwrap().contains(&Stage::Ready) {
        assert!(Instant::now() < deadline, "no ready report");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut cache = AskCache::default();
    let request = AskRequest::new(QUESTION, Knobs::default());
    let early = project.ask(&request, &mut cache).await.unwrap();
    assert!(!run.is_finished(), "the run waits for the gated embedder");
    let chunks = project.status().await.unwrap().chunks;
    assert_eq!(early.signals.vectors, Some((0, chunks)));
    assert!(early.signals.vectors_partial());
    let paths: Vec<&str> = early
        .assembly
        .items
        .iter()
        .map(|i| i.path.as_str())
        .collect();
    assert!(paths.contains(&"src/pack.rs"), "{paths:?}");
    let warning = early
        .assembly
        .report
        .warnings
        .iter()
        .find(|w| w.starts_with("partial index"))
        .expect("the partial index is in the report");
    assert!(warning.contains("vectors not built yet"), "{warning}");
    assert_eq!(vector_hits(&early), 0);

    // The vectors land: the same cache retrieves again, with them.
    embedder.open.store(true, Ordering::SeqCst);
    let report = run.await.unwrap().unwrap();
    assert!(!report.vectors_deferred);
    let seen = stages.lock().unwrap().clone();
    let ready = seen.iter().position(|s| *s == Stage::Ready).unwrap();
    let embed = seen.iter().position(|s| *s == Stage::Embed).unwrap();
    assert!(ready < embed, "{seen:?}");
    let late = project.ask(&request, &mut cache).await.unwrap();
    assert_eq!(late.signals.vectors, Some((chunks, chunks)));
    assert!(
        !late
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("partial index"))
    );
    assert!(vector_hits(&late) > 0, "vectors were searched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_searchable_run_defers_the_vectors_to_the_next_full_run() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(CountingEmbedder::default());
    let project = env.open(Some(embedder.clone())).await;
    let report = searchable(&project).await;
    assert!(report.vectors_deferred);
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 0, "nothing embedded");
    let status = project.status().await.unwrap();
    assert!(status.chunks > 0 && !status.vectors_ready);
    let answer = ask(&project, QUESTION).await;
    assert!(answer.signals.vectors_partial());

    // A process opening it later (the app, `loupe index`) completes it.
    drop(project);
    let project = env.open(Some(embedder.clone())).await;
    let report = index(&project).await;
    assert_eq!(report.files_changed, 0);
    assert!(report.chunks_embedded > 0);
    assert!(project.status().await.unwrap().vectors_ready);
    // Without an embedder there is nothing to defer, nor to warn about.
    let plain = Env::new();
    sample_project(&plain);
    let project = plain.open(None).await;
    let report = searchable(&project).await;
    assert!(!report.vectors_deferred);
    let answer = ask(&project, QUESTION).await;
    assert_eq!(answer.signals.vectors, None);
    assert!(
        !answer
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("partial"))
    );
}

/// The vector coverage an answer reports is counted once per index change
/// (not per question), and counted again after every change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vector_coverage_follows_every_index_change() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(Some(Arc::new(CountingEmbedder::default()))).await;
    index(&p).await;
    let coverage = |a: &loupe_engine::Answer| a.signals.vectors;
    let first = coverage(&ask(&p, "how are items packed").await);
    let chunks = p.status().await.unwrap().chunks;
    assert_eq!(first, Some((chunks, chunks)));
    assert_eq!(coverage(&ask(&p, "what renders the prompt").await), first);

    env.write(
        "src/zebra.rs",
        "/// Paints zebra stripes.\npub fn paint_zebra_stripes(w: u32) -> u32 {\n    w / 2\n}\n",
    );
    index(&p).await;
    let more = p.status().await.unwrap().chunks;
    assert!(more > chunks);
    assert_eq!(
        coverage(&ask(&p, "paint zebra stripes").await),
        Some((more, more))
    );
    assert_eq!(p.status().await.unwrap().vector_chunks, more);

    std::fs::remove_file(env.root().join("src/zebra.rs")).unwrap();
    index(&p).await;
    assert_eq!(
        coverage(&ask(&p, "how are items packed").await),
        Some((chunks, chunks))
    );
    assert_eq!(p.status().await.unwrap().vector_chunks, chunks);
}

/// Issue 13: a question the app has replaced stops its scan (which reads
/// every file of a folder not indexed yet): the answer ends as cancelled,
/// nothing is cached, and asking again scans afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_question_stops_its_scan_and_caches_nothing() {
    use loupe_engine::Unindexed;
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    let cancel = CancelToken::new();
    cancel.cancel();
    let stopped = AskRequest {
        unindexed: Unindexed::Scan,
        cancel,
        ..AskRequest::new(QUESTION, Knobs::default())
    };
    let mut cache = AskCache::default();
    let e = p.ask(&stopped, &mut cache).await.unwrap_err();
    assert!(matches!(e, loupe_engine::Error::Cancelled), "{e}");
    assert!(cache.candidates().is_empty());
    let again = AskRequest {
        unindexed: Unindexed::Scan,
        ..AskRequest::new(QUESTION, Knobs::default())
    };
    let answered = p.ask(&again, &mut cache).await.unwrap();
    assert!(answered.signals.scan.is_some(), "{:?}", answered.signals);
    assert!(answered.assembly.prompt.contains("pub fn pack_items"));
}

/// Issue 13: a folder whose first index has not landed answers from a scan
/// of its files, says so, and answers from the index once it lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_before_the_first_index_is_answered_from_a_scan() {
    use loupe_engine::Unindexed;
    let env = Env::new();
    sample_project(&env);
    // What the walk admits but no reader can use: binary, not UTF-8.
    env.write("data/blob.bin", b"pack_items\0\x01\x02 budget");
    env.write("src/latin1.rs", b"// pack_items budget caf\xe9\n");
    let p = env.open(None).await;
    let request = AskRequest {
        unindexed: Unindexed::Scan,
        ..AskRequest::new(QUESTION, Knobs::default())
    };
    let mut cache = AskCache::default();
    let scanned = p.ask(&request, &mut cache).await.unwrap();
    assert_eq!(scanned.signals.scan, Some(5), "{:?}", scanned.signals);
    let first = scanned.assembly.items.iter().find(|i| i.lod.is_some());
    assert_eq!(first.map(|i| i.path.as_str()), Some("src/pack.rs"));
    assert!(scanned.assembly.prompt.contains("pub fn pack_items"));
    assert!(
        scanned
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("partial index: signals: a scan of 5 files")),
        "{:?}",
        scanned.assembly.report.warnings
    );
    assert!(
        scanned
            .selected
            .candidates
            .iter()
            .all(|c| c.chunk.path != "data/blob.bin" && c.chunk.path != "src/latin1.rs")
    );
    // A pinned path that names no file is refused, as with an index.
    let pinned = AskRequest {
        unindexed: Unindexed::Scan,
        ..AskRequest::new(format!("{QUESTION} @src/nope.rs"), Knobs::default())
    };
    let e = p.ask(&pinned, &mut AskCache::default()).await.unwrap_err();
    assert!(e.to_string().contains("@src/nope.rs"), "{e}");
    // Words no file uses: nothing, and a reason that is not "empty index".
    let none = AskRequest {
        unindexed: Unindexed::Scan,
        ..AskRequest::new(
            "zebra quokka",
            Knobs {
                primers: Vec::new(),
                ..Knobs::default()
            },
        )
    };
    let nothing = p.ask(&none, &mut AskCache::default()).await.unwrap();
    assert!(
        nothing
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.contains("uses the question's words")),
        "{:?}",
        nothing.assembly.report.warnings
    );

    // The index lands: the same cache retrieves again, from the index.
    searchable(&p).await;
    let indexed = p.ask(&request, &mut cache).await.unwrap();
    assert_eq!(indexed.signals.scan, None);
    assert!(
        !indexed
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.contains("a scan of")),
        "{:?}",
        indexed.assembly.report.warnings
    );
    let first = indexed.assembly.items.iter().find(|i| i.lod.is_some());
    assert_eq!(first.map(|i| i.path.as_str()), Some("src/pack.rs"));
}
