//! The re-ranker in the app: `skipReading` answers with today's ranking at
//! once (what the panel draws first); the same request without it reads
//! the leading files, and the model's share shows in the scores.

use crate::support::Harness;
use loupe_app::dto::AssemblyDto;
use serde_json::json;

const QUESTION: &str = "how is the prompt rendered?";

#[test]
fn a_skipped_reading_answers_without_the_model_and_the_next_ask_reads() {
    let h = Harness::with_reader();
    h.open();
    let knobs = json!({ "read_files": 5 });
    let mut skip = h.ask(QUESTION, knobs.clone());
    skip["skipReading"] = json!(true);
    let first: AssemblyDto = h.ok("assemble", skip);
    assert!(!first.rows.is_empty());
    assert!(first.rows.iter().all(|r| r.score.reader == 0.0));

    let read: AssemblyDto = h.ok("assemble", h.ask(QUESTION, knobs));
    let with_share: Vec<&str> = read
        .rows
        .iter()
        .filter(|r| r.score.reader > 0.0)
        .map(|r| r.path.as_str())
        .collect();
    assert!(
        !with_share.is_empty() && with_share.len() <= 5,
        "one best chunk per file read: {with_share:?}"
    );
}
