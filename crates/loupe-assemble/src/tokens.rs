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

mod fast;

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

/// The fast counter of `encoding` ([`fast`]), built once per process.
fn counter(encoding: Encoding) -> Option<&'static fast::Counter> {
    static O200K: OnceLock<Option<fast::Counter>> = OnceLock::new();
    static CL100K: OnceLock<Option<fast::Counter>> = OnceLock::new();
    let (cell, split) = match encoding {
        Encoding::O200kBase => (&O200K, fast::Split::O200k),
        Encoding::Cl100kBase => (&CL100K, fast::Split::Cl100k),
    };
    cell.get_or_init(|| fast::Counter::new(bpe(encoding)?, split))
        .as_ref()
}

/// The exact number of tokens of `text` in `encoding` (special tokens are
/// counted as ordinary text, since retrieved code may contain them).
pub fn count(encoding: Encoding, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    match (bpe(encoding), counter(encoding)) {
        (Some(bpe), Some(counter)) => counter.count(bpe, text),
        (Some(bpe), None) => bpe.count_ordinary(text),
        (None, _) => text.len().div_ceil(CHARS_PER_TOKEN_ESTIMATE),
    }
}

/// [`count`] the way tiktoken-rs itself counts, for tests and benchmarks
/// that compare the two.
#[doc(hidden)]
pub fn count_with_tiktoken(encoding: Encoding, text: &str) -> usize {
    bpe(encoding).map_or(0, |bpe| bpe.count_ordinary(text))
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

    const ENCODINGS: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    fn same_as_tiktoken(text: &str) {
        for encoding in ENCODINGS {
            assert_eq!(
                count(encoding, text),
                count_with_tiktoken(encoding, text),
                "{encoding:?} {text:?}"
            );
        }
    }

    #[test]
    fn the_fast_split_is_built() {
        for encoding in ENCODINGS {
            assert!(counter(encoding).is_some(), "{encoding:?}");
        }
    }

    #[test]
    fn counts_equal_tiktoken_on_tricky_text() {
        for text in [
            "a  b",
            "a \t b",
            "  \n  foo",
            "x   ",
            "   ",
            " \u{a0} x",
            "\u{2028}\u{2028}y",
            "\r\n\r\n  \t fn main() {}",
            "don't you'll I'M WE'VE",
            "1234567 12 1",
            "héllo WORLDé Ǆungla café\u{301}",
            "日本語のテキスト🙂🙂🙂",
            "====================================================================================================================",
            &" ".repeat(150),
            &format!("{}x", " ".repeat(150)),
            &"abcdefghij".repeat(30),
            &"AbCdEfGhIj".repeat(30),
            "<|endoftext|> <|endofprompt|>",
        ] {
            same_as_tiktoken(text);
        }
    }

    #[test]
    fn counts_equal_tiktoken_on_this_repository() {
        // Every source and fixture file of the workspace: real code in many
        // languages, Markdown, TOML, JSON.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut dirs = vec![
            root.join("crates"),
            root.join("tests/fixtures"),
            root.join("src-tauri/src"),
        ];
        let mut files = 0;
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    same_as_tiktoken(&text);
                    files += 1;
                }
            }
        }
        assert!(
            files > 100,
            "only {files} files read from {}",
            root.display()
        );
    }

    proptest::proptest! {
        #[test]
        fn counts_equal_tiktoken_on_generated_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{2028}", "\u{85}",
                    "a", "Z", "word", "Word", "WORD", "'s", "'LL", "'", "é", "\u{301}",
                    "日本", "🙂", "ǅ", "1", "42", "12345", "_", "::", "(", ")", "{", "}", "/",
                    ".", ",", "-", "=", "==", "#", "\"", "<|endoftext|>",
                ]),
                0..60,
            )
        ) {
            same_as_tiktoken(&parts.concat());
        }
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
