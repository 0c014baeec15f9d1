//! Chunking: one source file → symbol-aligned chunks with outlines, plus the
//! symbol definitions and references that feed the graph.
//!
//! Does not read files, count exact tokens or touch any store: input is a
//! relative path and the file's text, output is plain data. Never panics; a
//! parse failure or timeout degrades to line windows with a warning.
//!
//! Three strategies, picked by path (see [`crate::indexing::lang`]):
//! - files with a tree-sitter grammar: symbol-aligned chunks (`syntax`; its
//!   module docs give the exact cutting rules),
//! - Markdown: one section per heading (`markdown`),
//! - everything else: overlapping line windows (`text`).
//!
//! Small neighbours are merged: in parsed files, runs of consecutive chunks
//! each under `min_chunk_bytes` (constants, type aliases, tiny impls, short
//! functions) become one chunk; see `syntax` for the rule. Markdown sections
//! and line windows are never merged.
//!
//! *Invariants* (tested on every fixture and by property tests):
//! - chunk offsets lie on char boundaries and chunks are in file order;
//! - parsed and Markdown files: chunks are disjoint and hold every
//!   non-whitespace byte of the file; windows may overlap by design;
//! - every chunk's outline partitions its text (sorted, contiguous, no empty
//!   span). A `Body` span is contiguous: comments inside a function body are
//!   part of it, so eliding a body elides them too. For brace languages a body
//!   includes its braces; Python bodies start after the docstring; Ruby
//!   bodies stop before `end`.

use crate::indexing::lang;
use loupe_assemble::{ChunkKind, Outline};
use std::time::Duration;

mod markdown;
mod outline;
mod syntax;
mod text;

/// The smallest `max_chunk_bytes` honoured; smaller values would cut code
/// into confetti (and cost quadratic work), so they are raised to this.
const MIN_CHUNK_BYTES: usize = 64;

/// Default for [`ChunkConfig::min_chunk_bytes`]: about 100 tokens at ~4 bytes
/// per token. Below that a definition is a one-liner (a constant averages ~28
/// tokens, a marker `impl` ~65 on real code) that makes a poor prompt unit and
/// a weak embedding on its own, yet costs a catalog row, a tantivy document
/// and an embedding like any chunk. A typical documented function is above it
/// and stays alone.
const DEFAULT_MIN_CHUNK_BYTES: usize = 400;

/// Limits and sizes for chunking.
#[derive(Clone, Debug)]
pub struct ChunkConfig {
    /// A definition larger than this many bytes is split (into its members,
    /// or at statement boundaries).
    pub max_chunk_bytes: usize,
    /// Parsed files only: consecutive chunks each smaller than this many
    /// bytes, with the same parent, are merged while the result stays within
    /// `max_chunk_bytes` (their definitions stay in [`ParsedFile::defs`]).
    /// 0 disables merging.
    pub min_chunk_bytes: usize,
    /// Line-window size for files without a parser.
    pub window_lines: usize,
    /// Overlap between consecutive line windows.
    pub window_overlap: usize,
    /// Files larger than this are not parsed (they are windowed instead).
    pub max_parse_bytes: usize,
    /// Parse timeout per file.
    pub parse_timeout: Duration,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        Self {
            // ~1,000 tokens of code at ~4 bytes per token.
            max_chunk_bytes: 4_000,
            min_chunk_bytes: DEFAULT_MIN_CHUNK_BYTES,
            window_lines: 60,
            window_overlap: 10,
            max_parse_bytes: 1 << 20,
            parse_timeout: Duration::from_secs(2),
        }
    }
}

/// One chunk before it gets an id, a hash and a token count.
/// Its text is `source[start_byte..end_byte]`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChunkDraft {
    /// Syntactic kind.
    pub kind: ChunkKind,
    /// Defined symbol, if any.
    pub symbol: Option<String>,
    /// Enclosing symbol, if any.
    pub parent: Option<String>,
    /// First byte in the file.
    pub start_byte: u32,
    /// One past the last byte.
    pub end_byte: u32,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// Spans partitioning the chunk text (offsets relative to `start_byte`).
    pub outline: Outline,
}

/// How a symbol is referenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// A call site.
    Call,
    /// An import / use / include.
    Import,
    /// A type mention.
    Type,
}

/// A symbol defined in the file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SymbolDef {
    /// Bare name (`parse`, not `Parser::parse`).
    pub name: String,
    /// Kind of definition.
    pub kind: ChunkKind,
    /// 1-based line of the name.
    pub line: u32,
    /// Index into [`ParsedFile::chunks`] of the chunk holding the definition.
    pub chunk: usize,
}

/// A reference from inside the file to a symbol by name.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SymbolRef {
    /// Bare name referenced.
    pub name: String,
    /// Kind of reference.
    pub kind: RefKind,
    /// 1-based line.
    pub line: u32,
    /// Index into [`ParsedFile::chunks`] of the chunk containing the reference.
    pub chunk: usize,
}

/// Everything chunking learned about one file.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ParsedFile {
    /// Language name (`rust`, `markdown`, `text`, ...).
    pub language: &'static str,
    /// Chunks in file order.
    pub chunks: Vec<ChunkDraft>,
    /// Definitions.
    pub defs: Vec<SymbolDef>,
    /// References.
    pub refs: Vec<SymbolRef>,
    /// Problems that degraded the result (parse timeout, syntax errors, ...).
    pub warnings: Vec<String>,
}

/// What a warning starts with, or holds, when its cause is not the bytes
/// but the machine (a deadline met or missed, a panic): a parse carrying
/// one is not what another machine derives (`derived::Derived::shareable`).
pub const TIMED_OUT: &str = "parse timed out";
/// The definitions and references queries stopped at their deadline.
pub const CUT_SHORT: &str = "queries were cut short";
/// A panic while chunking.
pub const INTERNAL_ERROR: &str = "internal error while chunking";

/// Chunk one file. `rel_path` picks the language; `source` is the file's text.
pub fn chunk_file(rel_path: &str, source: &str, cfg: &ChunkConfig) -> ParsedFile {
    let cfg = ChunkConfig {
        max_chunk_bytes: cfg.max_chunk_bytes.max(MIN_CHUNK_BYTES),
        ..cfg.clone()
    };
    // Belt and braces: a bug in a grammar binding or in this module must cost
    // one file its structure, not the whole indexing run.
    let structured = std::panic::catch_unwind(|| chunk_structured(rel_path, source, &cfg));
    match structured {
        Ok(Some(parsed)) => parsed,
        Ok(None) => window_file(language_of(rel_path), source, &cfg, None),
        Err(_) => window_file(
            language_of(rel_path),
            source,
            &cfg,
            Some(format!("{INTERNAL_ERROR}; chunked by lines")),
        ),
    }
}

/// Chunk by syntax or by headings, if the path has a strategy for that.
/// A parse failure windows the file here, keeping the language's name.
fn chunk_structured(rel_path: &str, source: &str, cfg: &ChunkConfig) -> Option<ParsedFile> {
    if let Some(config) = lang::for_path(rel_path) {
        return Some(match syntax::chunk(config, source, cfg) {
            Ok(parsed) => parsed,
            Err(reason) => window_file(
                config.name,
                source,
                cfg,
                Some(format!("{reason}; chunked by lines")),
            ),
        });
    }
    if lang::is_markdown(rel_path) {
        if source.len() > cfg.max_parse_bytes {
            let reason = format!(
                "{} bytes is over the parse limit; chunked by lines",
                source.len()
            );
            return Some(window_file("markdown", source, cfg, Some(reason)));
        }
        return Some(markdown::chunk(source, cfg));
    }
    None
}

/// The language name of a file chunked by lines.
/// The language a file at `rel_path` is chunked as (`rust`, `markdown`,
/// `text`, ...): the path alone decides it.
pub fn language_of(rel_path: &str) -> &'static str {
    match lang::for_path(rel_path) {
        Some(config) => config.name,
        None if lang::is_markdown(rel_path) => "markdown",
        None => lang::plain_language_name(rel_path),
    }
}

/// Line windows for a whole file, with an optional warning.
fn window_file(
    language: &'static str,
    source: &str,
    cfg: &ChunkConfig,
    warning: Option<String>,
) -> ParsedFile {
    ParsedFile {
        language,
        chunks: text::windows(source, cfg),
        defs: Vec::new(),
        refs: Vec::new(),
        warnings: warning.into_iter().collect(),
    }
}
