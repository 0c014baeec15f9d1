//! The vector index's upkeep: a model whose vectors the catalog does not
//! keep (the code model) embeds straight into the index, and dead points
//! are dropped without reading or embedding the live ones again.

use crate::support::*;
use loupe_engine::progress::{Progress, Stage, no_progress};
use loupe_engine::signals::embed::Embedder;
use loupe_engine::{CancelToken, Project, RetrieveQuery};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// [`CountingEmbedder`], but the catalog keeps none of its vectors, as
/// with the code model.
#[derive(Default)]
struct Uncached(CountingEmbedder);

impl Uncached {
    fn calls(&self) -> u64 {
        self.0.calls.load(Ordering::SeqCst) as u64
    }
}

impl Embedder for Uncached {
    fn model_id(&self) -> &str {
        "test:uncached"
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[String]) -> loupe_engine::Result<Vec<Vec<f32>>> {
        self.0.embed(texts)
    }
    fn caches_vectors(&self) -> bool {
        false
    }
}

/// Points in the saved vector index (its rows file plus any delta): 8
/// bytes of id, 4 of scale and 16 coordinates each.
fn saved_points(p: &Project) -> u64 {
    let dir = p.data_dir().join("vectors");
    let bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".i8"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    bytes / (8 + 4 + 16)
}

/// `n` Rust files of one small function each.
fn many_files(env: &Env, n: usize) {
    for i in 0..n {
        env.write(
            &format!("src/part{i}.rs"),
            format!("/// Part {i} of the widget.\npub fn widget_part_{i}() -> usize {{ {i} }}\n"),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_the_catalog_does_not_cache_embeds_into_the_vector_index() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(Uncached::default());
    let p = env.open(Some(embedder.clone())).await;
    let r = index(&p).await;
    let status = p.status().await.unwrap();
    assert!(status.vectors_ready, "{status:?}");
    assert_eq!(status.vector_chunks, status.chunks);
    assert_eq!(r.chunks_embedded, status.chunks);
    assert_eq!(r.embeddings_cached, 0);
    assert_eq!(embedder.calls(), status.chunks);
    assert_eq!(saved_points(&p), status.chunks);
    // The catalog holds no vector of the model.
    let uncached = p
        .catalog()
        .chunks_missing_embeddings("test:uncached")
        .await
        .unwrap();
    assert_eq!(uncached.len() as u64, status.chunks);
    let found = p
        .retrieve(&RetrieveQuery::from_question("pack items under a budget"))
        .await
        .unwrap();
    assert!(found.iter().any(|c| c.signals.vector_rank == Some(1)));

    // An edit embeds its file's new chunks, and nothing else.
    let before = embedder.calls();
    let edited = env.write("src/pack.rs", "pub fn pack_everything_now() -> u8 { 7 }\n");
    let r = p
        .update_paths(&[edited], &no_progress, &CancelToken::new())
        .await
        .unwrap();
    let status = p.status().await.unwrap();
    assert!(status.vectors_ready, "{status:?}");
    assert_eq!(r.chunks_embedded, 1);
    assert_eq!(embedder.calls() - before, 1);
    let found = p
        .retrieve(&RetrieveQuery::from_question("pack everything now"))
        .await
        .unwrap();
    let top = found.iter().find(|c| c.signals.vector_rank == Some(1));
    assert_eq!(top.map(|c| c.chunk.path.as_str()), Some("src/pack.rs"));

    // Reopened, the saved index answers: nothing is embedded again.
    let chunks = status.chunks;
    drop(p);
    let before = embedder.calls();
    let p = env.open(Some(embedder.clone())).await;
    let r = index(&p).await;
    assert_eq!(r.chunks_embedded, 0);
    assert_eq!(embedder.calls(), before);
    assert!(p.status().await.unwrap().vectors_ready);

    // Without its saved index every chunk is embedded again, from the
    // catalog's text.
    let dir = p.data_dir().join("vectors");
    drop(p);
    std::fs::remove_dir_all(&dir).unwrap();
    let p = env.open(Some(embedder.clone())).await;
    let r = index(&p).await;
    assert_eq!(r.chunks_embedded, chunks);
    let status = p.status().await.unwrap();
    assert!(status.vectors_ready, "{status:?}");
    assert_eq!(saved_points(&p), chunks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_embedding_keeps_what_it_embedded_and_the_next_run_ends_it() {
    let env = Env::new();
    many_files(&env, 150);
    let embedder = Arc::new(Uncached::default());
    let p = env.open(Some(embedder.clone())).await;
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    let progress = move |e: Progress| {
        if e.stage == Stage::Embed && e.done >= 64 {
            stop.cancel();
        }
    };
    let r = p.index(&progress, &cancel).await.unwrap();
    assert!(r.embedding_incomplete);
    let status = p.status().await.unwrap();
    assert!(!status.vectors_ready, "{status:?}");
    assert!(status.vector_chunks > 0 && status.vector_chunks < status.chunks);
    assert_eq!(r.chunks_embedded, status.vector_chunks);
    assert_eq!(saved_points(&p), status.vector_chunks);

    let before = embedder.calls();
    let r = index(&p).await;
    assert!(!r.embedding_incomplete);
    let after = p.status().await.unwrap();
    assert!(after.vectors_ready, "{after:?}");
    assert_eq!(r.chunks_embedded, status.chunks - status.vector_chunks);
    assert_eq!(embedder.calls() - before, r.chunks_embedded);
}

async fn drop_dead_points_with(embedder: Arc<dyn Embedder>, calls: impl Fn() -> u64) {
    let env = Env::new();
    many_files(&env, 40);
    let p = env.open(Some(embedder)).await;
    index(&p).await;
    assert_eq!(saved_points(&p), 40);
    // Past the dead share a rebuild would take: 30 of 40 points go.
    for i in 0..30 {
        std::fs::remove_file(env.root().join(format!("src/part{i}.rs"))).unwrap();
    }
    let before = calls();
    let r = index(&p).await;
    assert_eq!(r.chunks_embedded, 0);
    assert_eq!(calls(), before);
    let status = p.status().await.unwrap();
    assert_eq!(status.chunks, 10);
    assert!(status.vectors_ready, "{status:?}");
    assert_eq!(saved_points(&p), 10);
    let found = p
        .retrieve(&RetrieveQuery::from_question("widget part 35"))
        .await
        .unwrap();
    assert!(
        found
            .iter()
            .all(|c| c.chunk.path.as_str() >= "src/part30.rs"),
        "{:?}",
        found.iter().map(|c| &c.chunk.path).collect::<Vec<_>>()
    );
    assert!(found.iter().any(|c| c.signals.vector_rank.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_points_go_without_embedding_the_live_ones_again() {
    let uncached = Arc::new(Uncached::default());
    let seen = uncached.clone();
    drop_dead_points_with(uncached, move || seen.calls()).await;
    let counting = Arc::new(CountingEmbedder::default());
    let seen = counting.clone();
    drop_dead_points_with(counting, move || seen.calls.load(Ordering::SeqCst) as u64).await;
}
