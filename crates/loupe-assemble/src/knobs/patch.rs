//! One definition of every knob's range ([`limits`]), one way to bring
//! knobs into range ([`Knobs::normalize`]) and one change type
//! ([`KnobsPatch`]) that every door lays over a base: the team's
//! `.loupe.toml`, golden questions' overrides, `loupe query`'s flags and the
//! MCP tools' arguments. A door parses its own syntax into a patch, asks
//! [`KnobsPatch::validate`] what is out of range (and reports it in its own
//! words: a warning with a line, a CLI error, an MCP error), then applies it.

use serde::{Deserialize, Serialize};

use super::{Budget, Knobs};
use crate::classify::{Intent, QuestionType};
use crate::models::ModelSpec;
use crate::rank::PathWeight;
use crate::render::Format;

/// The allowed range of each numeric knob, the same in the app's controls
/// (generated into the UI's types), the team file, the CLI, golden
/// questions and the MCP tools.
pub mod limits {
    /// An inclusive range of a number knob.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Limit {
        /// Smallest value allowed.
        pub min: f32,
        /// Largest value allowed.
        pub max: f32,
    }

    impl Limit {
        /// Whether `v` is a finite number in the range.
        pub fn contains(&self, v: f32) -> bool {
            v.is_finite() && (self.min..=self.max).contains(&v)
        }

        /// `v` brought into the range (a non-finite value becomes `min`).
        pub fn clamp(&self, v: f32) -> f32 {
            if v.is_finite() {
                v.clamp(self.min, self.max)
            } else {
                self.min
            }
        }
    }

    /// A path weight multiplier: 0 hides, 1 is neutral, 2 doubles.
    pub const PATH_WEIGHT: Limit = Limit { min: 0.0, max: 2.0 };
    /// Added to primer files' scores (scores are in 0..=1).
    pub const PRIMER_BOOST: Limit = Limit { min: 0.0, max: 1.0 };
    /// Share of its file's best score a leading file's chunk is raised to.
    pub const SIBLING_SHARE: Limit = Limit { min: 0.0, max: 1.0 };
    /// Recency boost of a file edited just now.
    pub const RECENCY_WEIGHT: Limit = Limit { min: 0.0, max: 0.5 };
    /// Recency half-life in days (0: recency off); ten years at most.
    pub const RECENCY_HALF_LIFE_DAYS: Limit = Limit {
        min: 0.0,
        max: 3650.0,
    };
    /// Files the re-ranker reads per question (0: off).
    pub const MAX_READ_FILES: usize = 50;
    /// Word pieces the re-ranker reads per file.
    pub const READ_WINDOW: std::ops::RangeInclusive<usize> = 32..=512;
    /// Automatic items scoring below this are dropped (scores are in 0..=1).
    pub const MIN_SCORE: Limit = Limit { min: 0.0, max: 1.0 };
    /// MMR λ: 0 is all diversity, 1 all relevance.
    pub const DIVERSITY: Limit = Limit { min: 0.0, max: 1.0 };
    /// Share of a budget a model row keeps free for tokenizer error.
    pub const SAFETY_MARGIN: Limit = Limit { min: 0.0, max: 0.9 };
    /// Smallest budget (tokens or characters): below it the instructions
    /// and the question alone do not fit.
    pub const MIN_BUDGET: u32 = 100;
    /// Most automatic items `k` may ask for.
    pub const MAX_K: usize = 10_000;
    /// Longest instruction preamble of one question type, in characters.
    pub const MAX_INSTRUCTIONS_CHARS: usize = 4_000;
}

/// Toggles a patch changes; `None` keeps the base's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TogglesPatch {
    /// `@path:a-b` citations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<bool>,
    /// Each item's score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scores: Option<bool>,
    /// JSON whatever the format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<bool>,
    /// Best items at both ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_in_middle: Option<bool>,
    /// A change as its new code, changed lines marked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_as_code: Option<bool>,
}

/// [`KnobsPatch`] and the lines of `apply`, `between`, `normalize` and
/// `validate` its fields' kinds and ranges decide, from one list.
macro_rules! knobs_patch {
    (
        $(#[doc = $sdoc:literal])*
        pub struct KnobsPatch {
            $( $(#[doc = $doc:literal])* $f:ident : $t:ty => $kind:ident $(in $limit:ident)?, )*
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct KnobsPatch {
            $(
                $(#[doc = $doc])*
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $f: Option<$t>,
            )*
        }

        impl KnobsPatch {
            /// The `replace` and `option` knobs of this patch over `knobs`.
            fn apply_declared(&self, knobs: &mut Knobs) {
                $( knobs_patch!(@apply $kind, self, knobs, $f); )*
            }

            /// The `replace`, `option` and `cleaned` knobs that differ.
            fn between_declared(base: &Knobs, target: &Knobs, patch: &mut KnobsPatch) {
                $( knobs_patch!(@between $kind, base, target, patch, $f); )*
            }

            /// The number knobs declared with a range (`in LIMIT`), in
            /// field order: name, value, range.
            fn numbers_declared(&mut self) -> Vec<(&'static str, &mut Option<f32>, limits::Limit)> {
                vec![$( $( (stringify!($f), &mut self.$f, limits::$limit), )? )*]
            }
        }

        impl Knobs {
            /// The number knobs declared with a range, clamped into it.
            fn clamp_declared(&mut self) {
                $( $( knobs_patch!(@clamp $kind, self, $f, $limit); )? )*
            }
        }
    };
    (@clamp replace, $k:ident, $f:ident, $limit:ident) => {
        $k.$f = limits::$limit.clamp($k.$f);
    };
    (@clamp option, $k:ident, $f:ident, $limit:ident) => {
        $k.$f = $k.$f.map(|v| limits::$limit.clamp(v));
    };
    (@apply replace, $p:ident, $k:ident, $f:ident) => {
        if let Some(v) = &$p.$f {
            $k.$f = v.clone();
        }
    };
    (@apply option, $p:ident, $k:ident, $f:ident) => {
        if $p.$f.is_some() {
            $k.$f = $p.$f.clone();
        }
    };
    (@apply $other:ident, $($rest:tt)*) => {};
    (@between replace, $b:ident, $t:ident, $p:ident, $f:ident) => {
        $p.$f = ($b.$f != $t.$f).then(|| $t.$f.clone());
    };
    (@between cleaned, $($rest:tt)*) => {
        knobs_patch!(@between replace, $($rest)*);
    };
    (@between option, $b:ident, $t:ident, $p:ident, $f:ident) => {
        $p.$f = if $b.$f != $t.$f { $t.$f.clone() } else { None };
    };
    (@between custom, $($rest:tt)*) => {};
}

knobs_patch! {
    /// A change to [`Knobs`]: every field optional, `None` keeps the base's
    /// value. `path_weights` sets each rule's glob over the base's rules
    /// (a glob the base has gets this weight; the base's other rules stay);
    /// every other field replaces the base's.
    ///
    /// Declared once below: each field with its kind, which writes its line
    /// of [`KnobsPatch::apply`] and [`KnobsPatch::between`] (`replace`: the
    /// base's value replaced; `option`: an optional knob set when given;
    /// `cleaned`: set through a cleaning step in `apply`; `custom`: both by
    /// hand). A number knob's `in LIMIT` (a range in [`limits`]) also
    /// writes its clamp in [`Knobs::normalize`] and its check in
    /// [`KnobsPatch::validate`].
    pub struct KnobsPatch {
        /// Model name.
        model: String => cleaned,
        /// User rows of the model table (replace the base's rows).
        models: Vec<ModelSpec> => replace,
        /// The budget.
        budget: Budget => option,
        /// Path weight rules, set per glob over the base's.
        path_weights: Vec<PathWeight> => custom,
        /// Primer file names or globs (replace the base's).
        primers: Vec<String> => cleaned,
        /// Added to primer files' scores.
        primer_boost: f32 => replace in PRIMER_BOOST,
        /// Share of the leading files' best score their other chunks get.
        sibling_share: f32 => replace in SIBLING_SHARE,
        /// Recency half-life in days.
        recency_half_life_days: f32 => replace in RECENCY_HALF_LIFE_DAYS,
        /// Recency boost of a file edited now.
        recency_weight: f32 => replace in RECENCY_WEIGHT,
        /// Files the re-ranker reads.
        read_files: usize => replace,
        /// Word pieces the re-ranker reads per file.
        read_window: usize => replace,
        /// The classified intent, overridden.
        intent: Intent => option,
        /// Cap on automatic items.
        k: usize => option,
        /// Minimum score of automatic items.
        min_score: f32 => option in MIN_SCORE,
        /// MMR λ.
        diversity: f32 => option in DIVERSITY,
        /// Levels of detail by score band.
        lod: bool => replace,
        /// Tokens kept free for the answer.
        answer_reserve: u32 => replace,
        /// Output format.
        format: Format => replace,
        /// Output toggles.
        toggles: TogglesPatch => custom,
        /// Sanitizing retrieved text.
        sanitize: bool => replace,
        /// Secret redaction.
        redact_secrets: bool => replace,
        /// Headers of enclosing definitions.
        glue: bool => replace,
        /// Instruction preambles, set per question type over the base's; an
        /// empty text puts the built-in one back.
        instructions: std::collections::BTreeMap<QuestionType, String> => custom,
    }
}

/// Something in a patch that is out of range, found by
/// [`KnobsPatch::validate`] (which takes it out of the patch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobProblem {
    /// The knob's name, as in [`KnobsPatch`] (and the team file).
    pub knob: &'static str,
    /// For a list knob, the 0-based index of the entry taken out; `None`:
    /// the whole knob was taken out.
    pub entry: Option<usize>,
    /// What is wrong, in words for the user.
    pub message: String,
}

impl KnobProblem {
    /// The problem in words, the knob called `key` (a door whose syntax
    /// names it differently, such as golden files' `weights`).
    pub fn describe(&self, key: &str) -> String {
        match self.entry {
            Some(_) => format!("`{key}`: {}", self.message),
            None => format!("`{key}` {}", self.message),
        }
    }
}

impl std::fmt::Display for KnobProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe(self.knob))
    }
}

/// A path weight rule as every door accepts it: a glob that compiles
/// (trimmed) and a weight in [`limits::PATH_WEIGHT`]; `Err` says what is
/// wrong.
pub fn check_path_weight(glob: &str, weight: f32) -> Result<PathWeight, String> {
    let glob = glob.trim();
    let range = limits::PATH_WEIGHT;
    if glob.is_empty() {
        Err("an empty glob".to_owned())
    } else if !range.contains(weight) {
        Err(format!(
            "weight {weight} for {glob:?}: must be between {} and {}",
            range.min, range.max
        ))
    } else if let Err(e) = globset::Glob::new(glob) {
        Err(format!("{glob:?}: {}", e.kind()))
    } else {
        Ok(PathWeight {
            glob: glob.to_owned(),
            weight,
        })
    }
}

/// Sets `rule` in `weights`: replaces the weight of a rule with the same
/// glob, else adds it.
pub fn set_path_weight(weights: &mut Vec<PathWeight>, rule: PathWeight) {
    match weights
        .iter_mut()
        .find(|w| w.glob.trim() == rule.glob.trim())
    {
        Some(existing) => existing.weight = rule.weight,
        None => weights.push(rule),
    }
}

/// Trimmed, non-empty primer names.
fn clean_primers(primers: &[String]) -> Vec<String> {
    primers
        .iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

impl ModelSpec {
    /// This row in range: a lowercase trimmed name, a default budget
    /// within the window, a margin within [`limits::SAFETY_MARGIN`].
    pub fn normalized(mut self) -> ModelSpec {
        self.name = self.name.trim().to_lowercase();
        self.context_window = self.context_window.max(1);
        self.default_budget = self.default_budget.clamp(1, self.context_window);
        self.safety_margin = limits::SAFETY_MARGIN.clamp(self.safety_margin);
        self
    }
}

impl Knobs {
    /// Every knob brought into its range ([`limits`]): numbers clamped,
    /// globs and primers trimmed (empty ones dropped), model rows without
    /// a name or a window dropped. Doors that accept out-of-range input
    /// (the app's controls, stored preferences) call it before asking; the
    /// others reject such input through [`KnobsPatch::validate`].
    pub fn normalize(&mut self) {
        use limits::*;
        self.model = self.model.trim().to_owned();
        self.models = std::mem::take(&mut self.models)
            .into_iter()
            .filter(|m| !m.name.trim().is_empty() && m.context_window > 0)
            .map(ModelSpec::normalized)
            .collect();
        self.budget = self.budget.map(|b| match b {
            Budget::Tokens(n) => Budget::Tokens(n.max(MIN_BUDGET)),
            Budget::Chars(n) => Budget::Chars(n.max(MIN_BUDGET)),
        });
        self.path_weights = std::mem::take(&mut self.path_weights)
            .into_iter()
            .filter(|w| !w.glob.trim().is_empty())
            .map(|w| PathWeight {
                glob: w.glob.trim().to_owned(),
                weight: PATH_WEIGHT.clamp(w.weight),
            })
            .collect();
        self.primers = clean_primers(&self.primers);
        self.clamp_declared();
        self.read_files = self.read_files.min(MAX_READ_FILES);
        self.read_window = self
            .read_window
            .clamp(*READ_WINDOW.start(), *READ_WINDOW.end());
        self.k = self.k.map(|k| k.clamp(1, MAX_K));
        self.instructions.retain(|_, text| !text.trim().is_empty());
        for text in self.instructions.values_mut() {
            if let Some((at, _)) = text.char_indices().nth(MAX_INSTRUCTIONS_CHARS) {
                text.truncate(at);
            }
        }
    }
}

impl KnobsPatch {
    /// Takes out of this patch everything out of range and returns what it
    /// took, in field order: a bad entry of a list (a path weight, a model
    /// row) goes alone, the list's other entries stay. What stays is in
    /// range, so applying it keeps knobs that were in range in range.
    // Long: one range check per knob, in field order: a table written as code.
    pub fn validate(&mut self) -> Vec<KnobProblem> {
        use limits::*;
        let mut problems = Vec::new();
        let mut whole = |knob: &'static str, message: String| {
            problems.push(KnobProblem {
                knob,
                entry: None,
                message,
            })
        };
        if self.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            self.model = None;
            whole("model", "is empty: omit it for the default".into());
        }
        if let Some(Budget::Tokens(n) | Budget::Chars(n)) = self.budget
            && n < MIN_BUDGET
        {
            self.budget = None;
            whole(
                "budget",
                format!(
                    "{n}: must be at least {MIN_BUDGET} (the instructions and the question need room too)"
                ),
            );
        }
        let numbers = self.numbers_declared();
        for (knob, value, limit) in numbers {
            if let Some(v) = *value
                && !limit.contains(v)
            {
                *value = None;
                whole(
                    knob,
                    format!("{v}: must be between {} and {}", limit.min, limit.max),
                );
            }
        }
        if let Some(k) = self.k
            && !(1..=MAX_K).contains(&k)
        {
            self.k = None;
            whole("k", format!("{k}: must be between 1 and {MAX_K}"));
        }
        if let Some(n) = self.read_files
            && n > MAX_READ_FILES
        {
            self.read_files = None;
            whole(
                "read_files",
                format!("{n}: must be between 0 (off) and {MAX_READ_FILES}"),
            );
        }
        if let Some(n) = self.read_window
            && !READ_WINDOW.contains(&n)
        {
            self.read_window = None;
            whole(
                "read_window",
                format!(
                    "{n}: must be between {} and {}",
                    READ_WINDOW.start(),
                    READ_WINDOW.end()
                ),
            );
        }
        if let Some(texts) = &mut self.instructions {
            let before = texts.len();
            texts.retain(|_, t| t.chars().count() <= MAX_INSTRUCTIONS_CHARS);
            if texts.len() < before {
                whole(
                    "instructions",
                    format!("longer than {MAX_INSTRUCTIONS_CHARS} characters: left out"),
                );
            }
        }
        if let Some(rules) = self.path_weights.take() {
            let mut kept = Vec::with_capacity(rules.len());
            for (i, rule) in rules.into_iter().enumerate() {
                match check_path_weight(&rule.glob, rule.weight) {
                    Ok(rule) => kept.push(rule),
                    Err(message) => problems.push(KnobProblem {
                        knob: "path_weights",
                        entry: Some(i),
                        message,
                    }),
                }
            }
            self.path_weights = Some(kept);
        }
        if let Some(rows) = self.models.take() {
            let mut kept = Vec::with_capacity(rows.len());
            for (i, row) in rows.into_iter().enumerate() {
                let problem = if row.name.trim().is_empty() || row.context_window == 0 {
                    Some("a model row needs a name and a context window".to_owned())
                } else if !SAFETY_MARGIN.contains(row.safety_margin) {
                    Some(format!(
                        "safety margin {} of {:?}: must be between {} and {}",
                        row.safety_margin, row.name, SAFETY_MARGIN.min, SAFETY_MARGIN.max
                    ))
                } else {
                    None
                };
                match problem {
                    Some(message) => problems.push(KnobProblem {
                        knob: "models",
                        entry: Some(i),
                        message,
                    }),
                    None => kept.push(row.normalized()),
                }
            }
            self.models = Some(kept);
        }
        problems
    }

    /// `knobs` with this patch over it.
    pub fn apply(&self, knobs: &mut Knobs) {
        self.apply_declared(knobs);
        if let Some(m) = &self.model {
            knobs.model = m.trim().to_owned();
        }
        for rule in self.path_weights.iter().flatten() {
            set_path_weight(&mut knobs.path_weights, rule.clone());
        }
        if let Some(p) = &self.primers {
            knobs.primers = clean_primers(p);
        }
        if let Some(t) = self.toggles {
            let toggles = &mut knobs.toggles;
            toggles.sources = t.sources.unwrap_or(toggles.sources);
            toggles.scores = t.scores.unwrap_or(toggles.scores);
            toggles.structured = t.structured.unwrap_or(toggles.structured);
            toggles.lost_in_middle = t.lost_in_middle.unwrap_or(toggles.lost_in_middle);
            toggles.diff_as_code = t.diff_as_code.unwrap_or(toggles.diff_as_code);
        }
        for (kind, text) in self.instructions.iter().flatten() {
            if text.trim().is_empty() {
                knobs.instructions.remove(kind);
            } else {
                knobs.instructions.insert(*kind, text.clone());
            }
        }
    }

    /// The patch that takes `base` to `target`: each knob that differs,
    /// with `target`'s value. A path-weight rule of `base` that `target`
    /// lacks is set to 1 (neutral), as a per-glob patch cannot remove a
    /// rule; `now` is not a knob a patch carries.
    pub fn between(base: &Knobs, target: &Knobs) -> KnobsPatch {
        fn diff<T: Clone + PartialEq>(a: &T, b: &T) -> Option<T> {
            (a != b).then(|| b.clone())
        }
        let mut weights: Vec<PathWeight> = target
            .path_weights
            .iter()
            .filter(|w| !base.path_weights.contains(w))
            .cloned()
            .collect();
        for old in &base.path_weights {
            if !target.path_weights.iter().any(|w| w.glob == old.glob) {
                weights.push(PathWeight {
                    glob: old.glob.clone(),
                    weight: 1.0,
                });
            }
        }
        let (a, b) = (base.toggles, target.toggles);
        let toggles = TogglesPatch {
            sources: diff(&a.sources, &b.sources),
            scores: diff(&a.scores, &b.scores),
            structured: diff(&a.structured, &b.structured),
            lost_in_middle: diff(&a.lost_in_middle, &b.lost_in_middle),
            diff_as_code: diff(&a.diff_as_code, &b.diff_as_code),
        };
        // Each type whose text differs; one the target has no text for
        // goes back to the built-in (an empty text).
        let mut instructions = std::collections::BTreeMap::new();
        for (kind, text) in &target.instructions {
            if base.instructions.get(kind) != Some(text) {
                instructions.insert(*kind, text.clone());
            }
        }
        for kind in base.instructions.keys() {
            if !target.instructions.contains_key(kind) {
                instructions.insert(*kind, String::new());
            }
        }
        let mut patch = KnobsPatch {
            path_weights: (!weights.is_empty()).then_some(weights),
            toggles: (toggles != TogglesPatch::default()).then_some(toggles),
            instructions: (!instructions.is_empty()).then_some(instructions),
            ..KnobsPatch::default()
        };
        KnobsPatch::between_declared(base, target, &mut patch);
        patch
    }

    /// `base` with this patch over it, as a new value.
    pub fn applied(&self, base: &Knobs) -> Knobs {
        let mut knobs = base.clone();
        self.apply(&mut knobs);
        knobs
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    fn rule(glob: &str, weight: f32) -> PathWeight {
        PathWeight {
            glob: glob.into(),
            weight,
        }
    }

    #[test]
    fn a_patch_replaces_only_what_it_names_and_sets_weights_per_glob() {
        let base = Knobs {
            budget: Some(Budget::Tokens(8000)),
            path_weights: vec![rule("vendor/**", 0.0), rule("docs/**", 0.5)],
            ..Knobs::default()
        };
        let patch = KnobsPatch {
            k: Some(5),
            path_weights: Some(vec![rule("vendor/**", 1.0), rule("src/legacy/**", 0.0)]),
            toggles: Some(TogglesPatch {
                scores: Some(true),
                ..TogglesPatch::default()
            }),
            ..KnobsPatch::default()
        };
        let knobs = patch.applied(&base);
        assert_eq!(knobs.k, Some(5));
        assert_eq!(knobs.budget, Some(Budget::Tokens(8000)));
        assert_eq!(
            knobs.path_weights,
            [
                rule("vendor/**", 1.0),
                rule("docs/**", 0.5),
                rule("src/legacy/**", 0.0)
            ]
        );
        assert!(knobs.toggles.scores && knobs.toggles.sources);
        assert_eq!(KnobsPatch::default().applied(&base), base);
    }

    #[test]
    fn validate_takes_out_what_is_out_of_range_and_says_why() {
        let mut patch = KnobsPatch {
            budget: Some(Budget::Tokens(5)),
            min_score: Some(2.0),
            recency_weight: Some(f32::NAN),
            k: Some(0),
            path_weights: Some(vec![rule("a/**", 3.0), rule("b/**", 0.0), rule("c/[", 1.0)]),
            primer_boost: Some(0.5),
            ..KnobsPatch::default()
        };
        let problems: Vec<String> = patch
            .validate()
            .iter()
            .map(|p| format!("{p} {:?}", p.entry))
            .collect();
        assert_eq!(
            problems,
            [
                "`budget` 5: must be at least 100 (the instructions and the question need room too) None",
                "`recency_weight` NaN: must be between 0 and 0.5 None",
                "`min_score` 2: must be between 0 and 1 None",
                "`k` 0: must be between 1 and 10000 None",
                "`path_weights`: weight 3 for \"a/**\": must be between 0 and 2 Some(0)",
                "`path_weights`: \"c/[\": unclosed character class; missing ']' Some(2)",
            ]
        );
        assert_eq!(
            patch,
            KnobsPatch {
                path_weights: Some(vec![rule("b/**", 0.0)]),
                primer_boost: Some(0.5),
                ..KnobsPatch::default()
            }
        );
        assert!(patch.validate().is_empty(), "what stays is in range");
    }

    #[test]
    fn normalize_brings_every_knob_into_its_range() {
        let mut knobs = Knobs {
            budget: Some(Budget::Chars(3)),
            path_weights: vec![rule(" src/** ", 7.0), rule(" ", 1.0)],
            primers: vec![" README.md ".into(), "".into()],
            primer_boost: -1.0,
            recency_weight: 9.0,
            recency_half_life_days: f32::INFINITY,
            k: Some(0),
            min_score: Some(-0.5),
            diversity: Some(3.0),
            models: vec![
                ModelSpec {
                    name: " Ours ".into(),
                    encoding: Default::default(),
                    context_window: 1000,
                    default_budget: 5000,
                    safety_margin: 2.0,
                    exact: false,
                },
                ModelSpec {
                    name: "".into(),
                    encoding: Default::default(),
                    context_window: 1000,
                    default_budget: 500,
                    safety_margin: 0.0,
                    exact: false,
                },
            ],
            ..Knobs::default()
        };
        knobs.normalize();
        assert_eq!(knobs.budget, Some(Budget::Chars(limits::MIN_BUDGET)));
        assert_eq!(knobs.path_weights, [rule("src/**", 2.0)]);
        assert_eq!(knobs.primers, ["README.md"]);
        assert_eq!(
            (
                knobs.primer_boost,
                knobs.recency_weight,
                knobs.recency_half_life_days
            ),
            (0.0, 0.5, 0.0)
        );
        assert_eq!(
            (knobs.k, knobs.min_score, knobs.diversity),
            (Some(1), Some(0.0), Some(1.0))
        );
        assert_eq!(knobs.models.len(), 1);
        let m = &knobs.models[0];
        assert_eq!(
            (m.name.as_str(), m.default_budget, m.safety_margin),
            ("ours", 1000, 0.9)
        );
        let mut defaults = Knobs::default();
        defaults.normalize();
        assert_eq!(defaults, Knobs::default(), "the defaults are in range");
    }

    #[test]
    fn between_takes_a_base_to_a_target() {
        let base = Knobs {
            path_weights: vec![rule("vendor/**", 0.0), rule("docs/**", 0.5)],
            ..Knobs::default()
        };
        let mut target = base.clone();
        target.budget = Some(Budget::Tokens(9000));
        target.k = Some(12);
        target.toggles.scores = true;
        target.path_weights = vec![rule("vendor/**", 0.0), rule("src/**", 1.5)];
        let patch = KnobsPatch::between(&base, &target);
        assert_eq!(
            serde_json::to_string(&patch).unwrap(),
            r#"{"budget":{"tokens":9000},"path_weights":[{"glob":"src/**","weight":1.5},{"glob":"docs/**","weight":1.0}],"k":12,"toggles":{"scores":true}}"#
        );
        let mut got = patch.applied(&base);
        assert_eq!(
            got.path_weights[1],
            rule("docs/**", 1.0),
            "neutral, not removed"
        );
        got.path_weights.retain(|w| w.glob != "docs/**");
        assert_eq!(got, target);
        assert_eq!(KnobsPatch::between(&base, &base), KnobsPatch::default());
    }

    /// Every field of the patch, whatever its kind in `knobs_patch!`:
    /// a target that changes every knob comes back through `between` and
    /// `apply`, and the patch sets every field.
    #[test]
    fn every_knob_goes_through_between_and_apply() {
        let base = Knobs::default();
        let target = Knobs {
            model: "o3".into(),
            models: vec![ModelSpec {
                name: "ours".into(),
                encoding: crate::tokens::Encoding::Cl100kBase,
                context_window: 1000,
                default_budget: 500,
                safety_margin: 0.1,
                exact: false,
            }],
            budget: Some(Budget::Chars(5000)),
            path_weights: vec![rule("src/**", 1.5)],
            primers: vec!["NOTES.md".into()],
            primer_boost: 0.5,
            sibling_share: 0.2,
            recency_half_life_days: 7.0,
            recency_weight: 0.2,
            read_files: 3,
            read_window: 64,
            intent: Some(Intent::Tests),
            k: Some(5),
            min_score: Some(0.1),
            diversity: Some(0.5),
            lod: false,
            answer_reserve: 100,
            format: Format::Markdown,
            toggles: crate::render::Toggles {
                sources: !base.toggles.sources,
                scores: !base.toggles.scores,
                structured: !base.toggles.structured,
                lost_in_middle: !base.toggles.lost_in_middle,
                diff_as_code: !base.toggles.diff_as_code,
            },
            sanitize: false,
            redact_secrets: false,
            glue: false,
            instructions: [(QuestionType::Debugging, "Find the cause.".to_owned())].into(),
            ..base.clone()
        };
        let patch = KnobsPatch::between(&base, &target);
        let set = serde_json::to_value(&patch).unwrap();
        let names = set.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(names.len(), 23, "every field set: {names:?}");
        assert_eq!(patch.applied(&base), target);
    }

    /// Every number declared with a range: `normalize` clamps it and
    /// `validate` takes it out, named.
    #[test]
    fn every_ranged_number_is_clamped_and_checked() {
        let mut knobs = Knobs {
            primer_boost: 9.0,
            sibling_share: 9.0,
            recency_half_life_days: -1.0,
            recency_weight: 9.0,
            min_score: Some(9.0),
            diversity: Some(f32::NAN),
            ..Knobs::default()
        };
        knobs.normalize();
        use limits::*;
        assert_eq!(
            (
                knobs.primer_boost,
                knobs.sibling_share,
                knobs.recency_half_life_days,
                knobs.recency_weight,
                knobs.min_score,
                knobs.diversity,
            ),
            (
                PRIMER_BOOST.max,
                SIBLING_SHARE.max,
                RECENCY_HALF_LIFE_DAYS.min,
                RECENCY_WEIGHT.max,
                Some(MIN_SCORE.max),
                Some(DIVERSITY.min),
            )
        );
        let mut patch = KnobsPatch {
            primer_boost: Some(9.0),
            sibling_share: Some(9.0),
            recency_half_life_days: Some(-1.0),
            recency_weight: Some(9.0),
            min_score: Some(9.0),
            diversity: Some(f32::NAN),
            ..KnobsPatch::default()
        };
        let named: Vec<_> = patch.validate().into_iter().map(|p| p.knob).collect();
        assert_eq!(
            named,
            [
                "primer_boost",
                "sibling_share",
                "recency_half_life_days",
                "recency_weight",
                "min_score",
                "diversity"
            ]
        );
        assert_eq!(patch, KnobsPatch::default());
    }

    #[test]
    fn a_patch_decodes_from_json_and_refuses_unknown_knobs() {
        let patch: KnobsPatch =
            serde_json::from_str(r#"{"k": 3, "toggles": {"scores": true}}"#).unwrap();
        assert_eq!(patch.k, Some(3));
        assert!(serde_json::from_str::<KnobsPatch>(r#"{"kk": 3}"#).is_err());
    }
}
