//! The wire types of the golden questions run in the app: each question of
//! the project's `.loupe/golden.toml` and where each expected file or
//! symbol ended up under the knobs on screen.

use super::count;
use loupe_engine::asking::golden::{Expected, GoldenReport, Outcome};
use serde::{Deserialize, Serialize};

/// Where one expected item ended up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoldenItemDto {
    /// `file` or `symbol`.
    pub kind: String,
    /// The path or the name.
    pub name: String,
    /// In the prompt.
    pub found: bool,
    /// What happened, in words ("rank 2, LOD 0", "dropped: ranked below
    /// the k cut (rank 14)", "not retrieved", "no file or symbol by that
    /// name").
    pub outcome: String,
    /// Rank of its best chunk, when it was retrieved.
    pub rank: Option<u32>,
    /// Level of detail in the prompt, when found.
    pub lod: Option<u8>,
}

/// One golden question's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoldenQuestionDto {
    /// Its line in the golden file.
    pub line: u32,
    /// The question.
    pub ask: String,
    /// What the prompt used of its budget.
    pub used: u32,
    /// The budget.
    pub budget: u32,
    /// `tokens` or `chars`.
    pub unit: String,
    /// Every expected item is in the prompt.
    pub passed: bool,
    /// Each expected item.
    pub items: Vec<GoldenItemDto>,
    /// Why it could not be assembled, if it could not.
    pub error: Option<String>,
}

/// The golden questions, run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoldenRunDto {
    /// The golden file, project-relative.
    pub file: String,
    /// Whether the project has one (else nothing was run).
    pub present: bool,
    /// Expected items in their prompts, over all questions.
    pub found: u32,
    /// Expected items, over all questions.
    pub expected: u32,
    /// One per question, in file order.
    pub questions: Vec<GoldenQuestionDto>,
}

fn item(expected: &Expected, outcome: &Outcome, unit: &str) -> GoldenItemDto {
    let (kind, name) = match expected {
        Expected::File(p) => ("file", p.clone()),
        Expected::Symbol(s) => ("symbol", s.clone()),
    };
    let rank_of = |r: usize| Some(u32::try_from(r).unwrap_or(u32::MAX));
    let (words, rank, lod) = match outcome {
        Outcome::Found {
            rank,
            lod,
            degraded,
            ..
        } => (
            format!(
                "rank {rank}, LOD {lod}{}",
                if *degraded { " (degraded)" } else { "" }
            ),
            rank_of(*rank),
            Some(*lod),
        ),
        Outcome::Dropped { rank, reason, .. } => (
            format!("dropped: {} (rank {rank})", reason.describe(unit)),
            rank_of(*rank),
            None,
        ),
        Outcome::NotRetrieved => ("not retrieved".to_owned(), None, None),
        Outcome::Unknown => ("no file or symbol by that name".to_owned(), None, None),
        Outcome::NotAssembled => ("the question was not assembled".to_owned(), None, None),
    };
    GoldenItemDto {
        kind: kind.to_owned(),
        name,
        found: outcome.is_found(),
        outcome: words,
        rank,
        lod,
    }
}

impl GoldenRunDto {
    /// The run of `file` (project-relative) as `report` says.
    pub fn new(file: &str, report: &GoldenReport) -> Self {
        GoldenRunDto {
            file: file.to_owned(),
            present: true,
            found: count(report.found as u64),
            expected: count(report.expected as u64),
            questions: report
                .questions
                .iter()
                .map(|q| GoldenQuestionDto {
                    line: count(q.line as u64),
                    ask: q.ask.clone(),
                    used: q.used,
                    budget: q.budget,
                    unit: q.unit.clone(),
                    passed: q.error.is_none() && q.found() == q.items.len(),
                    items: q
                        .items
                        .iter()
                        .map(|i| item(&i.expected, &i.outcome, &q.unit))
                        .collect(),
                    error: q.error.clone(),
                })
                .collect(),
        }
    }

    /// No golden file in the project.
    pub fn absent(file: &str) -> Self {
        GoldenRunDto {
            file: file.to_owned(),
            present: false,
            found: 0,
            expected: 0,
            questions: Vec::new(),
        }
    }
}
