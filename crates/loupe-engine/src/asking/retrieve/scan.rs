//! Candidates before the first index lands: the question's words counted
//! in every file of the folder (one pass, no index), the best files chunked
//! on the spot.
//!
//! A first index of a large folder takes minutes (the vendor corpus of
//! BENCHMARKS.md: 34 k files, 1.2 GB, about 5 min to the lexical stage),
//! most of it parsing every file and writing the catalog. A question asked
//! meanwhile needs neither: it needs the few files that use its words.
//! This reads every file the walk admits once, counts each question term
//! with one Aho–Corasick automaton (ASCII case-insensitive, overlapping, so
//! `serde_json` also counts `serde` and `json`), scores whole files with
//! BM25 on those counts (the whole-file constants of the lexical index),
//! and chunks only the best files with the indexer's own reader and
//! chunker, so their chunks are the ones the index will hold.
//!
//! What it gives up, and the answer says so (`SignalsUsed::scan`): terms are
//! matched as substrings of the question's stems (a stem ending in `i`,
//! `queri` for "query", is matched without it), not as tokens; there are no
//! symbols, graph, history or vectors; chunk ids are numbered per answer
//! and mean nothing to the catalog. Pins resolve against the scanned
//! files' chunks.

use super::mentions::{is_primer_path, names_path};
use super::sort_interim;
use crate::indexing::chunk::ChunkConfig;
use crate::indexing::walk::{self, WalkConfig, WalkedFile};
use crate::progress::CancelToken;
use crate::project::{BINARY_SNIFF_BYTES, ReadOutcome, read_and_chunk};
use crate::{Error, Result, RetrieveQuery};
use aho_corasick::AhoCorasick;
use loupe_assemble::{Candidate, Chunk, Signals};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// Whole-file BM25 constants (the lexical index's, from pyserini).
const FILE_K1: f32 = 0.9;
const FILE_B: f32 = 0.4;
/// Chunk BM25 constants (tantivy's defaults, as the chunk index scores).
const CHUNK_K1: f32 = 1.2;
const CHUNK_B: f32 = 0.75;
/// A term found in a file's path counts like this many occurrences' worth
/// of evidence (the lexical index boosts its path field the same).
const PATH_BOOST: f32 = 2.0;
/// Shortest term matched: shorter ones are substrings of everything.
const MIN_PATTERN_LEN: usize = 3;

/// What a scan found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scanned {
    /// Candidates, best first by [`super::interim_score`].
    pub candidates: Vec<Candidate>,
    /// Files read.
    pub files: u64,
}

/// (term, occurrences) for the terms that occur in one text, by term.
type Counts = Vec<(u16, u32)>;

/// One file's term counts.
struct Counted {
    /// Index into the walk's files.
    file: usize,
    /// Bytes.
    len: u32,
    /// Occurrences in the text.
    text: Counts,
    /// Terms that occur in the path.
    path: Vec<u16>,
}

/// The scan patterns of a question: its BM25 terms (stems) as substrings,
/// with their weights; the same pattern from two stems keeps the larger.
fn patterns(query: &RetrieveQuery) -> Vec<(String, f32)> {
    let mut out: Vec<(String, f32)> = Vec::new();
    for (term, weight) in crate::stores::lexical::query_terms(&query.text, &query.identifiers) {
        // Snowball turns a final `y` into `i` (`query` → `queri`): the word
        // itself does not contain its stem then.
        let pattern = match term.strip_suffix('i') {
            Some(head) if head.len() >= MIN_PATTERN_LEN => head.to_owned(),
            _ => term,
        };
        if pattern.len() < MIN_PATTERN_LEN || !pattern.is_ascii() {
            continue;
        }
        match out.iter_mut().find(|(p, _)| *p == pattern) {
            Some((_, w)) => *w = w.max(weight),
            None => out.push((pattern, weight)),
        }
    }
    out
}

/// BM25 of one text's counts against the scanned files' statistics.
fn bm25(counts: &[(u16, u32)], len: f32, avg: f32, idf: &[f32], k1: f32, b: f32) -> f32 {
    let norm = k1 * (1.0 - b + b * len / avg.max(1.0));
    counts
        .iter()
        .map(|&(t, tf)| {
            let tf = tf as f32;
            idf[t as usize] * tf * (k1 + 1.0) / (tf + norm)
        })
        .sum()
}

/// Occurrences of each pattern in `bytes`, the ones that occur.
fn count(ac: &AhoCorasick, bytes: &[u8]) -> Counts {
    let mut counts: HashMap<u16, u32> = HashMap::new();
    for m in ac.find_overlapping_iter(bytes) {
        *counts
            .entry(u16::try_from(m.pattern().as_usize()).unwrap_or(u16::MAX))
            .or_default() += 1;
    }
    let mut out: Counts = counts.into_iter().collect();
    out.sort_unstable();
    out
}

/// Read one file and count the patterns in it and in its path; `None` for a
/// file that cannot be read or is binary (the index run reports those).
fn count_file(ac: &AhoCorasick, i: usize, file: &WalkedFile) -> Option<Counted> {
    let bytes = std::fs::read(&file.abs).ok()?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return None;
    }
    Some(Counted {
        file: i,
        len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        text: count(ac, &bytes),
        path: count(ac, file.rel.as_bytes())
            .into_iter()
            .map(|(t, _)| t)
            .collect(),
    })
}

/// Candidates for `query` from a scan of the folder at `root`: every file's
/// stems counted in one pass, files ranked by BM25 on the counts, the best
/// (and those the question names, pins or reads first) chunked and scored.
pub(crate) fn scan(
    root: &Path,
    walk_cfg: &WalkConfig,
    chunk_cfg: &ChunkConfig,
    query: &RetrieveQuery,
    cancel: &CancelToken,
) -> Result<Scanned> {
    let walked = walk::walk(root, walk_cfg, &crate::progress::no_progress, cancel)?;
    let files = &walked.files;
    for p in &query.pinned_paths {
        if !files.iter().any(|f| names_path(&f.rel, p)) {
            return Err(Error::Request(format!(
                "@{p}: no file of the folder has that path"
            )));
        }
    }
    let patterns = patterns(query);
    let ac = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(patterns.iter().map(|(p, _)| p.as_str()))
        .map_err(|e| Error::Task(format!("the question's scan patterns: {e}")))?;

    let counted: Vec<Counted> = files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            cancel.check()?;
            Ok(count_file(&ac, i, f))
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let idf = idf(&patterns, &counted);
    let file_rank = rank_files(files, &counted, &idf, query.limits.files);

    // Files the question names or pins, and primers, join whatever they score.
    let primers: Vec<String> = query.primers.clone().unwrap_or_else(|| {
        super::DEFAULT_PRIMERS
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    });
    let mut wanted: Vec<usize> = file_rank.iter().map(|&(f, _)| f).collect();
    let ranked: std::collections::HashSet<usize> = wanted.iter().copied().collect();
    for (i, f) in files.iter().enumerate() {
        let named = query.paths.iter().any(|m| names_path(&f.rel, m))
            || query.pinned_paths.iter().any(|m| names_path(&f.rel, m));
        if (named || is_primer_path(&f.rel, &primers)) && !ranked.contains(&i) {
            wanted.push(i);
        }
    }

    // The indexer's own reading and chunking, on both cores.
    let chunked: Vec<Vec<Chunk>> = wanted
        .par_iter()
        .map(|&i| {
            cancel.check()?;
            Ok(match read_and_chunk(&files[i], None, chunk_cfg) {
                ReadOutcome::Changed(update, _) => update.chunks,
                _ => Vec::new(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut chunks: Vec<(usize, Chunk, Counts)> = Vec::new();
    for (&i, file_chunks) in wanted.iter().zip(chunked) {
        for chunk in file_chunks {
            let counts = count(&ac, chunk.text.as_bytes());
            chunks.push((i, chunk, counts));
        }
    }
    let signals = chunk_signals(files, &chunks, &idf, &file_rank, query, &primers);
    Ok(Scanned {
        candidates: candidates(chunks, signals),
        files: counted.len() as u64,
    })
}

/// BM25's idf of each pattern over the counted files, times the term's
/// weight in the question.
fn idf(patterns: &[(String, f32)], counted: &[Counted]) -> Vec<f32> {
    let n = counted.len().max(1) as f32;
    let mut df = vec![0u32; patterns.len()];
    for c in counted {
        for &(t, _) in &c.text {
            df[t as usize] += 1;
        }
    }
    patterns
        .iter()
        .zip(&df)
        .map(|((_, w), &df)| w * (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln())
        .collect()
}

/// The `limit` best files by BM25 on their counts (plus their paths'
/// terms), as (file index, rank from 1), best first; ties by path.
fn rank_files(
    files: &[WalkedFile],
    counted: &[Counted],
    idf: &[f32],
    limit: usize,
) -> Vec<(usize, u32)> {
    let n = counted.len().max(1) as f32;
    let bytes: u64 = counted.iter().map(|c| u64::from(c.len)).sum();
    let avg = bytes as f32 / n;
    let mut ranked: Vec<(f32, usize)> = counted
        .iter()
        .map(|c| {
            let path: f32 = c.path.iter().map(|&t| idf[t as usize]).sum();
            let text = bm25(&c.text, c.len as f32, avg, idf, FILE_K1, FILE_B);
            (text + PATH_BOOST * path, c.file)
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(files[a.1].rel.cmp(&files[b.1].rel))
    });
    ranked.truncate(limit);
    ranked
        .iter()
        .enumerate()
        .map(|(r, &(_, f))| (f, r as u32 + 1))
        .collect()
}

/// Each chunk's signals: its BM25 on the question's counts (the best
/// `query.limits.bm25`), its file's rank on its best chunk, exact or
/// case-blind symbol hits, named, pinned and primer paths, and the mtime.
fn chunk_signals(
    files: &[WalkedFile],
    chunks: &[(usize, Chunk, Counts)],
    idf: &[f32],
    file_rank: &[(usize, u32)],
    query: &RetrieveQuery,
    primers: &[String],
) -> Vec<Signals> {
    let avg_chunk = chunks.iter().map(|(_, c, _)| c.text.len()).sum::<usize>() as f32
        / chunks.len().max(1) as f32;
    let mut scored: Vec<(f32, usize)> = chunks
        .iter()
        .enumerate()
        .map(|(k, (_, c, counts))| {
            let s = bm25(
                counts,
                c.text.len() as f32,
                avg_chunk,
                idf,
                CHUNK_K1,
                CHUNK_B,
            );
            (s, k)
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(query.limits.bm25);
    let mut signals: Vec<Signals> = vec![Signals::default(); chunks.len()];
    let mut best_of_file: HashMap<usize, usize> = HashMap::new();
    for (rank, &(score, k)) in scored.iter().enumerate() {
        signals[k].bm25 = Some(score);
        signals[k].bm25_rank = Some(rank as u32 + 1);
        best_of_file.entry(chunks[k].0).or_insert(k);
    }
    // A scored file's rank goes to its best chunk (its first when only the
    // path matched), as the lexical index's file hits do.
    for (k, (i, ..)) in chunks.iter().enumerate() {
        best_of_file.entry(*i).or_insert(k);
    }
    for &(i, r) in file_rank {
        if let Some(&k) = best_of_file.get(&i) {
            signals[k].file_rank = Some(r);
        }
    }
    let identifiers: Vec<&str> = query.identifiers.iter().map(String::as_str).collect();
    for (k, (i, chunk, _)) in chunks.iter().enumerate() {
        let file = &files[*i];
        let s = &mut signals[k];
        if let Some(sym) = chunk.symbol.as_deref() {
            if identifiers.contains(&sym) {
                s.symbol_hits = 1;
                s.symbol_exact = true;
            } else if identifiers.iter().any(|id| id.eq_ignore_ascii_case(sym)) {
                s.symbol_hits = 1;
            }
        }
        if query.paths.iter().any(|m| names_path(&file.rel, m)) {
            s.path_hits = 1;
        }
        s.pinned = query.pinned_paths.iter().any(|m| names_path(&file.rel, m));
        s.primer = is_primer_path(&file.rel, primers);
        s.mtime = file.mtime_ns / 1_000_000_000;
    }
    signals
}

/// The chunks with any evidence, with ids for this answer only in file
/// order (stable for the same folder and question), in interim order.
fn candidates(chunks: Vec<(usize, Chunk, Counts)>, signals: Vec<Signals>) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = chunks
        .into_iter()
        .zip(signals)
        .filter(|(_, s)| {
            s.bm25.is_some()
                || s.file_rank.is_some()
                || s.symbol_hits > 0
                || s.path_hits > 0
                || s.pinned
                || s.primer
        })
        .map(|((_, chunk, _), signals)| Candidate { chunk, signals })
        .collect();
    candidates.sort_by(|a, b| {
        a.chunk
            .path
            .cmp(&b.chunk.path)
            .then(a.chunk.start_line.cmp(&b.chunk.start_line))
    });
    for (id, c) in candidates.iter_mut().enumerate() {
        c.chunk.id = id as i64 + 1;
    }
    sort_interim(&mut candidates);
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scan whose token is cancelled ends with `Cancelled` instead of
    /// candidates (the walk, each file counted and each file chunked check
    /// it; here it is cancelled before the walk).
    #[test]
    fn a_cancelled_scan_stops_with_cancelled() {
        let dir = tempfile::tempdir().expect("temp dir");
        for i in 0..40 {
            std::fs::write(
                dir.path().join(format!("f{i}.rs")),
                format!("pub fn pack_items_{i}() {{ let budget = {i}; }}\n"),
            )
            .expect("write");
        }
        let q = RetrieveQuery::from_question("how are items packed under the budget?");
        let (walk, chunk) = (WalkConfig::default(), ChunkConfig::default());
        let scanned = scan(dir.path(), &walk, &chunk, &q, &CancelToken::new()).expect("scan");
        assert_eq!(scanned.files, 40);
        assert!(!scanned.candidates.is_empty());

        let cancel = CancelToken::new();
        cancel.cancel();
        let e = scan(dir.path(), &walk, &chunk, &q, &cancel).expect_err("cancelled");
        assert!(matches!(e, Error::Cancelled), "{e}");
    }

    #[test]
    fn patterns_are_the_question_stems_as_substrings() {
        let q = RetrieveQuery::from_question("Why does the query parser panic on an empty id?");
        let pats = patterns(&q);
        let p: Vec<&str> = pats.iter().map(|(p, _)| p.as_str()).collect();
        // `query` stems to `queri`, which `query` does not contain.
        assert!(p.contains(&"quer"), "{p:?}");
        assert!(p.contains(&"parser"), "{p:?}");
        assert!(p.contains(&"panic"), "{p:?}");
        // Stop words and terms too short to mean anything are not searched.
        assert!(!p.iter().any(|t| t.len() < MIN_PATTERN_LEN), "{p:?}");
        assert!(!p.contains(&"the"), "{p:?}");
    }

    #[test]
    fn counts_are_case_blind_and_overlap() {
        let q = RetrieveQuery::from_question("serde_json parse");
        let pats = patterns(&q);
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(pats.iter().map(|(p, _)| p.as_str()))
            .expect("patterns build");
        let counts = count(&ac, b"use serde_json; Serde_JSON::from_str; PARSER");
        let of = |word: &str| {
            let t = pats
                .iter()
                .position(|(p, _)| p == word)
                .unwrap_or_else(|| panic!("{word} is not among {pats:?}"));
            counts
                .iter()
                .find(|(i, _)| *i as usize == t)
                .map_or(0, |&(_, n)| n)
        };
        assert_eq!(of("serde_json"), 2);
        assert_eq!(of("serd"), 2);
        assert_eq!(of("json"), 2);
        assert_eq!(of("pars"), 1);
    }
}
