//! Exact token counts without tiktoken's backtracking regex.
//!
//! tiktoken splits text into pieces with a regex, then merges each piece
//! with BPE. Its split pattern has one lookahead, `\s+(?!\S)`, which makes
//! tiktoken-rs run the whole pattern on `fancy_regex`'s backtracking VM; on
//! the benchmark machine that split was most of the counting time, and
//! counting most of an assembly. This module splits with the `regex`
//! crate's DFA instead and merges with BPE over the ranks of the shipped
//! vocabulary (OpenAI's as tiktoken-rs ships them, Qwen's; `data/`); the
//! merges are tiktoken-rs's `byte_pair_split`'s, which the tests compare
//! them with token for token, and the counts tiktoken-rs's own.
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
//! The counter keeps only the ranks, in a compact table ([`Ranks`], about
//! 4 MB for o200k), read straight from the vocabulary's text. No
//! tiktoken-rs [`CoreBPE`] is built: its encoder, decoder, sorted tokens
//! and per-thread regexes are 34 MB of live heap for o200k in a profiled
//! engine, and building one and reading the ranks back from it took about
//! 0.2 s of CPU in every process. [`merge_small`]
//! merges in quadratic time, harmless below [`HUGE_PIECE`] bytes; a piece
//! that long (a run of 1 KB of letters, spaces or punctuation) is merged
//! by [`merge_large`], the same merges in the same order kept in a heap.
//!
//! The split runs on `regex-automata`'s meta regex with a lazy DFA cache
//! per thread and encoding. `regex::Regex` keeps its caches in a pool
//! whose fast path belongs to one thread; other threads share a few
//! caches, and a cache the previous user filled with other states makes
//! the next text rebuild its own: counting a first-seen 89-byte summary
//! took 0.35 ms on the assembly thread, 0.003 ms again.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::memo::Memo;
use hashbrown::HashTable;
use regex_automata::Input;
use regex_automata::meta::{Cache, Regex};
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;
#[cfg(doc)]
use tiktoken_rs::CoreBPE;
use tiktoken_rs::Rank;

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
    ranks: Ranks,
}

/// A vocabulary: each token's rank, found by its bytes. The bytes sit
/// back to back in one buffer and the hash table holds only entry
/// numbers, so o200k's 200 k tokens take about 4 MB, where a map from
/// owned byte strings (the type `byte_pair_split` takes) took 12 (the
/// largest item of an idle engine's heap, BENCHMARKS.md, "Changes to
/// memory", `6188df2`).
struct Ranks {
    /// Every token's bytes, in entry order.
    bytes: Vec<u8>,
    /// Entry `i`'s bytes are `bytes[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<u32>,
    /// Entry `i`'s rank.
    ranks: Vec<Rank>,
    /// Entry numbers, by the hash of their bytes.
    table: HashTable<u32>,
}

impl Ranks {
    fn new() -> Self {
        Self {
            bytes: Vec::new(),
            ends: Vec::new(),
            ranks: Vec::new(),
            table: HashTable::new(),
        }
    }

    fn hash(bytes: &[u8]) -> u64 {
        FxBuildHasher.hash_one(bytes)
    }

    /// Entry `i`'s bytes.
    fn token<'b>(bytes: &'b [u8], ends: &[u32], i: u32) -> &'b [u8] {
        let i = i as usize;
        let start = i.checked_sub(1).map_or(0, |p| ends[p] as usize);
        &bytes[start..ends[i] as usize]
    }

    /// The entry holding `token`'s bytes.
    fn entry(&self, token: &[u8]) -> Option<u32> {
        let (bytes, ends) = (&self.bytes, &self.ends);
        self.table
            .find(Self::hash(token), |&i| Self::token(bytes, ends, i) == token)
            .copied()
    }

    /// An entry's hash, for the table's growth.
    fn rehash<'r>(bytes: &'r [u8], ends: &'r [u32]) -> impl Fn(&u32) -> u64 + 'r {
        move |&i| Self::hash(Self::token(bytes, ends, i))
    }

    /// Add `token` with `rank` (a token read twice keeps the later rank,
    /// as a map's insert would); `None` when the vocabulary outgrows
    /// 32-bit offsets.
    fn insert(&mut self, token: &[u8], rank: Rank) -> Option<()> {
        if let Some(i) = self.entry(token) {
            self.ranks[i as usize] = rank;
            return Some(());
        }
        let entry = u32::try_from(self.ranks.len()).ok()?;
        self.bytes.extend_from_slice(token);
        self.ends.push(u32::try_from(self.bytes.len()).ok()?);
        self.ranks.push(rank);
        self.table.insert_unique(
            Self::hash(token),
            entry,
            Self::rehash(&self.bytes, &self.ends),
        );
        Some(())
    }

    fn get(&self, token: &[u8]) -> Option<Rank> {
        self.entry(token).map(|i| self.ranks[i as usize])
    }

    fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Give back what building left spare.
    fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.ranks.shrink_to_fit();
        self.table
            .shrink_to_fit(Self::rehash(&self.bytes, &self.ends));
    }
}

impl Counter {
    /// Reads `encoding`'s ranks from its shipped vocabulary text (the
    /// regular tokens; special tokens are counted as plain text). `None`
    /// if the pattern does not compile or the vocabulary looks wrong;
    /// callers then count with tiktoken-rs's `CoreBPE`.
    pub(super) fn new(encoding: Encoding) -> Option<Self> {
        let pattern = match encoding {
            Encoding::O200kBase => O200K_SPLIT,
            Encoding::Cl100kBase => CL100K_SPLIT,
            Encoding::Qwen2 => QWEN2_SPLIT,
            Encoding::Qwen35 => QWEN35_SPLIT,
        };
        let split = Regex::new(pattern).ok()?;
        let (vocab, _) = encoding.vocabulary();
        let mut ranks = Ranks::new();
        super::for_each_token(vocab, |token, rank| ranks.insert(token, rank))?;
        // Every single byte must be a token, or BPE cannot finish a piece.
        let complete = (0..=255u8).all(|b| ranks.get(&[b]).is_some());
        ranks.shrink();
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
            return merge_small(bytes, &self.ranks).into_iter().take(want).sum();
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
        } else if bytes.len() == 1 || self.ranks.get(bytes).is_some() {
            1
        } else if bytes.len() < MEMO_PIECE {
            *merged.get_or_insert_with(
                bytes,
                |b| b.into(),
                || merge_small(bytes, &self.ranks).len(),
            )
        } else if bytes.len() < HUGE_PIECE {
            merge_small(bytes, &self.ranks).len()
        } else {
            merge_large(bytes, &self.ranks).len()
        }
    }
}

/// The byte lengths of the tokens byte-pair encoding makes of `piece`
/// (two bytes or more), for pieces under [`HUGE_PIECE`] bytes: a scan for
/// the lowest-ranked pair per merge (the leftmost of equal ranks), quick
/// on the short pieces text is mostly made of. The merges tiktoken-rs's
/// `byte_pair_split` makes; the tests compare the two.
fn merge_small(piece: &[u8], ranks: &Ranks) -> Vec<usize> {
    // (start of a part, rank of it joined with the next part).
    let rank_of = |parts: &[(usize, Rank)], i: usize| -> Rank {
        match (parts.get(i), parts.get(i + 2)) {
            (Some(&(start, _)), Some(&(stop, _))) => {
                ranks.get(&piece[start..stop]).unwrap_or(Rank::MAX)
            }
            _ => Rank::MAX,
        }
    };
    let mut parts: Vec<(usize, Rank)> = (0..=piece.len()).map(|i| (i, Rank::MAX)).collect();
    for i in 0..parts.len() {
        parts[i].1 = rank_of(&parts, i);
    }
    while let Some((at, _)) = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.1 != Rank::MAX)
        .min_by_key(|(i, p)| (p.1, *i))
    {
        parts.remove(at + 1);
        parts[at].1 = rank_of(&parts, at);
        if let Some(before) = at.checked_sub(1) {
            parts[before].1 = rank_of(&parts, before);
        }
    }
    parts.windows(2).map(|w| w[1].0 - w[0].0).collect()
}

/// The byte lengths of the tokens byte-pair encoding makes of `piece`
/// (two bytes or more): the merges [`merge_small`] makes, in the same
/// order, found with a heap in n log n instead of a scan per merge.
///
/// BPE merges the adjacent pair of parts whose joined bytes have the
/// lowest rank, the leftmost of equal ranks, until no joined pair is a
/// token. Parts are kept as a linked list over their first bytes; the
/// heap holds (rank, first byte) of candidate pairs, and an entry whose
/// part has since changed is skipped when it comes up (`pair[start]` no
/// longer holds its rank: a part only grows, so its pair's bytes, and
/// with them the rank, change whenever a neighbour merges).
fn merge_large(piece: &[u8], ranks: &Ranks) -> Vec<usize> {
    let n = piece.len();
    // `end[i]`: one past the last byte of the part starting at `i` (the
    // next part's start, or `n`); `prev[i]`: the part before it.
    let mut end: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    let pair_rank = |end: &[usize], start: usize| -> Option<Rank> {
        let right = *end.get(start)?;
        let stop = *end.get(right)?;
        ranks.get(&piece[start..stop])
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
    use rustc_hash::FxHashMap;
    use std::sync::OnceLock;

    const ENCODINGS: [Encoding; 3] = [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::Qwen2];

    fn ranks(encoding: Encoding) -> &'static Ranks {
        match tokenizer(encoding) {
            Some(Tokenizer::Fast(counter)) => &counter.ranks,
            _ => panic!("{encoding:?} has no fast counter"),
        }
    }

    /// The vocabulary as tiktoken-rs's `byte_pair_split` takes it.
    fn map(encoding: Encoding) -> &'static FxHashMap<Vec<u8>, Rank> {
        static MAPS: [OnceLock<FxHashMap<Vec<u8>, Rank>>; 4] = [const { OnceLock::new() }; 4];
        MAPS[encoding.slot()].get_or_init(|| {
            let r = ranks(encoding);
            (0..r.len())
                .map(|i| {
                    let i = u32::try_from(i).expect("small");
                    (
                        Ranks::token(&r.bytes, &r.ends, i).to_vec(),
                        r.ranks[i as usize],
                    )
                })
                .collect()
        })
    }

    /// The table read from the shipped text holds exactly the regular
    /// tokens tiktoken-rs's own `CoreBPE` holds (OpenAI's built from
    /// tiktoken-rs's copy of the tables), each with its rank.
    #[test]
    fn the_table_holds_tiktokens_vocabulary() {
        for encoding in ENCODINGS {
            let table = ranks(encoding);
            let bpe = super::super::reference(encoding).expect("tiktoken-rs builds");
            let special: std::collections::HashSet<Rank> = bpe
                .special_tokens()
                .into_iter()
                .flat_map(|s| bpe.encode_with_special_tokens(s))
                .collect();
            let top = *table.ranks.iter().max().expect("ranks");
            let mut regular = 0;
            for rank in 0..=top + 4096 {
                if let Ok(bytes) = bpe.decode_bytes(&[rank])
                    && !special.contains(&rank)
                {
                    assert_eq!(table.get(&bytes), Some(rank), "{encoding:?} {rank}");
                    regular += 1;
                }
            }
            assert_eq!(regular, table.len(), "{encoding:?}");
            assert_eq!(table.get(b""), None);
            assert_eq!(table.get("no such token, surely".as_bytes()), None);
        }
    }

    /// Both merges make what tiktoken-rs's makes, token for token.
    fn same_merges(piece: &[u8]) {
        for encoding in ENCODINGS {
            let theirs: Vec<usize> = tiktoken_rs::byte_pair_split(piece, map(encoding))
                .iter()
                .map(|p| p.len())
                .collect();
            let table = ranks(encoding);
            assert_eq!(merge_small(piece, table), theirs, "{encoding:?} small");
            assert_eq!(merge_large(piece, table), theirs, "{encoding:?} large");
        }
    }

    #[test]
    fn merges_equal_tiktokens_on_runs() {
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
        fn merges_equal_tiktokens(
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
