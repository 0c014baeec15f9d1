//! Scoring with the definitions of `score_predictions.py` (macro averages
//! over the dataset; an example without a prediction counts as a miss):
//!
//! - `acc@k`: all gold files in the top k ranked files;
//! - `recall@k`: share of gold files in the top k;
//! - `mrr`: 1 / rank of the first gold file;
//! - `packed_file_recall` / `packed_all`: gold files among the packed files;
//! - `packed_line_recall`: share of changed gold lines inside packed spans;
//! - `packed_tokens_mean`: mean prompt size over predictions that report it.
//!
//! Percentages are rounded to 2 decimals like Python's `round` (both round
//! the exact binary value, so they agree).

use super::dataset::{Example, id_of};
use super::{EvalError, EvalResult};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The cut-offs of `acc@k` and `recall@k`.
pub const KS: [usize; 5] = [1, 3, 5, 10, 20];

/// One prediction as the scorer sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PredView {
    /// Files, best first.
    pub ranked_files: Vec<String>,
    /// Files in the prompt, if reported.
    pub packed_files: Option<Vec<String>>,
    /// Line ranges in the prompt per file, if reported.
    pub packed_spans: Option<BTreeMap<String, Vec<(i64, i64)>>>,
    /// Prompt size, if reported.
    pub packed_tokens: Option<f64>,
}

fn strings(v: Option<&serde_json::Value>) -> Option<Vec<String>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect()
    })
}

/// Reads a prediction object; with `budget`, the packed fields come from
/// `budgets[budget]` (Loupe's multi-budget lines), else from the top level.
pub fn view(v: &serde_json::Value, budget: Option<&str>) -> PredView {
    let packed_src = match budget {
        Some(b) => v.get("budgets").and_then(|m| m.get(b)),
        None => Some(v),
    };
    let spans = packed_src
        .and_then(|p| p.get("packed_spans"))
        .and_then(|s| s.as_object())
        .map(|m| {
            m.iter()
                .map(|(f, rs)| {
                    let ranges = rs
                        .as_array()
                        .map(|rs| {
                            rs.iter()
                                .filter_map(|r| Some((r.get(0)?.as_i64()?, r.get(1)?.as_i64()?)))
                                .collect()
                        })
                        .unwrap_or_default();
                    (f.clone(), ranges)
                })
                .collect()
        });
    PredView {
        ranked_files: strings(v.get("ranked_files")).unwrap_or_default(),
        packed_files: strings(packed_src.and_then(|p| p.get("packed_files"))),
        packed_spans: spans,
        packed_tokens: packed_src
            .and_then(|p| p.get("packed_tokens"))
            .and_then(|t| t.as_f64()),
    }
}

/// Parses a predictions file into raw objects keyed by id; a later line for
/// the same id wins (as in the Python scorer's dict).
pub fn parse_predictions(text: &str) -> EvalResult<HashMap<String, serde_json::Value>> {
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| EvalError::Parse {
            line: i + 1,
            detail: e.to_string(),
        })?;
        let id = v
            .get("id")
            .and_then(|x| x.as_str())
            .map(str::to_owned)
            .or_else(|| id_of(&v))
            .ok_or_else(|| EvalError::Parse {
                line: i + 1,
                detail: "no \"id\"".into(),
            })?;
        out.insert(id, v);
    }
    Ok(out)
}

/// Python's `round(x, 2)`.
fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

/// The scores: `n`, `n_predicted` and each metric, as the Python scorer prints them.
pub fn score(examples: &[Example], preds: &HashMap<String, PredView>) -> BTreeMap<String, f64> {
    let mut sums: Vec<(String, f64, usize)> = Vec::new();
    let mut add = |k: String, v: f64| match sums.iter_mut().find(|(name, _, _)| *name == k) {
        Some(e) => {
            e.1 += v;
            e.2 += 1;
        }
        None => sums.push((k, v, 1)),
    };
    let empty = PredView::default();
    for ex in examples {
        let p = preds.get(&ex.id).unwrap_or(&empty);
        let rk = &p.ranked_files;
        let gold = &ex.gold_files;
        for k in KS {
            let top = &rk[..k.min(rk.len())];
            let h = gold.iter().filter(|g| top.contains(g)).count();
            add(format!("acc@{k}"), f64::from(u8::from(h == gold.len())));
            add(format!("recall@{k}"), h as f64 / gold.len() as f64);
        }
        let best = gold
            .iter()
            .filter_map(|g| rk.iter().position(|f| f == g))
            .min();
        add("mrr".into(), best.map_or(0.0, |r| 1.0 / (r + 1) as f64));
        if let Some(files) = &p.packed_files {
            let h = gold.iter().filter(|g| files.contains(g)).count();
            add("packed_file_recall".into(), h as f64 / gold.len() as f64);
            add("packed_all".into(), f64::from(u8::from(h == gold.len())));
        }
        if let Some(spans) = &p.packed_spans
            && !ex.gold_hunks_in_base.is_empty()
        {
            let (mut tot, mut cov) = (0usize, 0usize);
            for (f, ranges) in &ex.gold_hunks_in_base {
                let lines: HashSet<i64> = ranges
                    .iter()
                    .flat_map(|&(s, e)| i64::from(s)..=i64::from(e))
                    .collect();
                tot += lines.len();
                let sp = spans.get(f).map(Vec::as_slice).unwrap_or_default();
                cov += lines
                    .iter()
                    .filter(|&&x| sp.iter().any(|&(s, e)| s <= x && x <= e))
                    .count();
            }
            add(
                "packed_line_recall".into(),
                if tot > 0 {
                    cov as f64 / tot as f64
                } else {
                    0.0
                },
            );
        }
        if let Some(t) = p.packed_tokens {
            add("packed_tokens_mean".into(), t);
        }
    }
    let n = examples.len();
    let mut out = BTreeMap::new();
    out.insert("n".into(), n as f64);
    out.insert(
        "n_predicted".into(),
        examples
            .iter()
            .filter(|e| preds.contains_key(&e.id))
            .count() as f64,
    );
    for (k, v, c) in sums {
        let value = if k == "packed_tokens_mean" {
            round2(v / c as f64)
        } else {
            round2(100.0 * v / n.max(1) as f64)
        };
        out.insert(k, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(id: &str, gold: &[&str], hunks: &[(&str, u32, u32)]) -> Example {
        let mut h: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
        for (f, s, e) in hunks {
            h.entry((*f).into()).or_default().push((*s, *e));
        }
        Example {
            id: id.into(),
            repo: "o/n".into(),
            base_commit: "c".into(),
            query: "q".into(),
            gold_files: gold.iter().map(|s| (*s).into()).collect(),
            gold_hunks_in_base: h,
        }
    }

    #[test]
    fn metrics_follow_the_python_definitions() {
        let examples = vec![
            ex("a", &["x.rs", "y.rs"], &[("x.rs", 1, 4), ("y.rs", 10, 10)]),
            ex("b", &["z.rs"], &[("z.rs", 5, 6)]),
            ex("c", &["w.rs"], &[]),
        ];
        let json = r#"{"id":"a","ranked_files":["q.rs","x.rs","r.rs","y.rs"],"budgets":{"100":{"packed_files":["x.rs"],"packed_spans":{"x.rs":[[2,3]]},"packed_tokens":90}}}
{"id":"b","ranked_files":["z.rs"],"budgets":{"100":{"packed_files":["z.rs"],"packed_spans":{"z.rs":[[1,9]]},"packed_tokens":50}}}"#;
        let raw = parse_predictions(json).unwrap_or_default();
        let preds: HashMap<String, PredView> = raw
            .iter()
            .map(|(k, v)| (k.clone(), view(v, Some("100"))))
            .collect();
        let s = score(&examples, &preds);
        assert_eq!(s["n"], 3.0);
        assert_eq!(s["n_predicted"], 2.0);
        assert_eq!(s["acc@1"], 33.33);
        assert_eq!(s["acc@3"], 33.33);
        assert_eq!(s["acc@5"], 66.67);
        assert_eq!(s["recall@3"], 50.0);
        // mrr: (1/2 + 1 + 0) / 3
        assert_eq!(s["mrr"], 50.0);
        assert_eq!(s["packed_all"], 33.33);
        assert_eq!(s["packed_file_recall"], 50.0);
        // a: 2 of 5 lines; b: 2 of 2; c: no hunks, not counted but divided by n.
        assert_eq!(s["packed_line_recall"], 46.67);
        assert_eq!(s["packed_tokens_mean"], 70.0);
    }

    #[test]
    fn python_rounding() {
        assert_eq!(round2(66.666_666), 66.67);
        assert_eq!(round2(0.125), 0.12);
        assert_eq!(round2(0.375), 0.38);
    }
}
