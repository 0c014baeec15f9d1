//! `loupe query --copy`: the no-display error, and under Xvfb (when
//! `xvfb-run` and `xclip` are installed, as `make deps` does) the prompt
//! read back from the real X clipboard after `loupe` has exited.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/golden")
}

const QUESTION: &str = "How is the invoice total computed with tax?";

#[test]
fn copy_without_a_display_fails_before_printing_anything() {
    let data = tempfile::tempdir().unwrap();
    let out = loupe(data.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args(["--embedder", "none", "query", "--copy", "--report"])
        .arg(fixture())
        .arg(QUESTION)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "error: --copy needs a graphical session: neither DISPLAY nor WAYLAND_DISPLAY is set (print the prompt and pipe it instead)"
    );
}

fn installed(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn copy_leaves_the_prompt_on_the_x_clipboard_after_exit() {
    if !installed("xvfb-run") || !installed("xclip") {
        eprintln!("skipped: needs xvfb-run and xclip (make deps installs both)");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "index"])
            .arg(fixture()),
    );
    // `loupe` exits before xclip reads: the copy must outlive it.
    let script = r#""$LOUPE" --embedder none query --copy --json "$ROOT" "$QUESTION" >"$OUT/json" 2>"$OUT/err" \
        && xclip -selection clipboard -o >"$OUT/clip""#;
    let status = Command::new("xvfb-run")
        .args(["-a", "sh", "-c", script])
        .env("LOUPE", env!("CARGO_BIN_EXE_loupe"))
        .env("LOUPE_DATA_DIR", data.path())
        .env_remove("LOUPE_LOG")
        .env("ROOT", fixture())
        .env("QUESTION", QUESTION)
        .env("OUT", out_dir.path())
        .status()
        .unwrap();
    let err = std::fs::read_to_string(out_dir.path().join("err")).unwrap_or_default();
    assert!(status.success(), "{err}");
    let assembly: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("json")).unwrap())
            .unwrap();
    let prompt = assembly["prompt"].as_str().unwrap();
    assert!(prompt.contains("pub fn invoice_total"), "{prompt}");
    let clip = std::fs::read_to_string(out_dir.path().join("clip")).unwrap();
    assert_eq!(clip, prompt);
    let used = assembly["report"]["used"].as_u64().unwrap();
    assert_eq!(
        err.trim(),
        format!("copied {used} tokens to the clipboard (gpt-4o)")
    );
}
