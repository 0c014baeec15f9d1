//! The data that crosses IPC: what the UI sends ([`KnobsDto`]) and what it
//! gets back ([`AssemblyDto`], [`StatusDto`], [`IndexEvent`], [`ErrorDto`], ...).
//!
//! *API boundary:* these types, and only these, are the app's wire format.
//! The engine and assembly crates know nothing about them; every DTO is
//! built with a plain conversion from the core types. The TypeScript
//! declarations in `ui/src/lib/generated/dto.ts` are generated from this file
//! by `make types` (a test fails when they are out of date).
//!
//! This module does no I/O and calls no engine function.

use loupe_assemble::classify::{Intent, QuestionType};
use loupe_assemble::report::{BANNED, DropReason, ItemStatus};
use loupe_assemble::{Assembly, Budget, Candidate, ChunkId, Knobs};
use loupe_engine::{Diagnostic, IndexReport, Progress, Selected, Stage, Status, Target};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

mod expander;
mod golden;
mod map;
mod project;
pub use expander::*;
pub use golden::*;
pub use map::*;
pub use project::*;

/// Serialized name of a core enum (its serde `snake_case` form), for labels.
fn serde_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// What went wrong, for the UI to branch on (never on the message).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The path does not exist or is not a folder.
    BadProject,
    /// The project is not open in this window (open it first).
    NotOpen,
    /// Indexing was cancelled by the user.
    Cancelled,
    /// The request cannot be answered as asked (empty question, ...).
    BadRequest,
    /// The index or a store failed.
    Engine,
    /// The app's own files (settings, presets, a saved prompt) could not be written.
    Storage,
}

/// An error as the UI sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ErrorDto {
    /// Stable code.
    pub code: ErrorCode,
    /// Human-readable detail, shown as is.
    pub message: String,
}

impl ErrorDto {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<loupe_engine::Error> for ErrorDto {
    fn from(e: loupe_engine::Error) -> Self {
        use loupe_engine::Error as E;
        let code = match &e {
            E::BadProject { .. } => ErrorCode::BadProject,
            E::Cancelled => ErrorCode::Cancelled,
            E::Request(_) => ErrorCode::BadRequest,
            _ => ErrorCode::Engine,
        };
        Self::new(code, e.to_string())
    }
}

/// One progress report of an indexing run, streamed through a `Channel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct IndexEvent {
    /// `walk`, `parse`, `commit`, `ready` (questions can be asked: the
    /// lexical index, symbols and graph are committed), `embed`, `vectors`,
    /// `wait` or `done`.
    pub stage: String,
    /// Items done in this stage.
    pub done: u32,
    /// Items in this stage, when known.
    pub total: Option<u32>,
    /// Milliseconds since indexing started (the UI derives an ETA from it).
    pub elapsed_ms: u32,
}

/// Saturating conversion for counts that cross IPC as JS numbers.
fn count(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl IndexEvent {
    /// From the engine's report and the time since the run started.
    pub fn new(p: &Progress, elapsed: std::time::Duration) -> Self {
        Self {
            stage: serde_name(&p.stage),
            done: count(p.done),
            total: p.total.map(count),
            elapsed_ms: u32::try_from(elapsed.as_millis()).unwrap_or(u32::MAX),
        }
    }

    /// Whether this is the run's last report.
    pub fn is_done(p: &Progress) -> bool {
        p.stage == Stage::Done
    }
}

/// The state of an open project's index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct StatusDto {
    /// The project folder (canonical); the key for every later command.
    pub root: String,
    /// Indexed files.
    pub files: u32,
    /// Indexed chunks.
    pub chunks: u32,
    /// Catalog generation (changes when the index changes).
    pub generation: u32,
    /// Whether every chunk has a vector.
    pub vectors_ready: bool,
    /// The embedding model, `null` when vectors are off.
    pub vector_model: Option<String>,
    /// Chunks that have a vector (they arrive after the lexical stage).
    pub vector_chunks: u32,
    /// How questions search the vectors: `null` for the exact scan of
    /// every point (a project below the graph's size), the share built
    /// (0–99) while a graph is built in the background and the scan still
    /// answers, 100 once the graph answers.
    pub vector_graph: Option<u32>,
    /// Skipped or degraded files in the last run.
    pub diagnostics: u32,
    /// What opening had to repair.
    pub recovered: Vec<String>,
    /// Commits whose messages retrieval uses as evidence.
    pub history_commits: u32,
    /// Why there is no commit history, when there is none.
    pub history_note: Option<String>,
    /// What the last index run got from the team's shared store; `null`
    /// when none is configured (or no run has used it yet).
    pub shared: Option<SharedDto>,
}

/// What an index run got from the team's shared store and gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SharedDto {
    /// The store's URL, without a password.
    pub store: String,
    /// Files whose parse came from the store.
    pub files_pulled: u32,
    /// Chunks whose vector came from the store.
    pub vectors_pulled: u32,
    /// Files parsed here and written to the store.
    pub files_pushed: u32,
    /// Vectors computed here and written to the store.
    pub vectors_pushed: u32,
    /// Rows that failed validation (derived here instead).
    pub rejected: u32,
    /// Why the run stopped asking the store, if it did.
    pub fault: Option<String>,
}

impl From<&loupe_engine::stores::shared::SharedReport> for SharedDto {
    fn from(r: &loupe_engine::stores::shared::SharedReport) -> Self {
        Self {
            store: r.store.clone(),
            files_pulled: count(r.files_pulled),
            vectors_pulled: count(r.vectors_pulled),
            files_pushed: count(r.files_pushed),
            vectors_pushed: count(r.vectors_pushed),
            rejected: count(r.rejected),
            fault: r.fault.clone(),
        }
    }
}

impl From<&Status> for StatusDto {
    fn from(s: &Status) -> Self {
        Self {
            root: s.root.to_string_lossy().into_owned(),
            files: count(s.files),
            chunks: count(s.chunks),
            generation: count(s.generation),
            vectors_ready: s.vectors_ready,
            vector_model: s.vector_model.clone(),
            vector_chunks: count(s.vector_chunks),
            vector_graph: s.vector_search.graph_percent().map(u32::from),
            diagnostics: count(s.diagnostics),
            recovered: s.recovered.clone(),
            history_commits: count(s.history_commits),
            history_note: s.history_note.clone(),
            shared: s.shared.as_ref().map(SharedDto::from),
        }
    }
}

/// What `open_project` returns once indexing finished.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct OpenedDto {
    /// The index after the run.
    pub status: StatusDto,
    /// Files (re)chunked in this run.
    pub files_changed: u32,
    /// Files unchanged since the last run.
    pub files_unchanged: u32,
    /// Whether embedding stopped early (lexical search is complete).
    pub embedding_incomplete: bool,
}

impl OpenedDto {
    /// From the status after the run and the run's report.
    pub fn new(status: &Status, report: &IndexReport) -> Self {
        Self {
            status: status.into(),
            files_changed: count(report.files_changed),
            files_unchanged: count(report.files_unchanged),
            embedding_incomplete: report.embedding_incomplete,
        }
    }
}

/// A skipped or degraded file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct DiagnosticDto {
    /// Project-relative path.
    pub path: String,
    /// Category (`too_large`, `binary`, ...).
    pub kind: String,
    /// Detail.
    pub message: String,
}

impl From<&Diagnostic> for DiagnosticDto {
    fn from(d: &Diagnostic) -> Self {
        Self {
            path: d.path.clone(),
            kind: d.kind.as_str().to_owned(),
            message: d.message.clone(),
        }
    }
}

/// A row of the model table: a built-in one, or the user's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ModelDto {
    /// Model name (prefix-matched, case-insensitive).
    pub name: String,
    /// Context window in tokens.
    pub context_window: u32,
    /// Default budget in tokens.
    pub default_budget: u32,
    /// The tokenizer sizes are counted with.
    pub encoding: EncodingDto,
    /// Share of the budget kept free because `encoding` only approximates
    /// the model's own tokenizer (0 for OpenAI models).
    pub safety_margin: f32,
    /// Whether `encoding` is the model's own tokenizer (counts are exact)
    /// rather than a stand-in (counts are estimates, hence the margin).
    /// Absent in rows saved before it existed: estimated.
    #[serde(default)]
    pub exact: bool,
}

/// A BPE vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EncodingDto {
    /// GPT-4o and later.
    O200kBase,
    /// GPT-4, GPT-3.5; the stand-in for Claude and Llama.
    Cl100kBase,
    /// Qwen 2, 2.5 and 3's own vocabulary.
    Qwen2,
    /// Qwen 3.5 and 3.6's own vocabulary.
    #[serde(rename = "qwen3_5")]
    Qwen35,
}

impl From<&loupe_assemble::models::ModelSpec> for ModelDto {
    fn from(m: &loupe_assemble::models::ModelSpec) -> Self {
        use loupe_assemble::tokens::Encoding;
        Self {
            name: m.name.clone(),
            context_window: m.context_window,
            default_budget: m.default_budget,
            encoding: match m.encoding {
                Encoding::O200kBase => EncodingDto::O200kBase,
                Encoding::Cl100kBase => EncodingDto::Cl100kBase,
                Encoding::Qwen2 => EncodingDto::Qwen2,
                Encoding::Qwen35 => EncodingDto::Qwen35,
            },
            safety_margin: m.safety_margin,
            exact: m.exact,
        }
    }
}

impl ModelDto {
    /// The core row as given; [`Knobs::normalize`] drops a row the user has
    /// not finished (no name or no context window) and brings the rest into
    /// range.
    fn to_spec(&self) -> loupe_assemble::models::ModelSpec {
        use loupe_assemble::tokens::Encoding;
        loupe_assemble::models::ModelSpec {
            name: self.name.clone(),
            encoding: match self.encoding {
                EncodingDto::O200kBase => Encoding::O200kBase,
                EncodingDto::Cl100kBase => Encoding::Cl100kBase,
                EncodingDto::Qwen2 => Encoding::Qwen2,
                EncodingDto::Qwen35 => Encoding::Qwen35,
            },
            context_window: self.context_window,
            default_budget: self.default_budget,
            safety_margin: self.safety_margin,
            exact: self.exact,
        }
    }
}

/// Unit of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum BudgetUnit {
    /// Tokens of the model's tokenizer.
    Tokens,
    /// Characters.
    Chars,
}

/// Output format of the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FormatDto {
    /// XML documents.
    Xml,
    /// Markdown.
    Markdown,
    /// JSON.
    Json,
}

/// A path weight rule: glob → multiplier (0 hides, 2 doubles).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PathWeightDto {
    /// Glob over project-relative paths.
    pub glob: String,
    /// Multiplier in 0..=2.
    pub weight: f32,
}

/// The knobs the UI exposes; everything else keeps [`Knobs::default`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct KnobsDto {
    /// Model name.
    pub model: String,
    /// The user's own model rows, checked before the built-in table.
    pub models: Vec<ModelDto>,
    /// Budget; `null` uses the model's default.
    pub budget: Option<u32>,
    /// Unit of `budget`.
    pub budget_unit: BudgetUnit,
    /// Path weight rules; rows with an empty glob are ignored.
    pub path_weights: Vec<PathWeightDto>,
    /// Primer file names (any depth) or project-relative paths; their
    /// chunks are always candidates and get `primer_boost`.
    pub primers: Vec<String>,
    /// Added to primer files' scores.
    pub primer_boost: f32,
    /// The leading files' other chunks are raised to this share of their
    /// file's best score (0: off).
    pub sibling_share: f32,
    /// Automatic items kept at most; `null` keeps all.
    pub k: Option<u32>,
    /// Level of detail by score (off: full detail for all).
    pub lod: bool,
    /// Output format.
    pub format: FormatDto,
    /// Recency boost of a file modified just now.
    pub recency_weight: f32,
    /// Files the re-ranker reads with the question (0: off). Preferences
    /// saved before the knob existed take the default.
    #[serde(default = "default_read_files")]
    pub read_files: u32,
    /// Days after which the recency boost halves (≤ 0: off).
    pub recency_half_life_days: f32,
    /// Automatic items scoring below this are dropped; `null`: none.
    pub min_score: Option<f32>,
    /// Tokens kept free in the context window for the answer.
    pub answer_reserve: u32,
    /// What the rendered prompt shows.
    pub toggles: TogglesDto,
    /// NFKC, invisible-character stripping and injection redaction in retrieved text.
    pub sanitize: bool,
    /// Secret redaction everywhere.
    pub redact_secrets: bool,
    /// Overrides the detected intent; `null`: detected.
    pub intent: Option<IntentDto>,
    /// Overrides the detected question type; `null`: detected.
    pub question_type: Option<QuestionTypeDto>,
    /// The user's own instruction preamble per question type (a type
    /// without one gets the built-in). Absent in knobs saved before it
    /// existed: none.
    #[serde(default)]
    pub instructions: std::collections::BTreeMap<QuestionTypeDto, String>,
}

/// Output toggles of the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TogglesDto {
    /// `@path:start-end` citations on each item.
    pub sources: bool,
    /// Each item's score.
    pub scores: bool,
    /// JSON whatever the format.
    pub structured: bool,
    /// The best items at both ends of the context ("lost in the middle").
    pub lost_in_middle: bool,
    /// A change under review shown as its new code, changed lines marked,
    /// instead of as a unified diff. Absent in knobs saved before it
    /// existed: off.
    #[serde(default)]
    pub diff_as_code: bool,
}

/// Which sources a question wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum IntentDto {
    /// Usage and documentation.
    Docs,
    /// Tests.
    Tests,
    /// Implementation.
    Code,
    /// No preference.
    Default,
}

/// The kind of answer a question wants (picks the instructions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum QuestionTypeDto {
    /// "How do I…".
    Implementation,
    /// "How is it structured…".
    Architectural,
    /// "Why does it fail…".
    Debugging,
    /// "What does this do…".
    CodeExplanation,
    /// "Add support for…".
    FeatureRequest,
    /// A change to review.
    Review,
}

impl From<Intent> for IntentDto {
    fn from(i: Intent) -> Self {
        match i {
            Intent::Docs => IntentDto::Docs,
            Intent::Tests => IntentDto::Tests,
            Intent::Code => IntentDto::Code,
            Intent::Default => IntentDto::Default,
        }
    }
}

impl From<IntentDto> for Intent {
    fn from(i: IntentDto) -> Self {
        match i {
            IntentDto::Docs => Intent::Docs,
            IntentDto::Tests => Intent::Tests,
            IntentDto::Code => Intent::Code,
            IntentDto::Default => Intent::Default,
        }
    }
}

impl From<QuestionTypeDto> for QuestionType {
    fn from(q: QuestionTypeDto) -> Self {
        match q {
            QuestionTypeDto::Implementation => QuestionType::Implementation,
            QuestionTypeDto::Architectural => QuestionType::Architectural,
            QuestionTypeDto::Debugging => QuestionType::Debugging,
            QuestionTypeDto::CodeExplanation => QuestionType::CodeExplanation,
            QuestionTypeDto::FeatureRequest => QuestionType::FeatureRequest,
            QuestionTypeDto::Review => QuestionType::Review,
        }
    }
}

impl From<QuestionType> for QuestionTypeDto {
    fn from(q: QuestionType) -> Self {
        match q {
            QuestionType::Implementation => QuestionTypeDto::Implementation,
            QuestionType::Architectural => QuestionTypeDto::Architectural,
            QuestionType::Debugging => QuestionTypeDto::Debugging,
            QuestionType::CodeExplanation => QuestionTypeDto::CodeExplanation,
            QuestionType::FeatureRequest => QuestionTypeDto::FeatureRequest,
            QuestionType::Review => QuestionTypeDto::Review,
        }
    }
}

impl Default for KnobsDto {
    fn default() -> Self {
        Knobs::default().into()
    }
}

impl From<Knobs> for KnobsDto {
    fn from(k: Knobs) -> Self {
        let (budget, budget_unit) = match k.budget {
            None => (None, BudgetUnit::Tokens),
            Some(Budget::Tokens(n)) => (Some(n), BudgetUnit::Tokens),
            Some(Budget::Chars(n)) => (Some(n), BudgetUnit::Chars),
        };
        Self {
            model: k.model,
            models: k.models.iter().map(ModelDto::from).collect(),
            budget,
            budget_unit,
            path_weights: k
                .path_weights
                .into_iter()
                .map(|w| PathWeightDto {
                    glob: w.glob,
                    weight: w.weight,
                })
                .collect(),
            primers: k.primers,
            primer_boost: k.primer_boost,
            sibling_share: k.sibling_share,
            k: k.k.map(|k| u32::try_from(k).unwrap_or(u32::MAX)),
            lod: k.lod,
            format: match k.format {
                loupe_assemble::render::Format::Xml => FormatDto::Xml,
                loupe_assemble::render::Format::Markdown => FormatDto::Markdown,
                loupe_assemble::render::Format::Json => FormatDto::Json,
            },
            recency_weight: k.recency_weight,
            read_files: u32::try_from(k.read_files).unwrap_or(u32::MAX),
            recency_half_life_days: k.recency_half_life_days,
            min_score: k.min_score,
            answer_reserve: k.answer_reserve,
            toggles: TogglesDto {
                sources: k.toggles.sources,
                scores: k.toggles.scores,
                structured: k.toggles.structured,
                lost_in_middle: k.toggles.lost_in_middle,
                diff_as_code: k.toggles.diff_as_code,
            },
            sanitize: k.sanitize,
            redact_secrets: k.redact_secrets,
            intent: k.intent.map(IntentDto::from),
            // The core has no question-type knob; the app overrides the
            // classification it passes to assembly instead.
            question_type: None,
            instructions: k
                .instructions
                .into_iter()
                .map(|(kind, text)| (kind.into(), text))
                .collect(),
        }
    }
}

impl From<KnobsDto> for Knobs {
    /// The app's knobs in the core's ranges ([`Knobs::normalize`]): the
    /// controls and stored preferences may hold anything.
    fn from(d: KnobsDto) -> Self {
        use loupe_assemble::render::Format;
        let mut knobs = Knobs {
            model: d.model,
            models: d.models.iter().map(ModelDto::to_spec).collect(),
            budget: d.budget.map(|n| match d.budget_unit {
                BudgetUnit::Tokens => Budget::Tokens(n),
                BudgetUnit::Chars => Budget::Chars(n),
            }),
            path_weights: d
                .path_weights
                .into_iter()
                .map(|w| loupe_assemble::rank::PathWeight {
                    glob: w.glob,
                    weight: w.weight,
                })
                .collect(),
            primers: d.primers,
            primer_boost: d.primer_boost,
            sibling_share: d.sibling_share,
            k: d.k.map(|k| k as usize),
            lod: d.lod,
            format: match d.format {
                FormatDto::Xml => Format::Xml,
                FormatDto::Markdown => Format::Markdown,
                FormatDto::Json => Format::Json,
            },
            recency_weight: d.recency_weight,
            read_files: d.read_files as usize,
            recency_half_life_days: d.recency_half_life_days,
            min_score: d.min_score,
            answer_reserve: d.answer_reserve,
            toggles: loupe_assemble::render::Toggles {
                sources: d.toggles.sources,
                scores: d.toggles.scores,
                structured: d.toggles.structured,
                lost_in_middle: d.toggles.lost_in_middle,
                diff_as_code: d.toggles.diff_as_code,
            },
            sanitize: d.sanitize,
            redact_secrets: d.redact_secrets,
            intent: d.intent.map(Intent::from),
            instructions: d
                .instructions
                .into_iter()
                .map(|(kind, text)| (kind.into(), text))
                .collect(),
            ..Knobs::default()
        };
        knobs.normalize();
        knobs
    }
}

/// A row's final score and the factors it is made of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ScoreDto {
    /// The score used for ordering (0..=1).
    pub score: f32,
    /// Relevance from BM25.
    pub lexical: f32,
    /// Relevance from vectors.
    pub vector: f32,
    /// Relevance from symbol names.
    pub symbol: f32,
    /// Relevance from the symbol graph.
    pub graph: f32,
    /// Relevance from question terms in the path.
    pub path_terms: f32,
    /// Relevance from the whole file's BM25 rank.
    pub file: f32,
    /// Relevance from past commits like the question that changed the file.
    pub history: f32,
    /// Relevance from the re-ranker, which read the question with the file.
    pub reader: f32,
    /// Primer boost.
    pub primer: f32,
    /// Recency boost.
    pub recency: f32,
    /// Added to the score because the chunk's file leads the ranking (its
    /// best chunk's score × the sibling share); 0 otherwise.
    pub sibling: f32,
    /// Role × intent × path weight.
    pub multiplier: f32,
    /// The path weight alone.
    pub path_weight: f32,
    /// The glob that set the path weight.
    pub path_rule: Option<String>,
    /// Pinned by the user.
    pub pinned: bool,
}

impl From<&loupe_assemble::rank::ScoreBreakdown> for ScoreDto {
    fn from(s: &loupe_assemble::rank::ScoreBreakdown) -> Self {
        Self {
            score: s.score,
            lexical: s.lexical,
            vector: s.vector,
            symbol: s.symbol,
            graph: s.graph,
            path_terms: s.path_terms,
            file: s.file,
            history: s.history,
            reader: s.reader,
            primer: s.primer_boost,
            recency: s.recency_boost,
            sibling: s.sibling_lift,
            multiplier: s.role_weight * s.intent_multiplier * s.path_weight,
            path_weight: s.path_weight,
            path_rule: s.path_rule.clone(),
            pinned: s.pinned,
        }
    }
}

/// What happened to a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RowStatus {
    /// In the prompt at its default level of detail.
    Included,
    /// In the prompt, coarser than wanted because of the budget.
    Degraded,
    /// Not in the prompt.
    Dropped,
    /// Not in the prompt because a path weight of 0 hides it (the table
    /// leaves these out unless asked).
    Hidden,
    /// Not in the prompt because the user banned it.
    Banned,
}

/// One candidate in the chunk table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RowDto {
    /// Chunk id (stable within an index generation).
    #[cfg_attr(test, ts(type = "number"))]
    pub id: i64,
    /// 1-based rank by final score.
    pub rank: u32,
    /// Project-relative path.
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// The symbol the chunk defines, if any.
    pub symbol: Option<String>,
    /// The index's language name (`rust`, `python`, `tsx`, `markdown`,
    /// `text`, …): what the UI highlights its code as.
    pub language: String,
    /// Prompt section.
    pub section: String,
    /// Final score and its factors.
    pub score: ScoreDto,
    /// Level of detail rendered at (if included).
    pub lod: Option<u8>,
    /// Size in the budget's unit (0 if dropped).
    pub tokens: u32,
    /// Included, degraded, dropped or hidden.
    pub status: RowStatus,
    /// Why it was degraded, dropped, hidden or banned.
    pub reason: Option<String>,
    /// The user's pin or ban that applies to it, if any (an `@` mention in
    /// the question pins too, but shows only in `score.pinned`).
    pub marked: Option<MarkedDto>,
}

/// A section's share of the prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SectionDto {
    /// Section name (`instructions`, `retrieved_code`, ...).
    pub section: String,
    /// Size in the budget's unit.
    pub size: u32,
}

/// The budget account and the truncation report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ReportDto {
    /// The model row used.
    pub model: String,
    /// `tokens` or `chars`.
    pub unit: String,
    /// The budget asked for.
    pub budget: u32,
    /// What the prompt may use.
    pub usable: u32,
    /// Tokens kept free in the context window for the answer.
    pub answer_reserve: u32,
    /// What the prompt uses.
    pub used: u32,
    /// Something was degraded, dropped for budget, or trimmed.
    pub was_truncated: bool,
    /// Candidates not in the prompt.
    pub dropped_count: u32,
    /// Size the over-budget drops would need at their smallest.
    pub dropped_size: u32,
    /// Per-section sizes, each section measured alone.
    pub sections: Vec<SectionDto>,
    /// `used` less the sections' sum: the wrapping between pieces and the
    /// tokens pieces share or save where they join (negative when the whole
    /// prompt tokenizes into fewer tokens than its parts alone). With it
    /// the sections add up to `used`.
    #[cfg_attr(test, ts(type = "number"))]
    pub joins: i64,
    /// The assembly in one sentence: fits or truncated, items in (coarser),
    /// items left out counted by reason.
    pub verdict: String,
    /// The detected question type.
    pub question_type: String,
    /// The detected intent.
    pub intent: String,
    /// Matched categories, best first.
    pub categories: Vec<String>,
    /// Warnings to show.
    pub warnings: Vec<String>,
    /// Redactions and sanitizations applied.
    pub redactions: u32,
    /// What the search left out of the question (a pasted report's
    /// template), in words; `null` when it searched the question whole.
    pub scaffolding: Option<String>,
}

impl ReportDto {
    /// The report of `assembly`, with its verdict.
    fn new(assembly: &Assembly) -> Self {
        let r = &assembly.report;
        let sections: Vec<SectionDto> = r
            .sections
            .iter()
            .filter(|s| s.section != loupe_assemble::report::Section::Overhead)
            .map(|s| SectionDto {
                section: serde_name(&s.section),
                size: s.size,
            })
            .collect();
        let parts: i64 = sections.iter().map(|s| i64::from(s.size)).sum();
        Self {
            model: r.model.clone(),
            unit: r.unit.clone(),
            budget: r.budget,
            usable: r.usable,
            answer_reserve: r.answer_reserve,
            used: r.used,
            was_truncated: r.was_truncated,
            dropped_count: r.dropped_count,
            dropped_size: r.dropped_size,
            joins: i64::from(r.used) - parts,
            sections,
            verdict: loupe_assemble::report::Verdict::of(&assembly.items, r).describe(&r.unit),
            question_type: serde_name(&r.classification.question_type),
            intent: serde_name(&r.classification.intent),
            categories: r
                .classification
                .categories
                .iter()
                .map(|c| serde_name(&c.category))
                .collect(),
            warnings: r.warnings.clone(),
            redactions: count(r.redactions.len() as u64),
            scaffolding: r.analysis.scaffolding_note(),
        }
    }
}

/// The result of `assemble`: the table, the report and the prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AssemblyDto {
    /// One row per candidate, best score first.
    pub rows: Vec<RowDto>,
    /// Budget and truncation report.
    pub report: ReportDto,
    /// The prompt exactly as it will be copied.
    pub prompt: String,
    /// Files in the prompt that changed on disk since they were indexed
    /// (the prompt shows the indexed text).
    pub stale: Vec<String>,
    /// For an agent's call re-opened: whether this prompt is byte for byte
    /// the one the agent got; `null` otherwise.
    pub agent_match: Option<bool>,
    /// In change mode, the diff reviewed.
    pub change: Option<ChangeDto>,
    /// The secondary LLM's search terms, or why there were none; `null`
    /// when it is off.
    pub search_terms: Option<String>,
}

/// The diff a review is about, in numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ChangeDto {
    /// `unstaged`, `staged` or `BASE..HEAD`.
    pub spec: String,
    /// Files in the diff.
    pub files: u32,
    /// Hunks in the diff.
    pub hunks: u32,
    /// Lines added.
    pub added_lines: u32,
    /// Chunks pinned for their changed lines.
    pub pinned: u32,
}

impl From<loupe_engine::asking::ask::ChangeSummary> for ChangeDto {
    fn from(c: loupe_engine::asking::ask::ChangeSummary) -> Self {
        ChangeDto {
            spec: c.spec,
            files: c.files,
            hunks: c.hunks,
            added_lines: c.added_lines,
            pinned: c.pinned,
        }
    }
}

impl AssemblyDto {
    /// From an assembly, the selection its candidates went through (same
    /// order: `assembly.items[i]` is `selected.candidates[i]`; banned
    /// candidates become `banned` rows at the end) and the stale files.
    pub fn new(assembly: &Assembly, selected: &Selected, stale: Vec<String>) -> Self {
        let mut dto = Self::rows_of(assembly, &selected.candidates);
        let marked = |by: &HashMap<ChunkId, Target>, mark, id| {
            by.get(&id).map(|t| MarkedDto {
                mark,
                target: t.clone().into(),
            })
        };
        for row in &mut dto.rows {
            row.marked = marked(&selected.pinned_by, MarkDto::Pin, row.id);
        }
        let first_banned = dto.rows.len();
        dto.rows.extend(selected.banned.iter().map(|c| RowDto {
            id: c.chunk.id,
            rank: 0,
            path: c.chunk.path.clone(),
            start_line: c.chunk.start_line,
            end_line: c.chunk.end_line,
            symbol: c.chunk.symbol.clone(),
            language: c.chunk.language.clone(),
            section: String::new(),
            score: ScoreDto::unscored(),
            lod: None,
            tokens: 0,
            status: RowStatus::Banned,
            reason: Some(BANNED.into()),
            marked: marked(&selected.banned_by, MarkDto::Ban, c.chunk.id),
        }));
        for (i, row) in dto.rows.iter_mut().enumerate().skip(first_banned) {
            row.rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
        for t in &selected.missing {
            dto.report.warnings.push(format!(
                "pinned {} names nothing in the index now",
                describe(t)
            ));
        }
        for path in &stale {
            dto.report
                .warnings
                .push(format!("stale: {path} changed since it was indexed"));
        }
        dto.stale = stale;
        dto
    }

    /// From an assembly and the candidates it was made from (same order:
    /// `assembly.items[i]` is `candidates[i]`), with no pins, bans or stale files.
    pub fn rows_of(assembly: &Assembly, candidates: &[Candidate]) -> Self {
        let mut rows: Vec<RowDto> = assembly
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let (status, reason) = match &item.status {
                    ItemStatus::Included => (RowStatus::Included, None),
                    ItemStatus::Degraded { wanted } => (
                        RowStatus::Degraded,
                        Some(format!("degraded from LOD {wanted} to fit the budget")),
                    ),
                    ItemStatus::Dropped(r @ DropReason::HiddenByPathWeight { .. }) => {
                        (RowStatus::Hidden, Some(r.describe(&assembly.report.unit)))
                    }
                    ItemStatus::Dropped(r) => {
                        (RowStatus::Dropped, Some(r.describe(&assembly.report.unit)))
                    }
                };
                RowDto {
                    id: item.id,
                    rank: 0,
                    path: item.path.clone(),
                    start_line: item.start_line,
                    end_line: item.end_line,
                    symbol: candidates.get(i).and_then(|c| c.chunk.symbol.clone()),
                    language: candidates
                        .get(i)
                        .map_or_else(|| "text".to_owned(), |c| c.chunk.language.clone()),
                    section: serde_name(&item.section),
                    score: (&item.score).into(),
                    lod: item.lod,
                    tokens: item.size,
                    status,
                    reason,
                    marked: None,
                }
            })
            .collect();
        // Best first; ties keep retrieval order (the sort is stable).
        rows.sort_by(|a, b| b.score.score.total_cmp(&a.score.score));
        for (i, row) in rows.iter_mut().enumerate() {
            row.rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
        Self {
            rows,
            report: ReportDto::new(assembly),
            prompt: assembly.prompt.clone(),
            stale: Vec::new(),
            agent_match: None,
            change: None,
            search_terms: None,
        }
    }
}

/// A target in words, for warnings.
fn describe(t: &Target) -> String {
    match t {
        Target::Folder { path } => format!("{path}/"),
        Target::File { path } => path.clone(),
        Target::Chunk {
            path,
            symbol: Some(s),
            ..
        } => format!("{s} in {path}"),
        Target::Chunk {
            path, start_line, ..
        } => format!("{path}:{start_line}"),
    }
}

fn default_read_files() -> u32 {
    loupe_assemble::knobs::DEFAULT_READ_FILES as u32
}

impl ScoreDto {
    /// The score of a row that was never ranked (a banned chunk).
    fn unscored() -> Self {
        Self {
            score: 0.0,
            lexical: 0.0,
            vector: 0.0,
            symbol: 0.0,
            graph: 0.0,
            path_terms: 0.0,
            file: 0.0,
            history: 0.0,
            reader: 0.0,
            primer: 0.0,
            recency: 0.0,
            sibling: 0.0,
            multiplier: 0.0,
            path_weight: 0.0,
            path_rule: None,
            pinned: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_rs::TS;

    /// Where the generated declarations live, relative to the repository root.
    const GENERATED: &str = "ui/src/lib/generated/dto.ts";

    /// Every DTO's TypeScript declaration, in dependency order, as one file.
    fn declarations() -> String {
        let cfg = ts_rs::Config::new();
        let decls = [
            ErrorCode::decl(&cfg),
            ErrorDto::decl(&cfg),
            IndexEvent::decl(&cfg),
            StatusDto::decl(&cfg),
            SharedDto::decl(&cfg),
            OpenedDto::decl(&cfg),
            DiagnosticDto::decl(&cfg),
            EncodingDto::decl(&cfg),
            ModelDto::decl(&cfg),
            BudgetUnit::decl(&cfg),
            FormatDto::decl(&cfg),
            PathWeightDto::decl(&cfg),
            TogglesDto::decl(&cfg),
            IntentDto::decl(&cfg),
            QuestionTypeDto::decl(&cfg),
            KnobsDto::decl(&cfg),
            ScoreDto::decl(&cfg),
            RowStatus::decl(&cfg),
            TargetDto::decl(&cfg),
            MarkDto::decl(&cfg),
            MarkedDto::decl(&cfg),
            SelectionDto::decl(&cfg),
            RowDto::decl(&cfg),
            SectionDto::decl(&cfg),
            ReportDto::decl(&cfg),
            ChangeDto::decl(&cfg),
            AssemblyDto::decl(&cfg),
            ProjectSettingsDto::decl(&cfg),
            PresetDto::decl(&cfg),
            RecentDto::decl(&cfg),
            ShownDto::decl(&cfg),
            ChunkDetailDto::decl(&cfg),
            CompletionDto::decl(&cfg),
            WatchEventDto::decl(&cfg),
            AgentRequestDto::decl(&cfg),
            AgentRequestsDto::decl(&cfg),
            AgentItemDto::decl(&cfg),
            AgentRequestDetailDto::decl(&cfg),
            MapViewDto::decl(&cfg),
            GoldenItemDto::decl(&cfg),
            GoldenQuestionDto::decl(&cfg),
            GoldenRunDto::decl(&cfg),
            MapStatusDto::decl(&cfg),
            MapCountsDto::decl(&cfg),
            MapNodeDto::decl(&cfg),
            ExpanderDto::decl(&cfg),
            ExpanderInputDto::decl(&cfg),
        ];
        let mut out =
            String::from("// Generated from src-tauri/src/dto.rs by `make types`. Do not edit.\n");
        for d in decls {
            out.push('\n');
            out.push_str("export ");
            out.push_str(&d);
            out.push('\n');
        }
        out.push_str(&knob_limits());
        out
    }

    /// The core's knob ranges ([`loupe_assemble::knobs::limits`]) as a
    /// TypeScript constant: the app's controls take their bounds from it.
    fn knob_limits() -> String {
        use loupe_assemble::knobs::limits::*;
        let ranges = [
            ("path_weight", PATH_WEIGHT),
            ("primer_boost", PRIMER_BOOST),
            ("sibling_share", SIBLING_SHARE),
            ("recency_weight", RECENCY_WEIGHT),
            ("recency_half_life_days", RECENCY_HALF_LIFE_DAYS),
            ("min_score", MIN_SCORE),
            ("diversity", DIVERSITY),
            ("safety_margin", SAFETY_MARGIN),
        ];
        let mut out = String::from(
            "\n/** Each knob's range, from the core's `knobs::limits`. */\nexport const KNOB_LIMITS = {\n",
        );
        for (name, limit) in ranges {
            out.push_str(&format!(
                "  {name}: {{ min: {}, max: {} }},\n",
                limit.min, limit.max
            ));
        }
        out.push_str(&format!(
            "  min_budget: {MIN_BUDGET},\n  max_k: {MAX_K},\n  max_read_files: {MAX_READ_FILES},\n}} as const;\n"
        ));
        out
    }

    /// The checked-in TS types match the Rust DTOs. `LOUPE_UPDATE_TYPES=1`
    /// (what `make types` sets) rewrites them instead.
    #[test]
    fn generated_typescript_is_up_to_date() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GENERATED);
        let want = declarations();
        if std::env::var_os("LOUPE_UPDATE_TYPES").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{GENERATED} is out of date: run `make types` and commit the result"
        );
    }

    #[test]
    fn knobs_round_trip_through_the_dto_with_defaults_elsewhere() {
        let dto = KnobsDto {
            path_weights: vec![
                PathWeightDto {
                    glob: " tests/** ".into(),
                    weight: 0.0,
                },
                PathWeightDto {
                    glob: "".into(),
                    weight: 2.0,
                },
                PathWeightDto {
                    glob: "src/**".into(),
                    weight: 7.0,
                },
            ],
            budget: Some(900),
            budget_unit: BudgetUnit::Chars,
            ..KnobsDto::default()
        };
        let knobs: Knobs = dto.into();
        assert_eq!(knobs.budget, Some(Budget::Chars(900)));
        let rules: Vec<(&str, f32)> = knobs
            .path_weights
            .iter()
            .map(|w| (w.glob.as_str(), w.weight))
            .collect();
        assert_eq!(rules, [("tests/**", 0.0), ("src/**", 2.0)]);
        assert_eq!(knobs.primers, Knobs::default().primers);
    }

    #[test]
    fn engine_errors_map_to_codes() {
        let e: ErrorDto = loupe_engine::Error::Cancelled.into();
        assert_eq!(e.code, ErrorCode::Cancelled);
        let e: ErrorDto = loupe_engine::Error::Request("the question is empty".into()).into();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert_eq!(e.message, "the question is empty");
    }
}
