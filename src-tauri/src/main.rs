//! The `loupe-app` binary: starts the desktop app. Everything else is in the
//! library so commands can be tested with `tauri::test::mock_builder`.

// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    loupe_app::run();
}
