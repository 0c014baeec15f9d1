//! Evaluation examples: one JSON object per line with `repo`, `base_commit`,
//! `query`, `gold_files` and `gold_hunks_in_base`; the id is `instance_id`
//! when present (and non-empty), else `commit` — as `score_predictions.py`.

use super::{EvalError, EvalResult};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One question with its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// `instance_id`, else `commit`.
    pub id: String,
    /// `owner/name`.
    pub repo: String,
    /// The commit the question is asked against.
    pub base_commit: String,
    /// The question text.
    pub query: String,
    /// Files the real fix changed (may repeat; scored as listed).
    pub gold_files: Vec<String>,
    /// Changed line ranges per gold file, as the file is at `base_commit`.
    pub gold_hunks_in_base: BTreeMap<String, Vec<(u32, u32)>>,
}

fn non_empty_str(v: &serde_json::Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(|x| x.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The id of a dataset or prediction object: `instance_id`, else `commit`.
pub fn id_of(v: &serde_json::Value) -> Option<String> {
    non_empty_str(v, "instance_id").or_else(|| non_empty_str(v, "commit"))
}

/// Parses one dataset line (`line_no` is 1-based, for messages).
pub fn parse_example(line: &str, line_no: usize) -> EvalResult<Example> {
    let bad = |detail: String| EvalError::Parse {
        line: line_no,
        detail,
    };
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
    let field = |key: &str| non_empty_str(&v, key).ok_or_else(|| bad(format!("no {key:?}")));
    let id = id_of(&v).ok_or_else(|| bad("no \"instance_id\" or \"commit\"".into()))?;
    let gold_files: Vec<String> = v
        .get("gold_files")
        .and_then(|g| g.as_array())
        .ok_or_else(|| bad("no \"gold_files\" list".into()))?
        .iter()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect();
    if gold_files.is_empty() {
        return Err(bad("empty \"gold_files\"".into()));
    }
    let mut hunks = BTreeMap::new();
    if let Some(map) = v.get("gold_hunks_in_base").and_then(|h| h.as_object()) {
        for (file, ranges) in map {
            let ranges = ranges
                .as_array()
                .map(|rs| {
                    rs.iter()
                        .filter_map(|r| {
                            let a = r.get(0)?.as_u64()?;
                            let b = r.get(1)?.as_u64()?;
                            Some((u32::try_from(a).ok()?, u32::try_from(b).ok()?))
                        })
                        .collect()
                })
                .unwrap_or_default();
            hunks.insert(file.clone(), ranges);
        }
    }
    Ok(Example {
        id,
        repo: field("repo")?,
        base_commit: field("base_commit")?,
        query: v
            .get("query")
            .and_then(|q| q.as_str())
            .unwrap_or_default()
            .to_owned(),
        gold_files,
        gold_hunks_in_base: hunks,
    })
}

/// Parses a whole dataset; blank lines are skipped.
pub fn parse_dataset(text: &str) -> EvalResult<Vec<Example>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| parse_example(l, i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_prefers_instance_id_then_commit() {
        let a = r#"{"instance_id":"x-1","commit":"c","repo":"o/n","base_commit":"b","query":"q","gold_files":["a.rs"],"gold_hunks_in_base":{"a.rs":[[1,3]]}}"#;
        let b = r#"{"instance_id":"","commit":"c","repo":"o/n","base_commit":"b","query":"q","gold_files":["a.rs"]}"#;
        let ex = parse_dataset(&format!("{a}\n\n{b}\n")).unwrap_or_default();
        assert_eq!(ex.len(), 2);
        assert_eq!(ex[0].id, "x-1");
        assert_eq!(ex[0].gold_hunks_in_base["a.rs"], vec![(1, 3)]);
        assert_eq!(ex[1].id, "c");
        assert!(ex[1].gold_hunks_in_base.is_empty());
    }

    #[test]
    fn bad_lines_say_where() {
        let err = parse_dataset("{\"repo\":\"o/n\"}\n")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("line 1: no \"instance_id\" or \"commit\"")
        );
    }
}
