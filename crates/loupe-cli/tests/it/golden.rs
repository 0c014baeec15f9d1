//! `loupe golden` on the fixture project `tests/fixtures/golden`, whose
//! `.loupe/golden.toml` has one question that passes and one that fails on
//! purpose (its file is hidden by a path weight of 0).

use crate::support::*;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/golden")
}

#[test]
fn golden_reports_found_and_dropped_items_and_fails_the_run() {
    let data = tempfile::tempdir().unwrap();
    let out = loupe(data.path())
        .args(["--embedder", "none", "golden", "--format", "json"])
        .arg(fixture())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 of 3 expected items are not in their prompts"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["found"], 2);
    assert_eq!(report["expected"], 3);

    let passing = &report["questions"][0];
    assert_eq!(passing["line"], 6);
    let file = &passing["items"][0];
    assert_eq!(file["expected"]["name"], "src/invoice.rs");
    assert_eq!(file["outcome"], "found", "{file}");
    assert_eq!(file["rank"], 1, "{file}");
    assert_eq!(file["lod"], 0, "{file}");
    let symbol = &passing["items"][1];
    assert_eq!(symbol["expected"]["kind"], "symbol");
    assert_eq!(symbol["outcome"], "found", "{symbol}");
    assert!(
        symbol["chunk"]
            .as_str()
            .unwrap()
            .starts_with("src/invoice.rs:"),
        "{symbol}"
    );

    let failing = &report["questions"][1];
    assert_eq!(failing["line"], 11);
    let hidden = &failing["items"][0];
    assert_eq!(hidden["outcome"], "dropped", "{hidden}");
    assert_eq!(hidden["reason"]["reason"], "hidden_by_path_weight");
    assert_eq!(hidden["reason"]["glob"], "src/legacy/**");

    // The table says the same for people; the second run reuses the index.
    let out = loupe(data.path())
        .args(["--embedder", "none", "golden"])
        .arg(fixture())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("line 6    ok  "), "{table}");
    assert!(
        lines[1].contains("found    file   src/invoice.rs"),
        "{table}"
    );
    assert!(lines[1].contains("rank 1, LOD 0"), "{table}");
    assert!(lines[3].starts_with("line 11   FAIL"), "{table}");
    assert!(
        lines[4].contains("dropped  file   src/legacy/flat_tax.rs")
            && lines[4].contains("hidden by path weight src/legacy/**"),
        "{table}"
    );
    assert_eq!(
        lines[5],
        "2 of 3 expected items in their prompts (2 questions)"
    );
}

#[test]
fn golden_passes_with_exit_zero_and_names_unknown_items() {
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let ok = files.path().join("ok.toml");
    std::fs::write(
        &ok,
        "[[question]]\nask = \"How is the invoice total computed with tax?\"\nfiles = [\"./src/invoice.rs\"]\n",
    )
    .unwrap();
    let out = run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "golden", "--file"])
            .arg(&ok)
            .arg(fixture()),
    );
    assert!(
        out.ends_with("1 of 1 expected items in their prompts (1 questions)\n"),
        "{out}"
    );

    let unknown = files.path().join("unknown.toml");
    std::fs::write(
        &unknown,
        "[[question]]\nask = \"How are labels printed?\"\nfiles = [\"src/labels.rs\"]\nsymbols = [\"print_label\"]\n",
    )
    .unwrap();
    let out = loupe(data.path())
        .args(["--embedder", "none", "golden", "--format", "json", "--file"])
        .arg(&unknown)
        .arg(fixture())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["questions"][0]["items"][0]["outcome"], "unknown");
    assert_eq!(report["questions"][0]["items"][1]["outcome"], "found");
}

#[test]
fn malformed_or_missing_golden_files_are_clear_errors() {
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let bad = files.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[question]]\nask = \"a\"\nfile = [\"src/invoice.rs\"]\n",
    )
    .unwrap();
    let out = loupe(data.path())
        .args(["--embedder", "none", "golden", "--file"])
        .arg(&bad)
        .arg(fixture())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml: line 3, column 1: unknown field `file`"),
        "{err}"
    );

    let out = loupe(data.path())
        .args(["--embedder", "none", "golden"])
        .arg(files.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no golden questions at"), "{err}");
}
