//! The request side of assembly: [`Knobs`] (every user-facing setting),
//! [`AssembleRequest`] (the question plus knobs) and the result types
//! [`Assembly`], [`ItemRow`] and [`Report`].
//!
//! Plain serializable data with documented defaults; no behaviour beyond
//! `Default`. The pipeline that reads them is [`crate::assemble()`].

use serde::{Deserialize, Serialize};

mod patch;
pub use patch::{
    KnobProblem, KnobsPatch, TogglesPatch, check_path_weight, limits, set_path_weight,
};

use crate::classify::{Classification, Intent, QueryAnalysis, QuestionType};
use crate::fit::{FitReport, Message};
use crate::guard::DEFAULT_USER_MESSAGE_CAP;
use crate::model::ChunkId;
use crate::models::ModelSpec;
use crate::pack::PinnedOverflow;
use crate::rank::{self, PathWeight, Ranker, RoleWeights, ScoreBreakdown};
use crate::render::{Format, Toggles};
use crate::report::{ItemStatus, Redaction, Section, SectionSize};

/// SourcePrep's default number of automatic items ("Chunks (k): Default: 20"),
/// offered as a preset. Not the default: `loupe eval` on the flask dev set
/// showed k = 20 leaving most of a 27k budget unused (6.2k tokens packed)
/// and packing all gold files for 72.7% of questions, against 92.0% when
/// the budget alone decides (EVAL.md). The budget is the user's limit; k is
/// an optional cap on top of it.
pub const SOURCEPREP_K: usize = 20;
/// Default tokens kept free in the context window for the answer (the
/// common `max_tokens` of 4,096 for chat completions).
pub const DEFAULT_ANSWER_RESERVE: u32 = 4_096;
/// Default recency half-life in days: a file edited a month ago gets half the boost.
pub const DEFAULT_RECENCY_HALF_LIFE_DAYS: f32 = 30.0;
/// Default recency boost of a file edited just now (SourcePrep: "slight boost").
pub const DEFAULT_RECENCY_WEIGHT: f32 = 0.05;
/// Default number of files the re-ranker reads per question, best first
/// (0: off): the files its blend was fitted with on the validation
/// repositories. On: on the dev sets it raises mean acc@5 significantly
/// with no set down (EVAL.md, "The re-ranker").
pub const DEFAULT_READ_FILES: usize = SUGGESTED_READ_FILES;
/// The files read that the shipped model's blend was fitted with
/// (`tools/train/fit_blend.py`, within its latency bound): what the app's
/// control and `read_files = N` are measured at.
pub const SUGGESTED_READ_FILES: usize = 10;
/// Default word pieces the re-ranker reads per file, the question's
/// included: the window its model was trained with.
pub const DEFAULT_READ_WINDOW: usize = 256;
/// Default level of detail by score relative to the best automatic item:
/// (at least this share of the top score, level). Below the last: LOD 5.
pub const LOD_BANDS: [(f32, u8); 5] = [(0.8, 0), (0.6, 1), (0.45, 2), (0.3, 3), (0.15, 4)];

/// A budget in tokens (exact, the model's tokenizer) or characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// Tokens.
    Tokens(u32),
    /// Characters (SourcePrep's `max_chars`).
    Chars(u32),
}

/// Every user-facing setting of assembly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Knobs {
    /// Model name; picks the tokenizer, context window and default budget.
    pub model: String,
    /// User rows of the model table, checked before the built-in rows.
    pub models: Vec<ModelSpec>,
    /// The budget; `None` uses the model's default.
    pub budget: Option<Budget>,
    /// Path weight rules (most specific glob wins; 0 hides).
    pub path_weights: Vec<PathWeight>,
    /// Primer file names or globs.
    pub primers: Vec<String>,
    /// Added to primer files' scores.
    pub primer_boost: f32,
    /// The other chunks of the leading files are raised to this share of
    /// their file's best score (0 turns it off; [`rank::lift_siblings`]).
    pub sibling_share: f32,
    /// Recency half-life in days (≤ 0: off).
    pub recency_half_life_days: f32,
    /// Recency boost of a file modified now.
    pub recency_weight: f32,
    /// Files the re-ranker reads with the question, best first by the
    /// ranking without it (0: the re-ranker is off).
    pub read_files: usize,
    /// Word pieces the re-ranker reads per file, the question's included.
    pub read_window: usize,
    /// Base weight per role.
    pub role_weights: RoleWeights,
    /// The model that turns signals into relevance: the hand-set formula
    /// by default, or the learned model (TRAINING.md).
    pub ranker: Ranker,
    /// Overrides the classified intent.
    pub intent: Option<Intent>,
    /// Automatic items kept at most; `None` keeps all.
    pub k: Option<usize>,
    /// Automatic items below this score are dropped.
    pub min_score: Option<f32>,
    /// MMR λ in (0, 1); `None` turns diversity off.
    pub diversity: Option<f32>,
    /// Default level of detail by score band; off means full detail wanted for all.
    pub lod: bool,
    /// Tokens kept free in the context window for the answer.
    pub answer_reserve: u32,
    /// Output format.
    pub format: Format,
    /// Output toggles.
    pub toggles: Toggles,
    /// NFKC + invisible stripping + injection redaction in retrieved text.
    pub sanitize: bool,
    /// Secret redaction everywhere.
    pub redact_secrets: bool,
    /// Cap on the user message in characters.
    pub user_message_cap: usize,
    /// Add the enclosing definition's header to methods whose parent is not included.
    pub glue: bool,
    /// The user's own instruction preamble per question type; a type
    /// without one gets the built-in ([`crate::classify::instructions`]).
    pub instructions: std::collections::BTreeMap<QuestionType, String>,
    /// The current time, seconds since the Unix epoch (for recency).
    pub now: i64,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            model: "gpt-4o".into(),
            models: Vec::new(),
            budget: None,
            path_weights: Vec::new(),
            primers: rank::DEFAULT_PRIMERS
                .iter()
                .map(|p| p.to_string())
                .collect(),
            primer_boost: rank::DEFAULT_PRIMER_BOOST,
            sibling_share: rank::SIBLING_SHARE,
            recency_half_life_days: DEFAULT_RECENCY_HALF_LIFE_DAYS,
            recency_weight: DEFAULT_RECENCY_WEIGHT,
            read_files: DEFAULT_READ_FILES,
            read_window: DEFAULT_READ_WINDOW,
            role_weights: RoleWeights::default(),
            ranker: Ranker::default(),
            intent: None,
            k: None,
            min_score: None,
            diversity: None,
            lod: true,
            answer_reserve: DEFAULT_ANSWER_RESERVE,
            format: Format::Xml,
            toggles: Toggles::default(),
            sanitize: true,
            redact_secrets: true,
            user_message_cap: DEFAULT_USER_MESSAGE_CAP,
            glue: true,
            instructions: std::collections::BTreeMap::new(),
            now: 0,
        }
    }
}

/// The question and everything assembly needs besides the candidates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AssembleRequest {
    /// The user's question, verbatim.
    pub question: String,
    /// Search-term analysis; `None` runs [`crate::classify::analyze`].
    pub analysis: Option<QueryAnalysis>,
    /// Classification; `None` runs [`crate::classify::classify`].
    pub classification: Option<Classification>,
    /// Memory or team notes, in the Notes section.
    pub notes: Vec<String>,
    /// Earlier turns of the conversation (for fitting).
    pub history: Vec<Message>,
    /// The knobs.
    pub knobs: Knobs,
}

/// One row per candidate: what happened to it and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemRow {
    /// Chunk id.
    pub id: ChunkId,
    /// Path.
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Section it belongs to.
    pub section: Section,
    /// Final score with every factor.
    pub score: ScoreBreakdown,
    /// Level of detail it was rendered at (if included).
    pub lod: Option<u8>,
    /// Level of detail it would have had with room to spare.
    pub wanted_lod: u8,
    /// Size of its block in the budget's unit (0 if dropped).
    pub size: u32,
    /// Included, degraded or dropped (with reason).
    pub status: ItemStatus,
    /// Set when it was rendered inside another item's block (merged ranges).
    pub merged_into: Option<ChunkId>,
}

/// The budget account and everything worth warning about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The resolved model row.
    pub model: String,
    /// `tokens` or `chars`.
    pub unit: String,
    /// The budget asked for.
    pub budget: u32,
    /// The answer reserve applied.
    pub answer_reserve: u32,
    /// What the prompt may use after the reserve and the tokenizer margin.
    pub usable: u32,
    /// What the prompt uses (measured on the final text).
    pub used: u32,
    /// Per-section sizes.
    pub sections: Vec<SectionSize>,
    /// Something was degraded, dropped for budget, or trimmed.
    pub was_truncated: bool,
    /// Candidates not in the prompt.
    pub dropped_count: u32,
    /// Size the over-budget drops would need at their smallest.
    pub dropped_size: u32,
    /// Set when pinned items did not all fit at full detail.
    pub pinned_overflow: Option<PinnedOverflow>,
    /// What the classifier decided (after overrides).
    pub classification: Classification,
    /// The search-term analysis used.
    pub analysis: QueryAnalysis,
    /// What fitting did to the messages.
    pub fit: FitReport,
    /// Human-readable warnings.
    pub warnings: Vec<String>,
    /// Every redaction and sanitization.
    pub redactions: Vec<Redaction>,
}

/// The result: the prompt, the fitted messages, a row per candidate, the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Assembly {
    /// The rendered prompt, in assembly order.
    pub prompt: String,
    /// System (instructions + context), history, user (question), fitted.
    pub messages: Vec<Message>,
    /// One row per candidate, in input order.
    pub items: Vec<ItemRow>,
    /// The report.
    pub report: Report,
}
