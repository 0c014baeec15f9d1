//! What the workspace's test crates share: the engine's, the CLI's and the
//! app's integration tests build git repositories the same way. A
//! dev-dependency only; nothing here ships.

use std::path::Path;

/// Runs git in `dir` as a test user (no signing, branch `main`); fails the
/// test with git's words when git says no.
///
/// # Panics
///
/// When git cannot be run or exits with an error: the test fails there.
pub fn git(dir: &Path, args: &[&str]) {
    let out = match std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
    {
        Ok(out) => out,
        Err(e) => panic!("git {args:?} does not run: {e}"),
    };
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
