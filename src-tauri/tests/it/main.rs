//! The app's commands end to end through Tauri's IPC layer, on a mock
//! runtime (`tauri::test::mock_builder`): a temp fixture project is opened
//! and indexed, questions are assembled, knobs change the table, and errors
//! arrive as `{ code, message }`.
//!
//! Hermetic: every test gets its own project folder and data root, and the
//! embedder is off (lexical and symbol retrieval are enough to rank here).
#![allow(
    clippy::unwrap_used,
    missing_docs,
    reason = "tests fail loudly on unwrap; helpers need no docs"
)]

mod agents;
mod cancel;
mod canned;
mod changes;
mod detail;
mod display;
mod expander;
mod golden;
mod map;
mod package;
mod pins;
mod reading;
mod settings;
mod support;

use loupe_app::dto::{AssemblyDto, DiagnosticDto, IndexEvent, OpenedDto, RowStatus, StatusDto};
use serde_json::json;
use support::Harness;

#[test]
fn open_index_and_assemble_through_ipc() {
    let h = Harness::new();
    let opened: OpenedDto = h.ok(
        "open_project",
        json!({ "path": h.root(), "onProgress": "__CHANNEL__:7" }),
    );
    assert!(opened.status.files >= 3, "{opened:?}");
    assert!(opened.status.chunks >= 3);
    assert_eq!(opened.files_changed, opened.status.files);

    let status: StatusDto = h.ok("project_status", json!({ "root": opened.status.root }));
    assert_eq!(status.chunks, opened.status.chunks);

    let assembly: AssemblyDto = h.ok(
        "assemble",
        h.ask("how does pack_items choose items?", json!({})),
    );
    assert!(!assembly.rows.is_empty());
    let ranks: Vec<u32> = assembly.rows.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, (1..=assembly.rows.len() as u32).collect::<Vec<_>>());
    let best = &assembly.rows[0];
    assert_eq!(best.path, "src/pack.rs", "{:#?}", assembly.rows);
    assert_eq!(best.symbol.as_deref(), Some("pack_items"));
    assert!(assembly.prompt.contains("fn pack_items"));
    assert!(!assembly.report.was_truncated);
}

#[test]
fn a_zero_path_weight_drops_those_rows_and_a_small_budget_truncates() {
    let h = Harness::new();
    let _: OpenedDto = h.ok(
        "open_project",
        json!({ "path": h.root(), "onProgress": "__CHANNEL__:1" }),
    );
    let question = "how does pack_items choose items?";

    let before: AssemblyDto = h.ok("assemble", h.ask(question, json!({})));
    assert!(
        before
            .rows
            .iter()
            .any(|r| r.path.starts_with("tests/") && r.status == RowStatus::Included),
        "{:#?}",
        before.rows
    );

    let hidden: AssemblyDto = h.ok(
        "assemble",
        h.ask(
            question,
            json!({ "path_weights": [{ "glob": "tests/**", "weight": 0.0 }] }),
        ),
    );
    for row in hidden.rows.iter().filter(|r| r.path.starts_with("tests/")) {
        assert_eq!(row.status, RowStatus::Hidden);
        assert_eq!(
            row.reason.as_deref(),
            Some("hidden by path weight tests/**")
        );
    }
    assert!(!hidden.prompt.contains("tests/pack_test.rs"));

    let tight: AssemblyDto = h.ok("assemble", h.ask(question, json!({ "budget": 120 })));
    assert!(tight.report.was_truncated, "{:?}", tight.report);
    assert!(tight.report.dropped_count > before.report.dropped_count);
    assert!(tight.report.used <= tight.report.usable);
}

#[test]
fn errors_cross_ipc_as_code_and_message() {
    let h = Harness::new();
    let missing = h.root().join("does-not-exist");
    let e = h.err(
        "open_project",
        json!({ "path": missing, "onProgress": "__CHANNEL__:1" }),
    );
    assert_eq!(e["code"], "bad_project", "{e}");
    assert!(e["message"].as_str().unwrap().contains("does-not-exist"));

    let e = h.err("project_status", json!({ "root": h.root() }));
    assert_eq!(e["code"], "not_open", "{e}");

    let _: OpenedDto = h.ok(
        "open_project",
        json!({ "path": h.root(), "onProgress": "__CHANNEL__:1" }),
    );
    let e = h.err("assemble", h.ask("   ", json!({})));
    assert_eq!(e["code"], "bad_request", "{e}");
}

#[test]
fn progress_streams_through_the_channel_and_ends_with_done() {
    let h = Harness::new();
    let (opened, events) = h.open_with_channel(false);
    let opened = opened.unwrap();
    assert!(opened.status.files >= 3);
    let stages: Vec<&str> = events
        .iter()
        .map(|e: &IndexEvent| e.stage.as_str())
        .collect();
    assert!(stages.contains(&"walk"), "{stages:?}");
    assert_eq!(stages.last(), Some(&"done"), "{stages:?}");
}

#[test]
fn cancelling_stops_the_run_and_a_later_open_indexes_everything() {
    let h = Harness::new();
    let root = std::fs::canonicalize(h.root()).unwrap();
    let e = h.err("cancel_index", json!({ "root": root }));
    assert_eq!(e["code"], "not_open", "{e}");

    let (cancelled, _) = h.open_with_channel(true);
    let e = cancelled.unwrap_err();
    assert_eq!(e.code, loupe_app::dto::ErrorCode::Cancelled, "{e:?}");
    // Nothing runs now, so there is nothing to cancel.
    let running: bool = h.ok("cancel_index", json!({ "root": root }));
    assert!(!running);

    let (opened, _) = h.open_with_channel(false);
    let opened = opened.unwrap();
    assert_eq!(opened.files_changed, opened.status.files);
    assert!(opened.status.chunks >= 3);
}

#[test]
fn reopening_reuses_the_index_and_diagnostics_list_skipped_files() {
    let h = Harness::new();
    std::fs::write(h.root().join("blob.bin"), b"\0\0\0binary").unwrap();
    let first: OpenedDto = h.ok(
        "open_project",
        json!({ "path": h.root(), "onProgress": "__CHANNEL__:1" }),
    );
    let again: OpenedDto = h.ok(
        "open_project",
        json!({ "path": h.root(), "onProgress": "__CHANNEL__:1" }),
    );
    assert_eq!(again.files_changed, 0);
    assert_eq!(again.status.chunks, first.status.chunks);

    let diags: Vec<DiagnosticDto> = h.ok("diagnostics", json!({ "root": first.status.root }));
    assert!(
        diags
            .iter()
            .any(|d| d.path == "blob.bin" && d.kind == "binary"),
        "{diags:?}"
    );
}

#[test]
fn models_and_default_knobs_are_served() {
    let h = Harness::new();
    let models: Vec<serde_json::Value> = h.ok("models", json!({}));
    assert!(models.iter().any(|m| m["name"] == "gpt-4o"), "{models:?}");
    let knobs: serde_json::Value = h.ok("default_knobs", json!({}));
    assert_eq!(knobs["model"], "gpt-4o");
    assert_eq!(knobs["lod"], true);
}
