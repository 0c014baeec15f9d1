//! The lexical index: BM25 over chunks in tantivy, with a code-aware
//! tokenizer.
//!
//! Derived data: rebuilt from the catalog when its commit payload (the
//! catalog generation it reflects) disagrees with the catalog, when its files
//! fail their checksums, or when it cannot be opened.
//!
//! Fields: `path`, `symbols` (symbol and parent), `content` (the chunk text),
//! `docs` (its doc comments), and two fast fields: `chunk_id` and `file_key`
//! (a hash of the path). `names` holds each defined name whole and
//! lower-cased, unscored: its term dictionary is the project's dictionary
//! of names, which [`LexicalIndex::similar_names`] walks for near misses. Queries are bags of analysed terms across the
//! fields with per-field boosts; no query syntax, so pasted stack traces and
//! code never fail to parse.
//!
//! Besides chunk BM25, [`LexicalIndex::search_files`] scores whole files
//! with BM25 from the same postings (a file's term frequency is the sum over
//! its chunks, its length the sum of their lengths): evidence spread over
//! several chunks of one file counts, without a second index.

use crate::stores::lexical_dir::UnsyncedDirectory;
use crate::{Error, Result};
use loupe_assemble::memo::Memo;
use loupe_assemble::{Chunk, ChunkId, SpanKind};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tantivy::collector::TopDocs;
use tantivy::postings::Postings;
use tantivy::query::{Bm25StatisticsProvider, BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    Language, RemoveLongFilter, StopWordFilter, TextAnalyzer, Token, TokenFilter, TokenStream,
    Tokenizer,
};
use tantivy::{
    DocId, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Score, Searcher, SegmentReader,
    TERMINATED, Term, doc,
};

/// A BM25 score rounded to 1/1024: the same chunk text scores the same
/// up to the last bits of an f32 whatever the segment layout, and those
/// bits must not decide an order (issue 16); a real difference in
/// relevance is far larger than the grain.
fn tie_grain(score: Score) -> Score {
    (score * 1024.0).round() / 1024.0
}

/// Name under which the code analyzer is registered.
pub(crate) const ANALYZER: &str = "loupe_code";
/// Tokens longer than this are noise (hashes, base64) and are dropped.
const MAX_TOKEN_LEN: usize = 48;
/// Writer heap: tantivy's recommended minimum per thread is 15 MB; 64 MB
/// total keeps segment flushes rare on our corpora without hogging memory.
const WRITER_HEAP_BYTES: usize = 64_000_000;
/// Batches up to this many chunks get a small writer ([`LexicalIndex::writer_for`]);
/// a run that wrote more is worth a merge into one segment afterwards
/// ([`crate::Project::compact_after`]).
pub(crate) const SMALL_BATCH_CHUNKS: usize = 2_000;
/// Small writers merge only segments below this many documents.
const SMALL_BATCH_MERGE_MAX_DOCS: usize = 2_000;
/// The small writer's heap: tantivy's minimum for one thread (15 MB).
const SMALL_WRITER_HEAP_BYTES: usize = 15_000_000;
/// Weight of the question's first line's terms (see [`query_terms`]): a
/// pasted bug report or commit message says what it is about in its title.
/// `loupe eval` (EVAL.md): rust-issues acc@5 50.0 → 55.6 and MRR 63.1 →
/// 72.9 at 3 (54.4 / 69.1 at 2); neutral on commit messages (ripgrep,
/// axum); a one-line question weighs all its terms alike, as before.
const SUBJECT_WEIGHT: f32 = 3.0;
/// At most this many distinct query terms are used (long bug reports).
const MAX_QUERY_TERMS: usize = 256;
/// Field boosts: a term in a symbol name or path says more than one in a body.
const BOOST_SYMBOLS: f32 = 3.0;
const BOOST_PATH: f32 = 2.0;
const BOOST_CONTENT: f32 = 1.0;
const BOOST_DOCS: f32 = 0.5;
/// File-level BM25 parameters: pyserini's defaults, which the eval
/// README's whole-file reference uses.
const FILE_BM25_K1: f32 = 0.9;
const FILE_BM25_B: f32 = 0.4;
/// Terms in more than this share of chunks carry almost no file-level
/// information (idf near 0) and cost the most postings: skipped.
const FILE_MAX_DOC_SHARE: f32 = 0.25;
const FIELD_FILE_KEY: &str = "file_key";
const FIELD_CHUNK_ID: &str = "chunk_id";
/// High bit of a per-file term count: the path already counted for this term.
const PATH_SEEN: u32 = 1 << 31;

/// A stable 64-bit key for a project-relative path (the `file_key` field).
pub fn file_key(path: &str) -> u64 {
    let hash = blake3::hash(path.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(bytes)
}

/// One file scored by file-level BM25.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileHit {
    /// [`file_key`] of its path.
    pub key: u64,
    /// BM25 of the whole file.
    pub score: f32,
    /// Its chunk that holds the most of the query's weight.
    pub best_chunk: ChunkId,
}

/// Per searcher generation: every live chunk's file as a dense index, and
/// each file's length in tokens (sum of its chunks' content lengths).
struct FileStats {
    generation: u64,
    /// Per segment, per doc: dense file index (`u32::MAX` for a deleted doc).
    file_of: Vec<Vec<u32>>,
    keys: Vec<u64>,
    lengths: Vec<u32>,
    average: f32,
}

/// Per searcher generation: BM25 statistics of the live chunks alone.
/// tantivy's own count the deleted documents a segment still holds until
/// a merge drops them, and merges run in the background, so a warm index
/// would score differently from a cold one of the same tree, and two runs
/// of the same updates differently from each other (issue 16). Lengths are
/// the fieldnorms tantivy keeps per document (exact up to 40 tokens,
/// bucketed above), so the same live chunks give the same statistics.
struct AliveStats {
    generation: u64,
    docs: u64,
    /// Per scored field: the sum of the live documents' lengths.
    tokens: HashMap<Field, u64>,
    /// Live documents per term, as asked.
    doc_freq: Mutex<HashMap<Term, u64>>,
}

/// [`AliveStats`] as tantivy's statistics provider for one searcher.
struct AliveProvider<'a> {
    searcher: &'a Searcher,
    stats: &'a AliveStats,
}

impl tantivy::query::Bm25StatisticsProvider for AliveProvider<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Ok(self.stats.tokens.get(&field).copied().unwrap_or(0))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.stats.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let memo = |m: &Mutex<HashMap<Term, u64>>| {
            m.lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(term)
                .copied()
        };
        if let Some(n) = memo(&self.stats.doc_freq) {
            return Ok(n);
        }
        let mut n = 0u64;
        for segment in self.searcher.segment_readers() {
            let index = segment.inverted_index(term.field())?;
            let Some(alive) = segment.alive_bitset() else {
                n += u64::from(index.doc_freq(term)?);
                continue;
            };
            if let Some(mut postings) = index.read_postings(term, IndexRecordOption::Basic)? {
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    n += u64::from(alive.is_alive(doc));
                    doc = postings.advance();
                }
            }
        }
        self.stats
            .doc_freq
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(term.clone(), n);
        Ok(n)
    }
}

/// Splits code-ish text into identifier tokens: each identifier is emitted
/// whole (lower-cased) and, if compound, as its camelCase / snake_case /
/// digit-boundary parts.
#[derive(Clone, Debug, Default)]
pub struct CodeTokenizer;

/// The eager token stream of [`CodeTokenizer`].
pub struct CodeTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self
            .next
            .saturating_sub(1)
            .min(self.tokens.len().saturating_sub(1))]
    }
    fn token_mut(&mut self) -> &mut Token {
        let i = self
            .next
            .saturating_sub(1)
            .min(self.tokens.len().saturating_sub(1));
        &mut self.tokens[i]
    }
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens = Vec::new();
        for (start, word) in words(text) {
            let mut push = |from: usize, to: usize| {
                tokens.push(Token {
                    offset_from: start + from,
                    offset_to: start + to,
                    position: tokens.len(),
                    text: word[from..to].to_lowercase(),
                    position_length: 1,
                });
            };
            let parts = split_identifier(word);
            if parts.len() != 1 || parts.first() != Some(&(0, word.len())) {
                push(0, word.len());
            }
            for (from, to) in parts {
                push(from, to);
            }
        }
        CodeTokenStream { tokens, next: 0 }
    }
}

/// Maximal runs of alphanumerics and `_`, with their byte offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = None;
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        let word_char = if c.is_ascii() {
            c.is_ascii_alphanumeric() || c == '_'
        } else {
            c.is_alphanumeric()
        };
        match (word_char, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out.into_iter()
}

/// Byte ranges of the parts of an identifier: split at `_`, at lower→upper
/// (`parseArgs`), at the end of an acronym (`HTTPServer` → `HTTP`, `Server`)
/// and between letters and digits only when a digit run is followed by a
/// letter run starting upper-case. Empty parts are skipped.
pub fn split_identifier(word: &str) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start = 0;
    for i in 0..chars.len() {
        let (at, c) = chars[i];
        if c == '_' {
            if at > start {
                parts.push((start, at));
            }
            start = at + c.len_utf8();
            continue;
        }
        if i == 0 || at == start {
            continue;
        }
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let boundary = (prev.is_lowercase() || prev.is_ascii_digit()) && c.is_uppercase()
            || prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase());
        if boundary {
            parts.push((start, at));
            start = at;
        }
    }
    if start < word.len() {
        parts.push((start, word.len()));
    }
    parts
}

/// The analyzer used for every text field and for queries: [`CodeTokenizer`],
/// then long tokens dropped, English stop words dropped, English stemming
/// (tantivy's, memoised per thread: [`MemoStemmer`]).
pub fn analyzer() -> TextAnalyzer {
    let builder =
        TextAnalyzer::builder(CodeTokenizer).filter(RemoveLongFilter::limit(MAX_TOKEN_LEN));
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder.filter(stop).filter(MemoStemmer).build(),
        None => builder.filter(MemoStemmer).build(),
    }
}

/// Stems per generation of one thread's memo: a few MB.
const MEMO_STEMS: usize = 100_000;

/// English stems by token, and the stemmer that makes them.
type Stems = (Memo<Box<str>, Box<str>>, rust_stemmers::Stemmer);

thread_local! {
    /// This thread's [`Stems`].
    static STEMS: std::cell::RefCell<Stems> =
        std::cell::RefCell::new((
            Memo::new(MEMO_STEMS),
            rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English),
        ));
}

/// tantivy's English [`Stemmer`](tantivy::tokenizer::Stemmer) filter with each token's stem remembered.
///
/// Snowball stemming was the largest single cost of indexing text, and code
/// repeats its identifiers. The stem of a token depends on its text alone,
/// so a memo gives the stemmer's output exactly (a test compares the two
/// chains on this crate's sources).
#[derive(Clone, Copy, Debug)]
pub struct MemoStemmer;

impl TokenFilter for MemoStemmer {
    type Tokenizer<T: Tokenizer> = MemoStemmerFilter<T>;
    fn transform<T: Tokenizer>(self, tokenizer: T) -> MemoStemmerFilter<T> {
        MemoStemmerFilter { inner: tokenizer }
    }
}

/// [`MemoStemmer`] over a tokenizer.
#[derive(Clone)]
pub struct MemoStemmerFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for MemoStemmerFilter<T> {
    type TokenStream<'a> = MemoStemmerStream<T::TokenStream<'a>>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        MemoStemmerStream {
            tail: self.inner.token_stream(text),
        }
    }
}

/// The token stream of [`MemoStemmerFilter`].
pub struct MemoStemmerStream<T> {
    tail: T,
}

impl<T: TokenStream> TokenStream for MemoStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        let memoised = STEMS.try_with(|cell| {
            let (memo, stemmer) = &mut *cell.borrow_mut();
            let stem = memo.get_or_insert_with(
                token.text.as_str(),
                |t| t.into(),
                || stemmer.stem(&token.text).into(),
            );
            if **stem != *token.text {
                token.text.clear();
                token.text.push_str(stem);
            }
        });
        if memoised.is_err() {
            // This thread's locals are being torn down: stem without a memo.
            let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
            token.text = stemmer.stem(&token.text).into_owned();
        }
        true
    }
    fn token(&self) -> &Token {
        self.tail.token()
    }
    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// The weighted BM25 terms of a question: every analysed term of `text`
/// and of `identifiers`, once; terms of the first line (the subject of a
/// pasted issue or commit message) weigh [`SUBJECT_WEIGHT`].
pub fn query_terms(text: &str, identifiers: &[String]) -> Vec<(String, f32)> {
    let subject: HashSet<String> = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| analyze(l).into_iter().collect())
        .unwrap_or_default();
    let mut out: Vec<(String, f32)> = Vec::new();
    let mut seen = HashSet::new();
    let extra = identifiers.iter().flat_map(|i| analyze(i));
    for term in analyze(text).into_iter().chain(extra) {
        if seen.insert(term.clone()) {
            let w = if subject.contains(&term) {
                SUBJECT_WEIGHT
            } else {
                1.0
            };
            out.push((term, w));
        }
    }
    out
}

/// Analysed terms of `text`, deduplicated, in first-seen order.
pub fn analyze(text: &str) -> Vec<String> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while stream.advance() {
        let t = &stream.token().text;
        if seen.insert(t.clone()) {
            out.push(t.clone());
        }
    }
    out
}

#[derive(Clone, Copy, Debug)]
struct Fields {
    id: Field,
    file_key: Field,
    path_exact: Field,
    path: Field,
    symbols: Field,
    content: Field,
    docs: Field,
    names: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        id: b.add_u64_field(FIELD_CHUNK_ID, INDEXED | STORED | FAST),
        file_key: b.add_u64_field(FIELD_FILE_KEY, FAST),
        path_exact: b.add_text_field("path_exact", STRING),
        path: b.add_text_field("path", text.clone()),
        symbols: b.add_text_field("symbols", text.clone()),
        content: b.add_text_field("content", text.clone()),
        docs: b.add_text_field("docs", text),
        names: b.add_text_field(
            "names",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_index_option(IndexRecordOption::Basic)
                    .set_fieldnorms(false),
            ),
        ),
    };
    (b.build(), fields)
}

/// Names shorter than this get no near misses: too many short names are
/// one edit apart.
pub const FUZZY_MIN_LEN: usize = 5;

/// A Levenshtein DFA as a term-dictionary automaton (tantivy's own wrapper
/// is private to its fuzzy query, which scores documents rather than
/// listing terms).
struct NearNames<'a>(&'a levenshtein_automata::DFA);

impl NearNames<'_> {
    /// The automaton builder for a name of `len` characters, made once per
    /// process (building one for distance 2 takes milliseconds).
    fn builder(len: usize) -> &'static levenshtein_automata::LevenshteinAutomatonBuilder {
        static ONE: std::sync::OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> =
            std::sync::OnceLock::new();
        static TWO: std::sync::OnceLock<levenshtein_automata::LevenshteinAutomatonBuilder> =
            std::sync::OnceLock::new();
        if len >= 8 {
            TWO.get_or_init(|| levenshtein_automata::LevenshteinAutomatonBuilder::new(2, false))
        } else {
            ONE.get_or_init(|| levenshtein_automata::LevenshteinAutomatonBuilder::new(1, false))
        }
    }
}

impl tantivy_fst::Automaton for NearNames<'_> {
    type State = u32;

    fn start(&self) -> u32 {
        self.0.initial_state()
    }

    fn is_match(&self, state: &u32) -> bool {
        matches!(
            self.0.distance(*state),
            levenshtein_automata::Distance::Exact(_)
        )
    }

    fn can_match(&self, state: &u32) -> bool {
        *state != levenshtein_automata::SINK_STATE
    }

    fn accept(&self, state: &u32, byte: u8) -> u32 {
        self.0.transition(*state, byte)
    }
}

/// The lexical index of one project.
pub struct LexicalIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    file_stats: Mutex<Option<Arc<FileStats>>>,
    alive_stats: Mutex<Option<Arc<AliveStats>>>,
    /// [`LexicalIndex::search_files`]'s arrays, kept between questions.
    file_scratch: Mutex<Option<FileScratch>>,
}

/// The per-question arrays of [`LexicalIndex::search_files`], kept between
/// questions, every value zero while kept: allocated afresh each question,
/// their pages were faulted in anew on an allocator that gives freed pages
/// back (BENCHMARKS.md, "Changes to questions and assembly", `9c8b70b`).
#[derive(Default)]
struct FileScratch {
    /// Per file: its BM25 score.
    scores: Vec<f32>,
    /// Per file: the current term's frequency (and [`PATH_SEEN`]).
    tf: Vec<u32>,
    /// Per segment, per chunk: the idf of the query terms it holds.
    doc_weight: Vec<Vec<f32>>,
}

impl FileScratch {
    /// Sized for `files` files and segments of `docs` documents; every
    /// value is zero before and after, so resizing keeps that.
    fn fit(&mut self, files: usize, docs: impl ExactSizeIterator<Item = usize>) {
        self.scores.resize(files, 0.0);
        self.tf.resize(files, 0);
        self.doc_weight.resize_with(docs.len(), Vec::new);
        for (weights, len) in self.doc_weight.iter_mut().zip(docs) {
            weights.resize(len, 0.0);
        }
    }
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LexicalIndex")
    }
}

/// How [`LexicalIndex::open`] found the index on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenState {
    /// Matches the catalog generation.
    Current,
    /// Opened, but reflects another generation (or none): rebuild it.
    Stale,
    /// Missing or damaged; a fresh empty index was created. The reason is kept.
    Recreated(String),
}

impl LexicalIndex {
    /// Open the index in `dir` (creating it if needed) and compare its commit
    /// payload with the catalog `generation`.
    pub fn open(dir: &Path, generation: u64) -> Result<(Self, OpenState)> {
        match Self::try_open(dir) {
            Ok(index) => {
                let payload = index.index.load_metas().ok().and_then(|m| m.payload);
                let state = if payload.as_deref() == Some(generation.to_string().as_str()) {
                    OpenState::Current
                } else {
                    OpenState::Stale
                };
                Ok((index, state))
            }
            Err(reason) => {
                if dir.exists() {
                    std::fs::remove_dir_all(dir).map_err(|e| Error::Io {
                        what: "remove damaged lexical index",
                        path: dir.to_path_buf(),
                        source: e,
                    })?;
                }
                Ok((Self::create(dir)?, OpenState::Recreated(reason)))
            }
        }
    }

    /// The catalog generation of the last commit on disk, which may be
    /// another process's, newer than what the reader shows.
    pub fn committed_generation(&self) -> Option<u64> {
        let metas = self.index.load_metas().ok()?;
        metas.payload?.parse().ok()
    }

    /// Show the last commit on disk (another process's, too) to searches.
    pub fn reload(&self) -> Result<()> {
        self.reader.reload()?;
        Ok(())
    }

    fn try_open(dir: &Path) -> std::result::Result<Self, String> {
        if !dir.join("meta.json").exists() {
            return Err("no lexical index yet".into());
        }
        let directory = UnsyncedDirectory::open(dir).map_err(|e| e.to_string())?;
        let index = Index::open(directory).map_err(|e| e.to_string())?;
        let (expected, fields) = schema();
        if index.schema() != expected {
            return Err("lexical schema changed".into());
        }
        let bad = index.validate_checksum().map_err(|e| e.to_string())?;
        if !bad.is_empty() {
            return Err(format!(
                "{} lexical index file(s) failed their checksum",
                bad.len()
            ));
        }
        Self::wrap(index, fields).map_err(|e| e.to_string())
    }

    fn create(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            what: "create lexical index",
            path: dir.to_path_buf(),
            source: e,
        })?;
        let (schema, fields) = schema();
        let index = Index::create(
            UnsyncedDirectory::open(dir)?,
            schema,
            tantivy::IndexSettings::default(),
        )?;
        Self::wrap(index, fields)
    }

    fn wrap(index: Index, fields: Fields) -> Result<Self> {
        index.tokenizers().register(ANALYZER, analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            index,
            reader,
            fields,
            file_stats: Mutex::new(None),
            alive_stats: Mutex::new(None),
            file_scratch: Mutex::new(None),
        })
    }

    /// A writer for one batch of changes. Fails if another process holds the index.
    pub fn writer(&self) -> Result<LexicalWriter<'_>> {
        self.writer_for(usize::MAX)
    }

    /// A writer sized for about `chunks` additions: a small batch (a
    /// watcher update) gets one thread and tantivy's smallest heap, whose
    /// setup and flush cost less than a full-size writer's.
    pub fn writer_for(&self, chunks: usize) -> Result<LexicalWriter<'_>> {
        if chunks > SMALL_BATCH_CHUNKS {
            let threads = std::thread::available_parallelism()
                .map(|n| n.get().min(4))
                .unwrap_or(1);
            let writer = self
                .index
                .writer_with_num_threads(threads, WRITER_HEAP_BYTES)?;
            return Ok(LexicalWriter {
                index: self,
                writer,
            });
        }
        let writer = self
            .index
            .writer_with_num_threads(1, SMALL_WRITER_HEAP_BYTES)?;
        // A watcher update must not set off a merge of the big segments
        // (seconds of CPU on a large project, competing with the next
        // question); small segments still merge among themselves.
        let mut policy = tantivy::indexer::LogMergePolicy::default();
        policy.set_max_docs_before_merge(SMALL_BATCH_MERGE_MAX_DOCS);
        writer.set_merge_policy(Box::new(policy));
        Ok(LexicalWriter {
            index: self,
            writer,
        })
    }

    /// Number of indexed chunks.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// BM25 search for analysed `terms`; returns (chunk id, score), best first.
    pub fn search(&self, terms: &[(String, f32)], limit: usize) -> Result<Vec<(ChunkId, f32)>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (term, weight) in terms.iter().take(MAX_QUERY_TERMS) {
            for (field, boost) in [
                (f.symbols, BOOST_SYMBOLS),
                (f.path, BOOST_PATH),
                (f.content, BOOST_CONTENT),
                (f.docs, BOOST_DOCS),
            ] {
                let q = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                let boost = boost * weight;
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        // Ranked by (score to 1/1024, lower chunk id), not by tantivy's own tie-break
        // (document address, which depends on how the index was built:
        // segments, threads): the same tree gives the same ranks however it
        // was indexed (issue 16). The id comes from the fast field, so no
        // stored document is loaded (that was milliseconds per question).
        let collector = TopDocs::with_limit(limit).tweak_score(|segment: &SegmentReader| {
            let ids = segment.fast_fields().u64(FIELD_CHUNK_ID).ok();
            move |doc: DocId, score: Score| {
                let id = ids.as_ref().and_then(|c| c.first(doc)).unwrap_or(u64::MAX);
                (tie_grain(score), std::cmp::Reverse(id))
            }
        });
        let stats = self.alive_stats(&searcher)?;
        let provider = AliveProvider {
            searcher: &searcher,
            stats: &stats,
        };
        let top = searcher.search_with_statistics_provider(&query, &collector, &provider)?;
        Ok(top
            .into_iter()
            .filter(|((_, id), _)| id.0 != u64::MAX)
            .map(|((score, id), _)| (i64::try_from(id.0).unwrap_or(0), score))
            .collect())
    }

    /// File-level BM25 for analysed `terms`: the `limit` best files, best
    /// first. A file's term frequency is the sum over its chunks plus one
    /// when the term is in its path (the reference's "path + content"), its
    /// length the sum of its chunks' lengths.
    // Long: file-level BM25 from chunk postings: the per-term postings, path hits and file lengths accumulate in one set of tables.
    pub fn search_files(&self, terms: &[(String, f32)], limit: usize) -> Result<Vec<FileHit>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let stats = self.file_stats(&searcher)?;
        let files = stats.keys.len();
        if files == 0 {
            return Ok(Vec::new());
        }
        let total_docs = searcher.num_docs().max(1) as f32;
        let f = self.fields;
        let alive_stats = self.alive_stats(&searcher)?;
        let alive = AliveProvider {
            searcher: &searcher,
            stats: &alive_stats,
        };
        // Taken out while in use (a question asked meanwhile makes its own)
        // and put back only once every value is zero again (an error on the
        // way drops it).
        let mut scratch = self
            .file_scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default();
        scratch.fit(files, stats.file_of.iter().map(Vec::len));
        let FileScratch {
            scores,
            tf,
            doc_weight,
        } = &mut scratch;
        let mut touched: Vec<u32> = Vec::new();
        let mut seen = HashSet::new();
        for (term, weight) in terms.iter().take(MAX_QUERY_TERMS) {
            if !seen.insert(term.as_str()) {
                continue;
            }
            let content = Term::from_field_text(f.content, term);
            let path = Term::from_field_text(f.path, term);
            let doc_freq = alive.doc_freq(&content)?;
            if doc_freq == 0 || doc_freq as f32 > FILE_MAX_DOC_SHARE * total_docs {
                continue;
            }
            touched.clear();
            let mut docs: Vec<(usize, DocId)> = Vec::new();
            for (ord, segment) in searcher.segment_readers().iter().enumerate() {
                let file_of = &stats.file_of[ord];
                for (field_term, is_path) in [(&content, false), (&path, true)] {
                    let Some(mut postings) = segment
                        .inverted_index(field_term.field())?
                        .read_postings(field_term, IndexRecordOption::WithFreqs)
                        .map_err(tantivy::TantivyError::from)?
                    else {
                        continue;
                    };
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        let file = file_of.get(doc as usize).copied().unwrap_or(u32::MAX);
                        if file != u32::MAX {
                            let slot = &mut tf[file as usize];
                            if *slot == 0 {
                                touched.push(file);
                            }
                            if is_path {
                                // Once per file, however many chunks carry the path.
                                if *slot & PATH_SEEN == 0 {
                                    *slot = (*slot | PATH_SEEN) + 1;
                                }
                            } else {
                                *slot += postings.term_freq();
                                docs.push((ord, doc));
                            }
                        }
                        doc = postings.advance();
                    }
                }
            }
            let df = touched.len() as f32;
            let idf = weight * (1.0 + (files as f32 - df + 0.5) / (df + 0.5)).ln();
            for &file in &touched {
                let count = (tf[file as usize] & !PATH_SEEN) as f32;
                tf[file as usize] = 0;
                let norm = 1.0 - FILE_BM25_B
                    + FILE_BM25_B * stats.lengths[file as usize] as f32 / stats.average;
                scores[file as usize] +=
                    idf * count * (FILE_BM25_K1 + 1.0) / (count + FILE_BM25_K1 * norm);
            }
            for (ord, doc) in docs {
                doc_weight[ord][doc as usize] += idf;
            }
        }
        // The chunk-id column of each segment.
        let columns: Vec<tantivy::columnar::Column<u64>> = searcher
            .segment_readers()
            .iter()
            .map(|r| r.fast_fields().u64(FIELD_CHUNK_ID))
            .collect::<std::result::Result<_, _>>()?;
        // Per file: the chunk with the most idf-weighted matches; on a tie
        // the lower chunk id, not whichever segment came first (issue 16).
        let mut best: HashMap<u32, (u64, f32)> = HashMap::new();
        for (ord, weights) in doc_weight.iter_mut().enumerate() {
            for (doc, weight) in weights.iter_mut().enumerate() {
                let weight = std::mem::take(weight);
                if weight <= 0.0 {
                    continue;
                }
                let Some(id) = columns[ord].first(doc as DocId) else {
                    continue;
                };
                let file = stats.file_of[ord][doc];
                let entry = best.entry(file).or_insert((id, weight));
                if weight > entry.1 || (weight == entry.1 && id < entry.0) {
                    *entry = (id, weight);
                }
            }
        }
        let mut ranked: Vec<(u32, f32)> = scores
            .iter_mut()
            .enumerate()
            .map(|(i, s)| (i as u32, std::mem::take(s)))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        // All zero again (`tf` is cleared term by term).
        *self.file_scratch.lock().unwrap_or_else(|e| e.into_inner()) = Some(scratch);
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(stats.keys[a.0 as usize].cmp(&stats.keys[b.0 as usize]))
        });
        let mut out = Vec::with_capacity(limit.min(ranked.len()));
        for (file, score) in ranked {
            if out.len() == limit {
                break;
            }
            let Some(&(id, _)) = best.get(&file) else {
                continue; // matched by path only: no chunk to point at
            };
            out.push(FileHit {
                key: stats.keys[file as usize],
                score,
                best_chunk: i64::try_from(id).unwrap_or(0),
            });
        }
        Ok(out)
    }

    /// Defined names (lower-cased) within Levenshtein distance 1 of `name`,
    /// or 2 for names of 8 characters or more, `name` itself excluded,
    /// sorted; none for names under [`FUZZY_MIN_LEN`] characters. Walks the
    /// `names` term dictionary of each segment with a Levenshtein automaton,
    /// so nothing is loaded ahead and a lookup reads a few pages of it. A
    /// name whose chunks were all deleted may linger in a segment's
    /// dictionary until a merge: callers look the names up in the catalog,
    /// where it defines nothing.
    pub fn similar_names(&self, name: &str) -> Result<Vec<String>> {
        let name = name.to_lowercase();
        let len = name.chars().count();
        if len < FUZZY_MIN_LEN {
            return Ok(Vec::new());
        }
        let dfa = NearNames::builder(len).build_dfa(&name);
        let searcher = self.reader.searcher();
        // Each segment's dictionary is walked on its own core: the walk,
        // not the automaton, is the cost (about 5 ms over the 14 segments
        // of the vendor corpus's index, most of a question's symbol step).
        let per_segment = searcher
            .segment_readers()
            .par_iter()
            .map(|segment| -> Result<Vec<String>> {
                let inverted = segment.inverted_index(self.fields.names)?;
                let mut stream = inverted
                    .terms()
                    .search(NearNames(&dfa))
                    .into_stream()
                    .map_err(tantivy::TantivyError::from)?;
                let mut found = Vec::new();
                while stream.advance() {
                    if let Ok(term) = std::str::from_utf8(stream.key())
                        && term != name
                    {
                        found.push(term.to_owned());
                    }
                }
                Ok(found)
            })
            .collect::<Result<Vec<_>>>()?;
        let found: std::collections::BTreeSet<String> = per_segment.into_iter().flatten().collect();
        Ok(found.into_iter().collect())
    }

    /// Compute now what the first search of the reader's generation would
    /// otherwise compute: the live-chunk statistics, the file statistics
    /// and the whole-file search's scratch arrays (about 12 ms on the
    /// vendor corpus's 432k chunks, which the first question of every
    /// generation paid; BENCHMARKS.md, "Changes to questions and assembly",
    /// `263c62a`). Called when a project
    /// opens and after a commit, so the questions that follow find them
    /// ready.
    pub fn warm(&self) -> Result<()> {
        let searcher = self.reader.searcher();
        self.alive_stats(&searcher)?;
        let stats = self.file_stats(&searcher)?;
        let mut scratch = self.file_scratch.lock().unwrap_or_else(|e| e.into_inner());
        scratch
            .get_or_insert_with(FileScratch::default)
            .fit(stats.keys.len(), stats.file_of.iter().map(Vec::len));
        Ok(())
    }

    /// Segments of more documents than a watcher's update merges
    /// ([`SMALL_BATCH_MERGE_MAX_DOCS`]): what bulk runs left. More than
    /// one is worth a [`LexicalIndex::compact`]; small segments are not,
    /// as the small writer's policy merges them among themselves.
    pub fn large_segments(&self) -> Result<usize> {
        Ok(self
            .index
            .searchable_segment_metas()?
            .iter()
            .filter(|m| m.max_doc() as usize > SMALL_BATCH_MERGE_MAX_DOCS)
            .count())
    }

    /// Merge every segment into one, then show it to searches and compute
    /// its statistics. False when there was one segment (or none) already.
    ///
    /// Every question walks each segment's term dictionaries (its terms,
    /// the near-miss names), and a large run leaves as many segments as
    /// tantivy's merge policy happened to: on the vendor corpus 6–13, and
    /// one segment answered 2–4 ms sooner at the median and the 95th
    /// percentile (BENCHMARKS.md, "Changes to questions and assembly",
    /// `393b7e3`). Ranks do not depend on the
    /// segment layout. The merge keeps the commit's payload (the catalog
    /// generation); it cannot be stopped once begun (7–10 s of one core
    /// for 432k chunks), and it needs the writer's lock, so the caller
    /// holds the project's write lock.
    pub fn compact(&self) -> Result<bool> {
        let ids = self.index.searchable_segment_ids()?;
        if ids.len() <= 1 {
            return Ok(false);
        }
        let mut writer: IndexWriter = self
            .index
            .writer_with_num_threads(1, SMALL_WRITER_HEAP_BYTES)?;
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        writer.merge(&ids).wait()?;
        writer.wait_merging_threads()?;
        self.reader.reload()?;
        if let Err(e) = self.warm() {
            tracing::debug!("lexical statistics not computed after the merge: {e}");
        }
        Ok(true)
    }

    /// The live-chunk BM25 statistics of `searcher`'s generation, computed once.
    fn alive_stats(&self, searcher: &Searcher) -> Result<Arc<AliveStats>> {
        let generation = searcher.generation().generation_id();
        let mut cache = self.alive_stats.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stats) = cache.as_ref()
            && stats.generation == generation
        {
            return Ok(Arc::clone(stats));
        }
        let f = self.fields;
        let mut tokens: HashMap<Field, u64> = HashMap::new();
        for segment in searcher.segment_readers() {
            let alive = segment.alive_bitset();
            for field in [f.symbols, f.path, f.content, f.docs] {
                let norms = segment.get_fieldnorms_reader(field)?;
                let sum: u64 = (0..segment.max_doc())
                    .filter(|&doc| alive.is_none_or(|a| a.is_alive(doc)))
                    .map(|doc| u64::from(norms.fieldnorm(doc)))
                    .sum();
                *tokens.entry(field).or_default() += sum;
            }
        }
        let stats = Arc::new(AliveStats {
            generation,
            docs: searcher.num_docs(),
            tokens,
            doc_freq: Mutex::new(HashMap::new()),
        });
        *cache = Some(Arc::clone(&stats));
        Ok(stats)
    }

    /// The file statistics of `searcher`'s generation, computed once.
    fn file_stats(&self, searcher: &Searcher) -> Result<Arc<FileStats>> {
        let generation = searcher.generation().generation_id();
        let mut cache = self.file_stats.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stats) = cache.as_ref()
            && stats.generation == generation
        {
            return Ok(Arc::clone(stats));
        }
        let mut dense: HashMap<u64, u32> = HashMap::new();
        let mut keys = Vec::new();
        let mut lengths: Vec<u32> = Vec::new();
        let mut file_of = Vec::with_capacity(searcher.segment_readers().len());
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().u64(FIELD_FILE_KEY)?;
            let norms = segment.get_fieldnorms_reader(self.fields.content)?;
            let alive = segment.alive_bitset();
            let mut of = vec![u32::MAX; segment.max_doc() as usize];
            for doc in 0..segment.max_doc() {
                if alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                let Some(key) = column.first(doc) else {
                    continue;
                };
                let file = *dense.entry(key).or_insert_with(|| {
                    keys.push(key);
                    lengths.push(0);
                    (keys.len() - 1) as u32
                });
                lengths[file as usize] += norms.fieldnorm(doc);
                of[doc as usize] = file;
            }
            file_of.push(of);
        }
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        let average = (total as f32 / keys.len().max(1) as f32).max(1.0);
        let stats = Arc::new(FileStats {
            generation,
            file_of,
            keys,
            lengths,
            average,
        });
        *cache = Some(Arc::clone(&stats));
        Ok(stats)
    }
}

/// Pending changes to the lexical index; nothing is visible until
/// [`LexicalWriter::commit`].
pub struct LexicalWriter<'a> {
    index: &'a LexicalIndex,
    writer: IndexWriter,
}

impl LexicalWriter<'_> {
    /// Remove every chunk of `path`.
    pub fn delete_path(&mut self, path: &str) {
        self.writer
            .delete_term(Term::from_field_text(self.index.fields.path_exact, path));
    }

    /// Remove everything.
    pub fn delete_all(&mut self) -> Result<()> {
        self.writer.delete_all_documents()?;
        Ok(())
    }

    /// Add one chunk, with the names of every definition it holds.
    pub fn add(&mut self, chunk: &Chunk, defined: &[&str]) -> Result<()> {
        let f = self.index.fields;
        // Every definition in the chunk counts as its symbol: a merged run of
        // small definitions is found by any of their names.
        let mut names: Vec<&str> = [chunk.symbol.as_deref(), chunk.parent.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        names.extend(
            defined
                .iter()
                .filter(|n| Some(**n) != chunk.symbol.as_deref()),
        );
        let symbols = names.join(" ");
        let docs: String = chunk
            .outline
            .iter()
            .filter(|s| s.kind == SpanKind::Doc)
            .filter_map(|s| chunk.text.get(s.start as usize..s.end as usize))
            .collect::<Vec<_>>()
            .join("\n");
        let mut document = doc!(
            f.id => u64::try_from(chunk.id).unwrap_or(0),
            f.file_key => file_key(&chunk.path),
            f.path_exact => chunk.path.clone(),
            f.path => chunk.path.clone(),
            f.symbols => symbols,
            f.content => chunk.text.clone(),
            f.docs => docs,
        );
        for name in defined {
            document.add_text(f.names, name.to_lowercase());
        }
        self.writer.add_document(document)?;
        Ok(())
    }

    /// Commit with the catalog `generation` as payload and make it searchable.
    pub fn commit(mut self, generation: u64) -> Result<()> {
        let mut prepared = self.writer.prepare_commit()?;
        prepared.set_payload(&generation.to_string());
        prepared.commit()?;
        self.index.reader.reload()?;
        // Committed either way: a question computes what failed here itself.
        if let Err(e) = self.index.warm() {
            tracing::debug!("lexical statistics not computed after the commit: {e}");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: &str) {
        let got = analyze(text).join(" ");
        assert_eq!(got, expect);
    }

    /// Every token of `analyzer`, with offsets and positions.
    fn all_tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            let t = stream.token();
            out.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        out
    }

    #[test]
    fn memoised_stems_are_the_stemmers() {
        let long = "x".repeat(MAX_TOKEN_LEN + 3);
        let samples = [
            "fn parse_args(argv: &[String]) -> Result<Config, ParseError> { the running }",
            "HTTPServer handles the requests; it is running and was stopped",
            "Größe_der_Datei naïve café 東京タワー Straße x1 Y2K v2Beta",
            "snake_case camelCase kebab-case path/to/file.rs 3dPoint IOError",
            long.as_str(),
            "",
            "   \n\t ;;; ",
        ];
        let mut memo = analyzer();
        // The same chain with tantivy's own stemmer.
        let mut chain = TextAnalyzer::builder(CodeTokenizer)
            .filter(RemoveLongFilter::limit(MAX_TOKEN_LEN))
            .filter(StopWordFilter::new(Language::English).unwrap())
            .filter(tantivy::tokenizer::Stemmer::new(Language::English))
            .build();
        // Twice: the second pass reads every word from the memo.
        for _ in 0..2 {
            for text in samples {
                assert_eq!(
                    all_tokens(&mut memo, text),
                    all_tokens(&mut chain, text),
                    "{text}"
                );
            }
        }
        // And on real code: this crate's sources.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                assert_eq!(all_tokens(&mut memo, &text), all_tokens(&mut chain, &text));
                files += 1;
            }
        }
        assert!(files > 10);
    }

    fn chunk(id: ChunkId, path: &str, text: &str) -> Chunk {
        Chunk {
            end_byte: text.len() as u32,
            ..Chunk::sample(id, path, text)
        }
    }

    /// Names within the fuzzy distance of `query` by brute force, sorted.
    fn near_by_brute_force<'a>(
        names: impl Iterator<Item = &'a String>,
        query: &str,
    ) -> Vec<String> {
        let len = query.chars().count();
        let max = if len >= 8 { 2 } else { 1 };
        let mut near: Vec<String> = names
            .filter(|n| {
                n.as_str() != query && len >= FUZZY_MIN_LEN && strsim::levenshtein(n, query) <= max
            })
            .cloned()
            .collect();
        near.sort();
        near.dedup();
        near
    }

    #[test]
    fn similar_names_equal_brute_force_over_commits_and_deletes() {
        // A small alphabet (with a two-byte letter) makes near neighbours
        // common; a fixed LCG keeps the test deterministic.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % n
        };
        let alphabet = ['a', 'b', 'e', 's', '_', '1', 'é'];
        let word = |next: &mut dyn FnMut(u64) -> u64| -> String {
            let len = 4 + next(7) as usize;
            (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect()
        };
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = LexicalIndex::open(dir.path(), 0).unwrap();
        // path → its names; every name ever written, live or not.
        let mut live: HashMap<String, Vec<String>> = HashMap::new();
        let mut ever: HashSet<String> = HashSet::new();
        let mut id = 0;
        for round in 0..5u64 {
            let mut w = index.writer_for(10).unwrap();
            let gone: Vec<String> = live.keys().take(15).cloned().collect();
            for path in gone {
                w.delete_path(&path);
                live.remove(&path);
            }
            for f in 0..40 {
                let path = format!("src/r{round}f{f}.rs");
                // Names as written: the index lower-cases them.
                let names: Vec<String> = (0..3).map(|_| word(&mut next).to_uppercase()).collect();
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                id += 1;
                w.add(&chunk(id, &path, "fn x() {}"), &refs).unwrap();
                let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
                ever.extend(lower.iter().cloned());
                live.insert(path, lower);
            }
            w.commit(round + 1).unwrap();
            let live_names: HashSet<String> = live.values().flatten().cloned().collect();
            for _ in 0..40 {
                let query = word(&mut next);
                let got = index.similar_names(&query.to_uppercase()).unwrap();
                // Every live near name, and nothing that was never a name.
                let must = near_by_brute_force(live_names.iter(), &query);
                let may = near_by_brute_force(ever.iter(), &query);
                assert!(
                    must.iter().all(|n| got.contains(n)),
                    "{query}: {got:?} lacks some of {must:?}"
                );
                assert!(
                    got.iter().all(|n| may.contains(n)),
                    "{query}: {got:?} not within {may:?}"
                );
                let mut sorted = got.clone();
                sorted.sort();
                assert_eq!(got, sorted);
            }
        }
    }

    fn files(index: &LexicalIndex, question: &str) -> Vec<(u64, ChunkId)> {
        let hits = index.search_files(&query_terms(question, &[]), 10);
        hits.unwrap_or_default()
            .into_iter()
            .map(|h| (h.key, h.best_chunk))
            .collect()
    }

    #[test]
    fn whole_file_bm25_sums_evidence_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = LexicalIndex::open(dir.path(), 1).unwrap();
        let mut w = index.writer().unwrap();
        // pool.rs holds both terms, in different chunks; its best chunk is
        // the one with the rarer term.
        w.add(&chunk(1, "src/pool.rs", "fn acquire() { timeout }"), &[])
            .unwrap();
        w.add(&chunk(2, "src/pool.rs", "fn release() { connection }"), &[])
            .unwrap();
        w.add(&chunk(3, "src/pool.rs", "fn unrelated() {}"), &[])
            .unwrap();
        w.add(&chunk(4, "src/misc.rs", "fn one() { timeout }"), &[])
            .unwrap();
        for n in 0..6 {
            w.add(
                &chunk(10 + n, &format!("src/other{n}.rs"), "fn filler() {}"),
                &[],
            )
            .unwrap();
        }
        w.commit(1).unwrap();
        let got = files(&index, "connection timeout");
        assert_eq!(got.first(), Some(&(file_key("src/pool.rs"), 2)), "{got:?}");
        assert_eq!(got.get(1).map(|h| h.0), Some(file_key("src/misc.rs")));
        assert_eq!(got.len(), 2);

        // A path term counts once per file, not once per chunk, and a
        // deleted file is gone (the statistics follow the new generation).
        let got = files(&index, "misc timeout");
        assert_eq!(got.first().map(|h| h.0), Some(file_key("src/misc.rs")));
        let mut w = index.writer().unwrap();
        w.delete_path("src/misc.rs");
        w.commit(2).unwrap();
        let got = files(&index, "misc timeout");
        assert_eq!(got, vec![(file_key("src/pool.rs"), 1)]);
        assert!(files(&index, "").is_empty());

        // The arrays kept between questions hold nothing of earlier ones:
        // asked after the others, a question gets what a fresh reader gives.
        let (fresh, _) = LexicalIndex::open(dir.path(), 2).unwrap();
        for question in ["connection timeout", "timeout", "release connection"] {
            let fresh = files(&fresh, question);
            assert!(!fresh.is_empty(), "{question}");
            assert_eq!(files(&index, question), fresh, "{question}");
        }
    }

    /// The generation whose statistics are cached: (live chunks, files).
    fn cached_generations(index: &LexicalIndex) -> (Option<u64>, Option<u64>) {
        let alive = index.alive_stats.lock().unwrap();
        let files = index.file_stats.lock().unwrap();
        (
            alive.as_ref().map(|s| s.generation),
            files.as_ref().map(|s| s.generation),
        )
    }

    #[test]
    fn compacting_leaves_one_segment_and_the_same_answers() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = LexicalIndex::open(dir.path(), 0).unwrap();
        let texts = [
            "fn acquire() { timeout connection }",
            "fn release() { connection }",
            "fn unrelated() { timeout }",
        ];
        for (n, text) in texts.iter().enumerate() {
            let mut w = index.writer_for(10).unwrap();
            let id = n as i64 + 1;
            w.add(&chunk(id, &format!("src/f{id}.rs"), text), &[])
                .unwrap();
            w.commit(id as u64).unwrap();
        }
        let mut w = index.writer_for(10).unwrap();
        w.delete_path("src/f3.rs");
        w.commit(4).unwrap();
        let segments = || index.index.searchable_segment_ids().unwrap().len();
        assert!(segments() > 1, "the test needs several segments");
        let terms = query_terms("connection timeout", &[]);
        let before = (
            index.search(&terms, 10).unwrap(),
            files(&index, "connection timeout"),
        );
        assert_eq!(before.0.len(), 2, "{before:?}");

        assert!(index.compact().unwrap());
        assert_eq!(segments(), 1);
        let after = (
            index.search(&terms, 10).unwrap(),
            files(&index, "connection timeout"),
        );
        assert_eq!(after, before);
        // The commit's payload (the catalog generation) is kept, and the
        // statistics of the new reader are ready.
        assert_eq!(index.committed_generation(), Some(4));
        let now = index.reader.searcher().generation().generation_id();
        assert_eq!(cached_generations(&index), (Some(now), Some(now)));
        assert!(!index.compact().unwrap(), "one segment already");
    }

    #[test]
    fn only_segments_of_bulk_runs_count_as_large() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = LexicalIndex::open(dir.path(), 0).unwrap();
        // The bulk writer's threads split a run's documents, each writing
        // a segment: one of them gets at least half.
        let docs = 2 * (SMALL_BATCH_MERGE_MAX_DOCS as i64 + 1);
        // Two bulk runs, each with a large segment.
        for run in 0..2 {
            let mut w = index.writer().unwrap();
            for n in 0..docs {
                let id = run * docs + n + 1;
                w.add(&chunk(id, &format!("src/f{id}.rs"), "fn f() {}"), &[])
                    .unwrap();
            }
            w.commit(run as u64 + 1).unwrap();
        }
        let large = index.large_segments().unwrap();
        assert!(large >= 2, "{large}");
        // A watcher's update adds a small one, which does not count.
        let mut w = index.writer_for(1).unwrap();
        w.add(&chunk(3 * docs, "src/g.rs", "fn g() {}"), &[])
            .unwrap();
        w.commit(3).unwrap();
        assert_eq!(index.large_segments().unwrap(), large);
        assert!(index.compact().unwrap());
        assert_eq!(index.large_segments().unwrap(), 1);
    }

    #[test]
    fn a_commit_leaves_the_statistics_of_its_generation_ready() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = LexicalIndex::open(dir.path(), 0).unwrap();
        for round in 1..=2 {
            let mut w = index.writer().unwrap();
            w.add(&chunk(round, "src/a.rs", "fn timeout() {}"), &[])
                .unwrap();
            w.commit(round as u64).unwrap();
            // The first question of the generation finds them computed.
            let now = index.reader.searcher().generation().generation_id();
            assert_eq!(cached_generations(&index), (Some(now), Some(now)));
            let kept = index.file_scratch.lock().unwrap();
            let scratch = kept.as_ref().expect("scratch arrays made");
            assert_eq!(scratch.scores.len(), 1);
        }
        // So does opening an index that is already there.
        let (reopened, _) = LexicalIndex::open(dir.path(), 2).unwrap();
        assert_eq!(cached_generations(&reopened), (None, None));
        reopened.warm().unwrap();
        let now = reopened.reader.searcher().generation().generation_id();
        assert_eq!(cached_generations(&reopened), (Some(now), Some(now)));
    }

    #[test]
    fn the_first_line_weighs_more_and_terms_come_once() {
        let terms = query_terms(
            "\n  Pool timeout\nthe pool leaks on timeout; see reap_idle",
            &["reap_idle".into()],
        );
        let got: Vec<String> = terms.iter().map(|(t, w)| format!("{t}:{w}")).collect();
        assert_eq!(
            got.join(" "),
            "pool:3 timeout:3 leak:1 see:1 reap_idl:1 reap:1 idl:1"
        );
    }

    #[test]
    fn splits_code_identifiers() {
        // The whole identifier is kept (stemmed like any word) beside its parts.
        check("parseArgs", "parsearg pars arg");
        check("HTTPServer", "httpserver http server");
        check("max_chunk_bytes", "max_chunk_byt max chunk byte");
        check("src/core/pack.rs", "src core pack rs");
        check("utf8Decode", "utf8decod utf8 decod");
        check("the cat", "cat");
    }
}
