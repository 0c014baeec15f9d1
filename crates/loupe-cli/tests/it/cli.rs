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
    // The file's small functions merge into one chunk named after the first;
    // the question's symbol still finds it first.
    assert_eq!(rows[0]["symbol"], "helper_3_0");
    assert_eq!(rows[0]["signals"]["symbol_exact"], true);
    assert_eq!(rows[0]["path"], "src/m3/file_3.rs");
}

fn assembly(data: &std::path::Path, root: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut cmd = loupe(data);
    cmd.args(["--embedder", "none", "query", "--json"])
        .arg(root)
        .args(args);
    serde_json::from_str(&run_ok(&mut cmd)).unwrap()
}

/// Issue 16: a query on a folder never indexed indexes it first instead of
/// printing a prompt with no code.
#[test]
fn query_on_an_unindexed_folder_indexes_it_first() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 3);
    let out = loupe(data.path())
        .args(["--embedder", "none", "query"])
        .arg(dir.path())
        .arg("how is the frobnication number computed?")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("not indexed yet: indexing it first"),
        "{stderr}"
    );
    let prompt = String::from_utf8_lossy(&out.stdout);
    assert!(prompt.contains("fn helper_"), "{prompt}");
}

/// Issue 13: `--wait scan` answers a folder never indexed from a scan of
/// its files, says so, and leaves no index behind.
#[test]
fn query_with_wait_scan_answers_without_indexing() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 3);
    let out = loupe(data.path())
        .args(["--embedder", "none", "query", "--wait", "scan", "--report"])
        .arg(dir.path())
        .arg("how is the frobnication number computed?")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("indexing it first"), "{stderr}");
    assert!(
        stderr.contains("partial index: signals: a scan of"),
        "{stderr}"
    );
    let prompt = String::from_utf8_lossy(&out.stdout);
    assert!(prompt.contains("fn helper_"), "{prompt}");
    let status = run_ok(loupe(data.path()).args(["status"]).arg(dir.path()));
    assert!(status.contains("generation: 0"), "{status}");
}

#[test]
fn query_weights_budget_and_pins_shape_the_prompt() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 30);
    run_ok(
        loupe(data.path())
            .args(["--embedder", "none", "index"])
            .arg(dir.path()),
    );
    let q = "how is the frobnication number of module 3 computed?";

    let base = assembly(data.path(), dir.path(), &[q, "--budget", "4000"]);
    let paths = included(&base);
    assert!(paths.iter().any(|p| p == "src/m3/file_3.rs"), "{paths:?}");
    assert!(base["prompt"].as_str().unwrap().contains("helper_3_"));
    assert!(base["report"]["used"].as_u64().unwrap() <= base["report"]["usable"].as_u64().unwrap());

    // Weight 0 hides a folder from the items and the prompt.
    let hidden = assembly(
        data.path(),
        dir.path(),
        &[q, "--budget", "4000", "--weight", "src/m3/**=0"],
    );
    assert!(!included(&hidden).iter().any(|p| p.starts_with("src/m3/")));
    assert!(!hidden["prompt"].as_str().unwrap().contains("src/m3/"));

    // A smaller budget drops more.
    let small = assembly(data.path(), dir.path(), &[q, "--budget", "400"]);
    assert!(small["report"]["dropped_count"].as_u64() > base["report"]["dropped_count"].as_u64());
    assert_eq!(small["report"]["was_truncated"], true);

    // A pinned file survives a tiny budget that fits nothing else.
    let pinned = assembly(
        data.path(),
        dir.path(),
        &[q, "--budget", "400", "--pin", "src/m7/file_27.rs"],
    );
    assert!(
        included(&pinned).iter().any(|p| p == "src/m7/file_27.rs"),
        "{}",
        pinned["report"]
    );

    // A pin that names nothing is a clear error.
    let out = loupe(data.path())
        .args(["--embedder", "none", "query"])
        .arg(dir.path())
        .args([q, "--pin", "no/such.rs"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no indexed file"));
}

/// Three hundred files of eight documented functions that differ only in
/// their names and a constant: 2,700 chunks (more than one tantivy segment
/// when indexed on several threads) whose scores tie everywhere.
fn generate_ties(root: &std::path::Path) {
    for i in 0..300 {
        let dir = root.join(format!("src/m{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = format!("//! Module {i}: widgets and gadgets.\n\n");
        for f in 0..8 {
            text.push_str(&format!(
                "/// Compute the frobnication number {f} of a widget.\n///\n\
                 /// The frobnication number mixes the widget weight with the gadget\n\
                 /// count, then folds the result so that it stays within range. Callers\n\
                 /// use it to spread widgets over gadget buckets; it must stay stable\n\
                 /// across releases because buckets are persisted.\n\
                 pub fn helper_{i}_{f}(x: u64) -> u64 {{\n    let y = x.wrapping_mul({f} + 1);\n\
                 \x20   let z = y.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;\n    if z % 7 == 0 {{\n\
                 \x20       return z / 7;\n    }}\n    let w = z.wrapping_sub(y >> 3);\n\
                 \x20   w.wrapping_add(y) ^ 0x{i:x}\n}}\n\n"
            ));
        }
        std::fs::write(dir.join(format!("file_{i}.rs")), text).unwrap();
    }
}

/// The prompt for `question` from a cold index of `root` built on
/// `threads` threads.
fn cold_prompt(root: &std::path::Path, embedder: &str, threads: &str, question: &str) -> String {
    let data = tempfile::tempdir().unwrap();
    run_ok(
        loupe(data.path())
            .env("RAYON_NUM_THREADS", threads)
            .args(["--embedder", embedder, "index"])
            .arg(root),
    );
    run_ok(
        loupe(data.path())
            .args(["--embedder", embedder, "query", "--budget", "4000"])
            .arg(root)
            .arg(question),
    )
}

/// Issue 16: the same tree, knobs and question give the same prompt bytes
/// from two cold indexes built with different thread counts, and from a
/// warm index that reached the tree from another one. Without
/// vectors on a tree where thousands of chunks tie (BM25 ties used to be
/// broken by tantivy's document address, which depends on the segments a
/// multi-threaded index writes), and with vectors on the same tree (its
/// near-identical chunks tie in vector similarity too) and on a small one.
#[test]
fn cold_indexes_with_different_thread_counts_give_the_same_prompt() {
    let ties = tempfile::tempdir().unwrap();
    generate_ties(ties.path());
    let small = tempfile::tempdir().unwrap();
    generate(small.path(), 60);
    for (root, embedder, question) in [
        (
            ties.path(),
            "none",
            "which helper computes the frobnication number of a widget?",
        ),
        (
            ties.path(),
            "code",
            "which helper computes the frobnication number of a widget?",
        ),
        (
            small.path(),
            "code",
            "which helper computes the frobnication number of module 7?",
        ),
    ] {
        let one = cold_prompt(root, embedder, "1", question);
        let two = cold_prompt(root, embedder, "2", question);
        assert!(one.contains("fn helper_"), "{one}");
        assert!(
            one == two,
            "--embedder {embedder}: prompts differ ({} vs {} bytes)",
            one.len(),
            two.len()
        );
        let warm = warm_prompt(root, embedder, question);
        assert!(
            one == warm,
            "--embedder {embedder}: a warm index gives another prompt ({} vs {} bytes)",
            one.len(),
            warm.len()
        );
    }
}

/// The prompt for `question` from an index of a copy of `root` that was
/// first built for another tree (files more, files different) and then
/// brought to `root`'s by an incremental run: ids, ties and all must come
/// out as from a cold index.
fn warm_prompt(root: &std::path::Path, embedder: &str, question: &str) -> String {
    let copy = tempfile::tempdir().unwrap();
    let tree = copy.path().join("tree");
    crate::support::copy_dir(root, &tree);
    let mut touched = Vec::new();
    for entry in walk_files(&tree).into_iter().step_by(3) {
        let text = std::fs::read_to_string(&entry).unwrap();
        std::fs::write(&entry, format!("// an older version\n{text}")).unwrap();
        touched.push((entry, text));
    }
    std::fs::write(
        tree.join("src/extra.rs"),
        "pub fn helper_extra() -> u64 { 7 }\n",
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let index = || {
        run_ok(
            loupe(data.path())
                .args(["--embedder", embedder, "index"])
                .arg(&tree),
        )
    };
    index();
    for (path, text) in touched {
        std::fs::write(path, text).unwrap();
    }
    std::fs::remove_file(tree.join("src/extra.rs")).unwrap();
    index();
    run_ok(
        loupe(data.path())
            .args(["--embedder", embedder, "query", "--budget", "4000"])
            .arg(&tree)
            .arg(question),
    )
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Issue 15: `query --report` says each item's status in words, the same
/// words as the app and the MCP server, not as a JSON object.
#[test]
fn query_report_states_statuses_in_words() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 12);
    let out = loupe(data.path())
        .args(["--embedder", "none", "query", "--report", "--budget", "600"])
        .arg(dir.path())
        .arg("how is the frobnication number computed?")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("  included") || report.contains("  degraded"),
        "{report}"
    );
    assert!(report.contains("dropped: "), "{report}");
    assert!(!report.contains("{\"status\""), "{report}");
    // One verdict line, its counts by reason adding up to the drops.
    let verdict = report
        .lines()
        .find(|l| l.starts_with("Truncated: ") || l.starts_with("Fits: "))
        .unwrap_or_else(|| panic!("no verdict line: {report}"));
    assert!(verdict.contains(" in the prompt"), "{verdict}");
    assert!(verdict.contains(" left out: "), "{verdict}");
}

#[cfg(unix)]
#[test]
fn a_reader_that_stops_early_ends_the_query_quietly() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 12);
    // `loupe query … | head -0`: the reading end is gone before a byte is written.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = loupe(data.path())
        .args(["--embedder", "none", "query"])
        .arg(dir.path())
        .arg("frobnication number")
        .stdout(writer)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // The status a shell gives a process ended by SIGPIPE, as `cat` would be.
    assert_eq!(out.status.code(), Some(141), "{:?}: {err}", out.status);
}

#[test]
fn an_index_past_the_graphs_size_waits_for_its_graph_and_status_says_so() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 30);
    let vectors_line = || {
        let status = run_ok(
            loupe(data.path())
                .args(["--embedder", "code", "status"])
                .arg(dir.path()),
        );
        let line = status.lines().find(|l| l.starts_with("vectors:")).unwrap();
        line.to_owned()
    };
    // Below the graph's size: the scan, and no graph on disk.
    run_ok(
        loupe(data.path())
            .args(["--embedder", "code", "index"])
            .arg(dir.path()),
    );
    assert!(vectors_line().ends_with("exact scan"), "{}", vectors_line());
    let manifests = || {
        walk_files(data.path())
            .into_iter()
            .filter(|p| p.ends_with("graph/manifest.json"))
            .count()
    };
    assert_eq!(manifests(), 0);
    // From one point on, `loupe index` builds the graph and waits for it;
    // a one-shot command scans but says a graph is saved.
    run_ok(
        loupe(data.path())
            .env("LOUPE_GRAPH_MIN_POINTS", "1")
            .args(["--embedder", "code", "index"])
            .arg(dir.path()),
    );
    assert_eq!(manifests(), 1);
    assert!(
        vectors_line().ends_with("exact scan here, graph saved"),
        "{}",
        vectors_line()
    );
}

#[test]
fn a_query_on_a_new_folder_answers_from_the_lexical_stage_unless_told_to_wait() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 12);
    let ask = |wait: Option<&str>| {
        let mut cmd = loupe(data.path());
        cmd.args(["--embedder", "code", "query"]);
        if let Some(w) = wait {
            cmd.args(["--wait", w]);
        }
        let out = cmd
            .arg(dir.path())
            .arg("frobnication number")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let status = || {
        run_ok(
            loupe(data.path())
                .args(["--embedder", "code", "status"])
                .arg(dir.path()),
        )
    };
    let (prompt, err) = ask(None);
    assert!(prompt.contains("helper_"), "{prompt}");
    assert!(err.contains("vectors not built"), "{err}");
    assert!(err.contains("warning: partial index"), "{err}");
    assert!(status().contains("vectors:  0/"), "{}", status());
    // `--wait all` completes the vectors first: no partial-index warning.
    let (_, err) = ask(Some("all"));
    assert!(!err.contains("partial index"), "{err}");
    let done = status();
    let line = done.lines().find(|l| l.starts_with("vectors:")).unwrap();
    let counts = line.split_whitespace().nth(1).unwrap();
    let (with, of) = counts.split_once('/').unwrap();
    assert_eq!(with, of, "{done}");
}

/// Issue 49: a re-ranker file that is missing or damaged costs no answer:
/// the prompt is today's ranking (the same bytes as with the re-ranker
/// off) and stderr says so once.
#[test]
fn a_missing_or_damaged_reader_model_answers_with_todays_ranking_and_one_warning() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 12);
    let question = "how is the frobnication number computed?";
    let ask = |reader: &[&str]| {
        let out = loupe(data.path())
            .args(["--embedder", "none"])
            .args(reader)
            .arg("query")
            .arg(dir.path())
            .arg(question)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{reader:?}: {err}");
        (String::from_utf8(out.stdout).unwrap(), err)
    };
    let (off, err) = ask(&["--no-reader"]);
    assert!(off.contains("fn helper_"), "{off}");
    assert!(!err.contains("not re-ranked"), "{err}");

    let models = tempfile::tempdir().unwrap();
    let damaged = models.path().join("damaged.safetensors");
    std::fs::write(&damaged, b"not a model at all").unwrap();
    let missing = models.path().join("no-such-model.safetensors");
    for model in [&missing, &damaged] {
        let (prompt, err) = ask(&["--reader-model", model.to_str().unwrap()]);
        assert_eq!(prompt, off, "{}", model.display());
        assert_eq!(
            err.matches("not re-ranked (today's ranking)").count(),
            1,
            "{err}"
        );
    }
}
