//! Outlines: from file-level tagged intervals (signatures, bodies, docs,
//! imports, comments found in the syntax tree) to the spans of one chunk.
//!
//! *Invariant:* the spans returned for a chunk are sorted, non-overlapping,
//! non-empty and cover every byte of the chunk. Untagged bytes are `Code`;
//! whitespace between two spans goes to the span before it (and leading
//! whitespace to the first span), so eliding a span never leaves stray
//! indentation behind. Does not look at the syntax tree itself.

use super::text::{is_blank, to_u32};
use loupe_assemble::{Outline, OutlineSpan, SpanKind};

/// A tagged byte range of the file.
#[derive(Clone, Copy, Debug)]
pub(super) struct Interval {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Tag.
    pub kind: SpanKind,
}

/// Sort intervals and drop every one that overlaps an earlier (outer or
/// preceding) one, so the rest are disjoint. Outer intervals come first at
/// equal starts, so a function body hides the comments inside it.
pub(super) fn disjoint(mut intervals: Vec<Interval>) -> Vec<Interval> {
    intervals.retain(|i| i.start < i.end);
    intervals.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Interval> = Vec::with_capacity(intervals.len());
    for i in intervals {
        if out.last().is_none_or(|last| i.start >= last.end) {
            out.push(i);
        }
    }
    out
}

/// The outline of the chunk `start..end`, from disjoint sorted intervals;
/// untagged bytes get `gap` (`Code` in source files, `Doc` in prose).
pub(super) fn for_chunk(
    source: &str,
    intervals: &[Interval],
    start: usize,
    end: usize,
    gap: SpanKind,
) -> Outline {
    let first = intervals.partition_point(|i| i.end <= start);
    let mut raw: Vec<(usize, usize, SpanKind)> = Vec::new();
    let mut cur = start;
    for i in intervals[first..].iter().take_while(|i| i.start < end) {
        let (s, e) = (i.start.max(start), i.end.min(end));
        if s > cur {
            raw.push((cur, s, gap));
        }
        raw.push((s, e, i.kind));
        cur = e;
    }
    if cur < end {
        raw.push((cur, end, gap));
    }
    // Whitespace-only untagged gaps join the span before them (or, at the
    // start of the chunk, the span after).
    let mut merged: Vec<(usize, usize, SpanKind)> = Vec::with_capacity(raw.len());
    let mut pending_lead: Option<usize> = None;
    for (s, e, kind) in raw {
        let blank_gap = kind == gap && is_blank(source, s, e);
        if blank_gap {
            match merged.last_mut() {
                Some(last) => last.1 = e,
                None => pending_lead = Some(pending_lead.unwrap_or(s)),
            }
            continue;
        }
        let s = pending_lead.take().unwrap_or(s);
        match merged.last_mut() {
            Some(last) if last.2 == kind => last.1 = e,
            _ => merged.push((s, e, kind)),
        }
    }
    if let Some(lead) = pending_lead {
        // The chunk is only whitespace (never emitted, but stay total).
        merged.push((lead, end, gap));
    }
    merged
        .into_iter()
        .map(|(s, e, kind)| OutlineSpan {
            kind,
            start: to_u32(s - start),
            end: to_u32(e - start),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: usize, end: usize, kind: SpanKind) -> Interval {
        Interval { start, end, kind }
    }

    #[test]
    fn gaps_become_code_and_whitespace_joins_the_span_before() {
        let src = "/// d\nfn f() { x }\n";
        let ivs = disjoint(vec![
            iv(0, 5, SpanKind::Doc),
            iv(6, 13, SpanKind::Signature),
            iv(13, 18, SpanKind::Body),
            iv(15, 16, SpanKind::Comment),
        ]);
        let spans = for_chunk(src, &ivs, 0, 18, SpanKind::Code);
        let got: Vec<_> = spans.iter().map(|s| (s.kind, s.start, s.end)).collect();
        assert_eq!(
            got,
            vec![
                (SpanKind::Doc, 0, 6),
                (SpanKind::Signature, 6, 13),
                (SpanKind::Body, 13, 18)
            ]
        );
    }

    #[test]
    fn clips_to_the_chunk() {
        let src = "    a b c";
        let ivs = disjoint(vec![iv(4, 9, SpanKind::Body)]);
        let spans = for_chunk(src, &ivs, 0, 7, SpanKind::Code);
        let got: Vec<_> = spans.iter().map(|s| (s.kind, s.start, s.end)).collect();
        assert_eq!(got, vec![(SpanKind::Body, 0, 7)]);
    }
}
