//! The learned ranking model: relevance as a weighted sum of evidence
//! features, with weights trained on real fixes mined from public
//! repositories (`tools/train/`, TRAINING.md) instead of set by hand.
//!
//! The hand-set formula in [`crate::rank`] is itself a linear model over a
//! few transforms of the retrieval signals (`0.4 × rrf(bm25 rank) + 0.3 ×
//! file-rank decay + …`). This module widens the transforms (each signal as
//! a reciprocal-rank-fusion term, a sharp `1/rank` term and, where the
//! signal has one, its score; and the evidence the question's other
//! candidates give the chunk's file) and takes the weights from a trained
//! model file. Every weight is ≥ 0 and every feature is ≥ 0 and 0 when its signal
//! is absent, so each feature's contribution `weight × value` is a
//! non-negative share of the relevance, and the groups add up to it
//! exactly: the score breakdown the app draws stays a true explanation.
//!
//! *Invariant:* the feature list here is the one definition. The training
//! pipeline reads feature vectors that `loupe eval --features` computes
//! with [`features`]; it never recomputes them, so training and inference
//! cannot drift apart. A model file names its features, and one whose names
//! differ from [`FEATURES`] is refused.
//!
//! This module does not apply role, intent or path weights, boosts or caps:
//! [`crate::rank::score`] does, the same way for both models.

use serde::{Deserialize, Serialize};

use crate::model::{Candidate, Signals};

/// Which part of the score breakdown a feature's contribution is shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Chunk BM25.
    Lexical,
    /// Vector similarity.
    Vector,
    /// Question identifiers the chunk defines.
    Symbol,
    /// Symbol-graph proximity.
    Graph,
    /// Question terms in the path.
    PathTerms,
    /// Whole-file BM25.
    File,
    /// Past commits like the question.
    History,
}

/// Number of features.
pub const N_FEATURES: usize = 21;

/// The features, in model order: name and breakdown group.
pub const FEATURES: [(&str, Group); N_FEATURES] = [
    ("bm25_rrf", Group::Lexical),
    ("bm25_inv_rank", Group::Lexical),
    ("bm25_rel_score", Group::Lexical),
    ("vector_rrf", Group::Vector),
    ("vector_similarity", Group::Vector),
    ("symbol_hits", Group::Symbol),
    ("symbol_exact", Group::Symbol),
    ("graph_seed", Group::Graph),
    ("graph_hop", Group::Graph),
    ("path_hits", Group::PathTerms),
    ("path_any", Group::PathTerms),
    ("file_decay", Group::File),
    ("file_inv_rank", Group::File),
    ("history_decay", Group::History),
    ("history_inv_rank", Group::History),
    ("file_chunks", Group::File),
    ("file_bm25_max", Group::File),
    ("file_bm25_hits", Group::File),
    ("file_lead", Group::File),
    ("lead_file_decay", Group::File),
    ("lead_file_bm25_max", Group::File),
];

/// Candidates of one file counted at most by `file_chunks`.
const MAX_FILE_CHUNKS: f32 = 8.0;
/// BM25-hit chunks of one file counted at most by `file_bm25_hits`.
const MAX_FILE_BM25_HITS: f32 = 5.0;

/// Symbol and path hits counted at most (as in the hand formula).
const MAX_HITS: u32 = 2;

/// What the candidates of one file have in common for a question.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FileStats {
    /// Candidates from the file.
    pub chunks: u32,
    /// Of those, how many BM25 found.
    pub bm25_hits: u32,
    /// The best relative BM25 score among them (see `bm25_rel_score`).
    pub bm25_rel_max: f32,
}

/// What a feature needs to know about the whole candidate set of one
/// question: BM25 scores are only comparable within one query, and a file
/// whose evidence is spread over several chunks shows it only here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryStats {
    /// The largest chunk BM25 score among the candidates (0 if none).
    pub max_bm25: f32,
    /// Per path.
    pub files: std::collections::HashMap<String, FileStats>,
    /// Each candidate's place among its file's candidates by the chunk's
    /// own evidence ([`lead_order`]), 1 for the file's lead chunk; keyed by
    /// chunk id.
    pub within_file: std::collections::HashMap<crate::model::ChunkId, u32>,
}

/// The order of one file's candidates by the chunk's own evidence: BM25
/// score, then symbol hits (exact first), then graph distance, then
/// position in the file. The file-level features say how strong a file is;
/// this says which of its chunks carries it. Without it every chunk of a
/// strong file scores alike and a budget fills with one file's chunks
/// (the learned ranker's prompts held 24 files where the formula's held 37:
/// EVAL.md, "What was tried" → Packing, `1138f91`).
fn lead_order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    let (x, y) = (&a.signals, &b.signals);
    let bm25 = |s: &Signals| s.bm25.filter(|v| v.is_finite()).unwrap_or(0.0);
    bm25(y)
        .total_cmp(&bm25(x))
        .then(
            y.symbol_hits
                .min(MAX_HITS)
                .cmp(&x.symbol_hits.min(MAX_HITS)),
        )
        .then(y.symbol_exact.cmp(&x.symbol_exact))
        .then(
            x.graph_distance
                .unwrap_or(u8::MAX)
                .cmp(&y.graph_distance.unwrap_or(u8::MAX)),
        )
        .then(a.chunk.start_line.cmp(&b.chunk.start_line))
        .then(a.chunk.id.cmp(&b.chunk.id))
}

impl QueryStats {
    /// The statistics of one question's candidates.
    pub fn of(candidates: &[Candidate]) -> QueryStats {
        let max_bm25 = candidates
            .iter()
            .filter_map(|c| c.signals.bm25)
            .filter(|s| s.is_finite())
            .fold(0.0f32, f32::max);
        let mut stats = QueryStats {
            max_bm25,
            ..QueryStats::default()
        };
        let mut by_file: std::collections::HashMap<&str, Vec<&Candidate>> =
            std::collections::HashMap::new();
        for c in candidates {
            let rel = stats.bm25_rel(&c.signals);
            let f = stats.files.entry(c.chunk.path.clone()).or_default();
            f.chunks += 1;
            f.bm25_hits += u32::from(c.signals.bm25_rank.is_some());
            f.bm25_rel_max = f.bm25_rel_max.max(rel);
            by_file.entry(&c.chunk.path).or_default().push(c);
        }
        for mut chunks in by_file.into_values() {
            chunks.sort_by(|a, b| lead_order(a, b));
            for (place, c) in (1u32..).zip(chunks) {
                stats.within_file.entry(c.chunk.id).or_insert(place);
            }
        }
        stats
    }

    /// A chunk's BM25 score relative to the question's best, in 0..=1.
    fn bm25_rel(&self, s: &Signals) -> f32 {
        match (s.bm25, self.max_bm25 > 0.0) {
            (Some(score), true) if score.is_finite() => (score / self.max_bm25).clamp(0.0, 1.0),
            _ => 0.0,
        }
    }
}

/// Reciprocal-rank-fusion constant (Cormack et al. 2009, the usual 60).
pub const RRF_K: f32 = 60.0;
/// How fast file-rank evidence decays: rank 1 gets all of it, rank
/// `1 + FILE_RANK_K` half.
pub const FILE_RANK_K: f32 = 10.0;

/// Reciprocal-rank-fusion term, 1 at rank 1 (the hand formula's `rrf`).
pub fn rrf(rank: Option<u32>) -> f32 {
    match rank {
        Some(rank) if rank > 0 => (RRF_K + 1.0) / (RRF_K + rank as f32),
        _ => 0.0,
    }
}

/// The file-rank decay, 1 at rank 1 and ½ at rank `1 + FILE_RANK_K`.
pub fn decay(rank: Option<u32>) -> f32 {
    match rank {
        Some(rank) if rank > 0 => FILE_RANK_K / (FILE_RANK_K + (rank - 1) as f32),
        _ => 0.0,
    }
}

fn inv(rank: Option<u32>) -> f32 {
    match rank {
        Some(rank) if rank > 0 => 1.0 / rank as f32,
        _ => 0.0,
    }
}

fn flag(b: bool) -> f32 {
    if b { 1.0 } else { 0.0 }
}

/// The feature vector of one candidate, given its question's statistics.
pub fn features(c: &Candidate, stats: &QueryStats) -> [f32; N_FEATURES] {
    let s = &c.signals;
    let bm25_rel = stats.bm25_rel(s);
    let file = stats.files.get(&c.chunk.path).copied().unwrap_or_default();
    let symbol_hits = s.symbol_hits.min(MAX_HITS);
    let path_hits = s.path_hits.min(MAX_HITS);
    // 1 for the file's lead chunk, ½ for the next, …; 1 for a chunk the
    // statistics did not see (a lone candidate leads its file).
    let lead = stats
        .within_file
        .get(&c.chunk.id)
        .map_or(1.0, |&place| 1.0 / place.max(1) as f32);
    let file_decay = decay(s.file_rank);
    [
        rrf(s.bm25_rank),
        inv(s.bm25_rank),
        bm25_rel,
        rrf(s.vector_rank),
        s.vector
            .filter(|v| v.is_finite() && s.vector_rank.is_some())
            .map_or(0.0, |v| v.clamp(0.0, 1.0)),
        symbol_hits as f32,
        flag(s.symbol_exact && s.symbol_hits > 0),
        flag(s.graph_distance == Some(0)),
        s.graph_distance
            .filter(|&d| d > 0)
            .map_or(0.0, |d| 0.5f32.powi(i32::from(d))),
        path_hits as f32,
        flag(s.path_hits > 0),
        file_decay,
        inv(s.file_rank),
        decay(s.history_rank),
        inv(s.history_rank),
        (file.chunks as f32).min(MAX_FILE_CHUNKS) / MAX_FILE_CHUNKS,
        file.bm25_rel_max,
        (file.bm25_hits as f32).min(MAX_FILE_BM25_HITS) / MAX_FILE_BM25_HITS,
        if file.chunks > 0 { lead } else { 0.0 },
        lead * file_decay,
        lead * file.bm25_rel_max,
    ]
}

/// A trained linear model: one non-negative weight per feature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// The feature names, in order; must equal [`FEATURES`]' names.
    pub features: Vec<String>,
    /// One weight per feature, ≥ 0.
    pub weights: Vec<f32>,
    /// The shown score is `raw^power` (raw = relevance and boosts × role,
    /// intent and path weights): with the weights' scale, it gives the
    /// scores the formula's distribution over the top of the list, so the
    /// level-of-detail bands and `k` mean what they meant. Monotone, so it
    /// orders nothing differently. 1 when absent.
    #[serde(default = "one")]
    pub power: f32,
    /// Where the weights came from (data, loss, seed, validation numbers);
    /// shown by `loupe status`-like tools, never used for scoring.
    #[serde(default)]
    pub provenance: serde_json::Value,
}

fn one() -> f32 {
    1.0
}

/// Powers accepted in a model file: the calibration searches 0.5–3.
const POWER_RANGE: std::ops::RangeInclusive<f32> = 0.25..=4.0;

/// The relevance of one candidate split by breakdown group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Contributions {
    /// Chunk BM25 features.
    pub lexical: f32,
    /// Vector features.
    pub vector: f32,
    /// Symbol features.
    pub symbol: f32,
    /// Graph features.
    pub graph: f32,
    /// Path-term features.
    pub path_terms: f32,
    /// Whole-file BM25 features.
    pub file: f32,
    /// History features.
    pub history: f32,
}

impl Contributions {
    /// The relevance they make up: the sum of the groups.
    pub fn total(&self) -> f32 {
        self.lexical
            + self.vector
            + self.symbol
            + self.graph
            + self.path_terms
            + self.file
            + self.history
    }
}

impl LinearModel {
    /// Parses and checks a model file: the feature names must be
    /// [`FEATURES`]' in order, and every weight finite and ≥ 0 (a negative
    /// weight would make a contribution that the breakdown cannot draw).
    pub fn from_json(text: &str) -> Result<LinearModel, String> {
        let model: LinearModel =
            serde_json::from_str(text).map_err(|e| format!("not a ranking model: {e}"))?;
        let names: Vec<&str> = FEATURES.iter().map(|(n, _)| *n).collect();
        if model.features != names {
            return Err(format!(
                "the model's features {:?} are not this build's {:?}",
                model.features, names
            ));
        }
        if model.weights.len() != N_FEATURES {
            return Err(format!(
                "{} weights for {N_FEATURES} features",
                model.weights.len()
            ));
        }
        if let Some(w) = model.weights.iter().find(|w| !w.is_finite() || **w < 0.0) {
            return Err(format!("weight {w} is not a finite number ≥ 0"));
        }
        if !POWER_RANGE.contains(&model.power) {
            return Err(format!(
                "power {} is outside {:?}",
                model.power, POWER_RANGE
            ));
        }
        Ok(model)
    }

    /// The shown score of a candidate whose raw score is `raw`.
    pub fn shape(&self, raw: f32) -> f32 {
        if self.power == 1.0 {
            raw
        } else {
            raw.max(0.0).powf(self.power)
        }
    }

    /// Each group's share of the relevance: its features' weighted sum.
    pub fn contributions(&self, x: &[f32; N_FEATURES]) -> Contributions {
        let mut c = Contributions::default();
        for ((value, weight), (_, group)) in x.iter().zip(&self.weights).zip(FEATURES) {
            let v = value * weight;
            let slot = match group {
                Group::Lexical => &mut c.lexical,
                Group::Vector => &mut c.vector,
                Group::Symbol => &mut c.symbol,
                Group::Graph => &mut c.graph,
                Group::PathTerms => &mut c.path_terms,
                Group::File => &mut c.file,
                Group::History => &mut c.history,
            };
            *slot += v;
        }
        c
    }
}

/// The shipped model file: trained by `make train` (TRAINING.md).
const SHIPPED: &str = include_str!("../assets/ranker.json");

/// The shipped model, parsed once. `None` only if the file in this build
/// is broken, which a test rules out; ranking then uses the formula.
pub fn shipped() -> Option<&'static LinearModel> {
    static MODEL: std::sync::OnceLock<Option<LinearModel>> = std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| LinearModel::from_json(SHIPPED).ok())
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Chunk;

    fn candidate(path: &str, signals: Signals) -> Candidate {
        Candidate {
            chunk: Chunk::sample(signals.bm25.map_or(1, |s| s as i64 + 100), path, ""),
            signals,
        }
    }

    #[test]
    fn the_shipped_model_loads_and_names_this_builds_features() {
        let model = LinearModel::from_json(SHIPPED);
        assert!(model.is_ok(), "{model:?}");
        assert!(shipped().is_some());
    }

    #[test]
    fn a_model_for_other_features_or_with_negative_weights_is_refused() {
        let names: Vec<String> = FEATURES.iter().map(|(n, _)| n.to_string()).collect();
        let json = |names: &[String], weights: &[f32]| {
            serde_json::json!({"features": names, "weights": weights}).to_string()
        };
        let ok = vec![0.1; N_FEATURES];
        assert!(LinearModel::from_json(&json(&names, &ok)).is_ok());
        let mut renamed = names.clone();
        renamed[0] = "bm25".into();
        let err = LinearModel::from_json(&json(&renamed, &ok)).unwrap_err();
        assert!(err.contains("not this build's"), "{err}");
        let mut negative = ok.clone();
        negative[3] = -0.5;
        let err = LinearModel::from_json(&json(&names, &negative)).unwrap_err();
        assert!(err.contains("-0.5"), "{err}");
        let err = LinearModel::from_json(&json(&names, &ok[..3])).unwrap_err();
        assert!(err.contains("3 weights"), "{err}");
        let powered = serde_json::json!({"features": names, "weights": ok, "power": 9.0});
        let err = LinearModel::from_json(&powered.to_string()).unwrap_err();
        assert!(err.contains("power 9"), "{err}");
        assert!(LinearModel::from_json("{").is_err());
    }

    #[test]
    fn features_are_zero_without_signals_and_groups_add_up() {
        let stats = QueryStats::default();
        let bare = candidate("src/a.rs", Signals::default());
        assert_eq!(features(&bare, &stats), [0.0; N_FEATURES]);
        let s = Signals {
            bm25: Some(5.0),
            bm25_rank: Some(2),
            file_rank: Some(1),
            history_rank: Some(3),
            symbol_hits: 5,
            symbol_exact: true,
            graph_distance: Some(1),
            path_hits: 1,
            ..Default::default()
        };
        let best = Signals {
            bm25: Some(10.0),
            bm25_rank: Some(1),
            ..Default::default()
        };
        let cands = [
            candidate("src/a.rs", s),
            candidate("src/b.rs", best),
            candidate("src/a.rs", Signals::default()),
        ];
        let stats = QueryStats::of(&cands);
        let x = features(&cands[0], &stats);
        assert_eq!(x[1], 0.5); // 1 / rank 2
        assert_eq!(x[2], 0.5); // half the best score
        assert_eq!(x[15], 2.0 / 8.0); // two candidates of src/a.rs
        assert_eq!(x[16], 0.5); // its best relative BM25
        assert_eq!(x[17], 1.0 / 5.0); // one of them a BM25 hit
        assert_eq!(features(&cands[2], &stats)[15..18], x[15..18]);
        // src/a.rs's lead is the chunk BM25 found; the other gets half.
        assert_eq!(x[18..], [1.0, 1.0, 0.5]);
        assert_eq!(features(&cands[2], &stats)[18..], [0.5, 0.0, 0.25]); // it has no file rank
        assert_eq!(features(&cands[1], &stats)[18..], [1.0, 0.0, 1.0]);
        assert_eq!(x[5], 2.0); // hits capped
        assert_eq!(x[8], 0.5); // one hop
        assert_eq!(x[11], 1.0); // file rank 1
        let model = LinearModel {
            features: FEATURES.iter().map(|(n, _)| n.to_string()).collect(),
            weights: (0..N_FEATURES).map(|i| i as f32 / 10.0).collect(),
            power: 1.0,
            provenance: serde_json::Value::Null,
        };
        let total: f32 = x.iter().zip(&model.weights).map(|(a, b)| a * b).sum();
        let c = model.contributions(&x);
        assert!(c.file > 0.0);
        assert!((total - c.total()).abs() < 1e-5);
        assert_eq!(c.vector, 0.0);
        let powered = LinearModel {
            power: 1.5,
            ..model.clone()
        };
        assert_eq!(powered.shape(0.25), 0.125);
        assert_eq!(model.shape(0.25), 0.25);
        assert_eq!(powered.shape(-1.0), 0.0);
    }
}
