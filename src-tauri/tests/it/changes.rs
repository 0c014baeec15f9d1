//! The Changes switch: `assemble` with a diff as the question.

use crate::support::{Harness, git};
use loupe_app::dto::{AssemblyDto, RowStatus};
use serde_json::json;

#[test]
fn a_change_is_reviewed_with_its_hunk_pinned_and_a_bad_one_is_a_clear_error() {
    let h = Harness::new();
    git(h.root(), &["init", "-q"]);
    git(h.root(), &["add", "-A"]);
    git(h.root(), &["commit", "-qm", "start"]);
    let root = h.open();
    let path = h.root().join("src/render.rs");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n/// Renders one item.\npub fn render_one(item: u32) -> String {\n    item.to_string()\n}\n");
    std::fs::write(&path, text).unwrap();
    h.open();

    // No question: the diff is the question.
    let mut args = h.ask("", json!({}));
    args["change"] = json!("unstaged");
    let review: AssemblyDto = h.ok("assemble", args.clone());
    let change = review.change.as_ref().expect("the diff in numbers");
    assert_eq!(
        (
            change.spec.as_str(),
            change.files,
            change.hunks,
            change.added_lines
        ),
        ("unstaged changes", 1, 1, 5)
    );
    assert!(change.pinned >= 1, "{change:?}");
    assert!(
        review.prompt.contains("+pub fn render_one"),
        "{}",
        review.prompt
    );
    assert_eq!(review.report.question_type, "review");
    let pinned = review
        .rows
        .iter()
        .find(|r| r.path == "src/render.rs" && r.score.pinned)
        .expect("the changed chunk is pinned");
    assert!(matches!(
        pinned.status,
        RowStatus::Included | RowStatus::Degraded
    ));

    // Nothing staged: said so, not an empty review; a bad range is a clear error.
    args["change"] = json!("staged");
    let e = h.err("assemble", args.clone());
    assert_eq!(e["code"], "bad_request", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("nothing to review"),
        "{e}"
    );
    args["change"] = json!("HEAD");
    let e = h.err("assemble", args);
    assert_eq!(e["code"], "bad_request", "{e}");
    assert!(e["message"].as_str().unwrap().contains("BASE..HEAD"), "{e}");
    let _ = root;
}
