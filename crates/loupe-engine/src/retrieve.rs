//! Retrieval: from a question to candidates with their raw signals — the
//! union of BM25 hits, vector neighbours, symbol-name matches, explicitly
//! mentioned paths, pinned items and one-hop graph neighbours of the best hits.
//!
//! Does not rank for the prompt (that is `loupe_assemble::rank`); the order
//! returned here is an interim reciprocal-rank fusion so that a plain search
//! is useful on its own.

use crate::project::Project;
use crate::{Error, Result};
use loupe_assemble::classify::{MentionKind, QueryAnalysis};
use loupe_assemble::{Candidate, ChunkId, Signals};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Reciprocal-rank-fusion constant from Cormack et al. (2009).
const RRF_K: f32 = 60.0;
/// Identifiers shorter than this are matched exactly only: fuzzy matching
/// short names gives noise (`get` ~ `set`).
const FUZZY_MIN_LEN: usize = 5;
/// Chunks that reference a hit's symbol, kept per symbol (callers).
const CALLERS_PER_SYMBOL: u32 = 5;
/// Defined names per graph seed whose callers are looked up.
const CALLER_NAMES_PER_SEED: usize = 8;
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
    /// The question as typed (BM25 and vectors use it whole).
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
    /// with default limits.
    pub fn from_question(text: &str) -> Self {
        let analysis = loupe_assemble::classify::analyze(text);
        Self::from_analysis(text, &analysis)
    }

    /// Build a query from an existing analysis of `text`.
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

/// In-memory map from lower-cased symbol names to the chunks defining them.
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    by_name: HashMap<Arc<str>, Entry>,
    /// Distinct names grouped by length, for fuzzy matching without a full scan.
    by_len: BTreeMap<usize, Bucket>,
}

#[derive(Clone, Debug, Default)]
struct Entry {
    ids: Vec<ChunkId>,
    /// Where the name sits in its length bucket.
    slot: usize,
}

/// The names of one length, with a bit signature of each kept side by side
/// so a fuzzy lookup scans a flat array and touches only the names that
/// pass (a scan of the names themselves, one heap pointer each, was most of
/// a question's retrieval time on the vendor corpus).
#[derive(Clone, Debug, Default)]
struct Bucket {
    names: Vec<Arc<str>>,
    signatures: Vec<u64>,
}

impl SymbolTable {
    /// Build from (name_lower, chunk id) pairs.
    pub fn new(pairs: Vec<(String, ChunkId)>) -> Self {
        let mut table = Self::default();
        table.update(&[], &pairs);
        table
    }

    /// Follow one catalog change without reloading: drop `removed`
    /// (name, chunk) pairs, add `added` ones.
    pub fn update(&mut self, removed: &[(String, ChunkId)], added: &[(String, ChunkId)]) {
        for (name, id) in removed {
            let Some(entry) = self.by_name.get_mut(name.as_str()) else {
                continue;
            };
            entry.ids.retain(|x| x != id);
            if !entry.ids.is_empty() {
                continue;
            }
            let slot = entry.slot;
            self.by_name.remove(name.as_str());
            let Some(bucket) = self.by_len.get_mut(&name.chars().count()) else {
                continue;
            };
            if slot >= bucket.names.len() {
                continue;
            }
            bucket.names.swap_remove(slot);
            bucket.signatures.swap_remove(slot);
            if let Some(moved) = bucket.names.get(slot)
                && let Some(e) = self.by_name.get_mut(moved)
            {
                e.slot = slot;
            }
        }
        for (name, id) in added {
            if let Some(entry) = self.by_name.get_mut(name.as_str()) {
                // In id order, not arrival order: a name defined more often
                // than retrieval takes gives the same chunks however the
                // table was built (loaded cold, or followed run by run).
                let at = entry.ids.partition_point(|x| x < id);
                if entry.ids.get(at) != Some(id) {
                    entry.ids.insert(at, *id);
                }
                continue;
            }
            let name: Arc<str> = Arc::from(name.as_str());
            let bucket = self.by_len.entry(name.chars().count()).or_default();
            bucket.signatures.push(signature(&char_histogram(&name)));
            bucket.names.push(Arc::clone(&name));
            let slot = bucket.names.len() - 1;
            self.by_name.insert(
                name,
                Entry {
                    ids: vec![*id],
                    slot,
                },
            );
        }
    }

    /// Chunks defining exactly `name` (case-insensitive), in id order.
    pub fn exact(&self, name: &str) -> &[ChunkId] {
        self.by_name
            .get(name.to_lowercase().as_str())
            .map_or(&[], |e| e.ids.as_slice())
    }

    /// Names within Levenshtein distance 1 (2 for names of 8+ chars) of
    /// `name`, excluding `name` itself, sorted; empty for names under 5 chars.
    pub fn fuzzy(&self, name: &str) -> Vec<&str> {
        let name = name.to_lowercase();
        let len = name.chars().count();
        if len < FUZZY_MIN_LEN {
            return Vec::new();
        }
        let max = if len >= 8 { 2 } else { 1 };
        let wanted = char_histogram(&name);
        let wanted_signature = signature(&wanted);
        let mut found: Vec<&str> = self
            .by_len
            .range(len.saturating_sub(max)..=len + max)
            .flat_map(|(_, b)| b.signatures.iter().zip(&b.names))
            .filter(|(sig, n)| {
                (**sig ^ wanted_signature).count_ones() as usize <= 2 * max
                    && ***n != *name
                    && histogram_distance(&wanted, &char_histogram(n)) <= 2 * max
                    && strsim::levenshtein(n, &name) <= max
            })
            .map(|(_, n)| &**n)
            .collect();
        found.sort_unstable();
        found
    }
}

/// 64 bits summarising a histogram: bit `b` is set when bin `b` is not
/// empty (37 bins), bit `37 + l` when letter `l` occurs at least twice. Each
/// differing bit means a count differs by at least one in a distinct
/// (bin, threshold), so the XOR's popcount is a lower bound on the L1
/// distance of the histograms, and so on twice the edit distance.
fn signature(h: &[u8; 37]) -> u64 {
    let mut sig = 0u64;
    for (bin, &count) in h.iter().enumerate() {
        if count >= 1 {
            sig |= 1 << bin;
        }
        if bin < 26 && count >= 2 {
            sig |= 1 << (37 + bin);
        }
    }
    sig
}

/// Letter and digit counts of a name (anything else in one bin): a cheap
/// lower bound on edit distance, so most names of a large project skip the
/// quadratic Levenshtein (it was a fifth of question latency on the vendor
/// benchmark corpus).
fn char_histogram(name: &str) -> [u8; 37] {
    let mut h = [0u8; 37];
    for c in name.chars() {
        let bin = match c {
            'a'..='z' => c as usize - 'a' as usize,
            '0'..='9' => 26 + (c as usize - '0' as usize),
            _ => 36,
        };
        h[bin] = h[bin].saturating_add(1);
    }
    h
}

/// L1 distance of two histograms. One edit changes it by at most 2, so
/// `histogram_distance > 2 × d` proves `levenshtein > d`.
fn histogram_distance(a: &[u8; 37], b: &[u8; 37]) -> usize {
    a.iter()
        .zip(b)
        .map(|(x, y)| usize::from(x.abs_diff(*y)))
        .sum()
}

#[derive(Default)]
struct Gathered {
    signals: HashMap<ChunkId, Signals>,
}

impl Gathered {
    fn get(&mut self, id: ChunkId) -> &mut Signals {
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

impl Project {
    /// Gather candidates for `query`, best first by [`interim_score`].
    pub async fn retrieve(&self, query: &RetrieveQuery) -> Result<Vec<Candidate>> {
        self.history_settled().await;
        self.catch_up().await?;
        let mut g = Gathered::default();
        let limits = &query.limits;

        // BM25 over the whole question, analysed like the index.
        let all_terms = crate::lexical::query_terms(&query.text, &query.identifiers);
        // Chunks and whole files are scored on both cores: each takes a few
        // milliseconds on a large index, most of a cold question's retrieval.
        let (hits, files) = tokio::task::block_in_place(|| -> Result<_> {
            std::thread::scope(|scope| {
                let files = scope.spawn(|| self.lexical.search_files(&all_terms, limits.files));
                let hits = self.lexical.search(&all_terms, limits.bm25)?;
                let files = files
                    .join()
                    .map_err(|_| Error::Task("whole-file search panicked".into()))??;
                Ok((hits, files))
            })
        })?;
        for (rank, (id, score)) in hits.into_iter().enumerate() {
            let s = g.get(id);
            s.bm25 = Some(score);
            s.bm25_rank = Some(rank as u32 + 1);
        }
        // The best files as wholes: each one's best chunk joins the
        // candidates carrying the file's rank. Only that chunk: boosting
        // every chunk of a long file let one file crowd a small budget.
        for (rank, hit) in files.iter().enumerate() {
            g.get(hit.best_chunk).file_rank = Some(rank as u32 + 1);
        }

        // Files that past commits like the question changed: the file's best
        // chunk under whole-file BM25 carries the rank, or its first chunk
        // when the question's words are not in it at all.
        let history = (self.history.read().unwrap_or_else(|e| e.into_inner()))
            .history
            .clone();
        if let Some(history) = history {
            let ranked = history.files(&all_terms, limits.history)?;
            let best: HashMap<u64, ChunkId> = files.iter().map(|h| (h.key, h.best_chunk)).collect();
            let mut missing = Vec::new();
            for (rank, (path, _)) in ranked.iter().enumerate() {
                match best.get(&crate::lexical::file_key(path)) {
                    Some(&id) => g.get(id).history_rank = Some(rank as u32 + 1),
                    None => missing.push(path.clone()),
                }
            }
            if !missing.is_empty() {
                let mut first: HashMap<String, ChunkId> = HashMap::new();
                for (path, id) in self.catalog.chunk_ids_of_paths(&missing).await? {
                    first.entry(path).or_insert(id);
                }
                for (rank, (path, _)) in ranked.iter().enumerate() {
                    if let Some(&id) = first.get(path) {
                        g.get(id).history_rank = Some(rank as u32 + 1);
                    }
                }
            }
        }

        // Vector neighbours, when an embedder is configured and has vectors.
        if let Some(embedder) = self.cfg.embedder.clone()
            && !query.text.trim().is_empty()
        {
            let live = Arc::clone(&self.live.read().unwrap_or_else(|e| e.into_inner()));
            let found = tokio::task::block_in_place(|| -> Result<Vec<(ChunkId, f32)>> {
                let guard = self.vectors.read().unwrap_or_else(|e| e.into_inner());
                let Some(index) = guard.as_ref() else {
                    return Ok(Vec::new());
                };
                if index.points() == 0 {
                    return Ok(Vec::new());
                }
                let mut text = query.text.clone();
                text.truncate(text.floor_char_boundary(4096));
                let q = embedder.embed(&[text])?;
                let Some(q) = q.first() else {
                    return Ok(Vec::new());
                };
                Ok(index.search(q, limits.vector, &|id| live.contains(&id)))
            })?;
            for (rank, (id, sim)) in found.into_iter().enumerate() {
                let s = g.get(id);
                s.vector = Some(sim);
                s.vector_rank = Some(rank as u32 + 1);
            }
        }

        // Symbols named in the question: exact first, then fuzzy.
        let symbols = Arc::clone(&self.symbols.read().unwrap_or_else(|e| e.into_inner()));
        for ident in &query.identifiers {
            for &id in symbols.exact(ident).iter().take(limits.per_symbol) {
                let s = g.get(id);
                s.symbol_hits += 1;
                s.symbol_exact = true;
            }
            for name in symbols.fuzzy(ident) {
                for &id in symbols.exact(name).iter().take(limits.per_symbol) {
                    g.get(id).symbol_hits += 1;
                }
            }
        }

        // Paths mentioned or pinned.
        let all_paths = Arc::clone(&self.paths.read().unwrap_or_else(|e| e.into_inner()));
        let matching = |needle: &str| -> Vec<String> {
            let needle = needle.trim_start_matches("./").trim_start_matches('@');
            all_paths
                .iter()
                .filter(|p| {
                    p.as_str() == needle
                        || p.ends_with(needle) && p[..p.len() - needle.len()].ends_with('/')
                })
                .cloned()
                .collect()
        };
        let mut path_files = Vec::new();
        for p in &query.paths {
            path_files.extend(matching(p));
        }
        let mut pinned_files = Vec::new();
        for p in &query.pinned_paths {
            let found = matching(p);
            if found.is_empty() {
                return Err(Error::Request(format!(
                    "@{p}: no indexed file has that path"
                )));
            }
            pinned_files.extend(found);
        }
        let primer_names: Vec<String> = query
            .primers
            .clone()
            .unwrap_or_else(|| DEFAULT_PRIMERS.iter().map(|s| (*s).to_owned()).collect());
        let primer_files = self.primer_files(&all_paths, &primer_names);
        let wanted: Vec<String> = path_files
            .iter()
            .chain(&pinned_files)
            .chain(&primer_files)
            .cloned()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        for (path, id) in self.catalog.chunk_ids_of_paths(&wanted).await? {
            let is_pinned = pinned_files.contains(&path);
            let is_primer = primer_files.contains(&path);
            let mentioned = path_files.contains(&path);
            if mentioned || is_pinned || is_primer {
                let s = g.get(id);
                if mentioned {
                    s.path_hits += 1;
                }
                s.pinned |= is_pinned;
                s.primer |= is_primer;
            }
        }
        for sym in &query.pinned_symbols {
            // `@name` that names no symbol is most often a person in a pasted
            // issue (`@octocat`), not a typo: it pins nothing, and
            // `Project::assemble` reports it. A path mention that names no
            // file stays an error above.
            let ids = symbols.exact(sym);
            for &id in ids {
                g.get(id).pinned = true;
            }
        }

        // One hop in the graph from the best hits: what they reference, and
        // what references them.
        let mut seeds: Vec<(ChunkId, f32)> = g
            .signals
            .iter()
            .map(|(id, s)| (*id, interim_score(s)))
            .collect();
        seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let seed_ids: Vec<ChunkId> = seeds.iter().take(limits.graph_seeds).map(|x| x.0).collect();
        for s in &seed_ids {
            g.get(*s).graph_distance = Some(0);
        }
        let mut neighbours = HashSet::new();
        for (_, name) in self.catalog.refs_from(&seed_ids).await? {
            neighbours.extend(symbols.exact(&name).iter().take(limits.per_symbol).copied());
        }
        // Callers of what the seeds define (a seed may be a merged run of
        // small definitions): the first few names of each, in source order,
        // so one huge run cannot flood the graph.
        let mut per_seed: HashMap<ChunkId, usize> = HashMap::new();
        let mut seed_names: Vec<String> = Vec::new();
        for (id, name) in self.catalog.defined_names(&seed_ids).await? {
            let n = per_seed.entry(id).or_default();
            *n += 1;
            let lower = name.to_lowercase();
            if *n <= CALLER_NAMES_PER_SEED && !seed_names.contains(&lower) {
                seed_names.push(lower);
            }
        }
        for (_, id) in self
            .catalog
            .referrers(&seed_names, CALLERS_PER_SYMBOL)
            .await?
        {
            neighbours.insert(id);
        }
        for id in neighbours {
            let s = g.get(id);
            if s.graph_distance.is_none() {
                s.graph_distance = Some(1);
            }
        }

        // Materialise.
        let ids: Vec<ChunkId> = g.signals.keys().copied().collect();
        let mut out = Vec::with_capacity(ids.len());
        for (chunk, mtime_ns) in self.catalog.chunks(&ids).await? {
            let mut signals = g.signals.remove(&chunk.id).unwrap_or_default();
            signals.mtime = mtime_ns / 1_000_000_000;
            out.push(Candidate { chunk, signals });
        }
        out.sort_by(|a, b| {
            interim_score(&b.signals)
                .total_cmp(&interim_score(&a.signals))
                .then_with(|| a.chunk.path.cmp(&b.chunk.path))
                .then(a.chunk.start_line.cmp(&b.chunk.start_line))
        });
        Ok(out)
    }
}

/// The primer files found among one set of indexed paths for one list of
/// primer names: the set only changes when the index does, and matching
/// every path on every question cost about 2 ms on a 34 k-file project.
/// The set is held weakly: a strong reference would make every index
/// update copy it (`Arc::make_mut`), and a weak one keeps its address from
/// being reused, so pointer equality means "the same set".
#[derive(Debug, Default)]
pub(crate) struct PrimerMemo {
    paths: std::sync::Weak<BTreeSet<String>>,
    names: Vec<String>,
    files: Vec<String>,
}

impl Project {
    /// Indexed paths that are primer files for `names`. A bare name matches
    /// a file of that name anywhere; a name with a slash only the path
    /// itself.
    fn primer_files(&self, paths: &Arc<BTreeSet<String>>, names: &[String]) -> Vec<String> {
        let mut memo = self.primers.lock().unwrap_or_else(|e| e.into_inner());
        if std::ptr::eq(memo.paths.as_ptr(), Arc::as_ptr(paths)) && memo.names == names {
            return memo.files.clone();
        }
        let files: Vec<String> = paths
            .iter()
            .filter(|p| {
                names.iter().any(|n| {
                    p.ends_with(n.as_str())
                        && (p.len() == n.len()
                            || !n.contains('/') && p[..p.len() - n.len()].ends_with('/'))
                })
            })
            .cloned()
            .collect();
        *memo = PrimerMemo {
            paths: Arc::downgrade(paths),
            names: names.to_vec(),
            files: files.clone(),
        };
        files
    }
}

#[cfg(test)]
mod tests {
    use super::SymbolTable;

    fn pairs(v: &[(&str, i64)]) -> Vec<(String, i64)> {
        v.iter().map(|(n, i)| ((*n).to_owned(), *i)).collect()
    }

    #[test]
    fn the_histogram_bound_never_rejects_a_true_fuzzy_match() {
        let names = [
            "parse_args",
            "parse_argz",
            "prase_args",
            "parse_arg",
            "parse_argss",
            "parseargs",
            "xparse_args",
            "render",
            "parse_a_rgs",
            "qarse_brgs",
            "PARSE_ARGS",
        ];
        let table = SymbolTable::new(
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.to_lowercase(), i as i64))
                .collect(),
        );
        for query in ["parse_args", "parse_argv", "render", "rendr"] {
            let len = query.chars().count();
            let max = if len >= 8 { 2 } else { 1 };
            let mut brute: Vec<String> = names
                .iter()
                .map(|n| n.to_lowercase())
                .filter(|n| n != query && len >= 5 && strsim::levenshtein(n, query) <= max)
                .collect();
            brute.sort();
            brute.dedup();
            let mut got: Vec<String> = table.fuzzy(query).into_iter().map(str::to_owned).collect();
            got.sort();
            assert_eq!(got, brute, "{query}");
        }
    }

    #[test]
    fn fuzzy_equals_brute_force_through_random_updates() {
        // A small alphabet makes near neighbours common; a fixed LCG keeps
        // the test deterministic.
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
        let mut live: Vec<(String, i64)> = (0..400).map(|i| (word(&mut next), i)).collect();
        let mut table = SymbolTable::new(live.clone());
        for round in 0..5 {
            let removed: Vec<(String, i64)> = (0..60)
                .map(|_| live.swap_remove(next(live.len() as u64) as usize))
                .collect();
            let added: Vec<(String, i64)> = (0..60)
                .map(|i| (word(&mut next), 1000 * (round + 1) + i))
                .collect();
            table.update(&removed, &added);
            live.extend(added);
            for _ in 0..40 {
                let query = word(&mut next);
                let len = query.chars().count();
                let max = if len >= 8 { 2 } else { 1 };
                let mut brute: Vec<String> = live
                    .iter()
                    .map(|(n, _)| n.clone())
                    .filter(|n| *n != query && len >= 5 && strsim::levenshtein(n, &query) <= max)
                    .collect();
                brute.sort();
                brute.dedup();
                let got: Vec<String> = table.fuzzy(&query).into_iter().map(str::to_owned).collect();
                assert_eq!(got, brute, "{query}");
                let mut ids: Vec<i64> = live
                    .iter()
                    .filter(|(n, _)| *n == query)
                    .map(|(_, i)| *i)
                    .collect();
                ids.sort_unstable();
                let mut exact = table.exact(&query).to_vec();
                exact.sort_unstable();
                assert_eq!(exact, ids, "{query}");
            }
        }
    }

    #[test]
    fn symbol_table_follows_updates_like_a_rebuild() {
        let mut table = SymbolTable::new(pairs(&[
            ("parse_args", 1),
            ("parse_args", 2),
            ("render", 3),
        ]));
        table.update(
            &pairs(&[("parse_args", 1), ("render", 3)]),
            &pairs(&[("parse_argv", 4)]),
        );
        let rebuilt = SymbolTable::new(pairs(&[("parse_args", 2), ("parse_argv", 4)]));
        for name in ["parse_args", "parse_argv", "render", "parse_arg"] {
            assert_eq!(table.exact(name), rebuilt.exact(name), "{name}");
            assert_eq!(table.fuzzy(name), rebuilt.fuzzy(name), "{name}");
        }
        assert_eq!(table.fuzzy("parse_argz"), vec!["parse_args", "parse_argv"]);
        assert!(table.exact("render").is_empty());
    }
}
