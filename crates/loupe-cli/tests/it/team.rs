//! The team's `.loupe.toml` under `loupe query` and `loupe golden`:
//! built-in knobs → the file → flags (→ a golden question's own overrides),
//! `--no-team-defaults` to leave the file out, and a broken file as a warning.

use crate::support::*;
use std::path::Path;

const QUESTION: &str = "how is the frobnication number of module 3 computed?";

/// `loupe query --json` with `args`; the assembly and stderr.
fn query(data: &Path, root: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out = loupe(data)
        .args(["--embedder", "none", "query", "--json"])
        .arg(root)
        .arg(QUESTION)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

fn includes_m3(a: &serde_json::Value) -> bool {
    included(a).iter().any(|p| p.starts_with("src/m3/"))
}

/// A generated project, indexed, with `team` as its `.loupe.toml`.
fn project(data: &Path, team: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 30);
    std::fs::write(dir.path().join(".loupe.toml"), team).unwrap();
    run_ok(
        loupe(data)
            .args(["--embedder", "none", "index"])
            .arg(dir.path()),
    );
    dir
}

#[test]
fn query_lays_the_team_file_under_the_flags() {
    let data = tempfile::tempdir().unwrap();
    let dir = project(
        data.path(),
        "budget = 3000\n\n[[path_weights]]\nglob = \"src/m3/**\"\nweight = 0\n",
    );

    // The team hides src/m3 and sets the budget.
    let (team, stderr) = query(data.path(), dir.path(), &[]);
    assert!(!includes_m3(&team), "{:?}", included(&team));
    assert!(!team["prompt"].as_str().unwrap().contains("src/m3/"));
    assert_eq!(team["report"]["budget"], 3000);
    assert!(!stderr.contains("warning"), "{stderr}");

    // A flag for the same glob wins; --budget wins over the team's budget.
    let (flagged, _) = query(
        data.path(),
        dir.path(),
        &["--weight", "src/m3/**=1", "--budget", "4000"],
    );
    assert!(
        included(&flagged).iter().any(|p| p == "src/m3/file_3.rs"),
        "{:?}",
        included(&flagged)
    );
    assert_eq!(flagged["report"]["budget"], 4000);

    // A flag for another glob keeps the team's rule.
    let (other, _) = query(data.path(), dir.path(), &["--weight", "src/m4/**=1.5"]);
    assert!(!includes_m3(&other), "{:?}", included(&other));

    // Without the team file: the built-in knobs.
    let (builtin, _) = query(data.path(), dir.path(), &["--no-team-defaults"]);
    assert!(
        included(&builtin).iter().any(|p| p == "src/m3/file_3.rs"),
        "{:?}",
        included(&builtin)
    );
    assert_ne!(builtin["report"]["budget"], 3000);
}

#[test]
fn a_broken_team_file_warns_and_the_prompt_is_the_default_one() {
    let data = tempfile::tempdir().unwrap();
    let dir = project(
        data.path(),
        "budget = 3000\n[[path_weights]]\nglob = \"src/m3/**\"\nweight = [\n",
    );
    let (broken, stderr) = query(data.path(), dir.path(), &[]);
    assert!(
        stderr.contains("warning: .loupe.toml, line 4: ") && stderr.contains("the file is ignored"),
        "{stderr}"
    );
    let (builtin, stderr) = query(data.path(), dir.path(), &["--no-team-defaults"]);
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(includes_m3(&broken));
    assert_eq!(broken["report"]["budget"], builtin["report"]["budget"]);
    assert_eq!(broken["prompt"], builtin["prompt"]);

    // A key the file does not know is named with its line; the rest applies.
    std::fs::write(
        dir.path().join(".loupe.toml"),
        "budget = 3000\nbugdet = 5\n",
    )
    .unwrap();
    let (partial, stderr) = query(data.path(), dir.path(), &[]);
    assert!(
        stderr.contains("warning: .loupe.toml, line 2: unknown knob `bugdet` ignored"),
        "{stderr}"
    );
    assert_eq!(partial["report"]["budget"], 3000);
}

/// The golden fixture's sources copied into a temp project with `team` as
/// its `.loupe.toml` and `golden` as its golden file.
fn golden_project(team: &str, golden: &str) -> tempfile::TempDir {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/golden");
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture.join("src"), &dir.path().join("src"));
    std::fs::write(dir.path().join(".loupe.toml"), team).unwrap();
    std::fs::create_dir_all(dir.path().join(".loupe")).unwrap();
    std::fs::write(dir.path().join(".loupe/golden.toml"), golden).unwrap();
    dir
}

#[test]
fn golden_honours_the_team_file_and_questions_override_it() {
    let data = tempfile::tempdir().unwrap();
    let dir = golden_project(
        "[[path_weights]]\nglob = \"src/invoice.rs\"\nweight = 0\n",
        "[[question]]\nask = \"How is the invoice total computed with tax?\"\nfiles = [\"src/invoice.rs\"]\n\n\
         [[question]]\nask = \"How is the invoice total computed with tax?\"\nfiles = [\"src/invoice.rs\"]\n\
         weights = { \"src/invoice.rs\" = 1 }\n",
    );
    let out = loupe(data.path())
        .args(["--embedder", "none", "golden", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hidden = &report["questions"][0]["items"][0];
    assert_eq!(hidden["outcome"], "dropped", "{hidden}");
    assert_eq!(hidden["reason"]["reason"], "hidden_by_path_weight");
    assert_eq!(hidden["reason"]["glob"], "src/invoice.rs");
    let overridden = &report["questions"][1]["items"][0];
    assert_eq!(overridden["outcome"], "found", "{overridden}");

    let out = run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "golden", "--no-team-defaults"])
            .arg(dir.path()),
    );
    assert!(
        out.ends_with("2 of 2 expected items in their prompts (2 questions)\n"),
        "{out}"
    );
}
