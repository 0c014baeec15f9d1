//! Markdown chunking by headings: one `Section` chunk per heading (symbol =
//! heading text, parent = the enclosing heading), text before the first
//! heading as a section without a symbol, and sections larger than
//! `max_chunk_bytes` split at top-level block boundaries (then at lines).
//!
//! Outline: headings are `Signature`, code blocks `Code`, HTML comments
//! `Comment`, all other prose `Doc`. Does not resolve links or produce
//! references; headings are reported as definitions of kind `Section`.

use super::outline::{self, Interval};
use super::text::{self, LineIndex, trim};
use super::{ChunkConfig, ChunkDraft, ParsedFile, SymbolDef};
use loupe_assemble::{ChunkKind, SpanKind};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Heading text longer than this is cut (a symbol name, not a paragraph).
const MAX_HEADING_CHARS: usize = 200;

/// A top-level block of the document.
struct Block {
    start: usize,
    end: usize,
    /// Heading level (1–6) and text, for headings.
    heading: Option<(u8, String)>,
    kind: SpanKind,
}

/// Top-level blocks, in order.
fn blocks(source: &str) -> Vec<Block> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut out: Vec<Block> = Vec::new();
    let mut depth = 0usize;
    let mut heading_text: Option<String> = None;
    for (event, range) in Parser::new_ext(source, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    let (heading, kind) = match &tag {
                        Tag::Heading { level, .. } => {
                            heading_text = Some(String::new());
                            (Some((*level as u8, String::new())), SpanKind::Signature)
                        }
                        Tag::CodeBlock(_) => (None, SpanKind::Code),
                        Tag::HtmlBlock if is_html_comment(source, range.start) => {
                            (None, SpanKind::Comment)
                        }
                        _ => (None, SpanKind::Doc),
                    };
                    out.push(Block {
                        start: range.start,
                        end: range.end,
                        heading,
                        kind,
                    });
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && matches!(end, TagEnd::Heading(_))
                    && let (
                        Some(text),
                        Some(Block {
                            heading: Some((_, h)),
                            ..
                        }),
                    ) = (heading_text.take(), out.last_mut())
                {
                    *h = text.trim().chars().take(MAX_HEADING_CHARS).collect();
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading_text.as_mut() {
                    h.push_str(&t);
                } else if depth == 0 {
                    out.push(Block {
                        start: range.start,
                        end: range.end,
                        heading: None,
                        kind: SpanKind::Doc,
                    });
                }
            }
            _ if depth == 0 => {
                out.push(Block {
                    start: range.start,
                    end: range.end,
                    heading: None,
                    kind: SpanKind::Doc,
                });
            }
            _ => {}
        }
    }
    out
}

/// Whether the HTML block at `start` is a comment.
fn is_html_comment(source: &str, start: usize) -> bool {
    source
        .get(start..)
        .is_some_and(|s| s.trim_start().starts_with("<!--"))
}

/// Chunk a Markdown file.
// Long: one pass over the file's blocks: sections by heading, with code fences and front matter kept whole.
pub(super) fn chunk(source: &str, cfg: &ChunkConfig) -> ParsedFile {
    let lines = LineIndex::new(source);
    let blocks = blocks(source);
    let intervals = outline::disjoint(
        blocks
            .iter()
            .map(|b| Interval {
                start: b.start,
                end: b.end,
                kind: b.kind,
            })
            .collect(),
    );

    // Section boundaries: each heading starts one; text before the first
    // heading is a section of its own.
    struct Section {
        start: usize,
        end: usize,
        symbol: Option<String>,
        parent: Option<String>,
        cuts: Vec<usize>,
    }
    let mut sections: Vec<Section> = Vec::new();
    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut current = Section {
        start: 0,
        end: 0,
        symbol: None,
        parent: None,
        cuts: Vec::new(),
    };
    let mut defs = Vec::new();
    for block in &blocks {
        if let Some((level, text)) = &block.heading {
            current.end = block.start;
            sections.push(current);
            while stack.last().is_some_and(|(l, _)| l >= level) {
                stack.pop();
            }
            let parent = stack.last().map(|(_, t)| t.clone());
            stack.push((*level, text.clone()));
            let symbol = (!text.is_empty()).then(|| text.clone());
            if let Some(name) = symbol.clone() {
                defs.push((name, block.start));
            }
            current = Section {
                start: block.start,
                end: 0,
                symbol,
                parent,
                cuts: Vec::new(),
            };
        } else {
            current.cuts.push(block.start);
        }
    }
    current.end = source.len();
    sections.push(current);

    let mut chunks: Vec<ChunkDraft> = Vec::new();
    for section in sections {
        let (s, e) = trim(source, section.start, section.end);
        if s >= e {
            continue;
        }
        for (ps, pe) in text::pack(source, s, e, section.cuts, cfg.max_chunk_bytes) {
            let (start_line, end_line) = lines.lines(ps, pe);
            chunks.push(ChunkDraft {
                kind: ChunkKind::Section,
                symbol: section.symbol.clone(),
                parent: section.parent.clone(),
                start_byte: text::to_u32(ps),
                end_byte: text::to_u32(pe),
                start_line,
                end_line,
                outline: outline::for_chunk(source, &intervals, ps, pe, SpanKind::Doc),
            });
        }
    }
    let defs = defs
        .into_iter()
        .filter_map(|(name, at)| {
            let chunk = chunks
                .iter()
                .position(|c| (c.start_byte as usize) <= at && at < c.end_byte as usize)?;
            Some(SymbolDef {
                name,
                kind: ChunkKind::Section,
                line: lines.line(at),
                chunk,
            })
        })
        .collect();
    ParsedFile {
        language: "markdown",
        chunks,
        defs,
        refs: Vec::new(),
        warnings: Vec::new(),
    }
}
