//! The report types: what happened to every candidate and to the budget.
//!
//! Plain data, shared by the stages that make decisions ([`crate::rank`],
//! [`crate::pack`], [`crate::guard`]) and by [`crate::Assembly`]. Nothing
//! here decides anything.

use serde::{Deserialize, Serialize};

use crate::model::ChunkId;

/// Why a candidate is not in the prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum DropReason {
    /// Not even its smallest rendering fit in what was left of the budget.
    OverBudget {
        /// Size of its smallest rendering, in the budget's unit.
        needed: u32,
    },
    /// Pinned, but the pinned items alone exceed the budget.
    PinnedOverBudget {
        /// How far the pinned items at their smallest overshoot the budget.
        over_by: u32,
    },
    /// Its final score is under the minimum score knob.
    BelowMinScore,
    /// The same text (or a range inside it) is already included.
    Duplicate {
        /// The chunk it duplicates.
        of: ChunkId,
    },
    /// A path weight of 0 matched it.
    HiddenByPathWeight {
        /// The glob that hid it.
        glob: String,
    },
    /// Maximal-marginal-relevance selection preferred less similar items.
    Diversity,
    /// More candidates than `k` passed the filters; it ranked below the cut.
    BeyondK,
}

/// What happened to one candidate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum ItemStatus {
    /// In the prompt at (or better than) its default level of detail.
    Included,
    /// In the prompt, at a coarser level than its default because of the budget.
    Degraded {
        /// The level of detail it would have had with room to spare.
        wanted: u8,
    },
    /// Not in the prompt.
    Dropped(DropReason),
}

impl ItemStatus {
    /// Whether the item is in the prompt.
    pub fn is_in(&self) -> bool {
        !matches!(self, ItemStatus::Dropped(_))
    }

    /// The status in words (`included`, `degraded (wanted LOD 1)`,
    /// `dropped: ranked below the k cut`); `unit` names the budget's unit.
    pub fn describe(&self, unit: &str) -> String {
        match self {
            ItemStatus::Included => "included".to_owned(),
            ItemStatus::Degraded { wanted } => format!("degraded (wanted LOD {wanted})"),
            ItemStatus::Dropped(r) => format!("dropped: {}", r.describe(unit)),
        }
    }
}

impl DropReason {
    /// Why the item is not in the prompt, in words: the one wording the
    /// CLI, the MCP server and the app show. `unit` names the budget's unit
    /// (`tokens`, `chars`).
    pub fn describe(&self, unit: &str) -> String {
        match self {
            DropReason::OverBudget { needed } => {
                format!("over budget (needs {needed} {unit} even at its smallest)")
            }
            DropReason::PinnedOverBudget { over_by } => {
                format!("pinned items overshoot the budget by {over_by} {unit}")
            }
            DropReason::BelowMinScore => "below the minimum score".to_owned(),
            DropReason::Duplicate { of } => format!("duplicate of chunk {of}"),
            DropReason::HiddenByPathWeight { glob } => format!("hidden by path weight {glob}"),
            DropReason::Diversity => "diversity (MMR) preferred other items".to_owned(),
            DropReason::BeyondK => "ranked below the k cut".to_owned(),
        }
    }
}

/// The sections of a prompt, in the seed's assembly order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// The question-type preamble.
    Instructions,
    /// Primer files (architecture context).
    Primers,
    /// Memory and team notes.
    Notes,
    /// Items the user pinned.
    Pinned,
    /// Retrieved code (and config, tests, other).
    RetrievedCode,
    /// Retrieved documentation.
    RetrievedDocs,
    /// The user's question.
    Question,
    /// Format scaffolding: wrappers, headers, separators.
    Overhead,
}

/// Size of one section of the prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionSize {
    /// Which section.
    pub section: Section,
    /// Its size, in the budget's unit.
    pub size: u32,
}

/// What kind of text a redaction removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedactionKind {
    /// A prompt-injection phrase in retrieved text.
    Injection,
    /// A secret (API key, private key, token, credential).
    Secret,
    /// Invisible or bidirectional-control characters.
    Invisible,
    /// The user message was cut at the cap.
    UserMessageCap,
}

/// One thing the guard removed or changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redaction {
    /// What kind.
    pub kind: RedactionKind,
    /// The rule that fired (`aws_access_key`, `ignore_previous`, ...).
    pub rule: String,
    /// Where: a chunk path, `question`, `notes[i]`, or a message role.
    pub location: String,
    /// 1-based line inside that text, when known.
    pub line: Option<u32>,
    /// How many characters were removed or replaced.
    pub chars: u32,
}
