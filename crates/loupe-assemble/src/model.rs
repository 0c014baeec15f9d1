//! The data that flows from the engine into assembly: chunks, their outlines,
//! and the retrieval signals that make a chunk a [`Candidate`].
//!
//! These types are plain data shared by `loupe-engine` (which produces them)
//! and the assembly stages (which consume them). They carry serde derives only
//! so that snapshot tests and the transport layers can print them; nothing here
//! knows about storage or IPC.
//!
//! *Invariant:* a chunk's [`Outline`] partitions its `text`: spans are sorted,
//! non-overlapping, and together cover every byte, so any level of detail can
//! be rendered from the outline without re-parsing.

use serde::{Deserialize, Serialize};

/// Stable identifier of a chunk in the catalog. Never reused after deletion.
pub type ChunkId = i64;

/// What syntactic unit a chunk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkKind {
    /// A free function.
    Function,
    /// A function defined inside a class, impl, trait or interface.
    Method,
    /// A class (or the header and fields of one whose methods became chunks).
    Class,
    /// A struct or record.
    Struct,
    /// An enum.
    Enum,
    /// A trait.
    Trait,
    /// An interface or protocol.
    Interface,
    /// A Rust `impl` block (or its header when its methods became chunks).
    Impl,
    /// A module, namespace or package block.
    Module,
    /// A type alias or other type definition.
    Type,
    /// A constant, static or top-level variable.
    Constant,
    /// Module-level code between definitions (imports, statements).
    Block,
    /// A Markdown section under one heading.
    Section,
    /// A window of lines from a file with no parser.
    Window,
}

/// What part of the project a file plays; used by intent multipliers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Source code.
    Code,
    /// Prose documentation (Markdown, READMEs, docs folders).
    Docs,
    /// Tests, fixtures, benchmarks.
    Tests,
    /// Build and configuration files.
    Config,
    /// Anything else.
    Other,
}

/// The tag of one outline span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanKind {
    /// The header of a definition, from its first token to where its body starts.
    Signature,
    /// A doc comment or docstring attached to a definition.
    Doc,
    /// The body of a function or method (the part elided at level 2 and up).
    Body,
    /// An import / use / include statement.
    Import,
    /// A plain (non-doc) comment.
    Comment,
    /// Any other code: fields, statements, decorators, closing braces.
    Code,
}

/// One tagged byte range of a chunk's text, relative to the chunk's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OutlineSpan {
    /// What the bytes are.
    pub kind: SpanKind,
    /// First byte, relative to the chunk text.
    pub start: u32,
    /// One past the last byte, relative to the chunk text.
    pub end: u32,
}

/// The spans of a chunk, sorted and covering its text exactly.
pub type Outline = Vec<OutlineSpan>;

/// A symbol-aligned piece of a file with everything needed to render it at any
/// level of detail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Catalog id.
    pub id: ChunkId,
    /// Path relative to the project root, with `/` separators.
    pub path: String,
    /// Language name from the language registry (`rust`, `python`, `markdown`, `text`, ...).
    pub language: String,
    /// Syntactic kind.
    pub kind: ChunkKind,
    /// The defined symbol's name, if the chunk defines one.
    pub symbol: Option<String>,
    /// The enclosing symbol (class, impl, module), if any.
    pub parent: Option<String>,
    /// First byte in the file.
    pub start_byte: u32,
    /// One past the last byte in the file.
    pub end_byte: u32,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The file's role.
    pub role: Role,
    /// The chunk's text, exactly the file's bytes `start_byte..end_byte`.
    pub text: String,
    /// Tagged spans partitioning `text`.
    pub outline: Outline,
    /// Hex content hash of `text` (blake3), the key of the embedding cache.
    pub hash: String,
    /// Token count of `text` with the index tokenizer (o200k_base).
    pub tokens: u32,
}

impl Chunk {
    /// A one-line Rust function chunk of `path` holding `text`, the rest
    /// empty: the chunk the crates' tests and benches build their
    /// candidates from (`Chunk { role, ..Chunk::sample(…) }`).
    #[doc(hidden)]
    pub fn sample(id: ChunkId, path: &str, text: &str) -> Chunk {
        Chunk {
            id,
            path: path.into(),
            language: "rust".into(),
            kind: ChunkKind::Function,
            symbol: None,
            parent: None,
            start_byte: 0,
            end_byte: 0,
            start_line: 1,
            end_line: 1,
            role: Role::Code,
            text: text.into(),
            outline: vec![],
            hash: String::new(),
            tokens: 0,
        }
    }
}

/// The raw retrieval evidence for one candidate, kept so ranking can be
/// explained factor by factor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    /// BM25 score from the lexical index.
    pub bm25: Option<f32>,
    /// 1-based rank among BM25 hits.
    pub bm25_rank: Option<u32>,
    /// 1-based rank of the chunk's file under whole-file BM25 (the sum of
    /// the evidence in all its chunks), set on the best chunk of each of the
    /// best files.
    pub file_rank: Option<u32>,
    /// 1-based rank of the chunk's file among those changed by the past
    /// commits most similar to the question, set on one chunk per file.
    #[serde(default)]
    pub history_rank: Option<u32>,
    /// Cosine similarity from the vector index.
    pub vector: Option<f32>,
    /// 1-based rank among vector hits.
    pub vector_rank: Option<u32>,
    /// How many identifiers from the question this chunk defines.
    pub symbol_hits: u32,
    /// Whether one of those hits matched the symbol name exactly (not fuzzily).
    pub symbol_exact: bool,
    /// Hops in the symbol graph from a strong hit (0 = the hit itself).
    pub graph_distance: Option<u8>,
    /// How many question terms (identifiers, path parts) occur in the chunk's path.
    pub path_hits: u32,
    /// File modification time, seconds since the Unix epoch.
    pub mtime: i64,
    /// Whether the file is a primer (AGENTS.md, PROJECT_PRIMER.md, ...).
    pub primer: bool,
    /// Whether the user pinned it (an `@` mention or a pin in the UI).
    pub pinned: bool,
    /// Relevance the re-ranker gave the chunk's file ("read by the
    /// model"): its blended gain, on every chunk of a file it read; `None`
    /// when the file was not read.
    #[serde(default)]
    pub reader: Option<f32>,
}

impl Signals {
    /// Whether any retrieval source vouches for the candidate (a chunk
    /// read only because its file leads has none of its own).
    pub fn has_evidence(&self) -> bool {
        self.bm25_rank.is_some()
            || self.file_rank.is_some()
            || self.history_rank.is_some()
            || self.vector_rank.is_some()
            || self.symbol_hits > 0
            || self.path_hits > 0
            || self.graph_distance.is_some()
            || self.pinned
            || self.primer
    }
}

/// A chunk that retrieval brought back, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The chunk.
    pub chunk: Chunk,
    /// Why it was retrieved.
    pub signals: Signals,
}
