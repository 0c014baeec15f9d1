//! Ablations: turn one signal or stage off to measure what it buys.
//!
//! Retrieval signals are removed from the candidates after retrieval (the
//! signal is cleared, and a candidate that no other source found is
//! dropped), so the rest of the pipeline runs unchanged. One caveat: the
//! graph's seeds are picked inside retrieval from all signals, so removing a
//! signal does not change which chunks seeded the graph hop. Ranking and
//! packing stages are turned off through [`Knobs`].
//!
//! | name | effect |
//! |---|---|
//! | `bm25` | BM25 ranks cleared; chunks only BM25 found are dropped |
//! | `files` | whole-file BM25 ranks cleared; chunks only it brought are dropped |
//! | `vector` | vector ranks cleared (same as `--embedder none`, but keeps the index) |
//! | `symbols` | symbol-name matches (exact and fuzzy) cleared |
//! | `paths` | paths mentioned in the question cleared |
//! | `graph` | graph distances cleared (seeds and one-hop neighbours) |
//! | `primers` | no primer files (`Knobs.primers` empty; primer flags cleared) |
//! | `recency` | recency boost 0 |
//! | `weights` | role weights all 1 and intent forced to `Default` (no role × intent multipliers) |
//! | `lod` | `Knobs.lod = false`: every item wants full detail |
//! | `k` | no cap on the number of automatic items (`Knobs.k = None`) |
//! | `learned` | the hand-set formula instead of the learned ranking model (`Knobs.ranker`) |
//! | `reader` | no re-ranking: today's ranking alone (`Knobs.read_files = 0`) |

use loupe_assemble::Candidate;
use loupe_assemble::Knobs;
use loupe_assemble::classify::Intent;
use loupe_assemble::rank::RoleWeights;
use std::collections::BTreeSet;

/// Every known ablation name.
pub const NAMES: &[&str] = &[
    "bm25", "files", "history", "vector", "symbols", "paths", "graph", "primers", "recency",
    "weights", "lod", "k", "learned", "reader",
];

/// A name that is not in [`NAMES`].
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown ablation {0:?} (known: {known})", known = NAMES.join(", "))]
pub struct UnknownAblation(pub String);

/// A set of ablations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ablations(BTreeSet<&'static str>);

impl Ablations {
    /// Parses names given as a list of comma-separated lists.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<Self, UnknownAblation> {
        let mut set = BTreeSet::new();
        for spec in specs {
            for name in spec
                .as_ref()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                let known = NAMES
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(name))
                    .ok_or_else(|| UnknownAblation(name.to_owned()))?;
                set.insert(*known);
            }
        }
        Ok(Self(set))
    }

    /// Whether `name` is ablated.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// The names, sorted (for the record).
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().copied().collect()
    }

    /// Turns off knob-level stages.
    pub fn apply_knobs(&self, knobs: &mut Knobs) {
        if self.has("primers") {
            knobs.primers.clear();
        }
        if self.has("recency") {
            knobs.recency_weight = 0.0;
        }
        if self.has("weights") {
            knobs.role_weights = RoleWeights {
                code: 1.0,
                docs: 1.0,
                tests: 1.0,
                config: 1.0,
                other: 1.0,
            };
            knobs.intent = Some(Intent::Default);
        }
        if self.has("lod") {
            knobs.lod = false;
        }
        if self.has("k") {
            knobs.k = None;
        }
        if self.has("learned") {
            knobs.ranker = loupe_assemble::rank::Ranker::Formula;
        }
        if self.has("reader") {
            knobs.read_files = 0;
        }
    }

    /// Clears ablated signals and drops candidates left without evidence.
    pub fn apply_candidates(&self, candidates: &mut Vec<Candidate>) {
        if self
            .0
            .iter()
            .all(|n| ["recency", "weights", "lod", "k", "learned", "reader"].contains(n))
        {
            return;
        }
        for c in candidates.iter_mut() {
            let s = &mut c.signals;
            if self.has("bm25") {
                s.bm25 = None;
                s.bm25_rank = None;
            }
            if self.has("files") {
                s.file_rank = None;
            }
            if self.has("history") {
                s.history_rank = None;
            }
            if self.has("vector") {
                s.vector = None;
                s.vector_rank = None;
            }
            if self.has("symbols") {
                s.symbol_hits = 0;
                s.symbol_exact = false;
            }
            if self.has("paths") {
                s.path_hits = 0;
            }
            if self.has("graph") {
                s.graph_distance = None;
            }
            if self.has("primers") {
                s.primer = false;
            }
        }
        candidates.retain(|c| c.signals.has_evidence());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_lists_and_rejects_unknown_names() {
        let a = Ablations::parse(&["graph,Symbols", "lod"]).unwrap_or_default();
        assert_eq!(a.names(), vec!["graph", "lod", "symbols"]);
        assert!(Ablations::parse(&["nope"]).is_err());
    }

    #[test]
    fn knobs_change_only_for_named_stages() {
        let mut k = Knobs::default();
        Ablations::default().apply_knobs(&mut k);
        assert_eq!(k, Knobs::default());
        let a = Ablations::parse(&["weights,k,lod"]).unwrap_or_default();
        a.apply_knobs(&mut k);
        assert_eq!((k.k, k.lod, k.intent), (None, false, Some(Intent::Default)));
        Ablations::parse(&["reader"])
            .unwrap_or_default()
            .apply_knobs(&mut k);
        assert_eq!(k.read_files, 0);
    }
}
