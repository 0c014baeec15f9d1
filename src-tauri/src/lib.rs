//! Loupe's desktop app: the Tauri shell over `loupe-engine` and
//! `loupe-assemble`. The UI (Svelte, in `ui/`) reaches Rust only through the
//! commands in [`commands`], with the wire types in [`dto`].
//!
//! [`build_app`] is generic over the runtime so the commands can be driven by
//! `tauri::test::mock_builder` in tests; [`run`] adds the plugins and the
//! real context and starts the window.
//!
//! What this crate does **not** do: index, retrieve, rank or render. It holds
//! open projects and converts between the core types and the DTOs.

pub mod commands;
pub mod display;
pub mod dto;
pub mod log;
pub mod page;
pub mod prefs;
pub mod state;

pub use state::AppState;

use loupe_engine::ProjectConfig;
use loupe_engine::signals::embed::{CodeEmbedder, Embedder, HttpEmbedder, HttpEmbedderConfig};
use std::sync::Arc;
use tauri::Runtime;

/// Register the state and every command on `builder`.
pub fn build_app<R: Runtime>(builder: tauri::Builder<R>, state: AppState) -> tauri::Builder<R> {
    builder
        .manage(state)
        .invoke_handler(tauri::generate_handler![
            commands::open_project,
            commands::open_indexed,
            commands::open_scanning,
            commands::cancel_index,
            commands::cancel_question,
            commands::project_status,
            commands::diagnostics,
            commands::models,
            commands::builtin_instructions,
            commands::expander_settings,
            commands::save_expander_settings,
            commands::default_knobs,
            commands::assemble,
            commands::token_map,
            commands::golden_run,
            commands::agent_requests,
            commands::agent_request,
            commands::save_agent_knobs,
            commands::project_settings,
            commands::save_knobs,
            commands::mark,
            commands::presets,
            commands::save_preset,
            commands::delete_preset,
            commands::recent_projects,
            commands::forget_recent,
            commands::chunk_detail,
            commands::complete,
            commands::watch_project,
            commands::unwatch_project,
            commands::shown_project,
            commands::save_prompt,
        ])
}

/// The project configuration from the environment: `LOUPE_DATA_DIR` (else
/// the default data root) and `LOUPE_EMBEDDER`: `none` turns vectors off,
/// `bundled` picks the bundled MiniLM itself, `static` its distilled table,
/// `http` an OpenAI-compatible embeddings endpoint (`LOUPE_EMBED_URL`,
/// `LOUPE_EMBED_MODEL`, `LOUPE_EMBED_API_KEY`: what `loupe --embedder http`
/// reads); unset or anything else is Loupe's own code vectors, as in the
/// CLI. The local ones open in milliseconds (the code model from its file
/// beside the binary; without it, vectors are off with a warning),
/// and nothing here delays the first window (an endpoint is asked once for
/// its dimension).
pub fn config_from_env() -> ProjectConfig {
    let data_root = loupe_engine::stores::store::default_data_root();
    let mut config = ProjectConfig::new(&data_root);
    // A large project's vector graph, from LOUPE_GRAPH_MIN_POINTS points
    // when that is set.
    config.graph = config.graph.from_env();
    // The re-ranker, unless LOUPE_NO_READER is set (to anything but 0/false).
    let no_reader =
        std::env::var("LOUPE_NO_READER").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    if !no_reader {
        config.reader = Some(loupe_engine::signals::reader::Reader::shipped());
    }
    let embedder: Result<Arc<dyn Embedder>, _> = match std::env::var("LOUPE_EMBEDDER").as_deref() {
        Ok("none") => return config,
        Ok("bundled") => loupe_engine::signals::embed::bundled(),
        Ok("static") => loupe_engine::signals::embed::static_table(&data_root),
        Ok("http") => http_embedder_from_env().map(|e| Arc::new(e) as Arc<dyn Embedder>),
        _ => CodeEmbedder::new().map(|e| Arc::new(e) as Arc<dyn Embedder>),
    };
    match embedder {
        Ok(e) => config.embedder = Some(e),
        // Lexical and symbol search still work; say why vectors are off.
        Err(e) => tracing::warn!("embedder unavailable, vectors off: {e}"),
    }
    config
}

/// The embeddings endpoint the environment names.
fn http_embedder_from_env() -> loupe_engine::Result<HttpEmbedder> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let (Some(base_url), Some(model)) = (var("LOUPE_EMBED_URL"), var("LOUPE_EMBED_MODEL")) else {
        return Err(loupe_engine::Error::Embed(
            "LOUPE_EMBEDDER=http needs LOUPE_EMBED_URL and LOUPE_EMBED_MODEL".into(),
        ));
    };
    HttpEmbedder::new(HttpEmbedderConfig {
        base_url,
        model,
        api_key: var("LOUPE_EMBED_API_KEY"),
        timeout_secs: loupe_engine::signals::embed::HTTP_EMBED_TIMEOUT_SECS,
    })
}

/// Start the app (what `main` calls).
pub fn run() {
    // Before anything else: no window, no app, and one line that says so.
    if let Some(why) = display::unavailable() {
        eprintln!("{why}");
        std::process::exit(display::NO_DISPLAY_EXIT);
    }
    // Then, so what goes wrong from here on (a panic too) is on file.
    log::init(&loupe_engine::stores::store::default_data_root());
    let app = build_app(tauri::Builder::default(), AppState::new(config_from_env()))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_clipboard_manager::init())
        .setup(|app| {
            use tauri::Manager;
            match app.get_webview_window("main") {
                Some(window) => {
                    page::choose_compositing(&window);
                    page::reload_when_it_dies(&window);
                }
                None => tracing::warn!("no main window to watch the page of"),
            }
            Ok(())
        });
    if let Err(e) = app.run(tauri::generate_context!()) {
        tracing::error!("the app failed: {e}");
        std::process::exit(1);
    }
}
