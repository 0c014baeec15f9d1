//! Commit history as retrieval evidence.

use crate::support::*;
use loupe_engine::RetrieveQuery;
use loupe_engine::signals::history::HistorySource;
use loupe_engine::stores::lexical::query_terms;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_changed_by_similar_commits_become_candidates_with_a_rank() {
    let env = Env::new();
    let root = env.root();
    git(root, &["init", "-q"]);
    // The question's words are in no file: only the commit messages that
    // changed `types.rs` share them.
    env.write(
        "src/types.rs",
        "pub const TYPES: &[(&str, &str)] = &[(\"rust\", \"*.rs\")];\n",
    );
    env.write(
        "src/printer.rs",
        "pub fn print_line(s: &str) { println!(\"{s}\"); }\n",
    );
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial import"]);
    env.write(
        "src/types.rs",
        "pub const TYPES: &[(&str, &str)] = &[(\"rust\", \"*.rs\"), (\"hy\", \"*.hy\")];\n",
    );
    git(root, &["commit", "-q", "-am", "add hy language support"]);
    env.write(
        "src/printer.rs",
        "pub fn print_line(s: &str) { println!(\"> {s}\"); }\n",
    );
    git(root, &["commit", "-q", "-am", "printer: prefix lines"]);

    let p = env.open(None).await;
    index(&p).await;
    let commits = p
        .use_history(HistorySource::Repo(root.to_path_buf()))
        .await
        .expect("history");
    assert_eq!(commits, 3);
    assert_eq!(p.history_commits(), 3);

    let found = p
        .retrieve(&RetrieveQuery::from_question(
            "support the kconfig language",
        ))
        .await
        .expect("retrieve");
    let types = found
        .iter()
        .find(|c| c.chunk.path == "src/types.rs")
        .expect("types.rs is a candidate");
    assert_eq!(types.signals.history_rank, Some(1));
    assert!(
        found
            .iter()
            .all(|c| c.chunk.path != "src/printer.rs" || c.signals.history_rank.is_none())
    );

    // A source with nothing to read clears it: retrieval goes on without.
    let none = p
        .use_history(HistorySource::GitDir {
            git_dir: root.join(".git"),
            rev: "no-such-rev".into(),
        })
        .await
        .expect("history");
    assert_eq!(none, 0);
    let found = p
        .retrieve(&RetrieveQuery::from_question(
            "support the kconfig language",
        ))
        .await
        .expect("retrieve");
    assert!(found.iter().all(|c| c.signals.history_rank.is_none()));
}

#[test]
fn reads_a_repository_from_a_subdirectory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::create_dir_all(root.join("app/src")).expect("mkdir");
    std::fs::write(root.join("app/src/parser.rs"), "fn parse() {}\n").expect("write");
    std::fs::write(root.join("README.md"), "hi\n").expect("write");
    git(root, &["add", "-A"]);
    git(
        root,
        &["commit", "-q", "-m", "parser: handle trailing commas"],
    );
    std::fs::write(root.join("README.md"), "hello\n").expect("write");
    git(root, &["commit", "-q", "-am", "docs: greet"]);

    let h = loupe_engine::signals::history::of_root(&root.join("app"))
        .expect("read")
        .expect("a history");
    assert_eq!(h.commits(), 1, "the README commit is outside app/");
    assert_eq!(h.head().len(), 40);
    let files = h
        .files(&query_terms("trailing comma in the parser", &[]), 5)
        .expect("search");
    assert_eq!(files.first().map(|f| f.0.as_str()), Some("src/parser.rs"));

    let bare = HistorySource::GitDir {
        git_dir: root.join(".git"),
        rev: "HEAD~1".into(),
    };
    let h = loupe_engine::signals::history::History::read(&bare)
        .expect("read")
        .expect("a history");
    assert_eq!(h.commits(), 1);
    let unknown = HistorySource::GitDir {
        git_dir: root.join(".git"),
        rev: "no-such-rev".into(),
    };
    assert!(
        loupe_engine::signals::history::History::read(&unknown)
            .expect("read")
            .is_none()
    );
}

/// A commit made while the project is watched is read as history without
/// reopening it: the watcher sees `HEAD`'s branch move, and the new commit
/// ranks the file it changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_reads_history_again_when_head_moves() {
    let env = Env::new();
    let root = env.root();
    git(root, &["init", "-q"]);
    env.write("src/printer.rs", "pub fn print_line(s: &str) {}\n");
    env.write("src/types.rs", "pub const TYPES: &[&str] = &[\"rust\"];\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial import"]);

    let p = std::sync::Arc::new(env.open(None).await);
    index(&p).await;
    p.use_history(HistorySource::Repo(root.to_path_buf()))
        .await
        .expect("history");
    assert_eq!(p.history_commits(), 1);
    let head = p.history_head().expect("a head");

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = loupe_engine::watch::watch(std::sync::Arc::clone(&p), move |e| {
        if let loupe_engine::watch::WatchEvent::History(commits) = e {
            let _ = tx.send(commits);
        }
    })
    .expect("watch");
    env.write(
        "src/types.rs",
        "pub const TYPES: &[&str] = &[\"rust\", \"zig\"];\n",
    );
    git(root, &["commit", "-q", "-am", "zebra striping for types"]);
    let commits = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
        .await
        .expect("a history event in time")
        .expect("an event");
    assert_eq!(commits, 2);
    assert_ne!(p.history_head(), Some(head));
    let found = p
        .retrieve(&RetrieveQuery::from_question("zebra striping"))
        .await
        .expect("retrieve");
    let types = found.iter().find(|c| c.chunk.path == "src/types.rs");
    assert_eq!(types.and_then(|c| c.signals.history_rank), Some(1));
    handle.stop().await;
}
