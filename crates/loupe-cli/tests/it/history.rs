//! `loupe query` reads the project's commit history unless told not to.

use crate::support::*;

/// The history share of the score of `path`'s best item, if it is an item.
fn history_of(a: &serde_json::Value, path: &str) -> Option<f64> {
    a["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["path"] == path)
        .filter_map(|i| i["score"]["history"].as_f64())
        .reduce(f64::max)
}

#[test]
fn commits_like_the_question_raise_the_files_they_changed() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/types.rs"),
        "pub const TYPES: &[&str] = &[\"rs\"];\n",
    )
    .unwrap();
    std::fs::write(root.join("src/printer.rs"), "pub fn print_line() {}\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial import"]);
    std::fs::write(
        root.join("src/types.rs"),
        "pub const TYPES: &[&str] = &[\"rs\", \"hy\"];\n",
    )
    .unwrap();
    git(root, &["commit", "-q", "-am", "add hy language support"]);

    run_ok(
        loupe(data.path())
            .env_remove("LOUPE_NO_HISTORY")
            .args(["--embedder", "none", "index"])
            .arg(root),
    );
    let q = "support the kconfig language";
    let mut with = loupe(data.path());
    with.env_remove("LOUPE_NO_HISTORY")
        .args(["--embedder", "none", "query", "--json"])
        .arg(root)
        .arg(q);
    let a: serde_json::Value = serde_json::from_str(&run_ok(&mut with)).unwrap();
    let h = history_of(&a, "src/types.rs").expect("types.rs is an item");
    assert!(h > 0.0, "{h}");

    let mut without = loupe(data.path());
    without
        .args(["--embedder", "none", "--no-history", "query", "--json"])
        .arg(root)
        .arg(q);
    let b: serde_json::Value = serde_json::from_str(&run_ok(&mut without)).unwrap();
    assert!(history_of(&b, "src/types.rs").is_none_or(|h| h == 0.0));
}

/// `loupe status` says how much history retrieval uses, or why there is none.
#[test]
fn status_reports_the_history_or_why_there_is_none() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn one() {}\n").unwrap();
    let status = |extra: &[&str]| {
        let mut cmd = loupe(data.path());
        cmd.env_remove("LOUPE_NO_HISTORY")
            .args(["--embedder", "none"])
            .args(extra)
            .arg("status")
            .arg(root);
        run_ok(&mut cmd)
    };
    // A temp dir is in no repository.
    assert!(
        status(&[]).contains("history:  none (not in a git repository)"),
        "{}",
        status(&[])
    );
    git(root, &["init", "-q"]);
    assert!(status(&[]).contains("history:  none (the repository has no commits yet)"));
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    assert!(status(&[]).contains("history:  1 commit\n"));
    assert!(status(&["--no-history"]).contains("history:  none (turned off)"));
}
