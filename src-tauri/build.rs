//! Build script: compiles `tauri.conf.json` (at the repository root) and the
//! capabilities in `src-tauri/capabilities/` into the app.
//!
//! The config sits next to the root `Cargo.toml` (TAURI-NOTES.md, pitfall 2),
//! so only the capabilities path differs from Tauri's default layout.

fn main() {
    let attributes =
        tauri_build::Attributes::new().capabilities_path_pattern("./src-tauri/capabilities/**/*");
    if let Err(error) = tauri_build::try_build(attributes) {
        // A build script reports failure by panicking; say what failed first.
        panic!("tauri build step failed: {error:#}");
    }
}
