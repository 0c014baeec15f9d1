//! The `.deb`'s extra files (`tauri.conf.json`, `bundle.linux.deb.files`)
//! exist in the tree, and the code model is installed where the engine
//! looks for it beside `/usr/bin/loupe` and `/usr/bin/loupe-app`.

use std::path::Path;

#[test]
fn the_package_ships_the_code_model_where_the_binaries_look_for_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let conf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("tauri.conf.json")).unwrap())
            .unwrap();
    let files = conf["bundle"]["linux"]["deb"]["files"].as_object().unwrap();
    for (installed, source) in files {
        let source = source.as_str().unwrap();
        // Build outputs exist only after `make package`'s build.
        if !source.starts_with("target/") {
            assert!(
                root.join(source).is_file(),
                "{installed}: {source} is missing"
            );
        }
    }
    // `CodeModel::shipped` looks in `<binary's dir>/../share/loupe/` (its
    // unit test `the_model_file_is_looked_for_beside_an_installed_binary`);
    // both binaries are installed in /usr/bin.
    assert_eq!(files["/usr/bin/loupe"], "target/release/loupe");
    assert_eq!(
        files["/usr/share/loupe/code-vectors.bin"],
        "crates/loupe-engine/assets/code-vectors.bin"
    );
    // The re-ranker's model, found the same way (`signals::shipped_files`).
    assert_eq!(
        files["/usr/share/loupe/reader.safetensors"],
        "crates/loupe-engine/assets/reader.safetensors"
    );
}
