//! The model table: which tokenizer, context window and default context
//! budget each model gets.
//!
//! Budgets for the models the CodeBuddy seed lists are the seed's
//! (`SmartContextSelectorService` table); newer models inherit the budget of
//! their family. Context windows are the vendors' published limits.
//! Models whose own tokenizer is not public are counted with the closest
//! public BPE and a safety margin: the budget is shrunk by that fraction so
//! that an undercount by the stand-in tokenizer does not overflow.
//!
//! This module does not count tokens ([`crate::tokens`] does) and knows no
//! network: the table is data the caller may extend or override.

use serde::{Deserialize, Serialize};

use crate::tokens::Encoding;

/// Budget when the model is unknown: the seed's "Default fallback 4 000".
pub const DEFAULT_BUDGET: u32 = 4_000;
/// Context window assumed for an unknown model: RAGFlow's fallback
/// (`effective_context_length = max_tokens or 8192`).
pub const DEFAULT_CONTEXT_WINDOW: u32 = 8_192;

// The margins below are measured by `make token-margins` (TOKENIZERS.md):
// 280 prompt-sized samples of real code and docs in seven repositories and
// six languages, each counted by the
// stand-in and by the model family's own tokenizer from its registry
// package; the margin is the share that kept the worst sample in budget,
// rounded up with a point of slack.

/// Safety margin for Claude: its tokenizer is not public. The only public
/// Claude tokenizer (Claude 1/2's, npm `@anthropic-ai/tokenizer`) counted
/// up to 26.8% more than cl100k (21.2% of the budget kept free covers it);
/// Claude 3+'s is not available to measure, so this is the legacy one's.
pub const MARGIN_CLAUDE: f32 = 0.22;
/// Safety margin for Gemini, counted with o200k_base: the 256k
/// SentencePiece vocabulary Gemma publishes (a subset of Gemini's) counted
/// up to 29.7% more (22.9% kept free covers it).
pub const MARGIN_GEMINI: f32 = 0.24;
/// Safety margin for Llama 4 (its 202k vocabulary does not ship on a
/// registry here: not measured) — a few percent, as for Llama 3's close
/// relative of cl100k.
pub const MARGIN_CLOSE_BPE: f32 = 0.05;
/// Safety margin for SentencePiece 32k vocabularies (Llama 2, CodeLlama),
/// which spend about a quarter more tokens on code than cl100k (not
/// measured here).
pub const MARGIN_SENTENCEPIECE: f32 = 0.25;

/// One row of the model table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Lowercase name prefix this row matches (`gpt-4o` matches `gpt-4o-2024-08-06`).
    pub name: String,
    /// The BPE tokens are counted with.
    pub encoding: Encoding,
    /// The model's context window in tokens.
    pub context_window: u32,
    /// The default context budget in tokens for assembled context.
    pub default_budget: u32,
    /// Fraction of any token budget kept free because `encoding` only
    /// approximates the model's own tokenizer (0 for OpenAI models).
    #[serde(default)]
    pub safety_margin: f32,
    /// Whether `encoding` is the model's own tokenizer (counts are exact),
    /// not a stand-in (counts are estimates, hence the margin).
    #[serde(default)]
    pub exact: bool,
}

impl ModelSpec {
    /// `budget` with this model's safety margin taken off.
    pub fn usable(&self, budget: u32) -> u32 {
        let margin = self.safety_margin.clamp(0.0, 0.9);
        // In f64: `1.0 - 0.22` in f32 is a hair under 0.78, a token short.
        (f64::from(budget) * (1.0 - f64::from(margin))).floor() as u32
    }
}

/// (name, encoding, context window, default budget, margin, exact).
type Row = (&'static str, Encoding, u32, u32, f32, bool);

use Encoding::{Cl100kBase as CL, O200kBase as O2, Qwen2 as QW, Qwen35 as Q35};

/// The model's own tokenizer counts it.
const EXACT: bool = true;
/// A stand-in counts it: an estimate.
const EST: bool = false;

/// The built-in rows. Seed budgets are marked; the rest follow their family.
const BUILTIN: &[Row] = &[
    // OpenAI, o200k_base.
    ("gpt-4o", O2, 128_000, 20_000, 0.0, EXACT), // seed: GPT-4 Turbo / GPT-4o 20 000
    ("gpt-4.1", O2, 1_047_576, 20_000, 0.0, EXACT),
    ("gpt-4.5", O2, 128_000, 20_000, 0.0, EXACT),
    ("gpt-5", O2, 400_000, 20_000, 0.0, EXACT),
    ("o1", O2, 200_000, 20_000, 0.0, EXACT),
    ("o3", O2, 200_000, 20_000, 0.0, EXACT),
    ("o4-mini", O2, 200_000, 20_000, 0.0, EXACT),
    ("chatgpt-4o", O2, 128_000, 20_000, 0.0, EXACT),
    ("gpt-oss", O2, 131_072, 20_000, 0.0, EXACT),
    // OpenAI, cl100k_base.
    ("gpt-4-turbo", CL, 128_000, 20_000, 0.0, EXACT), // seed
    ("gpt-4", CL, 8_192, 6_000, 0.0, EXACT),          // seed: GPT-4 6 000
    ("gpt-4-32k", CL, 32_768, 6_000, 0.0, EXACT),
    ("gpt-3.5-turbo", CL, 16_385, 4_000, 0.0, EXACT), // seed: GPT-3.5 Turbo 4 000
    // Anthropic: tokenizer not public.
    ("claude-3-opus", CL, 200_000, 50_000, MARGIN_CLAUDE, EST), // seed: Claude 3 Opus / Sonnet 50 000
    ("claude-3-sonnet", CL, 200_000, 50_000, MARGIN_CLAUDE, EST), // seed
    ("claude-3-haiku", CL, 200_000, 20_000, MARGIN_CLAUDE, EST), // seed: Claude 3 Haiku 20 000
    ("claude-3-5-sonnet", CL, 200_000, 50_000, MARGIN_CLAUDE, EST),
    ("claude-3-5-haiku", CL, 200_000, 20_000, MARGIN_CLAUDE, EST),
    ("claude-3-7-sonnet", CL, 200_000, 50_000, MARGIN_CLAUDE, EST),
    ("claude-sonnet-4", CL, 200_000, 50_000, MARGIN_CLAUDE, EST),
    ("claude-opus-4", CL, 200_000, 50_000, MARGIN_CLAUDE, EST),
    ("claude-haiku-4", CL, 200_000, 20_000, MARGIN_CLAUDE, EST),
    ("claude", CL, 200_000, 50_000, MARGIN_CLAUDE, EST),
    // Google Gemini: not public; Gemma's published vocabulary measured.
    ("gemini-1.5-pro", O2, 2_097_152, 20_000, MARGIN_GEMINI, EST),
    (
        "gemini-1.5-flash",
        O2,
        1_048_576,
        20_000,
        MARGIN_GEMINI,
        EST,
    ),
    ("gemini-2", O2, 1_048_576, 20_000, MARGIN_GEMINI, EST),
    ("gemini", O2, 1_048_576, 20_000, MARGIN_GEMINI, EST),
    // Meta Llama 3.x: its 128k vocabulary is cl100k's plus 28k tokens, and
    // its licence keeps it off a permissive registry package. cl100k never
    // counted fewer tokens on the measured corpus (ratio 1.000 at the
    // worst), so no margin; still an estimate.
    ("llama-3.3-70b", CL, 128_000, 20_000, 0.0, EST), // seed: Llama 3.3 70B 20 000
    ("llama-4", CL, 128_000, 20_000, MARGIN_CLOSE_BPE, EST), // seed: Llama 4 20 000
    ("llama-3.1", CL, 128_000, 20_000, 0.0, EST),
    ("llama-3.2", CL, 128_000, 20_000, 0.0, EST),
    ("llama-3", CL, 8_192, 6_000, 0.0, EST),
    ("llama3", CL, 8_192, 6_000, 0.0, EST),
    ("codellama", CL, 16_384, 4_000, MARGIN_SENTENCEPIECE, EST), // seed: CodeLlama 4 000
    ("llama-2", CL, 4_096, 3_000, MARGIN_SENTENCEPIECE, EST),
    // Qwen: their own vocabularies, counted exactly (data/PROVENANCE.md):
    // Qwen 2, 2.5 and 3 share the 151k one, Qwen 3.5 and 3.6 the 248k one.
    ("qwen3.5", Q35, 262_144, 4_000, 0.0, EXACT),
    ("qwen3.6", Q35, 262_144, 4_000, 0.0, EXACT),
    ("qwen2.5-coder", QW, 32_768, 4_000, 0.0, EXACT), // seed: Qwen 2.5 Coder 4 000
    ("qwen-2.5-coder", QW, 32_768, 4_000, 0.0, EXACT),
    ("qwen2.5-coder-3b", QW, 32_768, 3_000, 0.0, EXACT), // seed: Qwen 2.5 Coder 3B 3 000
    ("qwen-2.5-coder-3b", QW, 32_768, 3_000, 0.0, EXACT),
    ("qwen3", QW, 32_768, 4_000, 0.0, EXACT),
    ("qwen", QW, 32_768, 4_000, 0.0, EXACT),
];

/// The built-in model table.
pub fn builtin() -> Vec<ModelSpec> {
    BUILTIN
        .iter()
        .map(
            |&(name, encoding, context_window, default_budget, safety_margin, exact)| ModelSpec {
                name: name.to_string(),
                encoding,
                context_window,
                default_budget,
                safety_margin,
                exact,
            },
        )
        .collect()
}

/// The spec used for a model nobody knows: o200k, 8,192-token window, 4,000 budget.
pub fn fallback(name: &str) -> ModelSpec {
    ModelSpec {
        name: normalize(name),
        encoding: Encoding::O200kBase,
        context_window: DEFAULT_CONTEXT_WINDOW,
        default_budget: DEFAULT_BUDGET,
        safety_margin: 0.0,
        exact: false,
    }
}

/// Lowercase, vendor prefix (`openai/`, `meta-llama/`) dropped, spaces,
/// underscores and colons (Ollama tags) turned into `-`.
pub fn normalize(name: &str) -> String {
    let name = name.trim().to_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    name.chars()
        .map(|c| {
            if c == ' ' || c == '_' || c == ':' {
                '-'
            } else {
                c
            }
        })
        .collect()
}

/// Look `name` up: `overrides` first, then the built-in table. The row whose
/// name is the longest prefix of the normalized name wins (`gpt-4o-mini` →
/// `gpt-4o`, not `gpt-4`); `None` when nothing matches.
pub fn lookup(name: &str, overrides: &[ModelSpec]) -> Option<ModelSpec> {
    let wanted = normalize(name);
    let best = |rows: &[ModelSpec]| {
        rows.iter()
            .filter(|row| wanted.starts_with(&normalize(&row.name)))
            .max_by_key(|row| row.name.len())
            .cloned()
    };
    best(overrides).or_else(|| best(&builtin()))
}

/// [`lookup`], or [`fallback`] when the model is unknown.
pub fn resolve(name: &str, overrides: &[ModelSpec]) -> ModelSpec {
    lookup(name, overrides).unwrap_or_else(|| fallback(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, expect: Option<(&str, Encoding, u32)>) {
        let got = lookup(name, &[]).map(|m| (m.name, m.encoding, m.default_budget));
        let expect = expect.map(|(n, e, b)| (n.to_string(), e, b));
        assert_eq!(got, expect, "{name}");
    }

    #[test]
    fn seed_budgets() {
        check("gpt-4o", Some(("gpt-4o", O2, 20_000)));
        check("gpt-4o-mini-2024-07-18", Some(("gpt-4o", O2, 20_000)));
        check("GPT-4", Some(("gpt-4", CL, 6_000)));
        check("gpt-4-turbo-preview", Some(("gpt-4-turbo", CL, 20_000)));
        check("gpt-3.5-turbo-0125", Some(("gpt-3.5-turbo", CL, 4_000)));
        check(
            "claude-3-opus-20240229",
            Some(("claude-3-opus", CL, 50_000)),
        );
        check(
            "claude-3-haiku-20240307",
            Some(("claude-3-haiku", CL, 20_000)),
        );
        check(
            "meta-llama/Llama-3.3-70B-Instruct",
            Some(("llama-3.3-70b", CL, 20_000)),
        );
        check("qwen2.5-coder:3b", Some(("qwen2.5-coder-3b", QW, 3_000)));
        check("qwen2.5-coder:7b", Some(("qwen2.5-coder", QW, 4_000)));
        check("Qwen/Qwen3.6-27B", Some(("qwen3.6", Q35, 4_000)));
        check("gemini-2.5-pro", Some(("gemini-2", O2, 20_000)));
        check("codellama:13b", Some(("codellama", CL, 4_000)));
        check("gpt-5-mini", Some(("gpt-5", O2, 20_000)));
        check("o3-mini", Some(("o3", O2, 20_000)));
        check("mystery-model", None);
    }

    #[test]
    fn unknown_model_falls_back() {
        let m = resolve("mystery", &[]);
        assert_eq!(
            (m.default_budget, m.context_window),
            (DEFAULT_BUDGET, DEFAULT_CONTEXT_WINDOW)
        );
    }

    #[test]
    fn overrides_win() {
        let mine = ModelSpec {
            default_budget: 1_234,
            ..fallback("gpt-4o")
        };
        assert_eq!(resolve("gpt-4o", &[mine]).default_budget, 1_234);
    }

    #[test]
    fn every_row_says_whether_its_count_is_exact() {
        assert!(resolve("qwen2.5-coder-7b", &[]).exact);
        assert!(resolve("gpt-4o", &[]).exact);
        assert!(!resolve("claude-sonnet-4", &[]).exact);
        assert!(resolve("qwen3.6-27b", &[]).exact);
        assert!(
            !resolve("llama-3.1-8b", &[]).exact,
            "no margin, still an estimate"
        );
        assert!(!resolve("gemini-2.5-flash", &[]).exact);
        assert!(
            !resolve("mystery", &[]).exact,
            "an unknown model is a guess"
        );
    }

    #[test]
    fn margin_shrinks_budget() {
        assert_eq!(resolve("claude-sonnet-4-5", &[]).usable(10_000), 7_800);
        assert_eq!(resolve("gpt-4o", &[]).usable(10_000), 10_000);
    }
}
