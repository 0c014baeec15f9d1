//! From one retrieval and its assemblies to a prediction line: files ranked
//! by their best chunk, and per budget the files, line spans and tokens that
//! made it into the prompt.
//!
//! *Packed lines are the lines a reader of the prompt sees*: a chunk at
//! level of detail 0 shows all its lines; at higher levels only the outline
//! spans that [`loupe_assemble::compress::render`] keeps (signatures, docs,
//! fields, imports); a level-5 summary shows none. A file counts as packed
//! when at least one of its lines is visible, so a one-line summary of a
//! file does not count as "the file is in the prompt".

use loupe_assemble::model::{Chunk, SpanKind};
use loupe_assemble::rank::{self, ScoreBreakdown};
use loupe_assemble::{Assembly, Candidate};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What one budget packed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Packed {
    /// Files with at least one visible line, in first-seen rank order.
    pub packed_files: Vec<String>,
    /// Visible line ranges per file, merged, 1-based inclusive.
    pub packed_spans: BTreeMap<String, Vec<(u32, u32)>>,
    /// Size of the whole prompt in the budget's unit (tokens).
    pub packed_tokens: u32,
    /// Chunks in the prompt (any level of detail).
    pub items_in: u32,
    /// Of those, at full detail (level 0).
    pub items_full: u32,
    /// Files with any item in the prompt, summaries included.
    pub files_any: u32,
}

/// The file lines of `chunk` visible when rendered at `lod`.
pub fn visible_lines(chunk: &Chunk, lod: u8) -> Vec<(u32, u32)> {
    let whole = vec![(chunk.start_line, chunk.end_line)];
    if lod == 0 {
        return whole;
    }
    let markdown = matches!(chunk.language.as_str(), "markdown" | "md");
    if !markdown && lod >= 5 {
        return Vec::new();
    }
    let keep = |kind: SpanKind| -> bool {
        if markdown {
            // Headings stay; paragraphs and code only at level 1 (first
            // sentences at levels 2-3 are partial lines: not counted).
            return match kind {
                SpanKind::Comment => false,
                SpanKind::Signature => true,
                _ => lod <= 1,
            };
        }
        match lod {
            4 => kind == SpanKind::Import,
            _ => match kind {
                SpanKind::Import | SpanKind::Signature | SpanKind::Code => true,
                SpanKind::Comment => false,
                SpanKind::Doc => lod <= 2,
                SpanKind::Body => lod <= 1,
            },
        }
    };
    if chunk.outline.is_empty() {
        return if keep(SpanKind::Code) {
            whole
        } else {
            Vec::new()
        };
    }
    let text = chunk.text.as_bytes();
    let line_at = |byte: usize| -> u32 {
        let upto = &text[..byte.min(text.len())];
        chunk.start_line + upto.iter().filter(|&&b| b == b'\n').count() as u32
    };
    let mut out = Vec::new();
    for span in &chunk.outline {
        let (start, end) = (span.start as usize, span.end as usize);
        if end <= start || !keep(span.kind) {
            continue;
        }
        let body = text.get(start..end.min(text.len())).unwrap_or_default();
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Skip leading newlines so a span starting at the end of a line
        // does not claim that line.
        let lead = body.iter().take_while(|&&b| b == b'\n').count();
        let first = line_at(start + lead);
        let last = line_at(end - 1).max(first);
        out.push((first, last.min(chunk.end_line)));
    }
    merge(out)
}

/// Sorts and merges overlapping or adjacent ranges.
pub fn merge(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Candidate indices in the product's rank order ([`rank::order`], the
/// order of the app's table: final score, then the evidence behind scores
/// tied at the cap, then path and position); candidates assembly did not
/// score go last, in retrieval order.
///
/// Before `fb14123` this sorted by the final score alone and left ties in
/// retrieval order: strong candidates often all reach the score cap, so
/// the files a prediction ranked first were in part the interim retrieval
/// order's, not the ranker's (EVAL.md, "What was tried" → Retrieval
/// signals and ranking, `fb14123`).
fn rank_order(candidates: &[Candidate], assembly: &Assembly) -> Vec<usize> {
    let score: HashMap<_, &ScoreBreakdown> =
        assembly.items.iter().map(|r| (r.id, &r.score)).collect();
    let (mut scored, mut rest) = (Vec::new(), Vec::new());
    for (i, c) in candidates.iter().enumerate() {
        match score.get(&c.chunk.id) {
            Some(s) => scored.push((i, *s)),
            None => rest.push(i),
        }
    }
    scored.sort_by(|a, b| rank::order((&candidates[a.0], a.1), (&candidates[b.0], b.1)));
    scored.into_iter().map(|(i, _)| i).chain(rest).collect()
}

/// Files ordered by their best chunk.
pub fn ranked_files(candidates: &[Candidate], assembly: &Assembly) -> Vec<String> {
    let mut seen = HashSet::new();
    rank_order(candidates, assembly)
        .into_iter()
        .map(|i| &candidates[i].chunk.path)
        .filter(|p| seen.insert(p.as_str()))
        .cloned()
        .collect()
}

/// Files ordered by a decayed sum of their best chunks' scores
/// (`best + w₁·second + w₂·third …` for `weights = [1, w₁, w₂, …]`): a
/// diagnostic alternative to [`ranked_files`] that rewards files with
/// several relevant chunks. Ties keep the best-chunk order.
pub fn ranked_files_aggregated(
    candidates: &[Candidate],
    assembly: &Assembly,
    weights: &[f32],
) -> Vec<String> {
    let score: HashMap<_, f32> = assembly
        .items
        .iter()
        .map(|r| (r.id, r.score.score))
        .collect();
    let mut per_file: HashMap<&str, (usize, Vec<f32>)> = HashMap::new();
    for (pos, i) in rank_order(candidates, assembly).into_iter().enumerate() {
        let c = &candidates[i].chunk;
        let entry = per_file.entry(c.path.as_str()).or_insert((pos, Vec::new()));
        entry.1.push(score.get(&c.id).copied().unwrap_or(0.0));
    }
    let mut files: Vec<(&str, usize, f32)> = per_file
        .into_iter()
        .map(|(path, (first, scores))| {
            let total = scores.iter().zip(weights).map(|(s, w)| s * w).sum();
            (path, first, total)
        })
        .collect();
    files.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)));
    files.into_iter().map(|(p, _, _)| p.to_owned()).collect()
}

/// What `assembly` put into the prompt.
pub fn packed(candidates: &[Candidate], assembly: &Assembly) -> Packed {
    let by_id: HashMap<_, &Chunk> = candidates.iter().map(|c| (c.chunk.id, &c.chunk)).collect();
    let lod_of: HashMap<_, u8> = assembly
        .items
        .iter()
        .filter(|r| r.status.is_in())
        .filter_map(|r| r.lod.map(|l| (r.id, l)))
        .collect();
    let mut out = Packed {
        packed_tokens: assembly.report.used,
        ..Packed::default()
    };
    let mut any_files = HashSet::new();
    let mut spans: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    for i in rank_order(candidates, assembly) {
        let chunk = &candidates[i].chunk;
        let Some(&lod) = lod_of.get(&chunk.id) else {
            continue;
        };
        let Some(chunk) = by_id.get(&chunk.id) else {
            continue;
        };
        out.items_in += 1;
        out.items_full += u32::from(lod == 0);
        any_files.insert(chunk.path.clone());
        let lines = visible_lines(chunk, lod);
        if lines.is_empty() {
            continue;
        }
        if !spans.contains_key(&chunk.path) {
            out.packed_files.push(chunk.path.clone());
        }
        spans.entry(chunk.path.clone()).or_default().extend(lines);
    }
    out.files_any = any_files.len() as u32;
    out.packed_spans = spans.into_iter().map(|(f, r)| (f, merge(r))).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_assemble::model::OutlineSpan;

    fn chunk(text: &str, outline: Vec<(SpanKind, u32, u32)>) -> Chunk {
        Chunk {
            symbol: Some("f".into()),
            end_byte: text.len() as u32,
            start_line: 10,
            end_line: 10 + text.matches('\n').count() as u32 - 1,
            outline: outline
                .into_iter()
                .map(|(kind, start, end)| OutlineSpan { kind, start, end })
                .collect(),
            ..Chunk::sample(1, "a.rs", text)
        }
    }

    #[test]
    fn levels_show_the_lines_render_keeps() {
        // 10: /// doc   11: fn f() {   12: body   13: }
        let text = "/// doc\nfn f() {\n    body\n}\n";
        let c = chunk(
            text,
            vec![
                (SpanKind::Doc, 0, 8),
                (SpanKind::Signature, 8, 15),
                (SpanKind::Body, 15, 28),
                (SpanKind::Code, 28, 29),
            ],
        );
        assert_eq!(visible_lines(&c, 0), vec![(10, 13)]);
        assert_eq!(visible_lines(&c, 1), vec![(10, 13)]);
        assert_eq!(visible_lines(&c, 2), vec![(10, 11)]);
        assert_eq!(visible_lines(&c, 3), vec![(11, 11)]);
        assert_eq!(visible_lines(&c, 4), vec![]);
        assert_eq!(visible_lines(&c, 5), vec![]);
    }

    fn row(id: i64, path: &str, score: f32, lod: Option<u8>) -> loupe_assemble::ItemRow {
        loupe_assemble::ItemRow {
            id,
            path: path.into(),
            start_line: 10,
            end_line: 13,
            section: loupe_assemble::report::Section::RetrievedCode,
            score: loupe_assemble::rank::ScoreBreakdown {
                score,
                ..Default::default()
            },
            lod,
            wanted_lod: 0,
            size: 1,
            status: match lod {
                Some(_) => loupe_assemble::report::ItemStatus::Included,
                None => loupe_assemble::report::ItemStatus::Dropped(
                    loupe_assemble::report::DropReason::BelowMinScore,
                ),
            },
            merged_into: None,
        }
    }

    #[test]
    fn files_rank_by_best_chunk_and_pack_by_visible_lines() {
        let text = "/// doc\nfn f() {\n    body\n}\n";
        let outline = || {
            vec![
                (SpanKind::Doc, 0, 8),
                (SpanKind::Signature, 8, 15),
                (SpanKind::Body, 15, 28),
                (SpanKind::Code, 28, 29),
            ]
        };
        let mut cands = Vec::new();
        for (id, path) in [(1, "a.rs"), (2, "b.rs"), (3, "b.rs"), (4, "c.rs")] {
            let mut c = chunk(text, outline());
            c.id = id;
            c.path = path.into();
            cands.push(Candidate {
                chunk: c,
                signals: Default::default(),
            });
        }
        let assembly = Assembly {
            items: vec![
                row(1, "a.rs", 0.5, Some(0)),
                row(2, "b.rs", 0.6, Some(3)),
                row(3, "b.rs", 0.4, None),
                row(4, "c.rs", 0.3, Some(5)),
            ],
            ..Default::default()
        };
        assert_eq!(ranked_files(&cands, &assembly), ["b.rs", "a.rs", "c.rs"]);
        assert_eq!(
            ranked_files_aggregated(&cands, &assembly, &[1.0, 0.5]),
            ["b.rs", "a.rs", "c.rs"]
        );
        assert_eq!(
            ranked_files_aggregated(&cands, &assembly, &[1.0]),
            ["b.rs", "a.rs", "c.rs"]
        );
        let p = packed(&cands, &assembly);
        // c.rs is in only as a level-5 summary: no visible line.
        assert_eq!(p.packed_files, ["b.rs", "a.rs"]);
        assert_eq!(p.packed_spans["b.rs"], vec![(11, 11)]);
        assert_eq!(p.packed_spans["a.rs"], vec![(10, 13)]);
        assert_eq!((p.items_in, p.items_full, p.files_any), (3, 1, 3));
    }

    /// Scores tied at the cap are ordered by the evidence behind them, as the
    /// app's table orders them, not by retrieval order.
    #[test]
    fn ties_at_the_cap_rank_by_the_evidence_behind_them() {
        let text = "fn f() {}\n";
        let mut cands = Vec::new();
        for (id, path) in [(1, "weak.rs"), (2, "strong.rs"), (3, "unscored.rs")] {
            let mut c = chunk(text, vec![(SpanKind::Code, 0, 10)]);
            c.id = id;
            c.path = path.into();
            cands.push(Candidate {
                chunk: c,
                signals: Default::default(),
            });
        }
        let capped = |id, path, lexical| {
            let mut r = row(id, path, 0.9, Some(0));
            r.score.lexical = lexical;
            r.score.role_weight = 1.0;
            r.score.intent_multiplier = 1.0;
            r.score.path_weight = 1.0;
            r
        };
        let assembly = Assembly {
            items: vec![capped(1, "weak.rs", 1.2), capped(2, "strong.rs", 2.5)],
            ..Default::default()
        };
        assert_eq!(
            ranked_files(&cands, &assembly),
            ["strong.rs", "weak.rs", "unscored.rs"]
        );
    }

    #[test]
    fn merge_joins_adjacent_and_overlapping() {
        assert_eq!(
            merge(vec![(5, 6), (1, 2), (3, 3), (8, 9), (9, 12)]),
            vec![(1, 3), (5, 6), (8, 12)]
        );
    }
}
