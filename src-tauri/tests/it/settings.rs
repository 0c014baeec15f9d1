//! Knobs that persist: the team's `.loupe.toml`, the user's changes over
//! it, presets, recent projects, and the knobs added for issue 4.

use crate::support::Harness;
use loupe_app::dto::{AssemblyDto, PresetDto, ProjectSettingsDto, RecentDto, StatusDto};
use serde_json::json;

const QUESTION: &str = "how does pack_items choose items?";

#[test]
fn team_defaults_come_from_loupe_toml_and_user_changes_layer_on_top() {
    let h = Harness::new();
    std::fs::write(
        h.root().join(".loupe.toml"),
        "budget = 3000\nformat = \"markdown\"\n\n[[path_weights]]\nglob = \"docs/**\"\nweight = 0.0\n",
    )
    .unwrap();
    let root = h.open();
    let s: ProjectSettingsDto = h.ok("project_settings", json!({ "root": root }));
    assert!(s.team_file);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.knobs.budget, Some(3000));
    assert_eq!(s.knobs.path_weights.len(), 1);
    assert_eq!(s.knobs, s.team_knobs);

    let mut mine = s.knobs.clone();
    mine.primer_boost = 0.6;
    let () = h.ok("save_knobs", json!({ "root": root, "knobs": mine }));
    // The team changes its budget; the user's own change survives, the rest follows.
    std::fs::write(h.root().join(".loupe.toml"), "budget = 5000\n").unwrap();
    let h = h.restart();
    let root = h.open();
    let s: ProjectSettingsDto = h.ok("project_settings", json!({ "root": root }));
    assert_eq!(s.knobs.budget, Some(5000));
    assert_eq!(s.knobs.primer_boost, 0.6);
    assert!(s.knobs.path_weights.is_empty());
    assert_eq!(s.team_knobs.primer_boost, 0.25);
}

#[test]
fn a_broken_team_file_is_a_warning_not_an_error() {
    let h = Harness::new();
    std::fs::write(
        h.root().join(".loupe.toml"),
        "budget = \"big\"\nbogus = 1\n",
    )
    .unwrap();
    let root = h.open();
    let s: ProjectSettingsDto = h.ok("project_settings", json!({ "root": root }));
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert_eq!(s.knobs.budget, None);
}

#[test]
fn presets_are_saved_applied_and_deleted() {
    let h = Harness::new();
    let mut knobs: loupe_app::dto::KnobsDto = h.ok("default_knobs", json!({}));
    knobs.budget = Some(777);
    let list: Vec<PresetDto> = h.ok("save_preset", json!({ "name": " small ", "knobs": knobs }));
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name, "small");
    let list: Vec<PresetDto> = h.ok("presets", json!({}));
    assert_eq!(list[0].knobs.budget, Some(777));
    let e = h.err("save_preset", json!({ "name": "  ", "knobs": knobs }));
    assert_eq!(e["code"], "bad_request");
    let list: Vec<PresetDto> = h.ok("delete_preset", json!({ "name": "small" }));
    assert!(list.is_empty());
}

#[test]
fn opening_records_a_recent_project() {
    let h = Harness::new();
    let none: Vec<RecentDto> = h.ok("recent_projects", json!({}));
    assert!(none.is_empty());
    let root = h.open();
    let h = h.restart();
    let list: Vec<RecentDto> = h.ok("recent_projects", json!({}));
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].root, root);
    assert!(list[0].opened_at > 0);
    let list: Vec<RecentDto> = h.ok("forget_recent", json!({ "root": root }));
    assert!(list.is_empty());
}

#[test]
fn the_new_knobs_reach_the_prompt() {
    let h = Harness::new();
    let _ = h.open();
    let base: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert!(base.prompt.contains("@src/pack.rs"), "{}", base.prompt);

    let toggles =
        json!({ "sources": false, "scores": true, "structured": false, "lost_in_middle": false });
    let plain: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({ "toggles": toggles })));
    assert!(!plain.prompt.contains("@src/pack.rs"));

    // A high minimum score drops automatic items for that reason.
    let strict: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({ "min_score": 0.99 })));
    assert!(
        strict
            .rows
            .iter()
            .any(|r| r.reason.as_deref() == Some("below the minimum score")),
        "{:#?}",
        strict.rows
    );

    // The user's own preamble for the question's type replaces the
    // built-in one, which the app can show to start from.
    let builtins: std::collections::BTreeMap<String, String> =
        h.ok("builtin_instructions", json!({}));
    assert_eq!(builtins.len(), 6, "{builtins:?}");
    let kind = &base.report.question_type;
    assert!(base.prompt.contains(&builtins[kind]), "{kind}");
    let own: AssemblyDto = h.ok(
        "assemble",
        h.ask(
            QUESTION,
            json!({ "instructions": { kind.as_str(): "Answer in one line." } }),
        ),
    );
    assert!(own.prompt.contains("Answer in one line."));
    assert!(!own.prompt.contains(&builtins[kind]));

    let reserved: AssemblyDto = h.ok(
        "assemble",
        h.ask(QUESTION, json!({ "answer_reserve": 1000 })),
    );
    assert_eq!(reserved.report.answer_reserve, 1000);
    assert_eq!(base.report.answer_reserve, 4096);

    // A primer file is boosted (and always a candidate).
    let primed: AssemblyDto = h.ok(
        "assemble",
        h.ask(QUESTION, json!({ "primers": ["packing.md", " "] })),
    );
    let doc = primed
        .rows
        .iter()
        .find(|r| r.path == "docs/packing.md")
        .expect("the primer is a candidate");
    assert!(doc.score.primer > 0.0, "{doc:?}");
    assert!(
        base.rows
            .iter()
            .filter(|r| r.path == "docs/packing.md")
            .all(|r| r.score.primer == 0.0)
    );

    // A model row of the user's own: its default budget and tokenizer apply.
    let mine = json!([{ "name": " My-Llama ", "context_window": 8000, "default_budget": 900,
        "encoding": "cl100k_base", "safety_margin": 0.1 },
        { "name": "", "context_window": 0, "default_budget": 0, "encoding": "o200k_base", "safety_margin": 0.0 }]);
    let custom: AssemblyDto = h.ok(
        "assemble",
        h.ask(
            QUESTION,
            json!({ "model": "my-llama-3-8b", "models": mine }),
        ),
    );
    assert_eq!(custom.report.model, "my-llama");
    assert_eq!(custom.report.budget, 900);
    assert!(custom.report.usable <= 810, "{:?}", custom.report);

    // Overrides replace what the classifier detected.
    let over: AssemblyDto = h.ok(
        "assemble",
        h.ask(
            QUESTION,
            json!({ "intent": "tests", "question_type": "debugging" }),
        ),
    );
    assert_eq!(over.report.intent, "tests");
    assert_eq!(over.report.question_type, "debugging");
    assert_ne!(base.report.question_type, "debugging");
}

#[test]
fn secret_redaction_can_be_turned_off() {
    let h = Harness::new();
    std::fs::write(
        h.root().join("src/config.rs"),
        "/// Connects to the payment service.\npub fn payment_client() -> Client {\n    \
         Client::new(\"AKIAIOSFODNN7EXAMPLF\")\n}\n",
    )
    .unwrap();
    let _ = h.open();
    let q = "how does payment_client connect?";
    let on: AssemblyDto = h.ok("assemble", h.ask(q, json!({})));
    assert!(on.report.redactions > 0, "{:?}", on.report);
    assert!(!on.prompt.contains("AKIAIOSFODNN7EXAMPLF"));
    let off: AssemblyDto = h.ok(
        "assemble",
        h.ask(q, json!({ "redact_secrets": false, "sanitize": false })),
    );
    assert!(off.prompt.contains("AKIAIOSFODNN7EXAMPLF"));
}

/// Issue 13: a project shown before its first index lands answers from a
/// scan of its files, and says so; once indexed, from the index.
#[test]
fn a_project_not_indexed_yet_answers_from_a_scan() {
    let h = Harness::new();
    let status: StatusDto = h.ok("open_scanning", json!({ "path": h.root() }));
    assert_eq!(status.generation, 0);
    let scanned: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert_eq!(scanned.rows[0].path, "src/pack.rs");
    assert!(
        scanned
            .report
            .warnings
            .iter()
            .any(|w| w.contains("partial index: signals: a scan of")),
        "{:?}",
        scanned.report.warnings
    );
    h.open();
    let indexed: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert_eq!(indexed.rows[0].path, "src/pack.rs");
    assert!(
        !indexed
            .report
            .warnings
            .iter()
            .any(|w| w.contains("a scan of")),
        "{:?}",
        indexed.report.warnings
    );
    let e = h.err("open_scanning", json!({ "path": h.root().join("nope") }));
    assert_eq!(e["code"], "bad_project");
}

#[test]
fn an_indexed_project_reopens_without_indexing() {
    let h = Harness::new();
    let never: Option<StatusDto> = h.ok("open_indexed", json!({ "path": h.root() }));
    assert!(never.is_none());
    let root = h.open();
    let h = h.restart();
    let quick: Option<StatusDto> = h.ok("open_indexed", json!({ "path": h.root() }));
    let quick = quick.expect("indexed before the restart");
    assert_eq!(quick.root, root);
    assert!(quick.chunks >= 3);
    // Open without an index run: questions are answered from the stored index.
    let a: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert_eq!(a.rows[0].path, "src/pack.rs");
    let e = h.err("open_indexed", json!({ "path": h.root().join("nope") }));
    assert_eq!(e["code"], "bad_project");
}
