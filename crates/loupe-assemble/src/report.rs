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

/// Why a banned item is not in the prompt: the one wording of the app's
/// row and the MCP server's `explain` (a ban is the caller's selection, not
/// a [`DropReason`]: banned chunks never reach ranking).
pub const BANNED: &str = "banned: kept out of the prompt";

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

impl DropReason {
    /// The reason without its particulars (sizes, globs, ids): what the
    /// verdict counts drops by.
    pub fn kind(&self) -> &'static str {
        match self {
            DropReason::OverBudget { .. } => "over budget",
            DropReason::PinnedOverBudget { .. } => "pinned over budget",
            DropReason::BelowMinScore => "below the minimum score",
            DropReason::Duplicate { .. } => "duplicates",
            DropReason::HiddenByPathWeight { .. } => "hidden by a path weight",
            DropReason::Diversity => "set aside for diversity",
            DropReason::BeyondK => "below the k cut",
        }
    }
}

/// An assembly in counts: fits or truncated, how many items are in the
/// prompt (how many of them coarser), and how many are out, by reason. The
/// one verdict line the app, the CLI and the MCP server show.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Something was degraded, dropped for room, or trimmed.
    pub truncated: bool,
    /// Items in the prompt (coarser ones included).
    pub included: u32,
    /// Of those, the ones coarser than their default level of detail.
    pub degraded: u32,
    /// Items out of the prompt per [`DropReason::kind`], most first.
    pub left_out: Vec<(String, u32)>,
    /// What the over-budget items would need at their smallest.
    pub more_needed: u32,
}

impl Verdict {
    /// The verdict on `items` under `report`.
    pub fn of(items: &[crate::ItemRow], report: &crate::Report) -> Self {
        let mut v = Verdict {
            truncated: report.was_truncated,
            more_needed: report.dropped_size,
            ..Verdict::default()
        };
        let mut by_kind: std::collections::BTreeMap<&'static str, u32> = Default::default();
        for item in items {
            match &item.status {
                ItemStatus::Included => v.included += 1,
                ItemStatus::Degraded { .. } => {
                    v.included += 1;
                    v.degraded += 1;
                }
                ItemStatus::Dropped(r) => *by_kind.entry(r.kind()).or_default() += 1,
            }
        }
        v.left_out = by_kind
            .into_iter()
            .map(|(k, n)| (k.to_owned(), n))
            .collect();
        // Most first; ties by name (the map's order, kept by a stable sort).
        v.left_out.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        v
    }

    /// Items out of the prompt.
    pub fn left_out_total(&self) -> u32 {
        self.left_out.iter().map(|(_, n)| n).sum()
    }

    /// The verdict in one sentence ("Truncated: 8 in the prompt (3
    /// coarser); 25 left out: 20 over budget, 5 below the k cut. The
    /// over-budget ones need 1234 tokens more.").
    pub fn describe(&self, unit: &str) -> String {
        let mut out = String::from(if self.truncated {
            "Truncated: "
        } else {
            "Fits: "
        });
        out.push_str(&format!("{} in the prompt", self.included));
        if self.degraded > 0 {
            out.push_str(&format!(" ({} coarser)", self.degraded));
        }
        let total = self.left_out_total();
        if total == 0 {
            out.push_str("; nothing left out.");
        } else {
            let parts: Vec<String> = self
                .left_out
                .iter()
                .map(|(kind, n)| format!("{n} {kind}"))
                .collect();
            out.push_str(&format!("; {total} left out: {}.", parts.join(", ")));
        }
        if self.more_needed > 0 {
            out.push_str(&format!(
                " The over-budget ones need {} {unit} more.",
                self.more_needed
            ));
        }
        out
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ItemRow, Report};

    fn row(status: ItemStatus) -> ItemRow {
        ItemRow {
            id: 1,
            path: "a.rs".into(),
            start_line: 1,
            end_line: 2,
            section: Section::RetrievedCode,
            score: Default::default(),
            lod: None,
            wanted_lod: 0,
            size: 0,
            status,
            merged_into: None,
        }
    }

    #[test]
    fn the_verdict_counts_items_in_and_out_by_reason_kind() {
        let items = vec![
            row(ItemStatus::Included),
            row(ItemStatus::Degraded { wanted: 0 }),
            row(ItemStatus::Dropped(DropReason::OverBudget { needed: 40 })),
            row(ItemStatus::Dropped(DropReason::OverBudget { needed: 90 })),
            row(ItemStatus::Dropped(DropReason::BeyondK)),
        ];
        let report = Report {
            was_truncated: true,
            dropped_size: 130,
            ..Report::default()
        };
        let v = Verdict::of(&items, &report);
        assert_eq!((v.included, v.degraded, v.left_out_total()), (2, 1, 3));
        assert_eq!(
            v.describe("tokens"),
            "Truncated: 2 in the prompt (1 coarser); 3 left out: 2 over budget, 1 below the k cut. \
             The over-budget ones need 130 tokens more."
        );
        let fits = Verdict::of(&items[..1], &Report::default());
        assert_eq!(
            fits.describe("tokens"),
            "Fits: 1 in the prompt; nothing left out."
        );
    }
}
