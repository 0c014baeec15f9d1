//! Pinning and banning from the table: pins survive any budget, bans leave
//! the prompt, both persist across a restart.

use crate::support::Harness;
use loupe_app::dto::{AssemblyDto, MarkDto, ProjectSettingsDto, RowStatus, SelectionDto};
use serde_json::json;

const QUESTION: &str = "how does pack_items choose items?";
/// Small enough that the test of `pack_items` is dropped unless pinned
/// (depends on the preamble's length: the question is a code explanation).
const TINY_BUDGET: u32 = 170;

fn render_target() -> serde_json::Value {
    json!({ "kind": "chunk", "path": "src/render.rs", "symbol": "render", "start_line": 1 })
}

/// The test of `pack_items`: retrieved, but ranked below what a tiny budget keeps.
fn test_target() -> serde_json::Value {
    json!({ "kind": "chunk", "path": "tests/pack_test.rs", "symbol": "pack_items_respects_budget", "start_line": 3 })
}

fn row<'a>(a: &'a AssemblyDto, path: &str) -> Option<&'a loupe_app::dto::RowDto> {
    a.rows.iter().find(|r| r.path == path)
}

#[test]
fn a_pinned_chunk_scores_one_and_survives_a_tiny_budget_and_a_restart() {
    let h = Harness::new();
    let root = h.open();
    let tiny = json!({ "budget": TINY_BUDGET });
    let before: AssemblyDto = h.ok("assemble", h.ask(QUESTION, tiny.clone()));
    assert!(
        row(&before, "tests/pack_test.rs").is_some_and(|r| r.status == RowStatus::Dropped),
        "{:#?}",
        before.rows
    );

    let sel: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": test_target(), "mark": "pin" }),
    );
    assert_eq!(sel.pinned.len(), 1);
    let pinned: AssemblyDto = h.ok("assemble", h.ask(QUESTION, tiny.clone()));
    let r = row(&pinned, "tests/pack_test.rs").expect("the pinned chunk is a row");
    assert!(
        matches!(r.status, RowStatus::Included | RowStatus::Degraded),
        "{r:?}"
    );
    assert_eq!(r.score.score, 1.0);
    assert!(r.score.pinned);
    assert_eq!(r.marked.as_ref().map(|m| m.mark), Some(MarkDto::Pin));
    assert!(
        pinned.prompt.contains("tests/pack_test.rs"),
        "{}",
        pinned.prompt
    );

    // Stored under the data root, not in the project: a restart keeps it.
    let h = h.restart();
    let root = h.open();
    let settings: ProjectSettingsDto = h.ok("project_settings", json!({ "root": root }));
    assert_eq!(settings.selection, sel);
    let again: AssemblyDto = h.ok("assemble", h.ask(QUESTION, tiny));
    assert!(row(&again, "tests/pack_test.rs").is_some_and(|r| r.score.pinned));
    assert!(!h.root().join("app.json").exists());

    // Clearing the pin restores the automatic ranking.
    let sel: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": test_target(), "mark": "clear" }),
    );
    assert!(sel.pinned.is_empty());
    let cleared: AssemblyDto = h.ok(
        "assemble",
        h.ask(QUESTION, json!({ "budget": TINY_BUDGET })),
    );
    assert!(row(&cleared, "tests/pack_test.rs").is_none_or(|r| !r.score.pinned));
}

#[test]
fn a_banned_file_leaves_the_prompt_but_stays_listed_for_unbanning() {
    let h = Harness::new();
    let root = h.open();
    let target = json!({ "kind": "file", "path": "tests/pack_test.rs" });
    let before: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert!(before.prompt.contains("pack_items_respects_budget"));

    let _: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": target, "mark": "ban" }),
    );
    let banned: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert!(!banned.prompt.contains("pack_items_respects_budget"));
    let rows: Vec<_> = banned
        .rows
        .iter()
        .filter(|r| r.path == "tests/pack_test.rs")
        .collect();
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(r.status, RowStatus::Banned);
        assert_eq!(r.reason.as_deref(), Some(loupe_assemble::report::BANNED));
        assert_eq!(r.marked.as_ref().map(|m| m.mark), Some(MarkDto::Ban));
    }
    let ranks: Vec<u32> = banned.rows.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, (1..=banned.rows.len() as u32).collect::<Vec<_>>());
}

#[test]
fn a_pin_on_a_chunk_wins_over_a_ban_on_its_file() {
    let h = Harness::new();
    let root = h.open();
    let file = json!({ "kind": "file", "path": "src/render.rs" });
    let _: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": file, "mark": "ban" }),
    );
    let _: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": render_target(), "mark": "pin" }),
    );
    let a: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    let r = row(&a, "src/render.rs").unwrap();
    assert!(r.score.pinned, "{r:?}");
    assert_ne!(r.status, RowStatus::Banned);
}

#[test]
fn a_pin_that_names_nothing_warns() {
    let h = Harness::new();
    let root = h.open();
    let gone =
        json!({ "kind": "chunk", "path": "src/render.rs", "symbol": "vanished", "start_line": 1 });
    let _: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": gone, "mark": "pin" }),
    );
    let a: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert!(
        a.report
            .warnings
            .iter()
            .any(|w| w == "pinned vanished in src/render.rs names nothing in the index now"),
        "{:?}",
        a.report.warnings
    );
}

#[test]
fn marking_an_unopened_project_is_not_open() {
    let h = Harness::new();
    let e = h.err(
        "mark",
        json!({ "root": h.root(), "target": render_target(), "mark": "pin" }),
    );
    assert_eq!(e["code"], "not_open", "{e}");
}
