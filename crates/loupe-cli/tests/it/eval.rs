//! `loupe eval` end to end on a tiny synthetic git repository: two commits
//! (an edit, a deletion, an addition), a bare mirror, a three-line dataset
//! (one commit that does not exist), then resume and score.

use crate::support::{loupe, run_ok};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn eval_materializes_commits_incrementally_and_scores() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src-repo");
    std::fs::create_dir_all(src.join("src")).unwrap();
    git(&src, &["init", "-q"], "2001-01-01T00:00:00");
    std::fs::write(
        src.join("src/config.rs"),
        "/// Reads the settings file.\npub fn parse_config(text: &str) -> Vec<String> {\n    text.lines().map(str::to_owned).collect()\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("src/render.rs"),
        "/// Draws widgets on the screen.\npub fn draw_widgets(n: usize) -> usize {\n    n * 2\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("src/legacy.rs"),
        "/// Old frobnicator.\npub fn frobnicate_legacy() {}\n",
    )
    .unwrap();
    for i in 0..5 {
        std::fs::write(
            src.join(format!("src/util{i}.rs")),
            format!("/// Helper {i}.\npub fn helper_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n"),
        )
        .unwrap();
    }
    git(&src, &["add", "."], "2001-01-01T00:00:00");
    git(&src, &["commit", "-qm", "one"], "2001-01-01T00:00:00");
    let c1 = git(&src, &["rev-parse", "HEAD"], "2001-01-01T00:00:00");
    std::fs::write(
        src.join("src/config.rs"),
        "/// Reads the settings file.\npub fn parse_config(text: &str) -> Vec<String> {\n    text.lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()\n}\n",
    )
    .unwrap();
    std::fs::remove_file(src.join("src/legacy.rs")).unwrap();
    std::fs::write(
        src.join("src/theme.rs"),
        "/// Colour themes for widgets.\npub fn load_theme(name: &str) -> String {\n    name.to_uppercase()\n}\n",
    )
    .unwrap();
    git(&src, &["add", "-A"], "2002-01-01T00:00:00");
    git(&src, &["commit", "-qm", "two"], "2002-01-01T00:00:00");
    let c2 = git(&src, &["rev-parse", "HEAD"], "2002-01-01T00:00:00");

    let repos = tmp.path().join("repos");
    std::fs::create_dir_all(repos.join("acme+tool")).unwrap();
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            &src.to_string_lossy(),
            &repos.join("acme+tool/repo").to_string_lossy(),
        ],
        "2002-01-01T00:00:00",
    );

    // Listed newest first: eval must still visit c1 before c2.
    let dataset = tmp.path().join("tiny.jsonl");
    let rows = [
        serde_json::json!({"instance_id": "t-2", "repo": "acme/tool", "base_commit": c2,
            "query": "load_theme should not upper-case theme names",
            "gold_files": ["src/theme.rs"], "gold_hunks_in_base": {"src/theme.rs": [[2, 3]]}}),
        serde_json::json!({"instance_id": "t-1", "repo": "acme/tool", "base_commit": c1,
            "query": "parse_config keeps empty lines of the settings file",
            "gold_files": ["src/config.rs"], "gold_hunks_in_base": {"src/config.rs": [[3, 3]]}}),
        serde_json::json!({"instance_id": "t-bad", "repo": "acme/tool",
            "base_commit": "0123456789012345678901234567890123456789",
            "query": "anything", "gold_files": ["src/config.rs"]}),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&dataset, text).unwrap();

    let data = tmp.path().join("data");
    let work = tmp.path().join("work");
    let out = tmp.path().join("pred.jsonl");
    // `loupe eval` of the dataset with its own data dir, work dir and output.
    let eval_into = |data: &Path, work: &Path, out: &Path| {
        let mut cmd = loupe(data);
        cmd.args(["--embedder", "none", "eval"])
            .arg(&dataset)
            .arg("--repos")
            .arg(&repos)
            .arg("--work")
            .arg(work)
            .arg("--out")
            .arg(out)
            .args(["--budgets", "2000,4000"]);
        cmd
    };
    let eval = || {
        let mut cmd = eval_into(&data, &work, &out);
        cmd.args(["--compare", "graph,lod", "--json"]);
        cmd
    };
    let stdout = run_ok(&mut eval());
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();

    let preds = lines(&out);
    assert_eq!(preds.len(), 3);
    let by_id = |id: &str| preds.iter().find(|p| p["id"] == id).unwrap().clone();
    let (p1, p2, bad) = (by_id("t-1"), by_id("t-2"), by_id("t-bad"));
    // Commit order: t-1 (older) was written before t-2.
    let pos = |id: &str| preds.iter().position(|p| p["id"] == id).unwrap();
    assert!(pos("t-1") < pos("t-2"));
    assert!(bad["error"].as_str().unwrap().contains("checking out"));

    assert_eq!(p1["ranked_files"][0], "src/config.rs");
    assert_eq!(p2["ranked_files"][0], "src/theme.rs");
    assert!(
        !p2["ranked_files"]
            .as_array()
            .unwrap()
            .contains(&"src/legacy.rs".into())
    );
    for b in ["2000", "4000"] {
        let packed = &p1["budgets"][b];
        assert!(
            packed["packed_files"]
                .as_array()
                .unwrap()
                .contains(&"src/config.rs".into())
        );
        assert!(packed["packed_tokens"].as_u64().unwrap() <= b.parse::<u64>().unwrap());
    }
    // The second commit re-read only what changed, and dropped the deleted file.
    assert_eq!(p1["index"]["files_changed"], 8);
    assert_eq!(p2["index"]["files_changed"], 2, "{}", p2["index"]);
    assert_eq!(p2["index"]["files_unchanged"], 6);
    assert_eq!(p2["index"]["files_deleted"], 1);
    assert!(p2["timing"]["index_ms"].as_f64().unwrap() > 0.0);

    // Scores: both good examples found at rank 1; the bad one is a miss.
    let s = &report["scores"]["4000"];
    assert_eq!(s["n"], 3.0);
    assert_eq!(s["acc@1"], 66.67);
    assert_eq!(s["packed_all"], 66.67);
    assert_eq!(s["packed_line_recall"], 66.67);

    // The flat per-budget file is what score_predictions.py reads.
    let flat = lines(&tmp.path().join("pred.b2000.jsonl"));
    assert_eq!(flat.len(), 3);
    assert!(flat.iter().all(|l| l.get("ranked_files").is_some()));
    let scorer = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/eval/scripts/score_predictions.py");
    if scorer.exists()
        && let Ok(py) = Command::new("python3")
            .arg(&scorer)
            .arg(&dataset)
            .arg(tmp.path().join("pred.b2000.jsonl"))
            .output()
        && py.status.success()
    {
        let py: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
        for (k, v) in py.as_object().unwrap() {
            assert_eq!(
                report["scores"]["2000"][k].as_f64(),
                v.as_f64(),
                "{k} differs from the Python scorer"
            );
        }
    }

    // The ablated variant ran in the same pass, into its own file.
    let ablated = lines(&tmp.path().join("pred.no-graph-lod.jsonl"));
    assert_eq!(ablated.len(), 3);
    assert_eq!(ablated[0]["ablate"], serde_json::json!(["graph", "lod"]));
    assert_eq!(
        report["compare"][0]["ablate"],
        serde_json::json!(["graph", "lod"])
    );

    // Resume: only the failed example runs again (and fails again).
    run_ok(&mut eval());
    let again = lines(&out);
    assert_eq!(again.len(), 4);
    assert_eq!(again[3]["id"], "t-bad");
    assert_eq!(lines(&tmp.path().join("pred.no-graph-lod.jsonl")).len(), 4);

    // A rerun from scratch (its own data and work dirs) ranks, packs and
    // scores alike; only timings and index counts differ.
    let rerun = tmp.path().join("rerun.jsonl");
    let mut cmd = eval_into(&tmp.path().join("data2"), &tmp.path().join("work2"), &rerun);
    cmd.arg("--json");
    let rerun_report: serde_json::Value = serde_json::from_str(&run_ok(&mut cmd)).unwrap();
    assert_eq!(rerun_report["scores"], report["scores"]);
    // (An error names the work dir: compare whether there was one.)
    let comparable = |mut p: serde_json::Value| {
        let o = p.as_object_mut().unwrap();
        o.remove("timing");
        o.remove("index");
        if let Some(e) = o.get_mut("error") {
            *e = serde_json::Value::Bool(true);
        }
        p
    };
    let first: Vec<_> = preds.into_iter().map(comparable).collect();
    let second: Vec<_> = lines(&rerun).into_iter().map(comparable).collect();
    assert_eq!(first, second);

    // `--knobs` lays a patch over every example's knobs: a path weight of
    // 0 hides the file the defaults packed.
    let files = |p: &serde_json::Value| p["budgets"]["4000"]["packed_files"].clone();
    assert_eq!(files(&p1), serde_json::json!(["src/config.rs"]));
    let knobbed = tmp.path().join("hidden.jsonl");
    let with_knobs = |knobs: &str, out: &Path| {
        let mut cmd = eval_into(&data, &work, out);
        cmd.args(["--knobs", knobs]);
        cmd
    };
    let hide = r#"{"path_weights": [{"glob": "src/config.rs", "weight": 0}]}"#;
    run_ok(&mut with_knobs(hide, &knobbed));
    let hidden = lines(&knobbed);
    let one = hidden.iter().find(|p| p["id"] == "t-1").unwrap();
    assert_eq!(files(one), serde_json::json!([]), "{one}");
    // Out of range, or not a patch: refused before any example runs.
    for (bad, says) in [
        (r#"{"diversity": 3}"#, "diversity"),
        ("k=1", "not a knobs patch"),
    ] {
        let out = with_knobs(bad, &tmp.path().join("bad.jsonl"))
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
        assert!(!tmp.path().join("bad.jsonl").exists());
    }
}
