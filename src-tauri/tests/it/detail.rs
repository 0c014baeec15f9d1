//! The row detail, `@` completion, stale-file warnings, the watcher and
//! saving the prompt.

use crate::support::Harness;
use loupe_app::dto::{AssemblyDto, ChunkDetailDto, CompletionDto, ShownDto, WatchEventDto};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauri::Manager;
use tauri::ipc::{Channel, InvokeResponseBody};

const QUESTION: &str = "how does pack_items choose items?";

#[test]
fn a_row_detail_shows_the_rendered_chunk_and_its_file() {
    let h = Harness::new();
    let root = h.open();
    let a: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    // Ids cross IPC as JavaScript numbers: exact only up to 2^53 - 1.
    assert!(
        a.rows.iter().all(|r| (0..1i64 << 53).contains(&r.id)),
        "an id a web view would round"
    );
    let best = &a.rows[0];
    let knobs: serde_json::Value = h.ok("default_knobs", json!({}));
    let d: ChunkDetailDto = h.ok(
        "chunk_detail",
        json!({ "root": root, "id": best.id, "lod": 0, "knobs": knobs }),
    );
    assert_eq!(d.path, "src/pack.rs");
    assert!(d.rendered.contains("pub fn pack_items"));
    assert_eq!(
        d.source.as_deref(),
        std::fs::read_to_string(h.root().join("src/pack.rs"))
            .ok()
            .as_deref()
    );
    assert!(!d.stale);
    // A coarser level shows less than the whole body.
    let sig: ChunkDetailDto = h.ok(
        "chunk_detail",
        json!({ "root": root, "id": best.id, "lod": 4, "knobs": knobs }),
    );
    assert!(sig.rendered.len() < d.rendered.len(), "{}", sig.rendered);

    let e = h.err(
        "chunk_detail",
        json!({ "root": root, "id": 999_999, "lod": 0, "knobs": knobs }),
    );
    assert_eq!(e["code"], "bad_request", "{e}");
}

#[test]
fn a_file_changed_since_indexing_is_stale() {
    let h = Harness::new();
    let root = h.open();
    let fresh: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert!(fresh.stale.is_empty());
    std::fs::write(
        h.root().join("src/pack.rs"),
        "pub fn pack_items() {}\n// edited after indexing\n",
    )
    .unwrap();
    let stale: AssemblyDto = h.ok("assemble", h.ask(QUESTION, json!({})));
    assert_eq!(stale.stale, ["src/pack.rs"]);
    assert!(
        stale
            .report
            .warnings
            .iter()
            .any(|w| w == "stale: src/pack.rs changed since it was indexed")
    );
    let id = stale
        .rows
        .iter()
        .find(|r| r.path == "src/pack.rs")
        .unwrap()
        .id;
    let knobs: serde_json::Value = h.ok("default_knobs", json!({}));
    let d: ChunkDetailDto = h.ok(
        "chunk_detail",
        json!({ "root": root, "id": id, "lod": 0, "knobs": knobs }),
    );
    assert!(d.stale);
}

#[test]
fn at_completion_offers_files_then_symbols() {
    let h = Harness::new();
    let root = h.open();
    let found: Vec<CompletionDto> = h.ok(
        "complete",
        json!({ "root": root, "typed": "@pack", "limit": 10 }),
    );
    let values: Vec<(&str, &str)> = found
        .iter()
        .map(|c| (c.kind.as_str(), c.value.as_str()))
        .collect();
    assert!(values.contains(&("file", "src/pack.rs")), "{values:?}");
    assert!(values.contains(&("symbol", "pack_items")), "{values:?}");
    let first_symbol = values.iter().position(|v| v.0 == "symbol").unwrap();
    assert!(values[..first_symbol].iter().all(|v| v.0 == "file"));
    let none: Vec<CompletionDto> = h.ok(
        "complete",
        json!({ "root": root, "typed": "@zzzz", "limit": 10 }),
    );
    assert!(none.is_empty());
}

#[test]
fn the_watcher_reports_a_changed_file_and_a_new_generation() {
    let h = Harness::new();
    let root = h.open();
    let events = watch(&h, &root);
    std::fs::write(
        h.root().join("src/extra.rs"),
        "pub fn freshly_added() -> u32 { 7 }\n",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = events.lock().unwrap().clone();
        if let Some(WatchEventDto::Indexed { generation, .. }) = seen
            .iter()
            .find(|e| matches!(e, WatchEventDto::Indexed { .. }))
        {
            assert!(*generation > 1, "{seen:?}");
            assert!(matches!(seen[0], WatchEventDto::Changed { .. }), "{seen:?}");
            break;
        }
        assert!(Instant::now() < deadline, "no index event: {seen:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let a: AssemblyDto = h.ok(
        "assemble",
        h.ask("what does freshly_added return?", json!({})),
    );
    assert!(a.rows.iter().any(|r| r.path == "src/extra.rs"));
    let stopped: bool = h.ok("unwatch_project", json!({ "root": root }));
    assert!(stopped);
}

/// A page reloaded after its process died asks what it showed: the
/// watched project and its last question; nothing once it stopped
/// watching, and nothing in a fresh app.
#[test]
fn a_reloaded_page_gets_back_the_project_it_showed_and_its_question() {
    let h = Harness::new();
    let none: Option<ShownDto> = h.ok("shown_project", json!({}));
    assert_eq!(none, None);
    let root = h.open();
    // Open but not watched: the page never showed it.
    let none: Option<ShownDto> = h.ok("shown_project", json!({}));
    assert_eq!(none, None);
    let _events = watch(&h, &root);
    let shown: Option<ShownDto> = h.ok("shown_project", json!({}));
    let shown = shown.expect("the watched project");
    assert_eq!(shown.status.root, root);
    assert!(shown.status.files > 0);
    assert_eq!(shown.question, "");
    assert!(!shown.indexing);
    let _: AssemblyDto = h.ok("assemble", h.ask("how are items packed?", json!({})));
    let shown: Option<ShownDto> = h.ok("shown_project", json!({}));
    assert_eq!(shown.expect("shown").question, "how are items packed?");
    let stopped: bool = h.ok("unwatch_project", json!({ "root": root }));
    assert!(stopped);
    let none: Option<ShownDto> = h.ok("shown_project", json!({}));
    assert_eq!(none, None);
}

/// A page reloaded mid-run follows the run with one of its own: both runs
/// share one cancel token, the project counts as indexing until the last
/// ends, and a run begun after a cancel gets a fresh token.
#[test]
fn a_second_index_run_shares_the_first_ones_cancel() {
    let h = Harness::new();
    let root = h.open();
    let state = h.app().state::<loupe_app::AppState>();
    let open = state.get(&root).expect("open");
    assert!(!open.is_indexing());
    let first = open.begin_index();
    let second = open.begin_index();
    assert!(open.is_indexing());
    assert!(open.cancel_index());
    assert!(first.is_cancelled() && second.is_cancelled());
    let third = open.begin_index();
    assert!(
        !third.is_cancelled(),
        "a run after a cancel is not born cancelled"
    );
    for _ in 0..3 {
        assert!(open.is_indexing());
        open.end_index();
    }
    assert!(!open.is_indexing());
    assert!(!open.cancel_index());
}

#[test]
fn the_prompt_is_written_and_a_failed_write_is_a_storage_error() {
    let h = Harness::new();
    let out = h.data().join("prompt.txt");
    tauri::async_runtime::block_on(loupe_app::commands::write_text(out.clone(), "hello".into()))
        .unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "hello");
    let e = tauri::async_runtime::block_on(loupe_app::commands::write_text(
        h.data().join("no/such/dir/p.txt"),
        "x".into(),
    ))
    .unwrap_err();
    assert_eq!(e.code, loupe_app::dto::ErrorCode::Storage);
    // Without the dialog plugin (as here) there is nowhere to ask: an error, not a panic.
    let e = h.err(
        "save_prompt",
        json!({ "text": "x", "fileName": "prompt.xml" }),
    );
    assert_eq!(e["code"], "engine", "{e}");
}

/// The app beside another Loupe process on the same project (the CLI, an
/// MCP server): what the other writes reaches the app's answers without a
/// re-open, and the app's watcher runs after the other's writes instead of
/// failing on its lock.
#[test]
fn another_process_writing_the_project_reaches_the_app() {
    use loupe_engine::progress::no_progress;
    use loupe_engine::{CancelToken, Project, ProjectConfig};
    let h = Harness::new();
    let root = h.open();
    let other =
        tauri::async_runtime::block_on(Project::open(h.root(), ProjectConfig::new(h.data())))
            .unwrap();
    std::fs::write(
        h.root().join("src/elsewhere.rs"),
        "/// Written while the app was open.\npub fn indexed_elsewhere() -> u32 { 11 }\n",
    )
    .unwrap();
    tauri::async_runtime::block_on(other.index(&no_progress, &CancelToken::new())).unwrap();
    let a: AssemblyDto = h.ok(
        "assemble",
        h.ask("what does indexed_elsewhere return?", json!({})),
    );
    assert!(
        a.rows.iter().any(|r| r.path == "src/elsewhere.rs"),
        "the app answers from the other process's index"
    );

    // Both write now: the app's watcher and the other process.
    let events = watch(&h, &root);
    for n in 0..5 {
        std::fs::write(
            h.root().join(format!("src/both_{n}.rs")),
            format!("pub fn written_by_both_{n}() -> u32 {{ {n} }}\n"),
        )
        .unwrap();
        tauri::async_runtime::block_on(other.index(&no_progress, &CancelToken::new())).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a: AssemblyDto = h.ok("assemble", h.ask("written_by_both_4", json!({})));
        if a.rows.iter().any(|r| r.path == "src/both_4.rs") {
            break;
        }
        assert!(Instant::now() < deadline, "the app never saw src/both_4.rs");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Let the watcher's runs for those writes end.
    std::thread::sleep(Duration::from_millis(1500));
    let seen = events.lock().unwrap().clone();
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, WatchEventDto::Failed { .. })),
        "{seen:?}"
    );
    let stopped: bool = h.ok("unwatch_project", json!({ "root": root }));
    assert!(stopped);
}

/// Starts the app's watcher on `root`; the events it sends, as they come.
fn watch(h: &crate::support::Harness, root: &str) -> Arc<Mutex<Vec<WatchEventDto>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let channel = Channel::new(move |body: InvokeResponseBody| {
        let e: WatchEventDto = body.deserialize().unwrap();
        sink.lock().unwrap().push(e);
        Ok(())
    });
    tauri::async_runtime::block_on(loupe_app::commands::watch_project(
        h.app().state(),
        root.to_owned(),
        channel,
    ))
    .unwrap();
    events
}
