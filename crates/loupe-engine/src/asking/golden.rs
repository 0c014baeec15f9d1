//! Golden questions: a project's own checks that the prompt for a question
//! still contains the files and symbols a person knows it needs.
//!
//! ```text
//! .loupe/golden.toml → parse (line numbers on every error) → GoldenFile
//! per question: knobs (base + the question's overrides) → Project::assemble
//!   (the base is the caller's: the CLI lays `.loupe.toml` and its flags
//!   over the built-in defaults, see [`crate::team`])
//!   → match each expected file / symbol against the assembly's items → GoldenReport
//! ```
//!
//! The file is a list of `[[question]]` tables:
//!
//! ```toml
//! [[question]]
//! ask = "How is the invoice total computed?"
//! files = ["src/invoice.rs"]          # project-relative, `/`-separated
//! symbols = ["invoice_total"]         # a defined name, case-insensitive
//! # optional, this question only:
//! budget = 2000                        # tokens (else --budget, else .loupe.toml's, else the model's)
//! model = "gpt-4o"
//! weights = { "src/legacy/**" = 0 }    # path weights per glob over the base ones, 0 hides
//! primers = ["ARCHITECTURE.md"]
//! k = 40
//! min_score = 0.1
//! lod = false
//! ```
//!
//! An expected item is *found* when at least one of its chunks is in the
//! prompt at any level of detail; the report gives the best-ranked such
//! chunk's rank (its row in the item table ordered by final score, as
//! `loupe query --report` prints it) and LOD. Otherwise it was *dropped*
//! (with the assembler's reason), *not retrieved*, or *unknown* (no indexed
//! file or symbol by that name: a typo, an ignored file, or a rename).
//!
//! Does not index (the caller does, so it can show progress), and knows no
//! output format: the report is plain data.

use crate::asking::retrieve::Definitions;
use crate::project::Project;
use crate::{Error, Result};
use loupe_assemble::rank::PathWeight;
use loupe_assemble::report::{DropReason, ItemStatus};
use loupe_assemble::{Assembly, Budget, ChunkId, ItemRow, Knobs, KnobsPatch};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Where a project keeps its golden questions, relative to its root.
pub const GOLDEN_FILE: &str = ".loupe/golden.toml";

/// What can go wrong reading a golden file.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    /// The file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The golden file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or does not have the expected shape.
    #[error("line {line}, column {column}: {detail}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// The parser's message.
        detail: String,
    },
    /// A value is well-formed but not usable.
    #[error("line {line}: {detail}")]
    Invalid {
        /// 1-based line of the question it belongs to.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// The file has no `[[question]]`.
    #[error("no [[question]] tables")]
    Empty,
}

/// One question with what its prompt must contain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoldenQuestion {
    /// 1-based line of its `ask`, for messages.
    pub line: usize,
    /// The question as a user would type it.
    pub ask: String,
    /// What must be in the prompt.
    pub expected: Vec<Expected>,
    /// Overrides of the base knobs, for this question only.
    pub overrides: KnobsPatch,
}

/// An item a question's prompt must contain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum Expected {
    /// A project-relative path.
    File(String),
    /// A defined name (any definition of it counts).
    Symbol(String),
}

/// A parsed golden file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GoldenFile {
    /// The questions, in file order.
    pub questions: Vec<GoldenQuestion>,
}

/// The file as written (serde shape); [`parse`] turns it into [`GoldenFile`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    question: Vec<RawQuestion>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuestion {
    ask: toml::Spanned<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    symbols: Vec<String>,
    budget: Option<u32>,
    model: Option<String>,
    weights: Option<BTreeMap<String, f32>>,
    primers: Option<Vec<String>>,
    k: Option<usize>,
    min_score: Option<f32>,
    lod: Option<bool>,
}

/// 1-based (line, column) of byte offset `at` in `text`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Normalizes a written path to the index's form: `/`-separated, no `./`.
fn normalize_path(path: &str) -> String {
    let mut p = path.trim().replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_owned();
    }
    p
}

/// Parses the text of a golden file.
pub fn parse(text: &str) -> Result<GoldenFile, GoldenError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span: Range<usize>| position(text, span.start));
        GoldenError::Syntax {
            line,
            column,
            detail: e.message().trim().to_owned(),
        }
    })?;
    if raw.question.is_empty() {
        return Err(GoldenError::Empty);
    }
    raw.question
        .into_iter()
        .map(|q| {
            let line = position(text, q.ask.span().start).0;
            let invalid = |detail: String| GoldenError::Invalid { line, detail };
            let ask = q.ask.into_inner();
            if ask.trim().is_empty() {
                return Err(invalid("`ask` is empty".into()));
            }
            let mut expected = Vec::new();
            for f in &q.files {
                let path = normalize_path(f);
                if path.is_empty() {
                    return Err(invalid("an empty path in `files`".into()));
                }
                expected.push(Expected::File(path));
            }
            for s in &q.symbols {
                let name = s.trim().trim_start_matches('@');
                if name.is_empty() {
                    return Err(invalid("an empty name in `symbols`".into()));
                }
                expected.push(Expected::Symbol(name.to_owned()));
            }
            if expected.is_empty() {
                return Err(invalid(
                    "the question expects nothing: give `files` or `symbols`".into(),
                ));
            }
            let mut overrides = KnobsPatch {
                budget: q.budget.map(Budget::Tokens),
                model: q.model,
                path_weights: q.weights.map(|map| {
                    map.into_iter()
                        .map(|(glob, weight)| PathWeight { glob, weight })
                        .collect()
                }),
                primers: q.primers,
                k: q.k,
                min_score: q.min_score,
                lod: q.lod,
                ..KnobsPatch::default()
            };
            if let Some(problem) = overrides.validate().into_iter().next() {
                // The file's own key names: `weights`, not `path_weights`.
                let key = match problem.knob {
                    "path_weights" => "weights",
                    other => other,
                };
                return Err(invalid(problem.describe(key)));
            }
            Ok(GoldenQuestion {
                line,
                ask,
                expected,
                overrides,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|questions| GoldenFile { questions })
}

/// Reads and parses a golden file.
pub fn load(path: &Path) -> Result<GoldenFile, GoldenError> {
    let text = std::fs::read_to_string(path).map_err(|source| GoldenError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(&text)
}

/// What happened to one expected item.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// In the prompt.
    Found {
        /// 1-based rank of its best chunk in the prompt, by final score.
        rank: usize,
        /// That chunk's level of detail (0 = full).
        lod: u8,
        /// Whether that chunk was degraded for the budget.
        degraded: bool,
        /// That chunk's location, `path:start-end`.
        chunk: String,
        /// Its chunks in the prompt / among the candidates.
        chunks_in: usize,
        /// Its chunks among the candidates.
        chunks: usize,
    },
    /// Retrieved, but none of its chunks made it into the prompt.
    Dropped {
        /// 1-based rank of its best chunk.
        rank: usize,
        /// Why that chunk was dropped.
        reason: DropReason,
        /// Its chunks among the candidates.
        chunks: usize,
    },
    /// Indexed, but retrieval did not return it for this question.
    NotRetrieved,
    /// No indexed file or symbol by that name.
    Unknown,
    /// The question itself could not be assembled (see its error).
    NotAssembled,
}

impl Outcome {
    /// Whether the item is in the prompt.
    pub fn is_found(&self) -> bool {
        matches!(self, Outcome::Found { .. })
    }
}

/// One expected item and what happened to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ItemReport {
    /// What was expected.
    pub expected: Expected,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// One question's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuestionReport {
    /// 1-based line of the question in the golden file.
    pub line: usize,
    /// The question.
    pub ask: String,
    /// The resolved model.
    pub model: String,
    /// `tokens` or `chars`.
    pub unit: String,
    /// The budget used.
    pub budget: u32,
    /// What the prompt used.
    pub used: u32,
    /// Each expected item, in file order (files, then symbols).
    pub items: Vec<ItemReport>,
    /// Assembly warnings (an `@name` that names nothing, ...).
    pub warnings: Vec<String>,
    /// Set when the question could not be assembled.
    pub error: Option<String>,
}

impl QuestionReport {
    /// Expected items in the prompt.
    pub fn found(&self) -> usize {
        self.items.iter().filter(|i| i.outcome.is_found()).count()
    }
}

/// The whole run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoldenReport {
    /// One per question, in file order.
    pub questions: Vec<QuestionReport>,
    /// Expected items found, over all questions.
    pub found: usize,
    /// Expected items, over all questions.
    pub expected: usize,
}

impl GoldenReport {
    /// Every expected item is in its prompt.
    pub fn passed(&self) -> bool {
        self.found == self.expected
    }
}

/// What the index knows, to tell "not retrieved" from "unknown".
pub struct IndexedNames<'a> {
    /// Every indexed path.
    pub paths: &'a BTreeSet<String>,
    /// The chunks defining each name the checked questions expect
    /// ([`expected_symbols`]).
    pub symbols: &'a Definitions,
}

/// The symbol names `question` expects, for [`Project::definitions`].
pub fn expected_symbols(question: &GoldenQuestion) -> Vec<String> {
    question
        .expected
        .iter()
        .filter_map(|e| match e {
            Expected::Symbol(name) => Some(name.clone()),
            Expected::File(_) => None,
        })
        .collect()
}

/// Row indices of `items` ordered by final score, best first; ties keep the
/// assembly's order (the order of `loupe query --report`).
fn rank_order(items: &[ItemRow]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| items[b].score.score.total_cmp(&items[a].score.score));
    order
}

/// Where each expected item of `question` ended up in `assembly`.
pub fn match_items(
    question: &GoldenQuestion,
    assembly: &Assembly,
    index: &IndexedNames<'_>,
) -> Vec<ItemReport> {
    let order = rank_order(&assembly.items);
    question
        .expected
        .iter()
        .map(|expected| {
            let outcome = match expected {
                Expected::File(path) if !index.paths.contains(path) => Outcome::Unknown,
                Expected::File(path) => outcome_of(&order, &assembly.items, |r| &r.path == path),
                Expected::Symbol(name) => {
                    let ids: HashSet<ChunkId> = index.symbols.exact(name).iter().copied().collect();
                    if ids.is_empty() {
                        Outcome::Unknown
                    } else {
                        outcome_of(&order, &assembly.items, |r| ids.contains(&r.id))
                    }
                }
            };
            ItemReport {
                expected: expected.clone(),
                outcome,
            }
        })
        .collect()
}

/// The outcome of the rows that `is_it` selects, visited in rank order.
fn outcome_of(order: &[usize], items: &[ItemRow], is_it: impl Fn(&ItemRow) -> bool) -> Outcome {
    let mine: Vec<(usize, &ItemRow)> = order
        .iter()
        .enumerate()
        .map(|(rank, &i)| (rank + 1, &items[i]))
        .filter(|(_, r)| is_it(r))
        .collect();
    let chunks = mine.len();
    let chunks_in = mine.iter().filter(|(_, r)| r.status.is_in()).count();
    if let Some((rank, row)) = mine.iter().find(|(_, r)| r.status.is_in()) {
        return Outcome::Found {
            rank: *rank,
            lod: row.lod.unwrap_or(row.wanted_lod),
            degraded: matches!(row.status, ItemStatus::Degraded { .. }),
            chunk: format!("{}:{}-{}", row.path, row.start_line, row.end_line),
            chunks_in,
            chunks,
        };
    }
    // None is in the prompt, so the first dropped row is the best-ranked one.
    let best_dropped = mine.iter().find_map(|(rank, r)| match &r.status {
        ItemStatus::Dropped(reason) => Some((*rank, reason.clone())),
        ItemStatus::Included | ItemStatus::Degraded { .. } => None,
    });
    match best_dropped {
        Some((rank, reason)) => Outcome::Dropped {
            rank,
            reason,
            chunks,
        },
        None => Outcome::NotRetrieved,
    }
}

/// Assembles every question of `golden` on `project` with `base` knobs
/// (plus each question's overrides) and reports where each expected item
/// ended up. A question that cannot be assembled as asked (an `@path` that
/// names no file) is reported with its error; other failures stop the run.
pub async fn check(project: &Project, golden: &GoldenFile, base: &Knobs) -> Result<GoldenReport> {
    check_cached(project, golden, base, &mut GoldenCache::default()).await
}

/// Each golden question's retrieval, kept between runs: the app re-runs
/// the golden questions on every knob change, and a knob change does not
/// re-retrieve (the [`AskCache`](crate::AskCache) invariant), so a re-run
/// is one pure assembly per question.
#[derive(Debug, Default)]
pub struct GoldenCache {
    by_question: std::collections::HashMap<String, crate::AskCache>,
}

/// [`check`] with `cache` keeping each question's retrieval; questions no
/// longer in `golden` are forgotten.
pub async fn check_cached(
    project: &Project,
    golden: &GoldenFile,
    base: &Knobs,
    cache: &mut GoldenCache,
) -> Result<GoldenReport> {
    cache
        .by_question
        .retain(|ask, _| golden.questions.iter().any(|q| &q.ask == ask));
    let mut questions = Vec::with_capacity(golden.questions.len());
    for q in &golden.questions {
        let knobs = q.overrides.applied(base);
        let model = knobs.model.clone();
        let request = crate::AskRequest::new(q.ask.clone(), knobs);
        let ask_cache = cache.by_question.entry(q.ask.clone()).or_default();
        let answer = project.ask(&request, ask_cache).await;
        let report = match answer.map(|a| a.assembly) {
            Ok(assembly) => {
                let paths = project.indexed_paths();
                let symbols = project
                    .definitions(&expected_symbols(q), usize::MAX)
                    .await?;
                let index = IndexedNames {
                    paths: &paths,
                    symbols: &symbols,
                };
                QuestionReport {
                    line: q.line,
                    ask: q.ask.clone(),
                    model: assembly.report.model.clone(),
                    unit: assembly.report.unit.clone(),
                    budget: assembly.report.budget,
                    used: assembly.report.used,
                    items: match_items(q, &assembly, &index),
                    warnings: assembly.report.warnings.clone(),
                    error: None,
                }
            }
            Err(Error::Request(message)) => QuestionReport {
                line: q.line,
                ask: q.ask.clone(),
                model,
                unit: String::new(),
                budget: 0,
                used: 0,
                items: q
                    .expected
                    .iter()
                    .map(|e| ItemReport {
                        expected: e.clone(),
                        outcome: Outcome::NotAssembled,
                    })
                    .collect(),
                warnings: Vec::new(),
                error: Some(message),
            },
            Err(e) => return Err(e),
        };
        questions.push(report);
    }
    let found = questions.iter().map(QuestionReport::found).sum();
    let expected = questions.iter().map(|q| q.items.len()).sum();
    Ok(GoldenReport {
        questions,
        found,
        expected,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use loupe_assemble::rank::ScoreBreakdown;
    use loupe_assemble::report::Section;

    /// Parses `text` and renders the result (or the error) compactly.
    fn check_parse(text: &str, expect: &str) {
        let got = match parse(text) {
            Ok(file) => file
                .questions
                .iter()
                .map(|q| {
                    let overrides = serde_json::to_string(&q.overrides).unwrap();
                    format!("{} {:?} {:?} {overrides}", q.line, q.ask, q.expected)
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, expect, "for:\n{text}");
    }

    #[test]
    fn parses_questions_and_overrides() {
        check_parse(
            "# checks\n[[question]]\nask = \"How is tax applied?\"\nfiles = [\"./src\\\\tax.rs\"]\nsymbols = [\"@apply_tax\"]\n\n[[question]]\nask = \"Where is the old code?\"\nfiles = [\"legacy/old.rs\"]\nbudget = 500\nmodel = \"gpt-4o-mini\"\nweights = { \"legacy/**\" = 0 }\nk = 3\nlod = false\n",
            "3 \"How is tax applied?\" [File(\"src/tax.rs\"), Symbol(\"apply_tax\")] {}\n\
             8 \"Where is the old code?\" [File(\"legacy/old.rs\")] {\"model\":\"gpt-4o-mini\",\"budget\":{\"tokens\":500},\"path_weights\":[{\"glob\":\"legacy/**\",\"weight\":0.0}],\"k\":3,\"lod\":false}",
        );
    }

    #[test]
    fn malformed_files_name_the_line() {
        check_parse(
            "[[question]]\nask = \"a\"\nfiles = [\"x.rs\"\n",
            "error: line 3, column 16: unclosed array, expected `]`",
        );
        check_parse(
            "[[question]]\nask = \"a\"\nfiles = [\"x.rs\"]\nbudgt = 5\n",
            "error: line 4, column 1: unknown field `budgt`, expected one of `ask`, `files`, `symbols`, `budget`, `model`, `weights`, `primers`, `k`, `min_score`, `lod`",
        );
        check_parse(
            "[[question]]\nfiles = [\"x.rs\"]\n",
            "error: line 1, column 1: missing field `ask`",
        );
        check_parse(
            "[[question]]\nask = \"a\"\nfiles = \"x.rs\"\n",
            "error: line 3, column 9: invalid type: string \"x.rs\", expected a sequence",
        );
        check_parse(
            "\n[[question]]\nask = \"a\"\nsymbols = [\"f\"]\n\n[[question]]\nask = \"b\"\n",
            "error: line 7: the question expects nothing: give `files` or `symbols`",
        );
        check_parse(
            "[[question]]\nask = \"  \"\nfiles = [\"x.rs\"]\n",
            "error: line 2: `ask` is empty",
        );
        check_parse(
            "[[question]]\nask = \"a\"\nfiles = [\"x.rs\"]\nweights = { \"a/**\" = 3 }\n",
            "error: line 2: `weights`: weight 3 for \"a/**\": must be between 0 and 2",
        );
        check_parse(
            "[[question]]\nask = \"a\"\nfiles = [\"x.rs\"]\nbudget = -1\n",
            "error: line 4, column 10: invalid value: integer `-1`, expected u32",
        );
        check_parse("# nothing yet\n", "error: no [[question]] tables");
    }

    fn row(id: ChunkId, path: &str, score: f32, status: ItemStatus, lod: Option<u8>) -> ItemRow {
        ItemRow {
            id,
            path: path.into(),
            start_line: 1,
            end_line: 9,
            section: Section::RetrievedCode,
            score: ScoreBreakdown {
                score,
                ..Default::default()
            },
            lod,
            wanted_lod: 0,
            size: 10,
            status,
            merged_into: None,
        }
    }

    /// Matches `expected` against an assembly of `items`, in an index that
    /// knows `a.rs`, `b.rs`, `c.rs`, `d.rs` and the symbols `alpha` (chunk 2),
    /// `beta` (chunk 4) and `gamma` (chunk 9, never retrieved).
    fn check_match(items: Vec<ItemRow>, expected: Vec<Expected>, expect: &[&str]) {
        let paths: BTreeSet<String> = ["a.rs", "b.rs", "c.rs", "d.rs"]
            .iter()
            .map(|p| p.to_string())
            .collect();
        let symbols = Definitions::from_pairs(vec![
            ("alpha".into(), 2),
            ("beta".into(), 4),
            ("gamma".into(), 9),
        ]);
        let assembly = Assembly {
            prompt: String::new(),
            messages: Vec::new(),
            items,
            report: Default::default(),
        };
        let question = GoldenQuestion {
            line: 1,
            ask: "q".into(),
            expected,
            overrides: KnobsPatch::default(),
        };
        let index = IndexedNames {
            paths: &paths,
            symbols: &symbols,
        };
        let got: Vec<String> = match_items(&question, &assembly, &index)
            .iter()
            .map(|i| format!("{:?} → {:?}", i.expected, i.outcome))
            .collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn matching_reports_rank_lod_reason_or_absence() {
        let items = vec![
            // Retrieval order differs from rank order on purpose.
            row(1, "a.rs", 0.2, ItemStatus::Included, Some(3)),
            row(2, "a.rs", 0.9, ItemStatus::Degraded { wanted: 0 }, Some(2)),
            row(
                3,
                "b.rs",
                0.5,
                ItemStatus::Dropped(DropReason::OverBudget { needed: 40 }),
                None,
            ),
            row(
                4,
                "c.rs",
                0.4,
                ItemStatus::Dropped(DropReason::HiddenByPathWeight {
                    glob: "c.rs".into(),
                }),
                None,
            ),
        ];
        check_match(
            items,
            vec![
                Expected::File("a.rs".into()),
                Expected::File("b.rs".into()),
                Expected::File("d.rs".into()),
                Expected::File("nope.rs".into()),
                Expected::Symbol("ALPHA".into()),
                Expected::Symbol("beta".into()),
                Expected::Symbol("gamma".into()),
                Expected::Symbol("delta".into()),
            ],
            &[
                "File(\"a.rs\") → Found { rank: 1, lod: 2, degraded: true, chunk: \"a.rs:1-9\", chunks_in: 2, chunks: 2 }",
                "File(\"b.rs\") → Dropped { rank: 2, reason: OverBudget { needed: 40 }, chunks: 1 }",
                "File(\"d.rs\") → NotRetrieved",
                "File(\"nope.rs\") → Unknown",
                "Symbol(\"ALPHA\") → Found { rank: 1, lod: 2, degraded: true, chunk: \"a.rs:1-9\", chunks_in: 1, chunks: 1 }",
                "Symbol(\"beta\") → Dropped { rank: 3, reason: HiddenByPathWeight { glob: \"c.rs\" }, chunks: 1 }",
                "Symbol(\"gamma\") → NotRetrieved",
                "Symbol(\"delta\") → Unknown",
            ],
        );
    }

    #[test]
    fn a_file_counts_when_any_chunk_is_in_at_its_best_rank() {
        check_match(
            vec![
                row(
                    5,
                    "a.rs",
                    0.8,
                    ItemStatus::Dropped(DropReason::BelowMinScore),
                    None,
                ),
                row(6, "b.rs", 0.7, ItemStatus::Included, Some(0)),
                row(7, "a.rs", 0.1, ItemStatus::Included, Some(5)),
            ],
            vec![Expected::File("a.rs".into())],
            &[
                "File(\"a.rs\") → Found { rank: 3, lod: 5, degraded: false, chunk: \"a.rs:1-9\", chunks_in: 1, chunks: 2 }",
            ],
        );
    }

    #[test]
    fn positions_count_lines_and_characters() {
        assert_eq!(position("ab\ncé\nx", 0), (1, 1));
        assert_eq!(position("ab\ncé\nx", 3), (2, 1));
        assert_eq!(position("ab\ncé\nx", 7), (3, 1));
        assert_eq!(position("ab\ncé\nx", 6), (2, 3));
        assert_eq!(position("ab", 99), (1, 3));
    }
}
