//! Golden questions in the app: `golden_run` runs `.loupe/golden.toml`
//! under the knobs on screen.

use crate::support::Harness;
use loupe_app::dto::GoldenRunDto;
use serde_json::json;

const GOLDEN: &str = r#"
[[question]]
ask = "how does pack_items choose items?"
files = ["src/pack.rs"]
symbols = ["pack_items"]

[[question]]
ask = "where is the packing test?"
files = ["tests/pack_test.rs"]
"#;

fn run(h: &Harness, knobs: serde_json::Value) -> GoldenRunDto {
    let mut args = h.ask("", knobs);
    args.as_object_mut().unwrap().remove("question");
    h.ok("golden_run", args)
}

#[test]
fn golden_questions_run_under_the_knobs_on_screen_and_say_what_a_weight_broke() {
    let h = Harness::new();
    h.open();
    // No file yet: an empty run that says so.
    let none = run(&h, json!({}));
    assert!(!none.present && none.questions.is_empty(), "{none:?}");
    assert_eq!(none.file, ".loupe/golden.toml");

    std::fs::create_dir_all(h.root().join(".loupe")).unwrap();
    std::fs::write(h.root().join(".loupe/golden.toml"), GOLDEN).unwrap();
    let all = run(&h, json!({}));
    assert!(all.present);
    assert_eq!((all.found, all.expected), (3, 3), "{all:#?}");
    assert!(all.questions.iter().all(|q| q.passed));
    let pack = &all.questions[0].items[0];
    assert_eq!(
        (pack.kind.as_str(), pack.name.as_str()),
        ("file", "src/pack.rs")
    );
    assert!(
        pack.found && pack.rank.is_some() && pack.lod.is_some(),
        "{pack:?}"
    );
    assert!(pack.outcome.starts_with("rank "), "{pack:?}");

    // A weight of 0 on tests/** breaks the second question, and says why.
    let hidden = run(
        &h,
        json!({ "path_weights": [{ "glob": "tests/**", "weight": 0.0 }] }),
    );
    assert_eq!((hidden.found, hidden.expected), (2, 3), "{hidden:#?}");
    let broken = &hidden.questions[1];
    assert!(!broken.passed);
    assert!(!broken.items[0].found);
    assert!(
        broken.items[0]
            .outcome
            .contains("hidden by path weight tests/**")
            || broken.items[0].outcome == "not retrieved",
        "{broken:?}"
    );

    // A file that does not parse: its line and why.
    std::fs::write(
        h.root().join(".loupe/golden.toml"),
        "[[question]]\nask = \"x\"\nfilez = []\n",
    )
    .unwrap();
    let mut args = h.ask("", json!({}));
    args.as_object_mut().unwrap().remove("question");
    let e = h.err("golden_run", args);
    assert_eq!(e["code"], "bad_request", "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains(".loupe/golden.toml") && message.contains("line 3"),
        "{e}"
    );
}
