//! `loupe index` against the team's shared store on a real PostgreSQL
//! server: the second checkout, at another path, pulls what the first
//! pushed; `[shared]` in `.loupe.toml` names it; `loupe shared status`
//! and `gc` report and tidy; a password in a committed URL is refused.

use crate::support::*;
use loupe_testkit::pg::PgCluster;
use std::path::Path;

fn index_json(data: &Path, root: &Path, args: &[&str]) -> serde_json::Value {
    let out = run_ok(
        loupe(data)
            .env_remove("LOUPE_SHARED_URL")
            .args(args)
            .args(["index", "--json"])
            .arg(root),
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_second_checkout_pulls_what_the_first_pushed_and_says_so() {
    let pg = PgCluster::start();
    let url = pg.database("team");
    let first = tempfile::tempdir().unwrap();
    generate(first.path(), 12);
    let data = tempfile::tempdir().unwrap();
    let report = index_json(data.path(), first.path(), &["--shared", &url]);
    let files = report["files_changed"].as_u64().unwrap();
    assert_eq!(report["shared"]["files_pushed"].as_u64(), Some(files));
    // The code model computes a vector faster than the store returns one.
    assert_eq!(report["shared"]["vectors_pushed"].as_u64(), Some(0));

    // Another path and data dir; the store named by the team's file.
    let second = tempfile::tempdir().unwrap();
    generate(second.path(), 12);
    std::fs::write(
        second.path().join(".loupe.toml"),
        format!("[shared]\nurl = \"{url}\"\nmode = \"read\"\n"),
    )
    .unwrap();
    let data2 = tempfile::tempdir().unwrap();
    let report = index_json(data2.path(), second.path(), &[]);
    // .loupe.toml itself is a file of the second checkout only.
    assert_eq!(report["shared"]["files_pulled"].as_u64(), Some(files));
    assert_eq!(report["shared"]["files_pushed"].as_u64(), Some(0));
    assert_eq!(report["shared"]["vectors_pulled"].as_u64(), Some(0));
    assert_eq!(report["chunks_embedded"], report["chunks_added"]);
    let status = run_ok(
        loupe(data2.path())
            .env_remove("LOUPE_SHARED_URL")
            .arg("status")
            .arg(second.path()),
    );
    assert!(
        status.contains(&format!("{files} files and")) && status.contains("pulled"),
        "{status}"
    );

    let holding = run_ok(
        loupe(data.path())
            .args(["--shared", &url, "shared", "status", "--json"])
            .arg(first.path()),
    );
    let holding: serde_json::Value = serde_json::from_str(&holding).unwrap();
    let parses: i64 = holding["holding"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["table"] == "parses")
        .map(|h| h["rows"].as_i64().unwrap())
        .sum();
    assert_eq!(parses as u64, files);
    // Everything there is this build's: gc keeps it all.
    let gc = run_ok(
        loupe(data.path())
            .args(["--shared", &url, "shared", "gc", "--json"])
            .arg(first.path()),
    );
    assert!(gc.contains("\"deleted\":0"), "{gc}");
}

#[test]
fn a_password_in_a_flag_or_a_committed_file_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 2);
    let data = tempfile::tempdir().unwrap();
    let out = loupe(data.path())
        .env_remove("LOUPE_SHARED_URL")
        .args(["--shared", "postgres://team:hunter2@127.0.0.1:1/x", "index"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("PGPASSWORD"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
