//! Text helpers for chunking: byte → line lookup, char-boundary-safe cuts,
//! trimming, and the line-window fallback for files without a parser.
//!
//! Knows nothing about syntax. Every offset it returns lies on a char boundary
//! of the source it was given.

use super::{ChunkConfig, ChunkDraft};
use loupe_assemble::{ChunkKind, OutlineSpan, SpanKind};

/// Byte offsets of line starts, for 1-based line numbers.
pub(super) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Index the line starts of `source`.
    pub(super) fn new(source: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            source
                .bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { starts }
    }

    /// The 1-based line holding byte `offset`.
    pub(super) fn line(&self, offset: usize) -> u32 {
        let idx = self.starts.partition_point(|&s| s <= offset);
        u32::try_from(idx.max(1)).unwrap_or(u32::MAX)
    }

    /// 1-based first and last line of the byte range `start..end`.
    pub(super) fn lines(&self, start: usize, end: usize) -> (u32, u32) {
        (
            self.line(start),
            self.line(end.saturating_sub(1).max(start)),
        )
    }

    /// 0-based index of the line holding byte `offset`.
    pub(super) fn index_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Whether a line starts at `offset`.
    pub(super) fn is_line_start(&self, offset: usize) -> bool {
        self.starts.binary_search(&offset).is_ok()
    }

    /// The last line start in `lo..=hi`, if any.
    pub(super) fn last_start_in(&self, lo: usize, hi: usize) -> Option<usize> {
        let i = self.starts.partition_point(|&s| s <= hi);
        self.starts[..i].last().copied().filter(|&s| s >= lo)
    }

    /// Byte offset where 0-based line `i` starts (clamped to `len`).
    pub(super) fn start_of(&self, i: usize, len: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(len)
    }
}

/// Whether `source[start..end]` is empty or only whitespace (Unicode).
pub(super) fn is_blank(source: &str, start: usize, end: usize) -> bool {
    let (s, e) = trim(source, start, end);
    s >= e
}

/// Shrink `start..end` to exclude leading and trailing (Unicode) whitespace.
/// Offsets that are not char boundaries are returned unchanged.
pub(super) fn trim(source: &str, start: usize, end: usize) -> (usize, usize) {
    let end = end.min(source.len());
    match source.get(start..end) {
        Some(slice) => {
            let s = start + (slice.len() - slice.trim_start().len());
            (s, (start + slice.trim_end().len()).max(s))
        }
        None => (start, end.max(start)),
    }
}

/// Move `start` back to its line's start when only spaces or tabs precede it
/// there, but never before `floor`; so a chunk keeps its first line's indent.
pub(super) fn extend_to_line_start(source: &str, start: usize, floor: usize) -> usize {
    let bytes = source.as_bytes();
    let mut s = start.min(bytes.len());
    while s > floor && matches!(bytes[s - 1], b' ' | b'\t') {
        s -= 1;
    }
    if s == floor || s == 0 || bytes[s - 1] == b'\n' {
        s
    } else {
        start
    }
}

/// The largest char boundary `<= i`.
pub(super) fn floor_boundary(source: &str, i: usize) -> usize {
    let mut i = i.min(source.len());
    while !source.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A piece with at most this many non-whitespace bytes (`}`, `};`, `end`)
/// joins the piece before it instead of standing alone.
pub(super) const TINY_PIECE_BYTES: usize = 8;

/// Whether only spaces or tabs stand between the start of `i`'s line and `i`.
pub(super) fn starts_line(source: &str, i: usize) -> bool {
    let bytes = source.as_bytes();
    let mut s = i.min(bytes.len());
    while s > 0 && matches!(bytes[s - 1], b' ' | b'\t') {
        s -= 1;
    }
    s == 0 || bytes[s - 1] == b'\n'
}

/// Greedily cut `start..end` at candidate offsets into pieces of at most
/// `max` bytes where the candidates allow (one piece may overshoot when no
/// candidate is near), then cut what is still too big at line ends. Pieces
/// are trimmed; a tiny piece joins the one before it.
pub(super) fn pack(
    source: &str,
    start: usize,
    end: usize,
    mut cuts: Vec<usize>,
    max: usize,
) -> Vec<(usize, usize)> {
    let max = max.max(1);
    cuts.retain(|&c| c > start && c < end && source.is_char_boundary(c));
    cuts.sort_unstable();
    cuts.dedup();
    let mut coarse = Vec::new();
    let mut cur = start;
    while end - cur > max {
        let lo = cuts.partition_point(|&c| c <= cur);
        let hi = cuts.partition_point(|&c| c <= cur + max);
        let cut = if hi > lo {
            cuts[hi - 1]
        } else if let Some(&c) = cuts.get(lo) {
            c
        } else {
            break;
        };
        coarse.push((cur, cut));
        cur = cut;
    }
    coarse.push((cur, end));
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (s, e) in coarse {
        let parts = if e - s > max {
            cut_by_lines(source, s, e, max)
        } else {
            vec![(s, e)]
        };
        for (ps, pe) in parts {
            let (ts, te) = trim(source, ps, pe);
            if ts >= te {
                continue;
            }
            match out.last_mut() {
                Some(last) if te - ts <= TINY_PIECE_BYTES => last.1 = te,
                _ => out.push((ts, te)),
            }
        }
    }
    out
}

/// How far back from a hard cut we look for a friendlier place (whitespace or
/// punctuation) to cut a line longer than the chunk limit.
const SOFT_CUT_LOOKBACK: usize = 256;

/// Cut `start..end` into pieces of at most `max` bytes, at line ends when
/// possible and inside over-long lines at whitespace or char boundaries.
pub(super) fn cut_by_lines(
    source: &str,
    start: usize,
    end: usize,
    max: usize,
) -> Vec<(usize, usize)> {
    let max = max.max(1);
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut cur = start;
    while cur < end {
        if end - cur <= max {
            out.push((cur, end));
            break;
        }
        let limit = cur + max;
        // The last newline within the limit, cutting after it.
        let cut = match bytes[cur..limit].iter().rposition(|&b| b == b'\n') {
            Some(p) if p > 0 => cur + p + 1,
            _ => {
                let hard = floor_boundary(source, limit);
                let lo = hard.saturating_sub(SOFT_CUT_LOOKBACK).max(cur + 1);
                let soft = (lo..hard).rev().find(|&i| {
                    source.is_char_boundary(i) && matches!(bytes[i - 1], b' ' | b',' | b';' | b'\t')
                });
                let cut = soft.unwrap_or(hard);
                if cut <= cur {
                    // A single char wider than `max`: take it whole.
                    (cur + 1..=end)
                        .find(|&i| source.is_char_boundary(i))
                        .unwrap_or(end)
                } else {
                    cut
                }
            }
        };
        out.push((cur, cut));
        cur = cut;
    }
    out
}

/// Line windows over the whole file: up to `cfg.window_lines` lines and
/// `cfg.max_chunk_bytes` bytes each (cut at a line end when one fits), the
/// next starting `cfg.window_overlap` lines before the previous one ended but
/// always at least one line later. A line longer than the byte limit is cut
/// inside, without overlap. Whitespace-only windows are skipped; windows are
/// in strictly increasing start order.
pub(super) fn windows(source: &str, cfg: &ChunkConfig) -> Vec<ChunkDraft> {
    let lines = LineIndex::new(source);
    let size = cfg.window_lines.max(1);
    let overlap = cfg.window_overlap.min(size - 1);
    let max = cfg.max_chunk_bytes.max(1);
    let len = source.len();
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let line = lines.index_of(start);
        let by_lines = lines.start_of(line + size, len);
        let end = if by_lines - start <= max {
            by_lines
        } else {
            match lines.last_start_in(start + 1, start + max) {
                Some(l) => l,
                None => {
                    let line_end = lines.start_of(line + 1, len);
                    cut_by_lines(source, start, line_end, max)
                        .first()
                        .map_or(line_end, |c| c.1)
                }
            }
        };
        let (s, e) = trim(source, start, end);
        if s < e {
            out.push(plain_chunk(&lines, s, e, ChunkKind::Window, SpanKind::Code));
        }
        if end >= len {
            break;
        }
        start = if lines.is_line_start(end) {
            let end_line = lines.index_of(end);
            lines
                .start_of(end_line.saturating_sub(overlap).max(line + 1), len)
                .min(end)
        } else {
            end
        };
    }
    out
}

/// A chunk with no symbol whose outline is a single span.
pub(super) fn plain_chunk(
    lines: &LineIndex,
    start: usize,
    end: usize,
    kind: ChunkKind,
    span: SpanKind,
) -> ChunkDraft {
    let (start_line, end_line) = lines.lines(start, end);
    ChunkDraft {
        kind,
        symbol: None,
        parent: None,
        start_byte: to_u32(start),
        end_byte: to_u32(end),
        start_line,
        end_line,
        outline: vec![OutlineSpan {
            kind: span,
            start: 0,
            end: to_u32(end - start),
        }],
    }
}

/// A byte offset as `u32`, saturating (files past 4 GiB are never chunked:
/// the walker's size cap is far below that).
pub(super) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
