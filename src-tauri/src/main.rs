//! The `loupe-app` binary: starts the desktop app. Everything else is in the
//! library so commands can be tested with `tauri::test::mock_builder`.

// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() {
    loupe_engine::alloc::return_freed_memory();
    loupe_app::run();
}
