//! What `loupe mcp`'s tools answer: compact, bounded views of one
//! [`Answer`] (and of the project's [`Status`]).
//!
//! Every view is plain data with a JSON Schema (the tools' output schemas)
//! and a fixed ceiling on its size: a few top rows, a few warnings. The
//! ranks are the rows of the assembly ordered by final score, as `loupe
//! query --report` and `loupe golden` count them.
//!
//! Nothing here ranks, retrieves or decides what is in a prompt: it reads
//! the assembly's rows and the engine's golden-question matcher.

use std::collections::HashMap;

use loupe_assemble::report::{BANNED, ItemStatus};
use loupe_assemble::{ChunkId, ItemRow};
use loupe_engine::asking::golden::{self, Expected, GoldenQuestion, IndexedNames, Outcome};
use loupe_engine::{Answer, Status};
use schemars::JsonSchema;
use serde::Serialize;

use super::args::Named;

/// Included rows a `context` report lists.
pub const TOP_INCLUDED: usize = 10;
/// Dropped rows a `context` report lists.
pub const TOP_DROPPED: usize = 5;
/// Warnings or stale files a report lists.
pub const MAX_NOTES: usize = 10;

/// The report that comes with a `context` prompt.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ContextReport {
    /// The model row the prompt was measured for.
    pub model: String,
    /// The budget, in tokens: a hard cap on the prompt.
    pub budget: u32,
    /// Tokens the prompt uses.
    pub used: u32,
    /// Whether anything was shrunk, dropped for room, or trimmed.
    pub truncated: bool,
    /// The assembly in one sentence: fits or truncated, how many chunks are
    /// in (how many shrunk) and how many are out, counted by reason.
    pub verdict: String,
    /// Chunks retrieved for the question (plus pins).
    pub candidates: usize,
    /// Chunks in the prompt.
    pub included: usize,
    /// Chunks not in the prompt.
    pub dropped: u32,
    /// The best-ranked chunks in the prompt (at most 10).
    pub top_included: Vec<Row>,
    /// The best-ranked chunks left out, with why (at most 5).
    pub top_dropped: Vec<Row>,
    /// What the assembler warns about (at most 10).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Files in the prompt that changed on disk since they were indexed (at most 10).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<String>,
}

/// One chunk of the assembly.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Row {
    /// 1-based rank by final score among all candidates.
    pub rank: usize,
    /// Where it is: `path:first-last` (lines).
    pub chunk: String,
    /// The symbol the chunk defines, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Final score, 0–1 (pinned: 1).
    pub score: f64,
    /// Level of detail in the prompt: 0 full text, 1 no comments, 2 signatures
    /// and docs, 3 skeleton, 4 names, 5 one-line summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lod: Option<u8>,
    /// Why it is not in the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `search`'s answer.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchReply {
    /// Chunks retrieved in all (rows lists the best `limit`).
    pub candidates: usize,
    /// Ranked candidates, best first.
    pub rows: Vec<SearchRow>,
}

/// One ranked candidate.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchRow {
    /// 1-based rank by final score.
    pub rank: usize,
    /// Project-relative path.
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// The symbol the chunk defines, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Final score, 0–1.
    pub score: f64,
    /// Whether it is in the prompt `context` would give with the same arguments.
    pub in_prompt: bool,
    /// Its level of detail there (see `context`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lod: Option<u8>,
    /// Why it is not in that prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Every factor of the score: relevance from lexical (BM25), vector,
    /// symbol, graph, path, whole-file and commit-history evidence, and
    /// `reader` (the re-ranker, which read the question with the file);
    /// boosts; role, intent and path weights; the cap.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub breakdown: serde_json::Value,
}

/// Where a target ended up for a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At least one of its chunks is in the prompt.
    InPrompt,
    /// Retrieved, but none of its chunks made it into the prompt.
    Dropped,
    /// Kept out by a ban.
    Banned,
    /// Indexed, but retrieval did not find it for this question.
    NotRetrieved,
    /// No indexed file or symbol by that name.
    Unknown,
}

/// `explain`'s answer.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ExplainReply {
    /// The target as resolved (an indexed path or a symbol name).
    pub target: String,
    /// `file` or `symbol`.
    pub kind: String,
    /// The short answer.
    pub verdict: Verdict,
    /// The answer in one sentence, with what to do about it.
    pub detail: String,
    /// Rank of its best chunk by final score (in the prompt, or dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// That chunk's level of detail (see `context`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lod: Option<u8>,
    /// Whether that chunk was shrunk to fit the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<bool>,
    /// That chunk, `path:first-last`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk: Option<String>,
    /// How many of its chunks are in the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks_in_prompt: Option<usize>,
    /// How many of its chunks were retrieved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks_retrieved: Option<usize>,
    /// Why it was dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Near symbol names, when the target names nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}

/// `status`'s answer.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StatusReply {
    /// The project folder.
    pub root: String,
    /// Where its index lives.
    pub data_dir: String,
    /// Indexed files.
    pub files: u64,
    /// Indexed chunks.
    pub chunks: u64,
    /// Index generation: grows with every committed index run.
    pub generation: u64,
    /// Files skipped or degraded by the last full run (`loupe status --diagnostics` lists them).
    pub diagnostics: u64,
    /// Whether the server re-indexes files as they change.
    pub watching: bool,
    /// BM25 over every chunk.
    pub lexical: Signal,
    /// Embedding vectors (semantic similarity).
    pub vectors: Signal,
    /// Commit messages as evidence of which files a question is about.
    pub history: Signal,
    /// Knobs the user saved for agents in the Loupe app: every call starts
    /// from them (over the project's `.loupe.toml`; a call's own arguments
    /// win). `null`: none saved.
    pub agent_knobs: Option<serde_json::Value>,
}

/// Whether one retrieval signal is in use.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Signal {
    /// Ready and complete.
    pub ready: bool,
    /// How much of it there is, or why there is none.
    pub detail: String,
}

/// The assembly's rows ordered by final score, best first; ties keep the
/// assembly's order. Each with its 1-based rank.
fn ranked(items: &[ItemRow]) -> Vec<(usize, &ItemRow)> {
    let mut rows: Vec<&ItemRow> = items.iter().collect();
    rows.sort_by(|a, b| b.score.score.total_cmp(&a.score.score));
    rows.into_iter()
        .enumerate()
        .map(|(i, r)| (i + 1, r))
        .collect()
}

/// The symbol of each candidate chunk the assembly saw.
fn symbols(answer: &Answer) -> HashMap<ChunkId, &str> {
    answer
        .selected
        .candidates
        .iter()
        .filter_map(|c| Some((c.chunk.id, c.chunk.symbol.as_deref()?)))
        .collect()
}

fn reason(row: &ItemRow, unit: &str) -> Option<String> {
    match &row.status {
        ItemStatus::Dropped(r) => Some(r.describe(unit)),
        ItemStatus::Included | ItemStatus::Degraded { .. } => None,
    }
}

fn row(rank: usize, r: &ItemRow, symbols: &HashMap<ChunkId, &str>, unit: &str) -> Row {
    Row {
        rank,
        chunk: format!("{}:{}-{}", r.path, r.start_line, r.end_line),
        symbol: symbols.get(&r.id).map(|s| (*s).to_owned()),
        score: rounded(f64::from(r.score.score)),
        lod: r.lod,
        reason: reason(r, unit),
    }
}

/// Decimals kept in scores: enough to order and compare them, and an f32
/// widened to JSON's f64 otherwise prints 16 digits of noise.
const SCORE_DECIMALS: i32 = 4;

fn rounded(x: f64) -> f64 {
    let scale = 10f64.powi(SCORE_DECIMALS);
    (x * scale).round() / scale
}

/// Every float in `value` [`rounded`].
fn round_numbers(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Number(n) if n.is_f64() => n
            .as_f64()
            .and_then(|f| serde_json::Number::from_f64(rounded(f)))
            .map_or(serde_json::Value::Number(n), serde_json::Value::Number),
        serde_json::Value::Object(map) => serde_json::Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, round_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

fn capped(items: &[String]) -> Vec<String> {
    items.iter().take(MAX_NOTES).cloned().collect()
}

/// The report that goes with `answer`'s prompt.
pub fn context_report(answer: &Answer) -> ContextReport {
    let a = &answer.assembly;
    let r = &a.report;
    let symbols = symbols(answer);
    let ranked = ranked(&a.items);
    let (inside, outside): (Vec<_>, Vec<_>) =
        ranked.iter().partition(|(_, row)| row.status.is_in());
    ContextReport {
        model: r.model.clone(),
        budget: r.budget,
        used: r.used,
        truncated: r.was_truncated,
        verdict: loupe_assemble::report::Verdict::of(&a.items, r).describe(&r.unit),
        candidates: a.items.len(),
        included: inside.len(),
        dropped: r.dropped_count,
        top_included: inside
            .iter()
            .take(TOP_INCLUDED)
            .map(|(rank, x)| row(*rank, x, &symbols, &r.unit))
            .collect(),
        top_dropped: outside
            .iter()
            .take(TOP_DROPPED)
            .map(|(rank, x)| row(*rank, x, &symbols, &r.unit))
            .collect(),
        warnings: capped(&r.warnings),
        stale: capped(&answer.stale),
    }
}

/// The best `limit` candidates of `answer` with their score breakdowns.
pub fn search_reply(answer: &Answer, limit: usize) -> SearchReply {
    let a = &answer.assembly;
    let symbols = symbols(answer);
    SearchReply {
        candidates: a.items.len(),
        rows: ranked(&a.items)
            .into_iter()
            .take(limit)
            .map(|(rank, r)| SearchRow {
                rank,
                path: r.path.clone(),
                start_line: r.start_line,
                end_line: r.end_line,
                symbol: symbols.get(&r.id).map(|s| (*s).to_owned()),
                score: rounded(f64::from(r.score.score)),
                in_prompt: r.status.is_in(),
                lod: r.lod,
                reason: reason(r, &a.report.unit),
                breakdown: round_numbers(serde_json::to_value(&r.score).unwrap_or_default()),
            })
            .collect(),
    }
}

/// Where `target` ended up in `answer`, with `index` telling "not
/// retrieved" from "unknown" (the engine's golden-question matcher).
pub fn explain_reply(answer: &Answer, target: &Named, index: &IndexedNames<'_>) -> ExplainReply {
    let (expected, kind, name) = match target {
        // `explain` refuses a folder before asking; as a file it is unknown.
        Named::Folder(p) | Named::File(p) => (Expected::File(p.clone()), "file", p.clone()),
        Named::Symbol(s, _) => (Expected::Symbol(s.clone()), "symbol", s.clone()),
        Named::Unknown {
            name,
            looks_like_path,
            ..
        } => {
            let kind = if *looks_like_path { "file" } else { "symbol" };
            let expected = if *looks_like_path {
                Expected::File(name.clone())
            } else {
                Expected::Symbol(name.clone())
            };
            (expected, kind, name.clone())
        }
    };
    let question = GoldenQuestion {
        line: 0,
        ask: String::new(),
        expected: vec![expected],
        overrides: loupe_assemble::KnobsPatch::default(),
    };
    let outcome = golden::match_items(&question, &answer.assembly, index)
        .into_iter()
        .next()
        .map_or(Outcome::Unknown, |i| i.outcome);
    let total = answer.assembly.items.len();
    let unit = &answer.assembly.report.unit;
    let mut reply = ExplainReply {
        target: name,
        kind: kind.to_owned(),
        verdict: Verdict::Unknown,
        detail: String::new(),
        rank: None,
        lod: None,
        degraded: None,
        chunk: None,
        chunks_in_prompt: None,
        chunks_retrieved: None,
        reason: None,
        suggestions: Vec::new(),
    };
    match outcome {
        Outcome::Found {
            rank,
            lod,
            degraded,
            chunk,
            chunks_in,
            chunks,
        } => {
            reply.verdict = Verdict::InPrompt;
            reply.detail = format!(
                "in the prompt: its best chunk {chunk} ranks {rank} of {total} at level of detail {lod}{}; {chunks_in} of its {chunks} retrieved chunks are in",
                if degraded {
                    " (shrunk to fit the budget: a larger budget shows more)"
                } else {
                    ""
                }
            );
            (reply.rank, reply.lod, reply.degraded, reply.chunk) =
                (Some(rank), Some(lod), Some(degraded), Some(chunk));
            (reply.chunks_in_prompt, reply.chunks_retrieved) = (Some(chunks_in), Some(chunks));
        }
        Outcome::Dropped {
            rank,
            reason,
            chunks,
        } => {
            let why = reason.describe(unit);
            reply.verdict = Verdict::Dropped;
            reply.detail = format!(
                "retrieved (best chunk ranks {rank} of {total}) but not in the prompt: {why}; pin it, raise its path weight or the budget to bring it in"
            );
            (reply.rank, reply.reason) = (Some(rank), Some(why));
            (reply.chunks_in_prompt, reply.chunks_retrieved) = (Some(0), Some(chunks));
        }
        Outcome::NotRetrieved if is_banned(answer, target) => {
            reply.verdict = Verdict::Banned;
            reply.detail = BANNED.to_owned();
        }
        Outcome::NotRetrieved => {
            reply.verdict = Verdict::NotRetrieved;
            reply.detail = format!(
                "indexed, but retrieval did not find it for this question: name it in the question (@{}) or pin it",
                reply.target
            );
        }
        Outcome::Unknown | Outcome::NotAssembled => {
            reply.verdict = Verdict::Unknown;
            reply.detail = format!(
                "no indexed {kind} is named {:?}: misspelt, renamed, ignored (.gitignore, .loupeignore, hidden), over the size limit, or not indexed yet",
                reply.target
            );
            if let Named::Unknown { suggestions, .. } = target {
                reply.suggestions = suggestions.clone();
            }
        }
    }
    reply
}

/// Whether a ban in the request took `target`'s chunks out.
fn is_banned(answer: &Answer, target: &Named) -> bool {
    answer.selected.banned.iter().any(|c| match target {
        Named::Folder(p) => c
            .chunk
            .path
            .strip_prefix(p.as_str())
            .is_some_and(|r| r.starts_with('/')),
        Named::File(p) => &c.chunk.path == p,
        Named::Symbol(_, ids) => ids.contains(&c.chunk.id),
        Named::Unknown { .. } => false,
    })
}

/// The project's status with its signals spelled out.
pub fn status_reply(
    s: &Status,
    watching: bool,
    agent_knobs: Option<&loupe_assemble::KnobsPatch>,
) -> StatusReply {
    let lexical = Signal {
        ready: s.chunks > 0 && s.lexical_chunks == s.chunks,
        detail: format!("{} of {} chunks", s.lexical_chunks, s.chunks),
    };
    let vectors = match &s.vector_model {
        Some(model) => Signal {
            ready: s.vectors_ready,
            detail: format!(
                "{} of {} chunks ({model}), {}",
                s.vector_chunks, s.chunks, s.vector_search
            ),
        },
        None => Signal {
            ready: false,
            detail: "off (the server runs with --embedder none)".to_owned(),
        },
    };
    let history = match &s.history_note {
        None => Signal {
            ready: s.history_commits > 0,
            detail: format!(
                "{} commit{}",
                s.history_commits,
                if s.history_commits == 1 { "" } else { "s" }
            ),
        },
        Some(why) => Signal {
            ready: false,
            detail: format!("none ({why})"),
        },
    };
    StatusReply {
        root: s.root.display().to_string(),
        data_dir: s.data_dir.display().to_string(),
        files: s.files,
        chunks: s.chunks,
        generation: s.generation,
        diagnostics: s.diagnostics,
        watching,
        lexical,
        vectors,
        history,
        agent_knobs: agent_knobs.and_then(|p| serde_json::to_value(p).ok()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use loupe_assemble::rank::ScoreBreakdown;
    use loupe_assemble::report::{DropReason, Section};
    use loupe_assemble::{Assembly, Candidate, Chunk, ChunkKind, Report, Role};
    use loupe_engine::Selected;
    use loupe_engine::asking::retrieve::Definitions;
    use std::collections::BTreeSet;

    fn item(id: ChunkId, path: &str, score: f32, status: ItemStatus, lod: Option<u8>) -> ItemRow {
        ItemRow {
            id,
            path: path.into(),
            start_line: u32::try_from(id).unwrap(),
            end_line: u32::try_from(id).unwrap() + 9,
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

    fn candidate(id: ChunkId, path: &str, symbol: &str) -> Candidate {
        Candidate {
            chunk: Chunk {
                id,
                path: path.into(),
                language: "rust".into(),
                kind: ChunkKind::Function,
                symbol: Some(symbol.into()),
                parent: None,
                start_byte: 0,
                end_byte: 0,
                start_line: 1,
                end_line: 9,
                role: Role::Code,
                text: String::new(),
                outline: Vec::new(),
                hash: String::new(),
                tokens: 0,
            },
            signals: Default::default(),
        }
    }

    /// An answer with 14 included rows over `a.rs` and two dropped ones;
    /// `b.rs` (chunk 2) was banned.
    fn answer() -> Answer {
        let mut items: Vec<ItemRow> = (10..24)
            .map(|id| {
                let score = 0.1 + 0.01 * (id as f32);
                item(id, "a.rs", score, ItemStatus::Included, Some(0))
            })
            .collect();
        items.push(item(
            1,
            "c.rs",
            0.9,
            ItemStatus::Dropped(DropReason::OverBudget { needed: 40 }),
            None,
        ));
        items.push(item(
            3,
            "d.rs",
            0.05,
            ItemStatus::Dropped(DropReason::HiddenByPathWeight {
                glob: "d.rs".into(),
            }),
            None,
        ));
        Answer {
            assembly: Assembly {
                items,
                report: Report {
                    model: "gpt-4o".into(),
                    unit: "tokens".into(),
                    budget: 1000,
                    used: 990,
                    was_truncated: true,
                    dropped_count: 2,
                    warnings: (0..12).map(|i| format!("w{i}")).collect(),
                    ..Report::default()
                },
                ..Assembly::default()
            },
            selected: Selected {
                candidates: vec![
                    candidate(1, "c.rs", "big_one"),
                    candidate(23, "a.rs", "top"),
                ],
                banned: vec![candidate(2, "b.rs", "banned_fn")],
                ..Selected::default()
            },
            stale: vec!["a.rs".into()],
            pins_dropped: false,
            change: None,
            expansion: None,
            signals: Default::default(),
        }
    }

    #[test]
    fn the_context_report_is_ranked_and_bounded() {
        let report = context_report(&answer());
        assert_eq!(
            (
                report.used,
                report.budget,
                report.truncated,
                report.candidates,
                report.included,
                report.dropped
            ),
            (990, 1000, true, 16, 14, 2)
        );
        assert_eq!(report.top_included.len(), TOP_INCLUDED);
        assert_eq!(report.warnings.len(), MAX_NOTES);
        let first = &report.top_included[0];
        assert_eq!(
            (
                first.rank,
                first.chunk.as_str(),
                first.symbol.as_deref(),
                first.lod
            ),
            (2, "a.rs:23-32", Some("top"), Some(0))
        );
        let dropped: Vec<(usize, Option<&str>)> = report
            .top_dropped
            .iter()
            .map(|r| (r.rank, r.reason.as_deref()))
            .collect();
        assert_eq!(
            dropped,
            [
                (
                    1,
                    Some("over budget (needs 40 tokens even at its smallest)")
                ),
                (16, Some("hidden by path weight d.rs"))
            ]
        );
        assert_eq!(report.stale, ["a.rs"]);
    }

    #[test]
    fn search_rows_carry_the_breakdown() {
        let reply = search_reply(&answer(), 3);
        assert_eq!(reply.candidates, 16);
        let rows: Vec<(usize, &str, bool)> = reply
            .rows
            .iter()
            .map(|r| (r.rank, r.path.as_str(), r.in_prompt))
            .collect();
        assert_eq!(
            rows,
            [(1, "c.rs", false), (2, "a.rs", true), (3, "a.rs", true)]
        );
        assert_eq!(reply.rows[0].breakdown["score"], 0.9);
        assert_eq!(reply.rows[0].score, 0.9);
        assert_eq!(reply.rows[0].symbol.as_deref(), Some("big_one"));
    }

    fn explain(target: Named) -> String {
        let paths: BTreeSet<String> = ["a.rs", "b.rs", "c.rs", "d.rs", "e.rs"]
            .iter()
            .map(|p| p.to_string())
            .collect();
        let symbols = Definitions::from_pairs(vec![("big_one".into(), 1), ("banned_fn".into(), 2)]);
        let index = IndexedNames {
            paths: &paths,
            symbols: &symbols,
        };
        let r = explain_reply(&answer(), &target, &index);
        format!("{} {} {:?}: {}", r.kind, r.target, r.verdict, r.detail)
    }

    #[test]
    fn explain_says_where_and_why() {
        assert_eq!(
            explain(Named::File("a.rs".into())),
            "file a.rs InPrompt: in the prompt: its best chunk a.rs:23-32 ranks 2 of 16 at level of detail 0; 14 of its 14 retrieved chunks are in"
        );
        assert_eq!(
            explain(Named::Symbol("big_one".into(), vec![1])),
            "symbol big_one Dropped: retrieved (best chunk ranks 1 of 16) but not in the prompt: over budget (needs 40 tokens even at its smallest); pin it, raise its path weight or the budget to bring it in"
        );
        assert_eq!(
            explain(Named::File("b.rs".into())),
            "file b.rs Banned: banned: kept out of the prompt"
        );
        assert_eq!(
            explain(Named::File("e.rs".into())),
            "file e.rs NotRetrieved: indexed, but retrieval did not find it for this question: name it in the question (@e.rs) or pin it"
        );
        assert_eq!(
            explain(Named::Unknown {
                name: "big_on".into(),
                looks_like_path: false,
                suggestions: vec!["big_one".into()]
            }),
            "symbol big_on Unknown: no indexed symbol is named \"big_on\": misspelt, renamed, ignored (.gitignore, .loupeignore, hidden), over the size limit, or not indexed yet"
        );
    }
}
