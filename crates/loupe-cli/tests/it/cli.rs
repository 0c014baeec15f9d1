//! The CLI's user-facing behaviour: errors, JSON output, incremental runs.

use crate::support::*;

#[test]
fn missing_path_file_path_and_empty_question_are_clear_errors() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = loupe(data.path())
        .args(["--embedder", "none", "index"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
    std::fs::write(dir.path().join("f.txt"), "x").unwrap();
    let out = loupe(data.path())
        .args(["--embedder", "none", "status"])
        .arg(dir.path().join("f.txt"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a file"));
    let out = loupe(data.path())
        .args(["--embedder", "none", "search"])
        .arg(dir.path())
        .arg("  ")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("question is empty"));
}

#[test]
fn unwritable_data_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("data-is-a-file");
    std::fs::write(&blocker, "x").unwrap();
    let out = loupe(&blocker)
        .args(["--embedder", "none", "index"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("data directory"), "{err}");
}

#[test]
fn index_then_search_as_json() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 12);
    let report = run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "index", "--json"])
            .arg(dir.path()),
    );
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["files_changed"], 12);
    let again = run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "index", "--json"])
            .arg(dir.path()),
    );
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["files_changed"], 0);
    let rows = run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "search", "--json"])
            .arg(dir.path())
            .arg("what does helper_3_2 compute?"),
    );
    let rows: serde_json::Value = serde_json::from_str(&rows).unwrap();
    assert_eq!(rows[0]["symbol"], "helper_3_2");
    assert_eq!(rows[0]["path"], "src/m3/file_3.rs");
}
