//! The OpenAI-compatible HTTP embedder, against a local stub server.

use crate::support::*;
use loupe_engine::RetrieveQuery;
use loupe_engine::signals::embed::{Embedder, HttpEmbedder, HttpEmbedderConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Serve `/v1/embeddings` on loopback with [`fake_vector`]s, in reverse
/// order with explicit indexes (servers may reorder). Returns the base URL.
fn stub_server(requests: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            requests.fetch_add(1, Ordering::SeqCst);
            let (status, reply) = if !request_line.starts_with("POST /v1/embeddings ") {
                (
                    "404 Not Found",
                    serde_json::json!({"error": "no such route"}),
                )
            } else {
                let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let inputs = req["input"].as_array().unwrap();
                let mut data: Vec<serde_json::Value> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, t)| serde_json::json!({"index": i, "embedding": fake_vector(t.as_str().unwrap())}))
                    .collect();
                data.reverse();
                (
                    "200 OK",
                    serde_json::json!({"object": "list", "data": data, "model": req["model"]}),
                )
            };
            let text = reply.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_embedder_indexes_and_searches_through_a_local_server() {
    let requests = Arc::new(AtomicUsize::new(0));
    let url = stub_server(requests.clone());
    let cfg = HttpEmbedderConfig {
        base_url: url.clone(),
        model: "stub-embed".into(),
        api_key: Some("k".into()),
        timeout_secs: 5,
    };
    let embedder = tokio::task::spawn_blocking(move || HttpEmbedder::new(cfg))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(embedder.dim(), 16);
    assert!(embedder.model_id().contains("stub-embed"));
    // Order follows the `index` field, not the response order.
    let v = embedder
        .embed(&["alpha".into(), "beta gamma".into()])
        .unwrap();
    let mut a = fake_vector("alpha");
    loupe_engine::stores::vectors::normalize(&mut a);
    assert_eq!(v[0], a);

    let env = Env::new();
    sample_project(&env);
    let p = env.open(Some(Arc::new(embedder))).await;
    let r = index(&p).await;
    assert!(r.chunks_embedded > 0);
    assert!(p.status().await.unwrap().vectors_ready);
    let found = p
        .retrieve(&RetrieveQuery::from_question("pack items under a budget"))
        .await
        .unwrap();
    assert!(found.iter().any(|c| c.signals.vector_rank == Some(1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_embedder_reports_a_wrong_route_clearly() {
    let url = stub_server(Arc::new(AtomicUsize::new(0)));
    let cfg = HttpEmbedderConfig {
        base_url: url.replace("/v1", "/nope"),
        model: "m".into(),
        api_key: None,
        timeout_secs: 5,
    };
    let err = tokio::task::spawn_blocking(move || HttpEmbedder::new(cfg))
        .await
        .unwrap()
        .err()
        .unwrap();
    assert!(err.to_string().contains("404"), "{err}");
}
