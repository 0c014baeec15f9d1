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
pub mod dto;
pub mod prefs;
pub mod state;

pub use state::AppState;

use loupe_engine::ProjectConfig;
use loupe_engine::embed::{CodeEmbedder, Embedder, PocketEmbedder, StaticEmbedder};
use std::sync::Arc;
use tauri::Runtime;

/// Register the state and every command on `builder`.
pub fn build_app<R: Runtime>(builder: tauri::Builder<R>, state: AppState) -> tauri::Builder<R> {
    builder
        .manage(state)
        .invoke_handler(tauri::generate_handler![
            commands::open_project,
            commands::open_indexed,
            commands::cancel_index,
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
            commands::save_prompt,
        ])
}

/// The project configuration from the environment: `LOUPE_DATA_DIR` (else
/// the default data root) and `LOUPE_EMBEDDER`: `none` turns vectors off,
/// `bundled` picks the bundled MiniLM itself, `static` its distilled table;
/// unset or anything else is Loupe's own code vectors, as in the CLI. They
/// are compiled in, so opening them costs milliseconds and nothing here
/// delays the first window.
pub fn config_from_env() -> ProjectConfig {
    let data_root: std::path::PathBuf = std::env::var_os("LOUPE_DATA_DIR")
        .map(Into::into)
        .unwrap_or_else(loupe_engine::store::default_data_root);
    let mut config = ProjectConfig::new(&data_root);
    let embedder: Result<Arc<dyn Embedder>, _> = match std::env::var("LOUPE_EMBEDDER").as_deref() {
        Ok("none") => return config,
        Ok("bundled") => PocketEmbedder::new().map(|e| Arc::new(e) as Arc<dyn Embedder>),
        Ok("static") => StaticEmbedder::open(&data_root).map(|e| Arc::new(e) as Arc<dyn Embedder>),
        _ => CodeEmbedder::new().map(|e| Arc::new(e) as Arc<dyn Embedder>),
    };
    match embedder {
        Ok(e) => config.embedder = Some(e),
        // Lexical and symbol search still work; say why vectors are off.
        Err(e) => eprintln!("loupe: embedder unavailable, vectors off: {e}"),
    }
    config
}

/// Start the app (what `main` calls).
pub fn run() {
    let app = build_app(tauri::Builder::default(), AppState::new(config_from_env()))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_clipboard_manager::init());
    if let Err(e) = app.run(tauri::generate_context!()) {
        eprintln!("loupe: the app failed: {e}");
        std::process::exit(1);
    }
}
