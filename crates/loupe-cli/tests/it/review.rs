//! `loupe query --diff`: a change as the question, on repositories the
//! tests build with real git.

use crate::support::{git, loupe, run_ok};
use std::path::Path;
use std::process::Output;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const LEDGER: &str = "//! The invoice ledger.\n\n\
/// The total of an invoice in cents, tax included.\n\
pub fn invoice_total(net: i64, tax_percent: i64) -> i64 {\n    net + net * tax_percent / 100\n}\n\n\
/// Rounds cents to whole units.\n\
pub fn round_units(cents: i64) -> i64 {\n    (cents + 50) / 100\n}\n";

const BILLING: &str = "use crate::ledger::invoice_total;\n\n\
/// Bills a customer: the invoice total of their order.\n\
pub fn bill_customer(order_net: i64) -> i64 {\n    invoice_total(order_net, 20)\n}\n";

const LEDGER_TEST: &str = "#[test]\nfn invoice_total_adds_the_tax() {\n    assert_eq!(crate::ledger::invoice_total(100, 20), 120);\n}\n";

/// A repository with one commit: the ledger, a caller, a test, notes.
fn repo(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q"]);
    write(root, "src/ledger.rs", LEDGER);
    write(root, "src/billing.rs", BILLING);
    write(
        root,
        "src/legacy.rs",
        "/// Old rounding.\npub fn legacy_round(x: i64) -> i64 {\n    x\n}\n",
    );
    write(root, "tests/ledger_test.rs", LEDGER_TEST);
    write(
        root,
        "docs/notes.md",
        "# Notes\n\nNothing about money here.\n",
    );
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "Ledger with tax"]);
}

fn query(data: &Path, root: &Path, args: &[&str]) -> Output {
    // History on: the repositories are the tests' own, not this one.
    loupe(data)
        .env_remove("LOUPE_NO_HISTORY")
        .args(["--embedder", "none", "query"])
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The section of an XML prompt between `start` and `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {text}"));
    let rest = &text[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

#[test]
fn an_unstaged_change_is_pinned_with_its_diff_callers_and_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    repo(&root);
    let data = tmp.path().join("data");
    run_ok(
        loupe(&data)
            .args(["--embedder", "none", "index"])
            .arg(&root),
    );
    write(
        &root,
        "src/ledger.rs",
        &LEDGER.replace(
            "    net + net * tax_percent / 100\n",
            "    let tax = net * tax_percent / 100;\n    net + tax.max(0)\n",
        ),
    );
    let prompt = stdout_ok(&query(&data, &root, &["--diff"]));
    // The review preamble, the diff with its citation, the new code pinned.
    assert!(prompt.contains("You are reviewing a change"), "{prompt}");
    let notes = between(&prompt, "<notes>", "</notes>");
    assert!(notes.contains("(unstaged changes)"), "{notes}");
    assert!(notes.contains("### src/ledger.rs (modified)"), "{notes}");
    assert!(notes.contains("+    net + tax.max(0)"), "{notes}");
    assert!(
        notes.contains("-    net + net * tax_percent / 100"),
        "{notes}"
    );
    assert!(notes.contains("@src/ledger.rs:"), "{notes}");
    assert!(
        notes.contains("Ledger with tax"),
        "the touched file's commits: {notes}"
    );
    let pinned = between(&prompt, "<documents kind=\"pinned\">", "</documents>");
    assert!(pinned.contains("net + tax.max(0)"), "{pinned}");
    // Around it: the caller and the test, found by the changed name.
    let retrieved = between(&prompt, "<documents kind=\"retrieved\">", "</documents>");
    assert!(retrieved.contains("pub fn bill_customer"), "{retrieved}");
    assert!(
        retrieved.contains("fn invoice_total_adds_the_tax"),
        "{retrieved}"
    );
    assert!(prompt.contains("<question>\nReview this change.\n</question>"));

    // A question of its own goes with it.
    let asked = stdout_ok(&query(
        &data,
        &root,
        &["Can the tax ever be negative?", "--diff", "unstaged"],
    ));
    assert!(asked.contains("<question>\nCan the tax ever be negative?\n</question>"));
    assert!(asked.contains("+    net + tax.max(0)"));

    // As code: the new lines numbered, the changed ones marked, the removed
    // one counted; the same code pinned.
    let as_code = stdout_ok(&query(&data, &root, &["--diff", "--diff-as-code"]));
    let notes = between(&as_code, "<notes>", "</notes>");
    assert!(
        notes.contains("as the new code with numbered lines"),
        "{notes}"
    );
    let marked = |text: &str| {
        notes
            .lines()
            .any(|l| l.starts_with("+ ") && l.ends_with(&format!(" | {text}")))
    };
    assert!(marked("    let tax = net * tax_percent / 100;"), "{notes}");
    assert!(marked("    net + tax.max(0)"), "{notes}");
    assert!(notes.contains("| (1 line removed)"), "{notes}");
    assert!(
        !notes.contains("-    net + net * tax_percent / 100"),
        "{notes}"
    );
    assert_eq!(
        between(&as_code, "<documents kind=\"pinned\">", "</documents>"),
        pinned
    );
}

#[test]
fn staged_changes_and_ranges_with_renames_and_deletions() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    repo(&root);
    let data = tmp.path().join("data");

    // Staged: a rename, a deletion and an edit; an unstaged edit is not in it.
    git(&root, &["mv", "src/billing.rs", "src/charges.rs"]);
    git(&root, &["rm", "-q", "src/legacy.rs"]);
    write(
        &root,
        "src/ledger.rs",
        &LEDGER.replace("(cents + 50) / 100", "(cents + 49) / 100"),
    );
    git(&root, &["add", "src/ledger.rs"]);
    write(&root, "docs/notes.md", "# Notes\n\nUnstaged words.\n");
    let out = query(&data, &root, &["--diff", "staged", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(stdout_ok(&out).as_bytes()).unwrap();
    let prompt = json["prompt"].as_str().unwrap();
    assert!(prompt.contains("(staged changes)"), "{prompt}");
    assert!(
        prompt.contains("src/billing.rs → src/charges.rs (renamed)"),
        "{prompt}"
    );
    assert!(prompt.contains("### src/legacy.rs (deleted)"), "{prompt}");
    assert!(prompt.contains("+    (cents + 49) / 100"), "{prompt}");
    let notes = between(prompt, "<notes>", "</notes>");
    assert!(!notes.contains("Unstaged words"), "{notes}");
    assert!(
        notes.contains("src/billing.rs:\n"),
        "a renamed file's history is its old path's: {notes}"
    );
    let warnings: Vec<&str> = json["report"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("src/legacy.rs: deleted")),
        "{warnings:?}"
    );
    let pinned: Vec<&serde_json::Value> = json["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["score"]["pinned"] == true)
        .collect();
    assert!(
        pinned.iter().any(|i| i["path"] == "src/ledger.rs"),
        "{pinned:?}"
    );

    // A range: what the last commit changed.
    git(&root, &["commit", "-qm", "Round down at half a unit"]);
    let ranged = stdout_ok(&query(&data, &root, &["--diff", "HEAD~1..HEAD"]));
    assert!(ranged.contains("(HEAD~1..HEAD)"), "{ranged}");
    assert!(ranged.contains("+    (cents + 49) / 100"), "{ranged}");
}

#[test]
fn a_diff_over_its_share_of_the_budget_degrades_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    repo(&root);
    let data = tmp.path().join("data");
    let mut big = String::new();
    for n in 0..120 {
        big.push_str(&format!(
            "/// Rate {n}.\npub fn rate_{n}(x: i64) -> i64 {{\n    x * {n} + {n}\n}}\n\n"
        ));
    }
    write(&root, "src/rates.rs", &big);
    write(&root, "src/ledger.rs", &LEDGER.replace("+ 50", "+ 51"));
    let out = query(&data, &root, &["--diff", "--budget", "1500", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(stdout_ok(&out).as_bytes()).unwrap();
    let report = &json["report"];
    assert!(report["used"].as_u64().unwrap() <= 1500, "{report}");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("diff of src/rates.rs: hunks shown as headers only")
            || warnings.contains("diff of src/rates.rs: left out"),
        "{warnings}"
    );
    // The small file's diff still shows in full.
    assert!(
        json["prompt"]
            .as_str()
            .unwrap()
            .contains("+    (cents + 51) / 100")
    );
}

#[test]
fn nothing_to_review_no_repository_no_commits_and_bad_specs_are_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let stderr = |out: Output| {
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    let root = tmp.path().join("repo");
    repo(&root);
    let err = stderr(query(&data, &root, &["--diff"]));
    assert!(err.contains("no unstaged changes under"), "{err}");
    let err = stderr(query(&data, &root, &["--diff", "main..nosuchbranch"]));
    assert!(err.contains("git diff of main..nosuchbranch"), "{err}");
    let err = stderr(query(&data, &root, &["--diff=--output=/tmp/x"]));
    assert!(err.contains("BASE..HEAD"), "{err}");

    let plain = tmp.path().join("plain");
    write(&plain, "a.rs", "pub fn a() {}\n");
    let err = stderr(query(&data, &plain, &["--diff"]));
    assert!(err.contains("is not in a git repository"), "{err}");

    let fresh = tmp.path().join("fresh");
    write(&fresh, "a.rs", "pub fn a() {}\n");
    git(&fresh, &["init", "-q"]);
    let err = stderr(query(&data, &fresh, &["--diff", "HEAD~1..HEAD"]));
    assert!(err.contains("no commits yet"), "{err}");
    // Staged in a repository without commits: the whole new file.
    git(&fresh, &["add", "a.rs"]);
    let prompt = stdout_ok(&query(&data, &fresh, &["--diff", "staged"]));
    assert!(prompt.contains("### a.rs (added)"), "{prompt}");
    assert!(prompt.contains("+pub fn a() {}"), "{prompt}");
}
