//! The secondary LLM in the app: its settings are saved (the key never
//! shown back), questions report its terms, bad settings are refused, and
//! turning it off stops it. Against a local stub chat endpoint.

use crate::support::Harness;
use loupe_app::dto::{AssemblyDto, ExpanderDto};
use serde_json::json;
use std::time::Duration;

#[test]
fn the_secondary_llm_is_set_reported_refused_when_wrong_and_turned_off() {
    let h = Harness::new();
    let _ = h.open();
    let off: Option<ExpanderDto> = h.ok("expander_settings", json!({}));
    assert_eq!(off, None);
    let question = "how is the text for the items made?";
    let plain: AssemblyDto = h.ok("assemble", h.ask(question, json!({})));
    assert_eq!(plain.search_terms, None);

    let (url, bodies) = loupe_testkit::chat_stub("render\npack_items", Duration::ZERO);
    let settings =
        json!({ "base_url": url, "model": "stub-model", "api_key": "sk-test", "timeout_ms": 5000 });
    let saved: Option<ExpanderDto> =
        h.ok("save_expander_settings", json!({ "settings": settings }));
    let saved = saved.expect("stored");
    assert!(saved.has_key);
    assert_eq!(saved.model, "stub-model");
    let file = std::fs::read_to_string(h.data().join("app/expander.json")).unwrap();
    assert!(file.contains("sk-test"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(h.data().join("app/expander.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o077,
            0,
            "the key file is the user's alone: {mode:o}"
        );
    }

    let asked: AssemblyDto = h.ok("assemble", h.ask(question, json!({})));
    assert_eq!(
        asked.search_terms.as_deref(),
        Some("search terms from stub-model: render, pack_items")
    );
    assert!(asked.prompt.contains("pub fn render"), "{}", asked.prompt);
    let sent = bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].contains(question), "{}", sent[0]);

    // Saved again without a key: the stored key stays.
    let kept: Option<ExpanderDto> = h.ok(
        "save_expander_settings",
        json!({ "settings": { "base_url": url, "model": "stub-model", "api_key": null, "timeout_ms": 4000 } }),
    );
    assert!(kept.unwrap().has_key);

    // Refused with the reason; the stored settings stay.
    for (bad, words) in [
        (
            json!({ "base_url": "localhost:11434", "model": "m", "api_key": null, "timeout_ms": 1000 }),
            "http://",
        ),
        (
            json!({ "base_url": url, "model": " ", "api_key": null, "timeout_ms": 1000 }),
            "model",
        ),
        (
            json!({ "base_url": url, "model": "m", "api_key": null, "timeout_ms": 5 }),
            "between 100",
        ),
    ] {
        let err = h.err("save_expander_settings", json!({ "settings": bad }));
        assert_eq!(err["code"], "bad_request", "{err}");
        assert!(err["message"].as_str().unwrap().contains(words), "{err}");
    }
    let still: Option<ExpanderDto> = h.ok("expander_settings", json!({}));
    assert_eq!(still.unwrap().timeout_ms, 4000);

    // Off: no file, no terms.
    let none: Option<ExpanderDto> = h.ok("save_expander_settings", json!({ "settings": null }));
    assert_eq!(none, None);
    assert!(!h.data().join("app/expander.json").exists());
    let after: AssemblyDto = h.ok("assemble", h.ask(question, json!({})));
    assert_eq!(after.search_terms, None);
    assert_eq!(after.prompt, plain.prompt);
}
