//! `loupe models`: which tokenizer counts each model, exact or estimated.

use crate::support::{loupe, run_ok};

#[test]
fn the_table_says_which_tokenizer_counts_each_model_and_how_exactly() {
    let data = tempfile::tempdir().unwrap();
    let table = run_ok(loupe(data.path()).arg("models"));
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row in\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        row("gpt-4o").starts_with("gpt-4o o200k_base exact "),
        "{table}"
    );
    assert!(
        row("qwen2.5-coder").starts_with("qwen2.5-coder qwen2 exact "),
        "{table}"
    );
    assert!(
        row("claude-sonnet-4").starts_with("claude-sonnet-4 cl100k_base estimated, 22% free "),
        "{table}"
    );

    // One model, as `--model` resolves it; an unknown one is a guess, said so.
    let one = run_ok(loupe(data.path()).args(["models", "Qwen/Qwen2.5-Coder-7B-Instruct"]));
    assert_eq!(one.lines().count(), 2, "{one}");
    assert!(one.contains("qwen2.5-coder"), "{one}");
    let out = loupe(data.path())
        .args(["models", "mystery-9000", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["exact"], false);
    assert_eq!(rows[0]["encoding"], "o200k_base");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not in the table"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
