//! Token counting and trimming with tiktoken's BPE tables.
//!
//! Two encodings are built, each once per process ([`OnceLock`]): o200k_base
//! (GPT-4o, 4.1, 5, o-series) and cl100k_base (GPT-4, GPT-3.5, and the
//! closest public BPE for Llama 3 and Qwen). A [`Measure`] hides whether a
//! budget is kept in tokens or in characters.
//!
//! This module does not decide which encoding a model uses (see
//! [`crate::models`]) and does not cache counts across calls.
//!
//! *Invariant:* [`trim_to_tokens`] returns a prefix of its input that counts
//! at most `max` tokens and ends on a character boundary.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tiktoken_rs::CoreBPE;

/// A BPE vocabulary that tokens are counted with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, o1/o3/o4 and the index tokenizer.
    #[default]
    O200kBase,
    /// GPT-4, GPT-3.5; the closest public BPE for Llama 3 and Qwen.
    Cl100kBase,
}

/// How sizes are measured: exact tokens of an encoding, or Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "unit", content = "encoding")]
pub enum Measure {
    /// Tokens of the given encoding.
    Tokens(Encoding),
    /// Characters (`char`s), SourcePrep's `max_chars`.
    Chars,
}

impl Measure {
    /// The size of `text` in this measure's unit.
    pub fn size(self, text: &str) -> usize {
        match self {
            Measure::Tokens(encoding) => count(encoding, text),
            Measure::Chars => text.chars().count(),
        }
    }

    /// The longest prefix of `text` whose size is at most `max`.
    pub fn trim(self, text: &str, max: usize) -> &str {
        match self {
            Measure::Tokens(encoding) => trim_to_tokens(encoding, text, max),
            Measure::Chars => match text.char_indices().nth(max) {
                Some((at, _)) => &text[..at],
                None => text,
            },
        }
    }

    /// The unit's name for reports: `tokens` or `chars`.
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Tokens(_) => "tokens",
            Measure::Chars => "chars",
        }
    }
}

/// Characters per token for code, the seed's estimate ("1 token ≈ 4 chars for
/// code", CodeBuddy prompt pipeline). Used only if a BPE table failed to load.
pub const CHARS_PER_TOKEN_ESTIMATE: usize = 4;

fn bpe(encoding: Encoding) -> Option<&'static CoreBPE> {
    static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    // The tables are compiled into tiktoken-rs, so building them cannot fail
    // on user input; `None` only guards against a broken build of the crate.
    match encoding {
        Encoding::O200kBase => O200K
            .get_or_init(|| tiktoken_rs::o200k_base().ok())
            .as_ref(),
        Encoding::Cl100kBase => CL100K
            .get_or_init(|| tiktoken_rs::cl100k_base().ok())
            .as_ref(),
    }
}

/// The exact number of tokens of `text` in `encoding` (special tokens are
/// counted as ordinary text, since retrieved code may contain them).
pub fn count(encoding: Encoding, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    match bpe(encoding) {
        Some(bpe) => bpe.count_ordinary(text),
        None => text.len().div_ceil(CHARS_PER_TOKEN_ESTIMATE),
    }
}

/// The longest prefix of `text` that counts at most `max` tokens, cut on a
/// character boundary.
pub fn trim_to_tokens(encoding: Encoding, text: &str, max: usize) -> &str {
    let Some(bpe) = bpe(encoding) else {
        return floor_char_boundary(text, max * CHARS_PER_TOKEN_ESTIMATE);
    };
    let tokens = bpe.encode_ordinary(text);
    if tokens.len() <= max {
        return text;
    }
    let mut keep = max;
    loop {
        // The first `keep` tokens decode to exactly the first bytes of `text`.
        let bytes = bpe.decode_bytes(&tokens[..keep]).map_or(0, |b| b.len());
        let prefix = floor_char_boundary(text, bytes);
        // Re-encoding a prefix cut inside a pre-token can, rarely, take one
        // token more; step back until the count really fits.
        if keep == 0 || bpe.count_ordinary(prefix) <= max {
            return prefix;
        }
        keep -= 1;
    }
}

/// `text[..at]`, moved left to the nearest character boundary.
pub(crate) fn floor_char_boundary(text: &str, at: usize) -> &str {
    if at >= text.len() {
        return text;
    }
    let mut at = at;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(encoding: Encoding, text: &str, expect: usize) {
        assert_eq!(count(encoding, text), expect, "{text:?}");
    }

    #[test]
    fn counts_known_strings() {
        check(Encoding::O200kBase, "", 0);
        check(Encoding::O200kBase, "hello world", 2);
        check(Encoding::Cl100kBase, "hello world", 2);
        check(Encoding::Cl100kBase, "fn main() {}", 4);
    }

    #[test]
    fn special_tokens_are_plain_text() {
        assert!(count(Encoding::O200kBase, "<|endoftext|>") > 1);
    }

    #[test]
    fn trims_to_a_fitting_prefix() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(10);
        for max in [0, 1, 5, 17, 1000] {
            let cut = trim_to_tokens(Encoding::O200kBase, &text, max);
            assert!(text.starts_with(cut));
            assert!(count(Encoding::O200kBase, cut) <= max);
        }
        assert_eq!(trim_to_tokens(Encoding::O200kBase, &text, 1000), text);
    }

    #[test]
    fn trim_respects_char_boundaries() {
        let text = "日本語のテキスト🙂🙂🙂 and ünïcödé";
        for max in 0..20 {
            let cut = trim_to_tokens(Encoding::Cl100kBase, text, max);
            assert!(text.starts_with(cut));
            assert!(count(Encoding::Cl100kBase, cut) <= max);
        }
    }

    #[test]
    fn chars_measure() {
        assert_eq!(Measure::Chars.size("héllo"), 5);
        assert_eq!(Measure::Chars.trim("héllo", 2), "hé");
        assert_eq!(Measure::Chars.trim("hé", 9), "hé");
    }
}
