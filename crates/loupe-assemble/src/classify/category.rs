//! The CodeBuddy topic classifier: which categories (authentication, API,
//! database, ...) a question is about, and how sure we are.
//!
//! Each word of the question is matched against each category's keywords by,
//! in order, direct match → fuzzy match (Levenshtein) → stemmed match
//! (Snowball English, the maintained successor of Porter's stemmer); the
//! first technique that matches wins. A negator among the few words before a
//! match ("without jwt") flips that match's sign. Strong indicators ("jwt"
//! for authentication) weigh more.
//!
//! This module does not decide the question type or retrieval intent (see
//! [`super::kind`]).
//!
//! *Invariant:* categories are reported only with a positive total score,
//! sorted by score, ties in table order.

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};

/// A topic a question can be about (the seed's nine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Login, tokens, permissions.
    Authentication,
    /// Endpoints, routes, controllers.
    Api,
    /// Schemas, models, migrations.
    Database,
    /// Structure, patterns, frameworks.
    Architecture,
    /// Settings, environment variables.
    Configuration,
    /// Tests, specs, coverage.
    Testing,
    /// Speed, memory, caching.
    Performance,
    /// Errors, exceptions, validation.
    ErrorHandling,
    /// Docker, CI/CD, cloud.
    Deployment,
}

/// How a keyword matched a word of the question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// The word is the keyword (or contains a multi-part keyword like `ci/cd`).
    Direct,
    /// Within the Levenshtein distance allowed for its length.
    Fuzzy,
    /// Same stem.
    Stem,
}

/// Score of a direct match.
pub const DIRECT_WEIGHT: f32 = 1.0;
/// Score of a stemmed match: as meaningful as a direct one, a little less certain.
pub const STEM_WEIGHT: f32 = 0.8;
/// Score of a fuzzy match: a typo guess.
pub const FUZZY_WEIGHT: f32 = 0.6;
/// Extra score for a strong indicator (the seed's "confidence boost").
pub const STRONG_BOOST: f32 = 1.0;
/// Shortest word that may match fuzzily (issue 3: not for tokens under 5 characters).
pub const FUZZY_MIN_LEN: usize = 5;
/// Longest word that still only gets distance 1; longer words get 2. At
/// distance 2, five-letter words collide too often (`cache`/`catch`,
/// `route`/`rust`), so the seed's "≤ 2" applies from 8 characters.
pub const FUZZY_DISTANCE_1_MAX_LEN: usize = 7;
/// Shortest stem that may match: three-letter stems collide (`set` from
/// `settings`, `use` from `users`).
pub const STEM_MIN_LEN: usize = 4;
/// Words before a match searched for a negator.
pub const NEGATION_WINDOW: usize = 3;
/// Words that flip the following match ("not", "without" from the seed;
/// "no", "exclude", "avoid" from issue 3).
pub const NEGATORS: &[&str] = &[
    "not",
    "without",
    "no",
    "exclude",
    "excluding",
    "avoid",
    "avoiding",
    "never",
    "don't",
    "dont",
    "except",
    "ignore",
    "ignoring",
];
/// Top score at or above which confidence is high (two direct hits, or a strong one).
pub const HIGH_CONFIDENCE_SCORE: f32 = 2.0;
/// Top score at or above which confidence is medium (one direct hit).
pub const MEDIUM_CONFIDENCE_SCORE: f32 = 1.0;

/// How sure the classifier is of its top category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Strong evidence for one category, clearly ahead of the next.
    High,
    /// Some evidence.
    Medium,
    /// Little or none.
    #[default]
    Low,
}

/// The keywords of one category. The table is data: callers may extend it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryRule {
    /// The category.
    pub category: Category,
    /// Trigger keywords, lowercase.
    pub keywords: Vec<String>,
    /// Keywords that are strong indicators (also matched as keywords).
    #[serde(default)]
    pub strong: Vec<String>,
}

/// One keyword hit, kept so the UI can show why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryMatch {
    /// The question's word.
    pub word: String,
    /// The keyword it matched.
    pub keyword: String,
    /// How.
    pub how: MatchKind,
    /// A negator preceded it, so it counted against the category.
    pub negated: bool,
    /// Signed contribution to the category's score.
    pub score: f32,
}

/// A category with its score and evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryScore {
    /// The category.
    pub category: Category,
    /// Sum of its matches' scores (positive).
    pub score: f32,
    /// Every hit, in question order.
    pub matches: Vec<CategoryMatch>,
}

/// The seed's keyword lists, plus the full words the seed's substring match
/// caught implicitly (`authentication` for `auth`) — we match whole words.
// Long: a table: the seed's keyword lists, one rule per category.
pub fn default_rules() -> Vec<CategoryRule> {
    let rule = |category, keywords: &[&str], strong: &[&str]| CategoryRule {
        category,
        keywords: keywords.iter().map(|k| k.to_string()).collect(),
        strong: strong.iter().map(|k| k.to_string()).collect(),
    };
    vec![
        rule(
            Category::Authentication,
            &[
                "auth",
                "login",
                "jwt",
                "oauth",
                "passport",
                "permissions",
                "authentication",
                "authorization",
                "authenticate",
                "logout",
                "session",
                "password",
                "token",
                "sso",
                "credentials",
                "signin",
            ],
            &[
                "jwt",
                "oauth",
                "passport",
                "authentication",
                "authorization",
            ],
        ),
        rule(
            Category::Api,
            &[
                "api",
                "endpoint",
                "routes",
                "controllers",
                "rest",
                "graphql",
                "route",
                "handler",
                "request",
                "http",
            ],
            &["endpoint", "graphql", "rest"],
        ),
        rule(
            Category::Database,
            &[
                "database",
                "schema",
                "models",
                "migration",
                "orm",
                "prisma",
                "sql",
                "query",
                "table",
                "db",
                "sqlite",
                "postgres",
            ],
            &["migration", "prisma", "orm", "sql", "database"],
        ),
        rule(
            Category::Architecture,
            &[
                "architecture",
                "structure",
                "pattern",
                "framework",
                "microservices",
                "design",
                "overview",
                "layers",
                "modules",
            ],
            &["architecture", "microservices"],
        ),
        rule(
            Category::Configuration,
            &[
                "configuration",
                "env",
                "settings",
                "variables",
                "dotenv",
                "config",
                "environment",
            ],
            &["dotenv", "configuration"],
        ),
        rule(
            Category::Testing,
            &[
                "test", "spec", "jest", "mocha", "coverage", "e2e", "tests", "testing", "unit",
                "fixture", "mock",
            ],
            &["jest", "mocha", "e2e", "coverage"],
        ),
        rule(
            Category::Performance,
            &[
                "performance",
                "optimization",
                "cache",
                "memory",
                "profiling",
                "slow",
                "latency",
                "speed",
                "fast",
            ],
            &["profiling", "performance", "latency"],
        ),
        rule(
            Category::ErrorHandling,
            &[
                "error",
                "exception",
                "try-catch",
                "validation",
                "handling",
                "errors",
                "panic",
                "throw",
                "catch",
            ],
            &["exception", "try-catch"],
        ),
        rule(
            Category::Deployment,
            &[
                "deployment",
                "docker",
                "ci/cd",
                "pipeline",
                "kubernetes",
                "aws",
                "deploy",
                "k8s",
                "helm",
                "terraform",
            ],
            &["docker", "kubernetes", "ci/cd", "k8s"],
        ),
    ]
}

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Lowercase words of the question, keeping `-` and `/` inside words
/// (`try-catch`, `ci/cd`).
pub(crate) fn words(question: &str) -> Vec<String> {
    question
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '/' || c == '\''))
        .map(|w| w.trim_matches(['-', '/', '\'']).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn max_distance(len: usize) -> usize {
    match len {
        0..FUZZY_MIN_LEN => 0,
        FUZZY_MIN_LEN..=FUZZY_DISTANCE_1_MAX_LEN => 1,
        _ => 2,
    }
}

/// How `word` matches `keyword`, if at all.
fn match_word(word: &str, keyword: &str, word_stem: &str) -> Option<MatchKind> {
    if word == keyword {
        return Some(MatchKind::Direct);
    }
    // Multi-part keywords also match inside a longer word (`ci/cd-pipeline`).
    if (keyword.contains('-') || keyword.contains('/')) && word.contains(keyword) {
        return Some(MatchKind::Direct);
    }
    // Fuzzy and stemmed matches are both tried after a direct miss; when
    // both hit (`migrations`), the stem is the more precise explanation.
    if word_stem.len() >= STEM_MIN_LEN && STEMMER.stem(keyword) == word_stem {
        return Some(MatchKind::Stem);
    }
    let shorter = word.chars().count().min(keyword.chars().count());
    let allowed = max_distance(shorter);
    if allowed > 0 && strsim::levenshtein(word, keyword) <= allowed {
        return Some(MatchKind::Fuzzy);
    }
    None
}

/// Scores every category of `rules` against `question`.
pub fn categorize(question: &str, rules: &[CategoryRule]) -> (Vec<CategoryScore>, Confidence) {
    let words = words(question);
    let stems: Vec<String> = words.iter().map(|w| STEMMER.stem(w).into_owned()).collect();
    let mut scores = Vec::new();
    for rule in rules {
        let mut matches = Vec::new();
        for (i, word) in words.iter().enumerate() {
            let best = rule
                .keywords
                .iter()
                .chain(rule.strong.iter())
                .filter_map(|k| match_word(word, k, &stems[i]).map(|how| (k, how)))
                // Direct beats stem beats fuzzy; table order breaks ties.
                .min_by_key(|(_, how)| match how {
                    MatchKind::Direct => 0,
                    MatchKind::Stem => 1,
                    MatchKind::Fuzzy => 2,
                });
            let Some((keyword, how)) = best else { continue };
            let base = match how {
                MatchKind::Direct => DIRECT_WEIGHT,
                MatchKind::Stem => STEM_WEIGHT,
                MatchKind::Fuzzy => FUZZY_WEIGHT,
            };
            let strong = rule.strong.iter().any(|s| s == keyword) && how != MatchKind::Fuzzy;
            let weight = if strong { base + STRONG_BOOST } else { base };
            let negated = words[i.saturating_sub(NEGATION_WINDOW)..i]
                .iter()
                .any(|w| NEGATORS.contains(&w.as_str()));
            let score = if negated { -weight } else { weight };
            matches.push(CategoryMatch {
                word: word.clone(),
                keyword: keyword.clone(),
                how,
                negated,
                score,
            });
        }
        let score: f32 = matches.iter().map(|m| m.score).sum();
        if score > 0.0 {
            scores.push(CategoryScore {
                category: rule.category,
                score,
                matches,
            });
        }
    }
    // Stable sort keeps table order among equal scores.
    scores.sort_by(|a, b| b.score.total_cmp(&a.score));
    let confidence = match (scores.first(), scores.get(1)) {
        (Some(top), second)
            if top.score >= HIGH_CONFIDENCE_SCORE
                && second.is_none_or(|s| s.score * 1.5 <= top.score) =>
        {
            Confidence::High
        }
        (Some(top), _) if top.score >= MEDIUM_CONFIDENCE_SCORE => Confidence::Medium,
        _ => Confidence::Low,
    };
    (scores, confidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(question: &str, expect: &str) {
        let (scores, confidence) = categorize(question, &default_rules());
        let mut got = format!("{confidence:?}");
        for s in &scores {
            got.push_str(&format!("\n{:?} {:.1}:", s.category, s.score));
            for m in &s.matches {
                let neg = if m.negated { " NOT" } else { "" };
                got.push_str(&format!(" {}~{}({:?}{neg})", m.word, m.keyword, m.how));
            }
        }
        assert_eq!(got, expect.trim(), "\n--- got ---\n{got}\n");
    }

    #[test]
    fn direct_and_strong() {
        check(
            "How does the JWT login work?",
            "High\nAuthentication 3.0: jwt~jwt(Direct) login~login(Direct)",
        );
    }

    #[test]
    fn fuzzy_only_for_long_words() {
        // `databse` (typo) is fuzzy; `tets` is too short to guess.
        check(
            "where is the databse configured? tets",
            "Medium\nConfiguration 1.8: configured~configuration(Stem)\nDatabase 0.6: databse~database(Fuzzy)",
        );
    }

    #[test]
    fn stemming() {
        check(
            "which migrations are slowing deployments",
            "Medium\nDatabase 1.8: migrations~migration(Stem)\nPerformance 0.8: slowing~slow(Stem)\n\
             Deployment 0.8: deployments~deployment(Stem)",
        );
    }

    #[test]
    fn negation_flips() {
        check(
            "set up the api without docker",
            "Medium\nApi 1.0: api~api(Direct)",
        );
    }

    #[test]
    fn nothing_matches() {
        check("what is this?", "Low");
    }
}
