//! Training rows for the learned ranker: one question's candidates as the
//! feature vectors the ranking model sees, with what ranking does around
//! the model (role × intent × path weight), so a trainer can reproduce the
//! final score without recomputing anything.
//!
//! *Invariant:* the vectors come from [`loupe_assemble::learned::features`],
//! the function ranking itself calls; the trainer never derives features on
//! its own. Labels are not here: the trainer joins rows to the dataset's
//! gold files and hunks by example id.

use loupe_assemble::Candidate;
use loupe_assemble::Knobs;
use loupe_assemble::classify::{Classification, Intent};
use loupe_assemble::learned::{self, FEATURES, N_FEATURES, QueryStats};
use loupe_assemble::rank::{self, PathRules, RankConfig};
use serde::Serialize;

/// One candidate as a training row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FeatureRow {
    /// The chunk's path.
    pub path: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// Its size in index tokens.
    pub tokens: u32,
    /// Role weight × intent multiplier × path weight: what the model's
    /// relevance is multiplied by.
    pub mult: f32,
    /// The hand-set formula's score before the cap (the baseline).
    pub formula: f32,
    /// The feature vector, in [`FEATURES`] order.
    pub x: [f32; N_FEATURES],
}

/// One question's rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FeatureLine {
    /// The example id.
    pub id: String,
    /// The repository.
    pub repo: String,
    /// Feature names, in vector order (so a file names its own columns).
    pub features: Vec<&'static str>,
    /// One row per candidate, in retrieval order.
    pub rows: Vec<FeatureRow>,
}

/// The rows of `candidates` for a question classified as `classification`
/// under `knobs` (its path weights, role weights and intent override).
pub fn feature_line(
    id: &str,
    repo: &str,
    candidates: &[Candidate],
    classification: &Classification,
    knobs: &Knobs,
) -> FeatureLine {
    let stats = QueryStats::of(candidates);
    let (rules, _) = PathRules::new(&knobs.path_weights);
    let intent: Intent = knobs.intent.unwrap_or(classification.intent);
    let config = RankConfig {
        model: None,
        stats: stats.clone(),
        path_weights: &knobs.path_weights,
        primers: &knobs.primers,
        primer_boost: 0.0,
        recency_half_life_days: 0.0,
        recency_weight: 0.0,
        role_weights: &knobs.role_weights,
        intent,
        now: knobs.now,
    };
    let rows = candidates
        .iter()
        .map(|c| {
            let s = rank::score(c, &rules, &config);
            FeatureRow {
                path: c.chunk.path.clone(),
                start_line: c.chunk.start_line,
                end_line: c.chunk.end_line,
                tokens: c.chunk.tokens,
                mult: s.role_weight * s.intent_multiplier * s.path_weight,
                formula: s.raw,
                x: learned::features(c, &stats),
            }
        })
        .collect();
    FeatureLine {
        id: id.to_owned(),
        repo: repo.to_owned(),
        features: FEATURES.iter().map(|(n, _)| *n).collect(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_assemble::{Chunk, Role, Signals};

    fn cand(path: &str, role: Role, signals: Signals) -> Candidate {
        Candidate {
            chunk: Chunk {
                start_line: 3,
                end_line: 9,
                role,
                tokens: 42,
                ..Chunk::sample(1, path, "")
            },
            signals,
        }
    }

    #[test]
    fn rows_carry_the_rankers_features_and_multipliers() {
        let cands = vec![
            cand(
                "src/a.rs",
                Role::Code,
                Signals {
                    bm25: Some(4.0),
                    bm25_rank: Some(1),
                    file_rank: Some(1),
                    ..Default::default()
                },
            ),
            cand(
                "README.md",
                Role::Docs,
                Signals {
                    bm25: Some(2.0),
                    bm25_rank: Some(2),
                    ..Default::default()
                },
            ),
        ];
        let knobs = Knobs::default();
        let line = feature_line("x1", "o/r", &cands, &Classification::default(), &knobs);
        assert_eq!(line.features.len(), N_FEATURES);
        assert_eq!(line.rows.len(), 2);
        let stats = QueryStats::of(&cands);
        assert_eq!(line.rows[1].x, learned::features(&cands[1], &stats));
        assert_eq!(line.rows[1].x[2], 0.5);
        // Docs weigh 0.6 by default; code 1.
        assert_eq!(line.rows[0].mult, 1.0);
        assert!((line.rows[1].mult - 0.6).abs() < 1e-6);
        // The formula's raw score: 0.4 × rrf(1) + 0.3 × file rank 1.
        assert!((line.rows[0].formula - 0.7).abs() < 1e-6);
        assert_eq!((line.rows[0].start_line, line.rows[0].tokens), (3, 42));
    }
}
