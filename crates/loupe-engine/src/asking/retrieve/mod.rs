//! Retrieval: from a question to candidates with their raw signals — the
//! union of BM25 hits, vector neighbours, symbol-name matches, explicitly
//! mentioned paths, pinned items and one-hop graph neighbours of the best hits.
//!
//! Does not rank for the prompt (that is `loupe_assemble::rank`); the order
//! returned here is an interim reciprocal-rank fusion so that a plain search
//! is useful on its own.
//!
//! One module per signal, each adding what it found to the candidates
//! gathered so far: [`bm25`] (chunks and whole files), [`history`] (files
//! past commits like the question changed), [`vectors`], [`symbols`]
//! (defined names), [`mentions`] (paths named or pinned, pinned symbols,
//! primers) and, last, [`graph`] (one hop from the best of the rest).

mod bm25;
mod graph;
mod history;
mod mentions;
mod scan;
mod symbols;
mod vectors;

pub(crate) use scan::scan;
pub use symbols::{Definitions, NameLookup};

use crate::Result;
use crate::project::PrimerMemo;
use crate::project::{Project, Snapshot};
use crate::signals::embed::Embedder;
use crate::stores::catalog::Catalog;
use crate::stores::lexical::LexicalIndex;
use crate::stores::vectors::VectorIndex;
use loupe_assemble::classify::{MentionKind, QueryAnalysis};
use loupe_assemble::{Candidate, ChunkId, Signals};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

/// Reciprocal-rank-fusion constant from Cormack et al. (2009).
const RRF_K: f32 = 60.0;
/// How many times a retrieval that found rewritten chunks is asked again
/// (see [`Project::retrieve_from`]), and the pause before the first retry
/// (the n-th waits n times as long, 250 ms in all), after waiting for this
/// process's own commit window to close, if one is open.
pub(crate) const STALE_RETRIES: u32 = 4;
pub(crate) const STALE_PAUSE: std::time::Duration = std::time::Duration::from_millis(25);
/// Primer files, found at any depth (SourcePrep's defaults).
pub const DEFAULT_PRIMERS: &[&str] = &["AGENTS.md", "PREP_PRIMER.md", "PROJECT_PRIMER.md"];

/// How many hits each source contributes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrieveLimits {
    /// BM25 hits.
    pub bm25: usize,
    /// Vector neighbours.
    pub vector: usize,
    /// Chunks per matched symbol name.
    pub per_symbol: usize,
    /// Top fused hits whose graph neighbours are added.
    pub graph_seeds: usize,
    /// Chunks per explicitly mentioned path.
    pub per_path: usize,
    /// Files ranked by whole-file BM25.
    pub files: usize,
    /// Files ranked by the past commits most like the question.
    #[serde(default = "default_history_files")]
    pub history: usize,
}

fn default_history_files() -> usize {
    RetrieveLimits::default().history
}

impl Default for RetrieveLimits {
    fn default() -> Self {
        Self {
            bm25: 200,
            vector: 50,
            per_symbol: 8,
            graph_seeds: 8,
            per_path: 40,
            files: 50,
            history: 20,
        }
    }
}

/// What to look for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrieveQuery {
    /// The question as searched: as typed, less a pasted report's template
    /// scaffolding (BM25, history and vectors use it whole).
    pub text: String,
    /// Identifiers found in the question (symbol matching).
    pub identifiers: Vec<String>,
    /// Paths (or path suffixes) found in the question.
    pub paths: Vec<String>,
    /// Paths the user pinned (`@path`).
    pub pinned_paths: Vec<String>,
    /// Symbols the user pinned (`@symbol`).
    pub pinned_symbols: Vec<String>,
    /// Primer file names; `None` means [`DEFAULT_PRIMERS`].
    pub primers: Option<Vec<String>>,
    /// Per-source limits.
    pub limits: RetrieveLimits,
}

impl RetrieveQuery {
    /// Analyse a question (identifiers, paths, `@` mentions) into a query
    /// with default limits; BM25, history and vectors search it without
    /// its template scaffolding (`classify::scaffold`).
    pub fn from_question(text: &str) -> Self {
        let searchable = loupe_assemble::classify::searchable(text);
        let analysis = loupe_assemble::classify::analyze_text(&searchable.text);
        Self::from_analysis(&searchable.text, &analysis)
    }

    /// Build a query from an existing analysis of `text`, searching `text`
    /// as it is.
    pub fn from_analysis(text: &str, analysis: &QueryAnalysis) -> Self {
        let mut q = Self {
            text: text.to_owned(),
            ..Self::default()
        };
        q.identifiers = analysis.identifiers.clone();
        q.paths = analysis
            .paths
            .iter()
            .map(|p| strip_line_suffix(p).to_owned())
            .collect();
        for m in &analysis.mentions {
            match m.kind {
                MentionKind::Path => q.pinned_paths.push(m.value.clone()),
                MentionKind::Symbol => q.pinned_symbols.push(m.value.clone()),
            }
        }
        q
    }
}

/// `src/lib.rs:12:5` → `src/lib.rs`.
fn strip_line_suffix(path: &str) -> &str {
    let mut p = path;
    while let Some((head, tail)) = p.rsplit_once(':') {
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
            p = head;
        } else {
            break;
        }
    }
    p
}

#[derive(Default)]
pub(super) struct Gathered {
    pub(super) signals: HashMap<ChunkId, Signals>,
}

impl Gathered {
    pub(super) fn get(&mut self, id: ChunkId) -> &mut Signals {
        self.signals.entry(id).or_default()
    }
}

fn rrf(rank: Option<u32>) -> f32 {
    rank.map(|r| 1.0 / (RRF_K + r as f32)).unwrap_or(0.0)
}

/// The interim order: fused BM25 and vector ranks plus symbol, path and
/// graph evidence. Used only when no ranking stage runs after retrieval.
pub fn interim_score(s: &Signals) -> f32 {
    let mut score = rrf(s.bm25_rank) + rrf(s.vector_rank);
    if s.symbol_hits > 0 {
        score += if s.symbol_exact { 2.0 } else { 1.0 } / RRF_K;
    }
    score += s.path_hits.min(3) as f32 / RRF_K;
    if s.graph_distance == Some(1) {
        score += 0.5 / RRF_K;
    }
    if s.pinned {
        score += 1.0;
    }
    score
}

/// Best first by [`interim_score`], then by path and line.
fn sort_interim(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        interim_score(&b.signals)
            .total_cmp(&interim_score(&a.signals))
            .then_with(|| a.chunk.path.cmp(&b.chunk.path))
            .then(a.chunk.start_line.cmp(&b.chunk.start_line))
    });
}

/// What one retrieval found, and which signal it had to do without.
#[derive(Clone, Debug, Default)]
pub struct Retrieved {
    /// Candidates, best first by [`interim_score`].
    pub candidates: Vec<Candidate>,
    /// Why the vector search failed, when it did (an HTTP embedder down, a
    /// model that failed on the question, a rows file that could not be
    /// read): the candidates came from the other signals.
    pub vectors_failed: Option<String>,
    /// Wall time of each step, in order: `bm25`, `history`, `symbols`,
    /// `mentions`, `vectors` (the wait for the vector search, which started
    /// before `bm25` and ran beside the steps up to here), `graph` (while
    /// the chunks found so far are read from the catalog beside it),
    /// `materialise` (reading the rest, the graph's neighbours).
    /// Where a question's milliseconds go; the query bench reports them.
    pub stages: Vec<(&'static str, std::time::Duration)>,
}

/// Times consecutive steps.
struct Stopwatch {
    last: std::time::Instant,
    stages: Vec<(&'static str, std::time::Duration)>,
}

impl Stopwatch {
    fn start() -> Self {
        Self {
            last: std::time::Instant::now(),
            stages: Vec::with_capacity(7),
        }
    }

    /// The step `name` ended now.
    fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.stages.push((name, now - self.last));
        self.last = now;
    }
}

/// One retrieval pass: the stores it reads, the question and the snapshot
/// it answers, and the signals gathered so far. Each signal's module adds
/// one `gather_*` step and writes only its own fields of [`Signals`];
/// [`Retrieval::run`] calls them in order.
pub(crate) struct Retrieval<'a> {
    catalog: &'a Catalog,
    lexical: &'a LexicalIndex,
    vectors: &'a Arc<RwLock<Option<VectorIndex>>>,
    embedder: Option<&'a Arc<dyn Embedder>>,
    primers: &'a Mutex<PrimerMemo>,
    query: &'a RetrieveQuery,
    snapshot: &'a Snapshot,
    g: Gathered,
}

impl<'a> Retrieval<'a> {
    /// A pass over `project`'s stores for `query`, as of `snapshot`.
    pub(crate) fn new(
        project: &'a Project,
        snapshot: &'a Snapshot,
        query: &'a RetrieveQuery,
    ) -> Self {
        Self {
            catalog: &project.catalog,
            lexical: &project.lexical,
            vectors: &project.vectors,
            embedder: project.cfg.embedder.as_ref(),
            primers: &project.primers,
            query,
            snapshot,
            g: Gathered::default(),
        }
    }

    /// The pass, and how many of the chunks its signals found the catalog
    /// no longer holds.
    pub(crate) async fn run(mut self) -> Result<(Retrieved, usize)> {
        let query = self.query;
        let mut watch = Stopwatch::start();

        // The vector scan runs beside the signals up to the graph's, none
        // of which reads what it finds.
        let vectors = self.start_vectors();
        let terms = crate::stores::lexical::query_terms(&query.text, &query.identifiers);
        let files = self.gather_bm25(&terms)?;
        watch.lap("bm25");
        self.gather_history(&terms, &files).await?;
        watch.lap("history");
        self.gather_symbols().await?;
        watch.lap("symbols");
        self.gather_mentions().await?;
        watch.lap("mentions");
        let vectors_failed = vectors.finish(&mut self.g).await;
        watch.lap("vectors");
        // The chunks found so far are read from the catalog while the
        // graph, last because its seeds are the best of everything above,
        // looks up its neighbours on other connections.
        let known: Vec<ChunkId> = self.g.signals.keys().copied().collect();
        let catalog = self.catalog;
        let (graph, rows) = tokio::join!(self.gather_graph(), catalog.chunks(&known));
        graph?;
        watch.lap("graph");

        // Materialise: the rest are the graph's neighbours.
        let known: HashSet<ChunkId> = known.into_iter().collect();
        let added: Vec<ChunkId> = self
            .g
            .signals
            .keys()
            .filter(|id| !known.contains(id))
            .copied()
            .collect();
        let mut rows = rows?;
        rows.extend(catalog.chunks(&added).await?);
        let vanished = (known.len() + added.len()).saturating_sub(rows.len());
        // In chunk-id order, so ties in the sort below fall the same way
        // however the rows were read.
        rows.sort_unstable_by_key(|(chunk, _)| chunk.id);
        let mut out = Vec::with_capacity(rows.len());
        for (chunk, mtime_ns) in rows {
            let mut signals = self.g.signals.remove(&chunk.id).unwrap_or_default();
            signals.mtime = mtime_ns / 1_000_000_000;
            out.push(Candidate { chunk, signals });
        }
        sort_interim(&mut out);
        watch.lap("materialise");
        Ok((
            Retrieved {
                candidates: out,
                vectors_failed,
                stages: watch.stages,
            },
            vanished,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_text_leaves_out_a_template() {
        let q = RetrieveQuery::from_question(
            "Add recv_many to StreamMap\n<!-- Please fill in the template. -->\n**Is your feature request related to a problem? Please describe.**\nReceiving one by one is slow.",
        );
        assert!(q.text.contains("recv_many") && q.text.contains("one by one"));
        assert!(!q.text.contains("template") && !q.text.contains("feature request"));
        assert_eq!(q.identifiers, ["recv_many", "StreamMap"]);
        // Text that is not the asker's (a change's lines) is searched as it is.
        let changed = "# Round half up\nlet n = (x + 1) / 2;";
        let q =
            RetrieveQuery::from_analysis(changed, &loupe_assemble::classify::analyze_text(changed));
        assert_eq!(q.text, changed);
    }
}
