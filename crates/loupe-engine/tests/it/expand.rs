//! The secondary LLM (`expand.rs`) against a local stub of an
//! OpenAI-compatible chat endpoint: its terms join the search, a mention
//! skips it, and a slow, broken or absent endpoint leaves the local
//! analyzer alone, said in the answer.

use crate::support::{Env, ask, index, sample_project};
use loupe_assemble::Knobs;
use loupe_engine::asking::expand::ExpandConfig;
use loupe_engine::{AskCache, AskRequest};
use loupe_testkit::chat_stub as stub;
use std::net::TcpListener;
use std::time::Duration;

/// The indexed sample project, and its answer to `question` without a
/// secondary LLM.
async fn sample_and_local_answer(
    question: &str,
) -> (Env, loupe_engine::Project, loupe_engine::Answer) {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let local = ask(&p, question).await;
    (env, p, local)
}

fn config(base_url: String, timeout_ms: u64) -> ExpandConfig {
    ExpandConfig {
        base_url,
        model: "stub-model".into(),
        api_key: Some("sk-test".into()),
        timeout_ms,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llms_terms_join_the_search_and_are_reported() {
    let question = "how does the output get produced?";
    let (_env, p, local) = sample_and_local_answer(question).await;
    assert!(local.expansion.is_none(), "off unless configured");
    let finds_render = |a: &loupe_engine::Answer| {
        a.selected
            .candidates
            .iter()
            .any(|c| c.chunk.symbol.as_deref() == Some("render_prompt"))
    };
    assert!(!finds_render(&local), "the question's own words miss it");

    let (url, bodies) = stub("1. `render_prompt`\n2. format output\n", Duration::ZERO);
    let request = AskRequest {
        expand: Some(config(url, 5_000)),
        ..AskRequest::new(question, Knobs::default())
    };
    let mut cache = AskCache::default();
    let answer = p.ask(&request, &mut cache).await.unwrap();
    let e = answer.expansion.as_ref().expect("reported");
    assert_eq!(e.terms, ["render_prompt", "format output"]);
    assert_eq!(e.note, None);
    assert_eq!(
        e.describe(),
        "search terms from stub-model: render_prompt, format output"
    );
    assert!(finds_render(&answer), "the term found the function");
    {
        let sent = bodies.lock().unwrap();
        assert_eq!(sent.len(), 1);
        let sent: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
        assert_eq!(sent["model"], "stub-model");
        assert_eq!(sent["messages"][1]["content"], question);
    }

    // A knob change re-assembles without asking again.
    let tighter = AskRequest {
        knobs: Knobs {
            k: Some(3),
            ..Knobs::default()
        },
        ..request.clone()
    };
    let again = p.ask(&tighter, &mut cache).await.unwrap();
    assert_eq!(bodies.lock().unwrap().len(), 1);
    assert_eq!(again.expansion, answer.expansion);

    // A question that @mentions what it wants is not sent.
    let mention = AskRequest {
        expand: request.expand.clone(),
        ..AskRequest::new("what does @src/pack.rs do?", Knobs::default())
    };
    let skipped = p.ask(&mention, &mut AskCache::default()).await.unwrap();
    assert_eq!(bodies.lock().unwrap().len(), 1);
    let note = skipped.expansion.unwrap().note.unwrap();
    assert!(note.contains("@mentions"), "{note}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_broken_or_absent_endpoint_leaves_the_local_analyzer() {
    let question = "how are items packed under the budget?";
    let (_env, p, local) = sample_and_local_answer(question).await;

    // Closed port: nothing listens there once the listener is dropped.
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let (slow, _) = stub("pack_items", Duration::from_secs(3));
    let (prose, _) = stub(
        "I would search the code for how packing works in general.",
        Duration::ZERO,
    );
    for (url, timeout_ms, expect) in [
        (closed, 2_000, "local analysis only"),
        (slow, 300, "did not answer within 300 ms"),
        (prose, 2_000, "no usable term"),
    ] {
        let request = AskRequest {
            expand: Some(config(url.clone(), timeout_ms)),
            ..AskRequest::new(question, Knobs::default())
        };
        let answer = p.ask(&request, &mut AskCache::default()).await.unwrap();
        let e = answer.expansion.unwrap();
        assert!(e.terms.is_empty(), "{url}: {e:?}");
        let note = e.note.unwrap();
        assert!(note.contains(expect), "{url}: {note}");
        assert_eq!(answer.assembly.prompt, local.assembly.prompt, "{url}");
    }
}
