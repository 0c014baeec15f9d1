//! Running the built `loupe` binary against temp folders.

use std::path::Path;
use std::process::{Command, Output};

pub fn loupe(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loupe"));
    // Fixtures live inside this repository: its own commits must not become
    // evidence in their prompts. History has tests of its own.
    cmd.env("LOUPE_DATA_DIR", data)
        .env_remove("LOUPE_LOG")
        .env("LOUPE_NO_HISTORY", "1");
    cmd
}

pub fn run_ok(cmd: &mut Command) -> String {
    let out: Output = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A generated project of `files` Rust files that call each other.
pub fn generate(root: &Path, files: usize) {
    for i in 0..files {
        let dir = root.join(format!("src/m{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = format!(
            "//! Module {i}: widgets and gadgets.\nuse crate::m{}::helper_{};\n\n",
            (i + 1) % 10,
            (i + 1) % files
        );
        for f in 0..6 {
            text.push_str(&format!(
                "/// Compute the frobnication number {f} of module {i}.\npub fn helper_{i}_{f}(x: u64) -> u64 {{\n    let y = x.wrapping_mul({f} + 1);\n    if y % 7 == 0 {{ return helper_{}_{f}(y / 7); }}\n    y ^ 0x{i:x}\n}}\n\n",
                (i + 1) % files
            ));
        }
        std::fs::write(dir.join(format!("file_{i}.rs")), text).unwrap();
    }
}

/// Paths of the items a `query --format json` assembly did not drop.
pub fn included(a: &serde_json::Value) -> Vec<String> {
    a["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"]["status"] != "dropped")
        .map(|i| i["path"].as_str().unwrap().to_owned())
        .collect()
}

pub use loupe_testkit::{copy_dir, git};
