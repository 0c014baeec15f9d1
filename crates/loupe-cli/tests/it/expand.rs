//! `loupe query --expand-url`: the secondary LLM's search terms, against a
//! local stub of an OpenAI-compatible chat endpoint.

use crate::support::loupe;
use std::time::Duration;

#[test]
fn the_secondary_llms_terms_reach_the_search_and_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/render.rs"),
        "pub fn render_prompt(items: &[String]) -> String {\n    items.join(\"\\n\")\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/pack.rs"),
        "/// Packs items under a budget.\npub fn pack_items(budget: usize) -> usize {\n    budget / 2\n}\n",
    )
    .unwrap();
    let data = tmp.path().join("data");
    let question = "how does the output get produced?";
    let query = |extra: &[&str]| {
        let out = loupe(&data)
            .args(["--embedder", "none", "query"])
            .arg(&root)
            .arg(question)
            .args(extra)
            .env_remove("LOUPE_EXPAND_URL")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (plain, plain_err) = query(&[]);
    assert!(!plain_err.contains("search terms"), "{plain_err}");
    assert!(!plain.contains("pub fn render_prompt"), "{plain}");

    let (url, bodies) = loupe_testkit::chat_stub("- render_prompt\n", Duration::ZERO);
    let (expanded, err) = query(&["--expand-url", &url, "--expand-model", "stub-model"]);
    assert!(
        err.contains("search terms from stub-model: render_prompt"),
        "{err}"
    );
    assert!(expanded.contains("pub fn render_prompt"), "{expanded}");
    assert_eq!(bodies.lock().unwrap().len(), 1);

    // An endpoint that does not answer in time: the prompt still comes, said so.
    let (slow, _) = loupe_testkit::chat_stub("render_prompt", Duration::from_secs(3));
    let (fallback, err) = query(&["--expand-url", &slow, "--expand-timeout-ms", "200"]);
    assert!(err.contains("did not answer within 200 ms"), "{err}");
    assert_eq!(fallback, plain);
}
