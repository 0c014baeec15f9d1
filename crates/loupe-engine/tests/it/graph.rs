//! The vector graph of a large project (`stores/graph.rs`), with its size
//! lowered so a test project crosses it: built in the background once the
//! vectors are saved, loaded rather than built on the next open, rebuilt
//! when damaged, kept across a small change, and answering as the scan.

use crate::support::*;
use loupe_engine::Project;
use loupe_engine::stores::graph::{GraphPolicy, VectorSearch};
use std::sync::Arc;

/// `n` Rust files of one small function each, on a few topics.
fn many_files(env: &Env, n: usize) {
    let topics = [
        "parse the token stream",
        "render the prompt",
        "pack the budget",
        "walk the tree",
    ];
    for i in 0..n {
        let topic = topics[i % topics.len()];
        env.write(
            &format!("src/part{i}.rs"),
            format!("/// Part {i}: {topic}.\npub fn part_{i}(budget: usize) -> usize {{ budget + {i} }}\n"),
        );
    }
}

async fn open_with(env: &Env, graph: GraphPolicy) -> Project {
    let mut cfg = env.config(Some(Arc::new(CountingEmbedder::default())));
    cfg.graph = graph;
    Project::open(env.root(), cfg).await.unwrap()
}

/// A graph from the first point on.
fn from_one_point(build: bool) -> GraphPolicy {
    GraphPolicy {
        min_points: 1,
        build,
    }
}

async fn settled(p: &Project) -> VectorSearch {
    p.wait_for_graph(|_, _| {}).await;
    p.status().await.unwrap().vector_search
}

const QUESTION: &str = "where is the prompt rendered under the token budget";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_project_answers_from_its_graph_as_the_scan_does() {
    let env = Env::new();
    many_files(&env, 120);
    let p = open_with(&env, from_one_point(true)).await;
    index(&p).await;
    assert_eq!(settled(&p).await, VectorSearch::Graph);
    assert!(p.data_dir().join("graph/manifest.json").exists());
    let with_graph = ask(&p, QUESTION).await;
    drop(p);
    let p = open_with(&env, GraphPolicy::off()).await;
    assert_eq!(settled(&p).await, VectorSearch::GraphSaved);
    let scanned = ask(&p, QUESTION).await;
    assert!(!with_graph.assembly.prompt.is_empty());
    assert_eq!(with_graph.assembly.prompt, scanned.assembly.prompt);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_graph_is_loaded_and_a_damaged_one_built_again() {
    let env = Env::new();
    many_files(&env, 60);
    let p = open_with(&env, from_one_point(true)).await;
    index(&p).await;
    assert_eq!(settled(&p).await, VectorSearch::Graph);
    let dir = p.data_dir().join("graph");
    drop(p);
    // A process that only loads finds the saved graph.
    let p = open_with(&env, from_one_point(false)).await;
    assert_eq!(settled(&p).await, VectorSearch::Graph);
    drop(p);
    // One byte changed: not trusted, so a loading process scans ...
    let file = dir.join("graph.hnsw.graph");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let p = open_with(&env, from_one_point(false)).await;
    assert_eq!(settled(&p).await, VectorSearch::Scan);
    drop(p);
    // ... and a building one builds it again, whole.
    let p = open_with(&env, from_one_point(true)).await;
    assert_eq!(settled(&p).await, VectorSearch::Graph);
    assert_ne!(std::fs::read(&file).unwrap(), bytes);
    drop(p);
    let p = open_with(&env, from_one_point(false)).await;
    assert_eq!(settled(&p).await, VectorSearch::Graph);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_change_keeps_the_graph_and_its_new_chunks_are_found() {
    let env = Env::new();
    many_files(&env, 80);
    let p = open_with(&env, from_one_point(true)).await;
    index(&p).await;
    assert_eq!(settled(&p).await, VectorSearch::Graph);
    env.write(
        "src/zebra.rs",
        "/// Feed the zebra its striped hay.\npub fn feed_zebra_hay() -> usize { 7 }\n",
    );
    index(&p).await;
    // The new chunk's point is in a delta beside the rows the graph
    // indexes: the graph stays, and the point is scanned.
    assert_eq!(settled(&p).await, VectorSearch::Graph);
    let answer = ask(&p, "feed the zebra striped hay").await;
    assert!(answer.assembly.prompt.contains("feed_zebra_hay"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_its_size_a_project_only_scans() {
    let env = Env::new();
    many_files(&env, 20);
    let p = open_with(
        &env,
        GraphPolicy {
            min_points: 1_000_000,
            build: true,
        },
    )
    .await;
    index(&p).await;
    assert_eq!(settled(&p).await, VectorSearch::Scan);
    assert!(!p.data_dir().join("graph").exists());
}
