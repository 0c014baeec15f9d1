//! The real `loupe-app` binary without a display: one line that says so
//! and names the CLI, a non-zero exit, and no panic or backtrace.

use std::process::Command;

/// Runs the app with `env` over an environment without any display, and
/// returns its exit code and stderr.
fn run_app(env: &[(&str, &str)]) -> (Option<i32>, String) {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loupe-app"));
    cmd.env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("LOUPE_DATA_DIR", data.path())
        .env("RUST_BACKTRACE", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.stdout.is_empty(), "stdout: {:?}", out.stdout);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_one_clear_line(stderr: &str, says: &str) {
    assert_eq!(stderr.lines().count(), 1, "one line, got: {stderr}");
    assert!(stderr.contains(says), "{stderr}");
    assert!(stderr.contains("loupe query"), "names the CLI: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn without_a_display_the_app_says_so_in_one_line_and_exits_non_zero() {
    let (code, stderr) = run_app(&[]);
    assert_eq!(code, Some(loupe_app::display::NO_DISPLAY_EXIT), "{stderr}");
    assert_one_clear_line(&stderr, "no display");
}

#[test]
fn a_display_gtk_cannot_open_is_one_line_too() {
    // No X server listens on display 4093 of this machine.
    let (code, stderr) = run_app(&[("DISPLAY", ":4093")]);
    assert_eq!(code, Some(loupe_app::display::NO_DISPLAY_EXIT), "{stderr}");
    assert_one_clear_line(&stderr, "cannot open a window on display \":4093\"");
}
