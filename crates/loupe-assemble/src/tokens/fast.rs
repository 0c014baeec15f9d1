//! Exact token counts without tiktoken's backtracking regex.
//!
//! tiktoken splits text into pieces with a regex, then merges each piece
//! with BPE. Its split pattern has one lookahead, `\s+(?!\S)`, which makes
//! tiktoken-rs run the whole pattern on `fancy_regex`'s backtracking VM; on
//! the benchmark machine that split was most of the counting time, and
//! counting most of an assembly. This module splits with the `regex`
//! crate's DFA instead and then uses tiktoken-rs's own BPE
//! ([`tiktoken_rs::byte_pair_split`]) over the ranks read back from its
//! [`CoreBPE`], so the vocabulary and the merges stay tiktoken-rs's.
//!
//! The lookahead is emulated: `\s+(?!\S)|\s+` becomes `\s+`, and a match of
//! it that is followed by a non-space gives its last character back. That
//! is what the lookahead does: on a run of n ≥ 2 spaces before a word it
//! matches n − 1, leaving one space to lead the word's piece. Such a match
//! never holds a newline (an earlier alternative takes any run that does),
//! which is how it is told apart from the other whitespace alternatives.
//!
//! *Invariant:* [`Counter::count`] equals `CoreBPE::encode_ordinary(text)
//! .len()` for every text; the tests check it against tiktoken-rs on
//! generated and real text.
//!
//! The counter keeps only the ranks: tiktoken-rs's [`CoreBPE`] is read
//! once when the counter is built and then dropped (its encoder, decoder,
//! sorted tokens and per-thread regexes are about 25 MB for o200k, 34 MB
//! of live heap in a profiled engine, held for the life of the app
//! otherwise). `byte_pair_split` merges in quadratic time, harmless below
//! [`HUGE_PIECE`] bytes; a piece that long (a run of 1 KB of letters,
//! spaces or punctuation) is merged by [`merge_large`], the same merges
//! in the same order kept in a heap.
//!
//! The split runs on `regex-automata`'s meta regex with a lazy DFA cache
//! per thread and encoding. `regex::Regex` keeps its caches in a pool
//! whose fast path belongs to one thread; other threads share a few
//! caches, and a cache the previous user filled with other states makes
//! the next text rebuild its own: counting a first-seen 89-byte summary
//! took 0.35 ms on the assembly thread, 0.003 ms again.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use crate::memo::Memo;
use regex_automata::Input;
use regex_automata::meta::{Cache, Regex};
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use super::Encoding;

/// o200k_base's split pattern with the lookahead alternative folded into
/// the plain `\s+` after it (tiktoken-rs's `O200K_BASE_PAT_STR`).
const O200K_SPLIT: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// cl100k_base's split pattern, the same way; its possessive quantifiers
/// (`?+`, `++`, `{1,3}+`) are plain here, which changes no match: each is
/// followed by a class it cannot overlap, or by the end of an alternative.
const CL100K_SPLIT: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s+$",
    r"|\s*[\r\n]",
    r"|\s+",
);

/// Qwen 2's split pattern (`QWEN2_PATTERN` in `tokens.rs`), the same way:
/// cl100k's older form, with one digit per piece and newline runs whole.
const QWEN2_SPLIT: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// Qwen 3.5's (`QWEN35_PATTERN`), the same way: marks join letters.
const QWEN35_SPLIT: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+",
    r"|\p{N}",
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// Pieces this long or longer are merged by [`merge_large`].
const HUGE_PIECE: usize = 1024;

/// Only shorter pieces' counts are memoised, which bounds a memo's keys
/// to a few MB whatever the text.
const MEMO_PIECE: usize = 100;

/// Merged pieces per generation of one thread's memo, per encoding.
const MEMO_PIECES: usize = 50_000;

/// One thread's state for one encoding: the split's lazy DFA cache, and
/// the token counts of pieces it had to merge. Code repeats its
/// identifiers, and a merge costs an allocation and a quadratic loop.
struct ThreadState {
    cache: Cache,
    merged: Memo<Box<[u8]>, usize>,
}

thread_local! {
    /// This thread's state, one per [`Split`].
    static STATES: RefCell<[Option<ThreadState>; 4]> = const { RefCell::new([None, None, None, None]) };
}

/// Drop this thread's states, every encoding's.
pub(super) fn forget_thread_state() {
    // A thread whose locals are being torn down holds nothing to forget.
    let _ = STATES.try_with(|states| {
        if let Ok(mut states) = states.try_borrow_mut() {
            *states = [None, None, None, None];
        }
    });
}

/// A split pattern and the ranks of one encoding.
pub(super) struct Counter {
    split: Regex,
    encoding: Encoding,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

impl Counter {
    /// Reads the ranks back from `bpe` (every id that decodes, special
    /// tokens excluded). `None` if the pattern does not compile or the
    /// vocabulary looks wrong; callers then count with `bpe` itself.
    pub(super) fn new(bpe: &CoreBPE, encoding: Encoding) -> Option<Self> {
        let pattern = match encoding {
            Encoding::O200kBase => O200K_SPLIT,
            Encoding::Cl100kBase => CL100K_SPLIT,
            Encoding::Qwen2 => QWEN2_SPLIT,
            Encoding::Qwen35 => QWEN35_SPLIT,
        };
        let split = Regex::new(pattern).ok()?;
        let special: HashSet<Rank> = bpe
            .special_tokens()
            .into_iter()
            .flat_map(|s| bpe.encode_with_special_tokens(s))
            .collect();
        let mut ranks = FxHashMap::default();
        let mut misses = 0;
        let mut rank: Rank = 0;
        // Ids are dense with a few gaps; stop after a long run of misses.
        while misses < 4096 {
            match bpe.decode_bytes(&[rank]) {
                Ok(bytes) if !special.contains(&rank) => {
                    ranks.insert(bytes, rank);
                    misses = 0;
                }
                _ => misses += 1,
            }
            rank = rank.checked_add(1)?;
        }
        // Every single byte must be a token, or BPE cannot finish a piece.
        let complete = (0..=255u8).all(|b| ranks.contains_key([b].as_slice()));
        (complete && ranks.len() > 50_000).then_some(Self {
            split,
            encoding,
            ranks,
        })
    }

    /// The number of tokens tiktoken-rs would encode `text` into.
    pub(super) fn count(&self, text: &str) -> usize {
        self.with_state(|state| self.count_with(state, text))
    }

    /// The end (a byte offset) of the first `keep` tokens of `text`, or
    /// its length if it has no more.
    pub(super) fn prefix_end(&self, text: &str, keep: usize) -> usize {
        self.with_state(|state| {
            let (mut tokens, mut at) = (0, 0);
            while let Some((start, end)) = self.next_piece(&mut state.cache, text, at) {
                let piece = &text[start..end];
                let n = self.piece_tokens(&mut state.merged, piece);
                if tokens + n > keep {
                    return start + self.piece_prefix(piece, keep - tokens);
                }
                tokens += n;
                at = end;
            }
            text.len()
        })
    }

    /// The bytes of the first `want` tokens of `piece`, which has more.
    fn piece_prefix(&self, piece: &str, want: usize) -> usize {
        let bytes = piece.as_bytes();
        if want == 0 || bytes.len() < 2 {
            return 0;
        }
        if bytes.len() < HUGE_PIECE {
            return tiktoken_rs::byte_pair_split(bytes, &self.ranks)
                .iter()
                .take(want)
                .map(|p| p.len())
                .sum();
        }
        merge_large(bytes, &self.ranks).into_iter().take(want).sum()
    }

    /// `f` with this thread's state for the encoding.
    fn with_state<R>(&self, f: impl Fn(&mut ThreadState) -> R) -> R {
        let slot = self.encoding.slot();
        STATES
            .try_with(|states| {
                let mut states = states.borrow_mut();
                f(states[slot].get_or_insert_with(|| self.fresh_state()))
            })
            // This thread's locals are being torn down: a state of its own.
            .unwrap_or_else(|_| f(&mut self.fresh_state()))
    }

    fn fresh_state(&self) -> ThreadState {
        ThreadState {
            cache: self.split.create_cache(),
            merged: Memo::new(MEMO_PIECES),
        }
    }

    fn count_with(&self, state: &mut ThreadState, text: &str) -> usize {
        let (mut tokens, mut at) = (0, 0);
        while let Some((start, end)) = self.next_piece(&mut state.cache, text, at) {
            tokens += self.piece_tokens(&mut state.merged, &text[start..end]);
            at = end;
        }
        tokens
    }

    /// The next piece of `text` from byte `at`, as tiktoken splits it.
    fn next_piece(&self, cache: &mut Cache, text: &str, at: usize) -> Option<(usize, usize)> {
        let m = self
            .split
            .search_with(cache, &Input::new(text).range(at..))?;
        let mut end = m.end();
        let piece = &text[m.start()..end];
        if gives_back_last_space(piece)
            && text[end..]
                .chars()
                .next()
                .is_some_and(|c| !c.is_whitespace())
        {
            end -= piece.chars().next_back().map_or(0, char::len_utf8);
        }
        // Every alternative takes a character, so this cannot stall.
        (end > at).then_some((m.start(), end))
    }

    fn piece_tokens(&self, merged: &mut Memo<Box<[u8]>, usize>, piece: &str) -> usize {
        let bytes = piece.as_bytes();
        if bytes.is_empty() {
            0
        } else if bytes.len() == 1 || self.ranks.contains_key(bytes) {
            1
        } else if bytes.len() < MEMO_PIECE {
            *merged.get_or_insert_with(
                bytes,
                |b| b.into(),
                || tiktoken_rs::byte_pair_split(bytes, &self.ranks).len(),
            )
        } else if bytes.len() < HUGE_PIECE {
            tiktoken_rs::byte_pair_split(bytes, &self.ranks).len()
        } else {
            merge_large(bytes, &self.ranks).len()
        }
    }
}

/// The byte lengths of the tokens byte-pair encoding makes of `piece`
/// (two bytes or more): the merges `byte_pair_split` makes, in the same
/// order, found with a heap in n log n instead of a scan per merge.
///
/// BPE merges the adjacent pair of parts whose joined bytes have the
/// lowest rank, the leftmost of equal ranks, until no joined pair is a
/// token. Parts are kept as a linked list over their first bytes; the
/// heap holds (rank, first byte) of candidate pairs, and an entry whose
/// part has since changed is skipped when it comes up (`pair[start]` no
/// longer holds its rank: a part only grows, so its pair's bytes, and
/// with them the rank, change whenever a neighbour merges).
fn merge_large(piece: &[u8], ranks: &FxHashMap<Vec<u8>, Rank>) -> Vec<usize> {
    let n = piece.len();
    // `end[i]`: one past the last byte of the part starting at `i` (the
    // next part's start, or `n`); `prev[i]`: the part before it.
    let mut end: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    let pair_rank = |end: &[usize], start: usize| -> Option<Rank> {
        let right = *end.get(start)?;
        let stop = *end.get(right)?;
        ranks.get(&piece[start..stop]).copied()
    };
    let mut pair: Vec<Option<Rank>> = (0..n).map(|i| pair_rank(&end, i)).collect();
    let mut heap: BinaryHeap<Reverse<(Rank, usize)>> = pair
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|r| Reverse((r, i))))
        .collect();
    while let Some(Reverse((rank, start))) = heap.pop() {
        if pair[start] != Some(rank) {
            continue;
        }
        let right = end[start];
        end[start] = end[right];
        pair[right] = None;
        if end[start] < n {
            prev[end[start]] = Some(start);
        }
        pair[start] = pair_rank(&end, start);
        if let Some(r) = pair[start] {
            heap.push(Reverse((r, start)));
        }
        if let Some(before) = prev[start] {
            pair[before] = pair_rank(&end, before);
            if let Some(r) = pair[before] {
                heap.push(Reverse((r, before)));
            }
        }
    }
    let mut lengths = Vec::new();
    let mut at = 0;
    while at < n {
        lengths.push(end[at] - at);
        at = end[at];
    }
    lengths
}

/// A run of two or more spaces or tabs with no line break: only the `\s+`
/// alternative makes such a piece, and it is the one the lookahead shortens.
fn gives_back_last_space(piece: &str) -> bool {
    let mut chars = 0;
    for c in piece.chars() {
        if !c.is_whitespace() || c == '\r' || c == '\n' {
            return false;
        }
        chars += 1;
    }
    chars >= 2
}

#[cfg(test)]
mod tests {
    use super::super::{Encoding, Tokenizer, tokenizer};
    use super::*;

    fn ranks(encoding: Encoding) -> &'static FxHashMap<Vec<u8>, Rank> {
        match tokenizer(encoding) {
            Some(Tokenizer::Fast(counter)) => &counter.ranks,
            _ => panic!("{encoding:?} has no fast counter"),
        }
    }

    /// The heap merges what the quadratic merge does, token for token.
    fn same_merges(piece: &[u8]) {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::Qwen2] {
            let ranks = ranks(encoding);
            let quadratic: Vec<usize> = tiktoken_rs::byte_pair_split(piece, ranks)
                .iter()
                .map(|p| p.len())
                .collect();
            assert_eq!(merge_large(piece, ranks), quadratic, "{encoding:?}");
        }
    }

    #[test]
    fn heap_merges_equal_quadratic_ones_on_runs() {
        for piece in [
            "ab".to_owned(),
            "aaaaaaaaaaaaaaaaaaaaaaaaa".to_owned(),
            " ".repeat(2000),
            "=".repeat(1500),
            "abcdefghij".repeat(120),
            "the".repeat(700),
        ] {
            same_merges(piece.as_bytes());
        }
    }

    #[test]
    fn a_forgotten_state_is_built_again() {
        let counter = match tokenizer(Encoding::O200kBase) {
            Some(Tokenizer::Fast(counter)) => counter,
            _ => panic!("no fast counter"),
        };
        let text = "fn forget_thread_state() { merged pieces }";
        let before = counter.count(text);
        let held = || STATES.with(|s| s.borrow()[Encoding::O200kBase.slot()].is_some());
        assert!(held());
        forget_thread_state();
        assert!(!held());
        assert_eq!(counter.count(text), before);
        assert!(held());
    }

    proptest::proptest! {
        #[test]
        fn heap_merges_equal_quadratic_ones(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "b", "e", "t", "th", "the", "ing", "er", "aa", "zz", "q", "é", "ß", "日",
                ]),
                2..700,
            )
        ) {
            same_merges(parts.concat().as_bytes());
        }
    }
}
