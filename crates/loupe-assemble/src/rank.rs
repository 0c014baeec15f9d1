//! Rank: turn each candidate's raw retrieval signals into a final score, and
//! record every factor so the UI can draw it as a stacked bar.
//!
//! `final = min(cap, (relevance + primer boost + recency boost)
//!                    × role weight × intent multiplier × path weight)`,
//! with pinned items fixed at 1.0 and automatic items capped at 0.9 (the
//! CodeBuddy seed's rule, so a pin always wins). Then filters: path weight 0
//! hides, a minimum score drops, and `k` (optionally with maximal marginal
//! relevance for diversity) cuts; each removal carries its reason.
//!
//! This module does not render, count tokens or pack. It does not look at
//! chunk text (similarity for diversity is structural: same file, same folder).
//!
//! *Invariant:* the order is total and deterministic: pinned first (by path,
//! then start line), then by score descending, ties by path, start line, id.

use std::cmp::Ordering;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::classify::{Intent, intent_multiplier};
use crate::learned::{self, LinearModel, QueryStats};
// The two constants live with the transforms that use them (`learned::rrf`,
// `learned::decay`); the formula's weights below are read beside them.
pub use crate::learned::{FILE_RANK_K, RRF_K};
use crate::model::{Candidate, Role};
use crate::report::DropReason;

/// Share of relevance from the BM25 rank.
pub const LEXICAL_WEIGHT: f32 = 0.4;
/// Share of relevance from the vector rank. Half of BM25's: with the bundled
/// MiniLM-L3 (a prose model), giving vectors BM25's weight cost 8 points of
/// file acc@5 on the flask dev set and was neutral on rust-issues (EVAL.md);
/// they still add candidates and line recall.
pub const VECTOR_WEIGHT: f32 = 0.2;
/// Relevance per question identifier the chunk defines (the seed's "+0.2 per match").
pub const SYMBOL_WEIGHT: f32 = 0.2;
/// Symbol hits counted at most, so one chunk cannot outscore by repetition.
pub const MAX_SYMBOL_HITS: u32 = 2;
/// Extra relevance when the symbol matched exactly rather than fuzzily.
pub const SYMBOL_EXACT_BONUS: f32 = 0.1;
/// Relevance of a symbol-graph hit itself; halves with every hop.
pub const GRAPH_WEIGHT: f32 = 0.15;
/// Relevance from the chunk's file ranking first under whole-file BM25;
/// lower file ranks get `FILE_WEIGHT × FILE_RANK_K / (FILE_RANK_K + rank − 1)`.
/// Chosen with `loupe eval` (EVAL.md): 0.5 or a steeper decay (`K` = 3)
/// lost acc@1 and acc@5 on ripgrep against 0.3 with `K` = 10.
pub const FILE_WEIGHT: f32 = 0.3;
/// Relevance from the chunk's file ranking first among the files changed by
/// the past commits most like the question (`loupe_engine::signals::history`), with
/// the same decay as [`FILE_WEIGHT`]. Chosen with `loupe eval` over all six
/// dev sets (EVAL.md): mean acc@5 65.7 at 0.3, 68.0 at 0.5, 66.3 at 0.8.
pub const HISTORY_WEIGHT: f32 = 0.5;
/// Relevance per question term in the chunk's path.
pub const PATH_HIT_WEIGHT: f32 = 0.05;
/// Path hits counted at most.
pub const MAX_PATH_HITS: u32 = 2;
/// Score of a pinned item (seed: "User-selected … Always 1.0").
pub const PINNED_SCORE: f32 = 1.0;
/// Cap on automatic items (seed: "Auto-gathered snippets cap at 0.9").
pub const AUTO_CAP: f32 = 0.9;
/// Primer boost default (SourcePrep: "default +0.25").
pub const DEFAULT_PRIMER_BOOST: f32 = 0.25;
/// Primer file names by default (SourcePrep's list).
pub const DEFAULT_PRIMERS: &[&str] = &["AGENTS.md", "PREP_PRIMER.md", "PROJECT_PRIMER.md"];
/// Seconds in a day, for the recency half-life.
const SECONDS_PER_DAY: f64 = 86_400.0;

/// A path weight rule: a glob and the multiplier for paths it matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathWeight {
    /// A globset glob over project-relative paths (`src/core/**`, `**/*_test.go`).
    pub glob: String,
    /// Multiplier, 0–2 in the UI; 0 hides the matched paths.
    pub weight: f32,
}

/// Base weights per role, before the intent multiplier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleWeights {
    /// Source code.
    pub code: f32,
    /// Documentation.
    pub docs: f32,
    /// Tests.
    pub tests: f32,
    /// Build and configuration files.
    pub config: f32,
    /// Everything else.
    pub other: f32,
}

impl Default for RoleWeights {
    /// Code first (our numbers: SourcePrep names role weights but not their
    /// values). Docs and tests sit well behind unless the intent asks for
    /// them (× 1.5 / × 1.6): on every dev set of `loupe eval`, 0.2–0.85 of
    /// the top-5 files were READMEs, changelogs and issue templates when
    /// docs weighed 0.9, for questions about code.
    fn default() -> Self {
        RoleWeights {
            code: 1.0,
            docs: 0.6,
            tests: 0.6,
            config: 0.8,
            other: 0.7,
        }
    }
}

impl RoleWeights {
    /// The weight of `role`.
    pub fn of(&self, role: Role) -> f32 {
        match role {
            Role::Code => self.code,
            Role::Docs => self.docs,
            Role::Tests => self.tests,
            Role::Config => self.config,
            Role::Other => self.other,
        }
    }
}

/// Every factor of one candidate's score.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreBreakdown {
    /// Relevance from the BM25 rank (share of `relevance`).
    pub lexical: f32,
    /// Relevance from the vector rank.
    pub vector: f32,
    /// Relevance from question identifiers the chunk defines.
    pub symbol: f32,
    /// Relevance from symbol-graph proximity to a hit.
    pub graph: f32,
    /// Relevance from question terms in the path.
    pub path_terms: f32,
    /// Relevance from the whole file's BM25 rank.
    pub file: f32,
    /// Relevance from past commits like the question that changed the file.
    #[serde(default)]
    pub history: f32,
    /// Relevance from the re-ranker, which read the question with the
    /// file ("read by the model"; `signals/reader.rs` in the engine).
    #[serde(default)]
    pub reader: f32,
    /// Sum of the eight above, capped at 1.
    pub relevance: f32,
    /// Added for primer files.
    pub primer_boost: f32,
    /// Added for recently modified files.
    pub recency_boost: f32,
    /// × the role's base weight.
    pub role_weight: f32,
    /// × the intent's multiplier for the role.
    pub intent_multiplier: f32,
    /// × the path weight (1 when no rule matched).
    pub path_weight: f32,
    /// The glob that set `path_weight`, if any.
    pub path_rule: Option<String>,
    /// `(relevance + boosts) × weights`, before the cap (and before the
    /// learned model's calibrating power, `LinearModel::shape`).
    pub raw: f32,
    /// The cap that applied: 1.0 pinned, 0.9 automatic.
    pub cap: f32,
    /// Added to `score` to raise the chunk to a share ([`SIBLING_SHARE`]
    /// by default) of its file's best chunk, when that file is one of the
    /// [`SIBLING_FILES`] leading the ranking ([`lift_siblings`]); else 0.
    #[serde(default)]
    pub sibling_lift: f32,
    /// Whether the user pinned it (score fixed at 1.0).
    pub pinned: bool,
    /// The score used for ordering and level of detail.
    pub score: f32,
}

/// Which model turns signals into relevance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ranker {
    /// The shipped learned model ([`learned::shipped`]); the formula if
    /// this build's model file were unusable. Not the default: on the dev
    /// sets it ranks within noise of the formula and packs fewer gold files
    /// (EVAL.md, "The learned ranker (not the default)").
    Learned,
    /// The hand-set formula (the constants above): the default, and the
    /// ablation `loupe eval --ablate learned`.
    #[default]
    Formula,
    /// A model given as data (`loupe eval --ranker FILE`, for training runs).
    Model(LinearModel),
}

impl Ranker {
    /// The linear model to score with, or `None` for the formula.
    pub fn model(&self) -> Option<&LinearModel> {
        match self {
            Ranker::Learned => learned::shipped(),
            Ranker::Formula => None,
            Ranker::Model(m) => Some(m),
        }
    }
}

/// The ranking knobs, borrowed from [`crate::Knobs`].
#[derive(Clone, Debug)]
pub struct RankConfig<'a> {
    /// The learned model, or `None` for the hand-set formula.
    pub model: Option<&'a LinearModel>,
    /// Statistics of the question's whole candidate set (the learned model's
    /// relative BM25 score).
    pub stats: QueryStats,
    /// Path weight rules.
    pub path_weights: &'a [PathWeight],
    /// Primer file names or globs (a bare name matches that file in any folder).
    pub primers: &'a [String],
    /// Added to primer files' scores.
    pub primer_boost: f32,
    /// Half-life of the recency boost, in days (≤ 0 turns it off).
    pub recency_half_life_days: f32,
    /// The recency boost of a file modified right now.
    pub recency_weight: f32,
    /// Base weights per role.
    pub role_weights: &'a RoleWeights,
    /// The retrieval intent.
    pub intent: Intent,
    /// The current time, seconds since the Unix epoch (explicit: ranking is pure).
    pub now: i64,
}

/// Compiled path-weight rules.
pub struct PathRules {
    set: GlobSet,
    rules: Vec<(PathWeight, usize)>,
}

/// How specific a glob is: the number of literal characters (everything
/// except `*`, `?`, and the contents of `[...]` / `{...}`). More literal text
/// pins down fewer paths: `src/core/**` (9) beats `src/**` (4). Equal
/// specificity (`src/**` and `**/*.rs`, 4 each): the later rule wins, so
/// user rules listed after defaults override them.
pub fn specificity(glob: &str) -> usize {
    let mut depth = 0usize;
    let mut literal = 0;
    for c in glob.chars() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            '*' | '?' => {}
            _ if depth == 0 => literal += 1,
            _ => {}
        }
    }
    literal
}

impl PathRules {
    /// Compiles the rules; a glob that does not compile is skipped and
    /// returned as a warning.
    pub fn new(weights: &[PathWeight]) -> (PathRules, Vec<String>) {
        let mut builder = GlobSetBuilder::new();
        let mut rules = Vec::new();
        let mut warnings = Vec::new();
        for weight in weights {
            match Glob::new(&weight.glob) {
                Ok(glob) => {
                    builder.add(glob);
                    rules.push((weight.clone(), specificity(&weight.glob)));
                }
                Err(err) => warnings.push(
                    crate::Error::InvalidGlob {
                        glob: weight.glob.clone(),
                        message: err.kind().to_string(),
                    }
                    .to_string(),
                ),
            }
        }
        let set = builder.build().unwrap_or_else(|err| {
            warnings.push(format!("path weights ignored: {err}"));
            rules.clear();
            GlobSet::empty()
        });
        (PathRules { set, rules }, warnings)
    }

    /// The most specific rule matching `path`.
    pub fn weight(&self, path: &str) -> Option<&PathWeight> {
        self.set
            .matches(path)
            .into_iter()
            .filter_map(|i| self.rules.get(i).map(|(rule, spec)| (i, rule, *spec)))
            .max_by_key(|(i, _, spec)| (*spec, *i))
            .map(|(_, rule, _)| rule)
    }
}

/// Whether `path` is a primer per `primers` (bare names match the file name
/// anywhere; names with `/` or wildcards are globs).
pub(crate) fn is_primer(path: &str, primers: &[String]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    primers.iter().any(|p| {
        if p.contains('/') || p.contains('*') {
            Glob::new(p)
                .map(|g| g.compile_matcher().is_match(path))
                .unwrap_or(false)
        } else {
            p.eq_ignore_ascii_case(name)
        }
    })
}

use learned::rrf;

/// Relevance from a file rank: `weight` at rank 1, decaying as
/// [`FILE_RANK_K`] says.
fn rank_evidence(weight: f32, rank: Option<u32>) -> f32 {
    weight * learned::decay(rank)
}

/// The hand-set formula's relevance, split like the learned model's.
fn formula(s: &crate::model::Signals) -> learned::Contributions {
    let mut symbol = SYMBOL_WEIGHT * s.symbol_hits.min(MAX_SYMBOL_HITS) as f32;
    if s.symbol_exact && s.symbol_hits > 0 {
        symbol += SYMBOL_EXACT_BONUS;
    }
    learned::Contributions {
        lexical: LEXICAL_WEIGHT * rrf(s.bm25_rank),
        vector: VECTOR_WEIGHT * rrf(s.vector_rank),
        symbol,
        graph: s
            .graph_distance
            .map_or(0.0, |d| GRAPH_WEIGHT * 0.5f32.powi(i32::from(d))),
        path_terms: PATH_HIT_WEIGHT * s.path_hits.min(MAX_PATH_HITS) as f32,
        file: rank_evidence(FILE_WEIGHT, s.file_rank),
        history: rank_evidence(HISTORY_WEIGHT, s.history_rank),
    }
}

/// Scores one candidate.
pub fn score(candidate: &Candidate, rules: &PathRules, config: &RankConfig) -> ScoreBreakdown {
    let s = &candidate.signals;
    let chunk = &candidate.chunk;
    let contributions = match config.model {
        Some(model) => model.contributions(&learned::features(candidate, &config.stats)),
        None => formula(s),
    };
    let reader = s.reader.unwrap_or(0.0).max(0.0);
    let relevance = (contributions.total() + reader).min(1.0);
    let learned::Contributions {
        lexical,
        vector,
        symbol,
        graph,
        path_terms,
        file,
        history,
    } = contributions;

    let primer = s.primer || is_primer(&chunk.path, config.primers);
    let primer_boost = if primer { config.primer_boost } else { 0.0 };
    let recency_boost = if config.recency_half_life_days > 0.0 && s.mtime > 0 && config.now > 0 {
        let age_days = (config.now - s.mtime).max(0) as f64 / SECONDS_PER_DAY;
        let decay = 0.5f64.powf(age_days / f64::from(config.recency_half_life_days));
        (f64::from(config.recency_weight) * decay) as f32
    } else {
        0.0
    };
    let role_weight = config.role_weights.of(chunk.role);
    let intent_multiplier = intent_multiplier(config.intent, chunk.role);
    let (path_weight, path_rule) = match rules.weight(&chunk.path) {
        Some(rule) => (rule.weight.max(0.0), Some(rule.glob.clone())),
        None => (1.0, None),
    };
    let raw =
        (relevance + primer_boost + recency_boost) * role_weight * intent_multiplier * path_weight;
    // The learned model's calibration (monotone: it orders nothing differently).
    let shaped = config.model.map_or(raw, |m| m.shape(raw));
    let (cap, score) = if s.pinned {
        (PINNED_SCORE, PINNED_SCORE)
    } else {
        (AUTO_CAP, shaped.clamp(0.0, AUTO_CAP))
    };
    ScoreBreakdown {
        lexical,
        vector,
        symbol,
        graph,
        path_terms,
        file,
        history,
        reader,
        relevance,
        primer_boost,
        recency_boost,
        role_weight,
        intent_multiplier,
        path_weight,
        path_rule,
        raw,
        cap,
        sibling_lift: 0.0,
        pinned: s.pinned,
        score,
    }
}

/// The evidence behind a score before relevance is clamped to 1 and the score
/// capped at 0.9: it orders items whose shown scores tie at the cap (strong
/// candidates often all reach it), instead of leaving them to path order.
pub fn strength(s: &ScoreBreakdown) -> f32 {
    (s.lexical
        + s.vector
        + s.symbol
        + s.graph
        + s.path_terms
        + s.file
        + s.history
        + s.reader
        + s.primer_boost
        + s.recency_boost)
        * s.role_weight
        * s.intent_multiplier
        * s.path_weight
}

/// The deterministic order of two scored candidates (see the module invariant).
pub fn order(a: (&Candidate, &ScoreBreakdown), b: (&Candidate, &ScoreBreakdown)) -> Ordering {
    let (ca, sa) = a;
    let (cb, sb) = b;
    sb.pinned
        .cmp(&sa.pinned)
        .then_with(|| {
            if sa.pinned {
                Ordering::Equal
            } else {
                sb.score
                    .total_cmp(&sa.score)
                    .then_with(|| strength(sb).total_cmp(&strength(sa)))
            }
        })
        .then_with(|| ca.chunk.path.cmp(&cb.chunk.path))
        .then_with(|| ca.chunk.start_line.cmp(&cb.chunk.start_line))
        .then_with(|| ca.chunk.start_byte.cmp(&cb.chunk.start_byte))
        .then_with(|| ca.chunk.id.cmp(&cb.chunk.id))
}

/// A chunk of a leading file is raised to this share of its file's best
/// score. The question's answer is usually spread over several chunks of
/// the files that lead (a fix touches the function the question names and
/// its neighbours), yet each chunk is ranked on its own evidence: on
/// rust-issues, a third of the changed lines missing from 27k prompts were
/// in a top-5 file whose chunk covering them ranked ~110th. Raised, those
/// chunks are packed before weaker files' chunks and get spare detail
/// first (assembly raises only what the minimum score and a user's `k`
/// kept, and keeps each chunk's detail band its own, so they never take a
/// weak file's place or the detail it needs). Chosen on mined training
/// questions, not the dev sets (EVAL.md, "Data sets"; what it bought:
/// "What was tried" → Packing, `6cf069f`, `12858ff`).
pub const SIBLING_SHARE: f32 = 0.5;
/// How many files, best first by their best chunk, have their other chunks
/// raised.
pub const SIBLING_FILES: usize = 3;

/// The [`SIBLING_FILES`] files whose best automatic chunks lead `order`
/// (indices in rank order), each with that best score. Pinned items do
/// not lead: the user chose them, the ranking did not.
pub fn leading_files<'c>(
    candidates: &'c [Candidate],
    scores: &[ScoreBreakdown],
    order: &[usize],
) -> Vec<(&'c str, f32)> {
    let mut leading: Vec<(&str, f32)> = Vec::with_capacity(SIBLING_FILES);
    for &i in order {
        if leading.len() == SIBLING_FILES {
            break;
        }
        let path = candidates[i].chunk.path.as_str();
        if !scores[i].pinned && !leading.iter().any(|(p, _)| *p == path) {
            leading.push((path, scores[i].score));
        }
    }
    leading
}

/// Raises the other chunks in `visible` (indices in rank order) of the
/// `leading` files ([`leading_files`]) to `share` (the `sibling_share`
/// knob, [`SIBLING_SHARE`] by default; 0 turns it off) of their file's
/// best score, recording the rise in `sibling_lift`, and puts `visible`
/// back in rank order; returns whether any score changed. Pinned items do
/// not move. A file's best chunk keeps its score, so files keep their
/// order: only which of their chunks come next changes.
pub fn lift_siblings(
    candidates: &[Candidate],
    scores: &mut [ScoreBreakdown],
    visible: &mut [usize],
    leading: &[(&str, f32)],
    share: f32,
) -> bool {
    if share <= 0.0 {
        return false;
    }
    // Above 1 a raised chunk would pass its file's best, and files their
    // order (the knob's range is 0–1; this holds for any caller).
    let share = share.min(1.0);
    let mut lifted = false;
    for &i in visible.iter() {
        let s = &mut scores[i];
        let Some((_, best)) = leading.iter().find(|(p, _)| *p == candidates[i].chunk.path) else {
            continue;
        };
        let target = share * best;
        if !s.pinned && target > s.score {
            s.sibling_lift = target - s.score;
            s.score = target;
            lifted = true;
        }
    }
    if lifted {
        visible.sort_by(|&a, &b| order((&candidates[a], &scores[a]), (&candidates[b], &scores[b])));
    }
    lifted
}

/// The selection knobs.
#[derive(Clone, Copy, Debug, Default)]
pub struct SelectConfig {
    /// Automatic items kept at most (pinned items do not count); `None` keeps all.
    pub k: Option<usize>,
    /// Automatic items scoring below this are dropped.
    pub min_score: Option<f32>,
    /// MMR trade-off λ in (0, 1]: 1 is pure relevance; `None` turns MMR off.
    pub diversity: Option<f32>,
}

/// Structural similarity for MMR, since assembly has no vectors: the same
/// file is very similar, the same folder somewhat.
pub fn similarity(a: &Candidate, b: &Candidate) -> f32 {
    /// Similarity of two chunks of one file.
    const SAME_FILE: f32 = 0.8;
    /// Similarity of two files in one folder.
    const SAME_FOLDER: f32 = 0.3;
    let (pa, pb) = (&a.chunk.path, &b.chunk.path);
    if pa == pb {
        return SAME_FILE;
    }
    let dir = |p: &str| {
        p.rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    if dir(pa) == dir(pb) { SAME_FOLDER } else { 0.0 }
}

/// Applies min score, MMR and `k` to `ordered` (indices already in rank
/// order, with hidden and duplicate items removed). Returns the kept indices
/// in final order and the drops.
pub fn select(
    ordered: &[usize],
    candidates: &[Candidate],
    scores: &[ScoreBreakdown],
    config: SelectConfig,
) -> (Vec<usize>, Vec<(usize, DropReason)>) {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let mut auto = Vec::new();
    for &i in ordered {
        if scores[i].pinned {
            kept.push(i);
        } else if config.min_score.is_some_and(|min| scores[i].score < min) {
            dropped.push((i, DropReason::BelowMinScore));
        } else {
            auto.push(i);
        }
    }
    let k = config.k.unwrap_or(usize::MAX);
    match config.diversity.filter(|l| *l > 0.0 && *l < 1.0) {
        None => {
            for (n, &i) in auto.iter().enumerate() {
                if n < k {
                    kept.push(i)
                } else {
                    dropped.push((i, DropReason::BeyondK))
                }
            }
        }
        Some(lambda) => {
            let mut chosen: Vec<usize> = Vec::new();
            let mut rest = auto.clone();
            let mut best_sim = vec![0.0f32; candidates.len()];
            while chosen.len() < k && !rest.is_empty() {
                // The first best wins ties, and `rest` is in rank order: deterministic.
                let mut best = (0, f32::NEG_INFINITY);
                for (pos, &i) in rest.iter().enumerate() {
                    let mmr = lambda * scores[i].score - (1.0 - lambda) * best_sim[i];
                    if mmr > best.1 {
                        best = (pos, mmr);
                    }
                }
                let pick = rest.remove(best.0);
                for &i in &rest {
                    best_sim[i] = best_sim[i].max(similarity(&candidates[i], &candidates[pick]));
                }
                chosen.push(pick);
            }
            let plain: Vec<usize> = auto.iter().copied().take(k).collect();
            for &i in &rest {
                let reason = if plain.contains(&i) {
                    DropReason::Diversity
                } else {
                    DropReason::BeyondK
                };
                dropped.push((i, reason));
            }
            kept.extend(chosen);
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Chunk, Signals};

    pub(crate) fn cand(path: &str, signals: Signals) -> Candidate {
        Candidate {
            chunk: Chunk {
                role: if path.ends_with(".md") {
                    Role::Docs
                } else {
                    Role::Code
                },
                ..Chunk::sample(1, path, "")
            },
            signals,
        }
    }

    fn config<'a>(
        weights: &'a [PathWeight],
        primers: &'a [String],
        roles: &'a RoleWeights,
    ) -> RankConfig<'a> {
        RankConfig {
            model: None,
            stats: QueryStats::default(),
            path_weights: weights,
            primers,
            primer_boost: DEFAULT_PRIMER_BOOST,
            recency_half_life_days: 10.0,
            recency_weight: 0.1,
            role_weights: roles,
            intent: Intent::Default,
            now: 100 * 86_400,
        }
    }

    fn check(path: &str, signals: Signals, weights: &[(&str, f32)], expect: &str) {
        let weights: Vec<PathWeight> = weights
            .iter()
            .map(|(g, w)| PathWeight {
                glob: g.to_string(),
                weight: *w,
            })
            .collect();
        let primers: Vec<String> = DEFAULT_PRIMERS.iter().map(|p| p.to_string()).collect();
        let roles = RoleWeights::default();
        let (rules, warnings) = PathRules::new(&weights);
        let b = score(
            &cand(path, signals),
            &rules,
            &config(&weights, &primers, &roles),
        );
        let got = format!(
            "rel {:.3} (lex {:.3} vec {:.3} sym {:.2} graph {:.3} path {:.2} file {:.3}) +primer {:.2} +recent {:.3} ×role {:.2} ×intent {:.2} ×path {:.2}{} = raw {:.3} → {:.3}{}",
            b.relevance,
            b.lexical,
            b.vector,
            b.symbol,
            b.graph,
            b.path_terms,
            b.file,
            b.primer_boost,
            b.recency_boost,
            b.role_weight,
            b.intent_multiplier,
            b.path_weight,
            b.path_rule.map(|r| format!(" [{r}]")).unwrap_or_default(),
            b.raw,
            b.score,
            if warnings.is_empty() {
                String::new()
            } else {
                format!(" warn: {}", warnings.join("; "))
            },
        );
        assert_eq!(got, expect);
    }

    #[test]
    fn fused_relevance() {
        check(
            "src/pack.rs",
            Signals {
                bm25_rank: Some(1),
                vector_rank: Some(3),
                symbol_hits: 1,
                symbol_exact: true,
                graph_distance: Some(0),
                ..Default::default()
            },
            &[],
            "rel 1.000 (lex 0.400 vec 0.194 sym 0.30 graph 0.150 path 0.00 file 0.000) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 1.00 = raw 1.000 → 0.900",
        );
    }

    #[test]
    fn file_rank_adds_decaying_evidence() {
        let at = |rank| Signals {
            bm25_rank: Some(10),
            file_rank: Some(rank),
            ..Default::default()
        };
        check(
            "src/pool.rs",
            at(1),
            &[],
            "rel 0.649 (lex 0.349 vec 0.000 sym 0.00 graph 0.000 path 0.00 file 0.300) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 1.00 = raw 0.649 → 0.649",
        );
        check(
            "src/pool.rs",
            at(11),
            &[],
            "rel 0.499 (lex 0.349 vec 0.000 sym 0.00 graph 0.000 path 0.00 file 0.150) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 1.00 = raw 0.499 → 0.499",
        );
    }

    #[test]
    fn primer_and_recency() {
        check(
            "docs/AGENTS.md",
            Signals {
                bm25_rank: Some(10),
                mtime: 90 * 86_400,
                ..Default::default()
            },
            &[],
            "rel 0.349 (lex 0.349 vec 0.000 sym 0.00 graph 0.000 path 0.00 file 0.000) +primer 0.25 +recent 0.050 ×role 0.60 ×intent 1.00 ×path 1.00 = raw 0.389 → 0.389",
        );
    }

    #[test]
    fn most_specific_glob_wins() {
        let s = Signals {
            vector_rank: Some(1),
            ..Default::default()
        };
        let rules = [("src/**", 0.5), ("src/core/**", 1.5), ("**/*.rs", 2.0)];
        check(
            "src/core/a.rs",
            s.clone(),
            &rules,
            "rel 0.200 (lex 0.000 vec 0.200 sym 0.00 graph 0.000 path 0.00 file 0.000) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 1.50 [src/core/**] = raw 0.300 → 0.300",
        );
        check(
            "lib/x.rs",
            s.clone(),
            &rules,
            "rel 0.200 (lex 0.000 vec 0.200 sym 0.00 graph 0.000 path 0.00 file 0.000) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 2.00 [**/*.rs] = raw 0.400 → 0.400",
        );
        check(
            "a.rs",
            s,
            &[("[", 0.0)],
            "rel 0.200 (lex 0.000 vec 0.200 sym 0.00 graph 0.000 path 0.00 file 0.000) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 1.00 = raw 0.200 → 0.200 warn: invalid path glob \"[\": unclosed character class; missing ']'",
        );
    }

    #[test]
    fn pinned_is_one() {
        check(
            "src/x.rs",
            Signals {
                pinned: true,
                ..Default::default()
            },
            &[("src/**", 0.0)],
            "rel 0.000 (lex 0.000 vec 0.000 sym 0.00 graph 0.000 path 0.00 file 0.000) +primer 0.00 +recent 0.000 ×role 1.00 ×intent 1.00 ×path 0.00 [src/**] = raw 0.000 → 1.000",
        );
    }

    #[test]
    fn the_formula_written_as_a_model_scores_like_the_formula() {
        let model = LinearModel {
            features: learned::FEATURES
                .iter()
                .map(|(n, _)| n.to_string())
                .collect(),
            weights: vec![
                LEXICAL_WEIGHT,
                0.0,
                0.0,
                VECTOR_WEIGHT,
                0.0,
                SYMBOL_WEIGHT,
                SYMBOL_EXACT_BONUS,
                GRAPH_WEIGHT,
                GRAPH_WEIGHT,
                PATH_HIT_WEIGHT,
                0.0,
                FILE_WEIGHT,
                0.0,
                HISTORY_WEIGHT,
                0.0,
                0.0,
                0.0,
                0.0,
            ],
            power: 1.0,
            provenance: serde_json::Value::Null,
        };
        let (rules, _) = PathRules::new(&[]);
        let roles = RoleWeights::default();
        let formula = config(&[], &[], &roles);
        let as_model = RankConfig {
            model: Some(&model),
            ..formula.clone()
        };
        for signals in [
            Signals::default(),
            Signals {
                bm25: Some(3.0),
                bm25_rank: Some(4),
                vector: Some(0.7),
                vector_rank: Some(2),
                symbol_hits: 3,
                symbol_exact: true,
                graph_distance: Some(2),
                path_hits: 1,
                file_rank: Some(7),
                history_rank: Some(2),
                ..Default::default()
            },
            Signals {
                graph_distance: Some(0),
                file_rank: Some(1),
                ..Default::default()
            },
        ] {
            let c = cand("src/a.rs", signals);
            let (a, b) = (score(&c, &rules, &formula), score(&c, &rules, &as_model));
            for (x, y) in [
                (a.lexical, b.lexical),
                (a.vector, b.vector),
                (a.symbol, b.symbol),
                (a.graph, b.graph),
                (a.path_terms, b.path_terms),
                (a.file, b.file),
                (a.history, b.history),
                (a.score, b.score),
            ] {
                assert!((x - y).abs() < 1e-6, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn specificity_counts_literals() {
        assert_eq!(specificity("src/core/**"), 9);
        assert_eq!(specificity("**/*.{rs,py}"), 2);
        assert_eq!(specificity("**/*.rs"), 4);
        assert!(specificity("src/core/**") > specificity("src/**"));
    }

    #[test]
    fn mmr_prefers_other_files() {
        let mk = |path: &str, rank| {
            cand(
                path,
                Signals {
                    bm25_rank: Some(rank),
                    ..Default::default()
                },
            )
        };
        let cands = vec![mk("a.rs", 1), mk("a.rs", 2), mk("b.rs", 3)];
        let (rules, _) = PathRules::new(&[]);
        let roles = RoleWeights::default();
        let cfg = config(&[], &[], &roles);
        let scores: Vec<_> = cands.iter().map(|c| score(c, &rules, &cfg)).collect();
        let sel = |diversity| {
            select(
                &[0, 1, 2],
                &cands,
                &scores,
                SelectConfig {
                    k: Some(2),
                    min_score: None,
                    diversity,
                },
            )
        };
        assert_eq!(sel(None), (vec![0, 1], vec![(2, DropReason::BeyondK)]));
        assert_eq!(
            sel(Some(0.5)),
            (vec![0, 2], vec![(1, DropReason::Diversity)])
        );
    }

    #[test]
    fn the_leading_files_other_chunks_are_raised_and_files_keep_their_order() {
        // Five files, best chunks 0.9 > 0.8 > 0.7 > 0.6; a.rs and d.rs also
        // have a weak chunk, e.rs only a weak one.
        let paths_scores = [
            ("a.rs", 0.9),
            ("b.rs", 0.8),
            ("c.rs", 0.7),
            ("d.rs", 0.6),
            ("a.rs", 0.05),
            ("d.rs", 0.05),
            ("e.rs", 0.3),
        ];
        let mut cands = Vec::new();
        let mut scores = Vec::new();
        for (i, (path, s)) in paths_scores.iter().enumerate() {
            let mut c = cand(path, Signals::default());
            c.chunk.id = i as i64 + 1;
            cands.push(c);
            scores.push(ScoreBreakdown {
                score: *s,
                ..Default::default()
            });
        }
        // A pinned chunk of e.rs leads without making e.rs a leading file.
        let mut pinned = cand("e.rs", Signals::default());
        pinned.chunk.id = 99;
        cands.push(pinned);
        scores.push(ScoreBreakdown {
            score: PINNED_SCORE,
            pinned: true,
            ..Default::default()
        });
        let mut visible: Vec<usize> = (0..cands.len()).collect();
        visible.sort_by(|&a, &b| order((&cands[a], &scores[a]), (&cands[b], &scores[b])));
        let leading = leading_files(&cands, &scores, &visible);
        assert_eq!(leading, [("a.rs", 0.9), ("b.rs", 0.8), ("c.rs", 0.7)]);
        assert!(lift_siblings(
            &cands,
            &mut scores,
            &mut visible,
            &leading,
            SIBLING_SHARE
        ));

        let lifted = &scores[4];
        assert!((lifted.score - SIBLING_SHARE * 0.9).abs() < 1e-6);
        assert!((lifted.sibling_lift - (SIBLING_SHARE * 0.9 - 0.05)).abs() < 1e-6);
        // d.rs is the fourth file: not lifted; nor is e.rs's automatic chunk.
        assert_eq!((scores[5].score, scores[5].sibling_lift), (0.05, 0.0));
        assert_eq!((scores[6].score, scores[6].sibling_lift), (0.3, 0.0));
        // Best chunks keep their scores, and the order is the rank order of
        // the new scores: the pin, a.rs, b.rs, c.rs, d.rs, a.rs's second
        // chunk (0.45), e.rs, d.rs's second chunk.
        assert_eq!(scores[0].sibling_lift, 0.0);
        assert_eq!(visible, vec![7, 0, 1, 2, 3, 4, 6, 5]);
    }
}
