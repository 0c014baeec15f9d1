//! One door from a question to an assembly: [`Project::ask`].
//!
//! ```text
//! AskRequest ─→ [change: diff → pins, search words, notes] ─→
//!   knobs (ablations, clock) ─→ retrieve (cached per question,
//!   primers, index generation and history head) ─→ signals off (ablations)
//!   ─→ pins and bans ─→ assemble (the assembly thread, sizes memoised)
//!   ─→ warnings for @names that name nothing ─→ stale files ─→ Answer
//! ```
//!
//! Every shell asks through here: the app's `assemble` command, `loupe
//! query`, `loupe golden` (through [`crate::asking::golden::check`]), `loupe eval`
//! and the MCP server. None of them analyses, retrieves, applies a
//! selection or assembles on its own, so a question gives the same prompt
//! whichever door it came through.
//!
//! *Invariant:* a knob, pin or ban change with the same question, primers,
//! index generation and commit history re-uses the cached retrieval; only
//! the pure assembly runs again, with the question's [`SizeCache`].
//!
//! Beside it, the facade's other asking doors (retrieval alone for `loupe
//! search`, symbol look-ups, pins and bans, sources, `@` completions, the
//! token map): each hands the project's handles to the job's own type in
//! `retrieve/`, `selection.rs` or `map.rs`.
//!
//! What it does not do: index (the caller decides when, and shows the
//! progress), read the team file or saved preferences (the caller lays
//! those into [`AskRequest::knobs`]), or know any transport.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use loupe_assemble::classify::{self, QueryAnalysis, QuestionType};
use loupe_assemble::{AssembleRequest, Assembly, Candidate, Chunk, ChunkId, Knobs, SizeCache};

use crate::asking::ablate::Ablations;
use crate::asking::change::{self, DiffSpec};
use crate::asking::expand::{ExpandConfig, Expansion};
use crate::asking::map::{self, MapNode, Marks};
use crate::asking::retrieve::{self, Definitions, NameLookup, Retrieved};
use crate::asking::selection::Target;
use crate::asking::selection::{Completion, IndexedSource, Lookup, Selected, Selection};
use crate::project::Snapshot;
use crate::signals::reader;
use crate::{Error, Project, Result, RetrieveQuery};

/// What to do with `@` pins that name no indexed file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownPins {
    /// Fail with [`Error::Request`]: the user named something that is not
    /// there, and should hear so.
    #[default]
    Refuse,
    /// Retrieve again without any pins and say so in
    /// [`Answer::pins_dropped`]: pasted issue text carries `@handles` of
    /// people (what `loupe eval` does).
    Ignore,
}

/// What to do with a question about a folder whose first index has not
/// landed yet (nothing committed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unindexed {
    /// Fail with [`Error::Request`] saying what to run: never a prompt
    /// about nothing.
    #[default]
    Refuse,
    /// Answer from a scan of the folder's files for the question's words
    /// (`retrieve::scan`), marked as such in the signals and
    /// the report: what the app and `loupe query --wait scan` do while a
    /// first index runs.
    Scan,
}

/// Whether an answer waits for the re-ranker ([`crate::signals::reader`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reading {
    /// Read the leading files with the question (the `read_files` knob
    /// says how many) and rank with what the model read.
    #[default]
    Wait,
    /// Today's ranking alone: the app's first answer, shown while the
    /// re-ranked one is made, and `--no-reader`.
    Skip,
}

/// The question of a change review typed without one.
pub const DEFAULT_REVIEW_QUESTION: &str = "Review this change.";
/// The share of the usable budget the diff itself may take; the rest is
/// for the changed code in full and what surrounds it.
const DIFF_SHARE: f64 = 0.5;
/// Characters of changed lines retrieval searches with.
const MAX_SEARCHED_CHARS: usize = 4000;
/// Touched files whose recent commit subjects go into the prompt.
const MAX_HISTORY_FILES: usize = 8;
/// A leading file of more bytes than this many per token of the size
/// limit for reading it whole is not read: code runs 3–5 bytes per
/// token, so such a file is over the limit (the token count decides for
/// the rest, once read).
const MAX_BYTES_PER_TOKEN: u64 = 8;

/// What a diff adds to a question (change mode).
struct Review {
    /// The changed lines (and paths), searched with the question.
    searched: String,
    /// A chunk pin per run of changed lines in an indexed file.
    pins: Vec<Target>,
    /// The diff, fitted to its share of the budget, and the touched
    /// files' recent commits.
    notes: Vec<String>,
    /// What did not fit or could not be pinned.
    warnings: Vec<String>,
    /// The diff in numbers.
    summary: ChangeSummary,
}

/// The change a review was asked about, in numbers (what the app shows
/// beside its Changes switch).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChangeSummary {
    /// `unstaged`, `staged` or the range.
    pub spec: String,
    /// Files in the diff.
    pub files: u32,
    /// Hunks in the diff.
    pub hunks: u32,
    /// Lines added on the new side.
    pub added_lines: u32,
    /// Chunks of the new tree pinned for their changed lines.
    pub pinned: u32,
}

/// A question and everything that shapes its answer.
#[derive(Clone, Debug, Default)]
pub struct AskRequest {
    /// The question as typed; `@path` and `@symbol` mentions pin.
    pub question: String,
    /// The knobs, already layered (built-in → team file → user → flags).
    /// `now` = 0 takes the clock.
    pub knobs: Knobs,
    /// The user's pins and bans.
    pub selection: Selection,
    /// Overrides the classified question type (and so its instructions).
    pub question_type: Option<QuestionType>,
    /// Signals and stages turned off (`loupe eval --ablate`); empty for users.
    pub ablations: Ablations,
    /// What to do with pins that name nothing.
    pub unknown_pins: UnknownPins,
    /// What to do when the folder has no index yet.
    pub unindexed: Unindexed,
    /// Change mode: this diff is (part of) the question. Its hunks are
    /// pinned, its changed lines searched with, the diff itself goes into
    /// the prompt, and the question type becomes review (unless set).
    pub change: Option<DiffSpec>,
    /// The secondary LLM that turns the question into search terms; `None`
    /// (the default): the local analyzer alone.
    pub expand: Option<ExpandConfig>,
    /// Whether the answer waits for the re-ranker.
    pub reading: Reading,
    /// Stops the answer with [`Error::Cancelled`] once cancelled (the app
    /// cancels a question the user has already replaced). A scan of an
    /// unindexed folder, which reads every file, checks it per file; an
    /// answer from the index, tens of milliseconds, checks it once before
    /// retrieving.
    pub cancel: crate::CancelToken,
}

impl AskRequest {
    /// A request for `question` with `knobs` and nothing else.
    pub fn new(question: impl Into<String>, knobs: Knobs) -> Self {
        AskRequest {
            question: question.into(),
            knobs,
            ..AskRequest::default()
        }
    }
}

/// What identifies one retrieval: a change to any of these retrieves again.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CacheKey {
    question: String,
    primers: Vec<String>,
    generation: u64,
    history: Option<String>,
    /// The secondary LLM asked (endpoint, model), if any.
    expand: Option<(String, String)>,
    /// Points in the vector index: vectors landing retrieve again.
    vector_points: usize,
}

/// Which retrieval signals an answer had. The lexical index, symbols and
/// the graph are there whenever a question can be asked at all; commit
/// history and vectors can be missing (none, turned off, not built yet).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SignalsUsed {
    /// Commits whose messages were searched (0: none).
    pub history_commits: u64,
    /// Live chunks that had a vector, and live chunks; `None` when vectors
    /// are off (no embedder).
    pub vectors: Option<(u64, u64)>,
    /// Why the vectors were not searched for this question although they
    /// are on (the embedder failed on it, or the rows file could not be read).
    pub vectors_failed: Option<String>,
    /// Files read by a scan for the question's words, when the answer came
    /// from one ([`Unindexed::Scan`]): no index existed yet.
    pub scan: Option<u64>,
}

impl SignalsUsed {
    /// Whether vectors are on but some chunks had none: the answer came
    /// from a partial index.
    pub fn vectors_partial(&self) -> bool {
        matches!(self.vectors, Some((with, of)) if with < of)
    }

    /// One line for a report: what the answer was made from.
    pub fn describe(&self) -> String {
        if let Some(files) = self.scan {
            return format!(
                "signals: a scan of {files} files for the question's words (the first index is not built yet: no symbols, graph, history or vectors)"
            );
        }
        let mut used = vec!["lexical index", "symbols", "graph"];
        if self.history_commits > 0 {
            used.push("commit history");
        }
        let vectors = match self.vectors {
            None => " (vectors off)".to_owned(),
            Some(_) if self.vectors_failed.is_some() => format!(
                " (vectors failed on this question: {})",
                self.vectors_failed.as_deref().unwrap_or_default()
            ),
            Some((with, of)) if with >= of => {
                used.push("vectors");
                String::new()
            }
            Some((0, of)) => format!(" (vectors not built yet: 0 of {of} chunks)"),
            Some((with, of)) => {
                used.push("vectors");
                format!(" (vectors for {with} of {of} chunks only: the rest are not built yet)")
            }
        };
        format!("signals: {}{vectors}", used.join(", "))
    }
}

/// The last question's retrieval and the body sizes measured for it,
/// kept between asks (one per open project in the app; a fresh one per
/// process in the CLI).
#[derive(Debug, Default)]
pub struct AskCache {
    key: Option<CacheKey>,
    candidates: Arc<Vec<Candidate>>,
    pins_dropped: bool,
    expansion: Option<Expansion>,
    signals: SignalsUsed,
    sizes: SizeCache,
    /// The leading files looked at for this question
    /// ([`Project::complete_leading`]), by path.
    files: HashMap<String, LeadingFile>,
}

/// A file that led a question's ranking, as [`Project::complete_leading`]
/// found it.
#[derive(Debug)]
struct LeadingFile {
    /// Its size on disk when indexed.
    bytes: u64,
    /// All its chunks, once read (a file too large for the budget of the
    /// asks so far is not).
    chunks: Option<Vec<Candidate>>,
}

impl AskCache {
    /// The candidates the last question retrieved (before pins, bans and
    /// ablations).
    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// Forgets the cached retrieval, so the next ask retrieves again.
    pub fn clear(&mut self) {
        *self = AskCache::default();
    }
}

/// The answer to one [`AskRequest`].
#[derive(Clone, Debug)]
pub struct Answer {
    /// The prompt, its items and the report.
    pub assembly: Assembly,
    /// What assembly saw: the retrieved candidates with pins and bans
    /// applied (and ablated signals removed).
    pub selected: Selected,
    /// Files in the prompt that changed on disk since they were indexed.
    pub stale: Vec<String>,
    /// Whether pins naming nothing were dropped ([`UnknownPins::Ignore`]).
    pub pins_dropped: bool,
    /// In change mode, the diff reviewed.
    pub change: Option<ChangeSummary>,
    /// What the secondary LLM added to the search, when one is configured.
    pub expansion: Option<Expansion>,
    /// Which signals retrieval had (a partial index has fewer; the
    /// report's warnings say so too).
    pub signals: SignalsUsed,
}

impl Project {
    /// Answers `request`: retrieval (re-used from `cache` when only knobs,
    /// pins or bans changed), selection, assembly and the report.
    pub async fn ask(&self, request: &AskRequest, cache: &mut AskCache) -> Result<Answer> {
        let answer = self.answer(request, cache).await;
        answer.map_err(|e| self.damage_seen(e))
    }

    /// The door's steps: the request made ready, retrieval (cached),
    /// selection and assembly, then what the answer must say about itself.
    async fn answer(&self, request: &AskRequest, cache: &mut AskCache) -> Result<Answer> {
        let review = match &request.change {
            Some(spec) => Some(self.review(spec, &request.knobs).await?),
            None => None,
        };
        let mut asked = Asked::new(request, review.as_ref())?;

        // One snapshot for the key and the retrieval filed under it.
        let snapshot = self.snapshot().await?;
        let scanning = snapshot.generation == 0 && request.unindexed == Unindexed::Scan;
        if snapshot.generation == 0 && !scanning {
            // Never a prompt about nothing: the shell indexes first (the
            // CLI does, with progress) or says what to run.
            return Err(Error::Request(format!(
                "{} is not indexed yet: run `loupe index {}` (or open it in the app) first",
                self.root().display(),
                self.root().display()
            )));
        }
        self.retrieve_into(request, &mut asked, &snapshot, scanning, cache)
            .await?;
        if cache.pins_dropped {
            asked.query.pinned_symbols.clear();
        }

        let pinned_symbols = std::mem::take(&mut asked.query.pinned_symbols);
        let (mut assembly, selected, review_warnings, change) = self
            .select_and_assemble(request, asked, review, scanning, cache)
            .await?;
        assembly.report.warnings.extend(review_warnings);
        self.warn(
            &mut assembly,
            &selected,
            &pinned_symbols,
            scanning,
            &cache.signals,
        )
        .await?;
        let mut in_prompt: Vec<String> = assembly
            .items
            .iter()
            .filter(|i| i.lod.is_some())
            .map(|i| i.path.clone())
            .collect();
        in_prompt.sort();
        in_prompt.dedup();
        // A scan read the files just now.
        let stale = match scanning {
            true => Vec::new(),
            false => self.stale_paths(&in_prompt).await?,
        };
        Ok(Answer {
            assembly,
            selected,
            stale,
            pins_dropped: cache.pins_dropped,
            change,
            expansion: cache.expansion.clone(),
            signals: cache.signals.clone(),
        })
    }

    /// Retrieval for `asked` into `cache`, unless the cache already holds
    /// it (the same searched text, primers, generation, history head,
    /// expander and vector count): a knob, pin or ban change re-uses it.
    /// A fresh retrieval asks the secondary LLM first (its terms join the
    /// search) and retries without pins the caller lets it drop.
    async fn retrieve_into(
        &self,
        request: &AskRequest,
        asked: &mut Asked<'_>,
        snapshot: &crate::project::Snapshot,
        scanning: bool,
        cache: &mut AskCache,
    ) -> Result<()> {
        let key = CacheKey {
            question: asked.searched.clone(),
            primers: asked.knobs.primers.clone(),
            generation: snapshot.generation,
            history: snapshot.history_head(),
            expand: request
                .expand
                .as_ref()
                .map(|c| (c.base_url.clone(), c.model.clone())),
            vector_points: snapshot.vector_points,
        };
        if cache.key.as_ref() == Some(&key) {
            return Ok(());
        }
        let expansion = asked.expansion(request).await?;
        if let Some(e) = expansion.as_ref().filter(|e| !e.terms.is_empty()) {
            let expanded = format!("{}\n{}", asked.searched, e.terms.join("\n"));
            let primers = asked.query.primers.take();
            asked.query =
                RetrieveQuery::from_analysis(&expanded, &classify::analyze_text(&expanded));
            asked.query.primers = primers;
        }
        let query = &asked.query;
        let (retrieved, pins_dropped) = match self
            .gather(snapshot, query, scanning, &request.cancel)
            .await
        {
            Ok(r) => (r, false),
            Err(Error::Request(_))
                if request.unknown_pins == UnknownPins::Ignore
                    && (!query.pinned_paths.is_empty() || !query.pinned_symbols.is_empty()) =>
            {
                let mut unpinned = query.clone();
                unpinned.pinned_paths.clear();
                unpinned.pinned_symbols.clear();
                (
                    self.gather(snapshot, &unpinned, scanning, &request.cancel)
                        .await?,
                    true,
                )
            }
            Err(err) => return Err(err),
        };
        let (retrieved, scan) = retrieved;
        let signals = match scan {
            Some(files) => SignalsUsed {
                scan: Some(files),
                ..SignalsUsed::default()
            },
            None => SignalsUsed {
                history_commits: snapshot.history_commits() as u64,
                vectors: self.vector_coverage(),
                vectors_failed: retrieved.vectors_failed,
                scan: None,
            },
        };
        *cache = AskCache {
            key: Some(key),
            candidates: Arc::new(retrieved.candidates),
            pins_dropped,
            expansion,
            signals,
            sizes: SizeCache::default(),
            files: HashMap::new(),
        };
        Ok(())
    }

    /// The cached candidates with the request's ablations, pins and bans
    /// (and a change's pins), the leading files completed, assembled on
    /// the assembly thread. Also gives the change review's warnings and
    /// summary back.
    async fn select_and_assemble(
        &self,
        request: &AskRequest,
        asked: Asked<'_>,
        review: Option<Review>,
        scanning: bool,
        cache: &mut AskCache,
    ) -> Result<(Assembly, Selected, Vec<String>, Option<ChangeSummary>)> {
        let mut candidates = cache.candidates.as_ref().clone();
        request.ablations.apply_candidates(&mut candidates);
        let mut selection = request.selection.clone();
        if let Some(r) = &review {
            selection.pinned.extend(r.pins.iter().cloned());
        }
        let mut selected = self.apply_selection(&candidates, &selection).await?;

        let question_type = request
            .question_type
            .or(review.as_ref().map(|_| QuestionType::Review));
        let classification = question_type.map(|t| {
            let mut c = classify::classify(asked.question, &asked.analysis);
            c.question_type = t;
            c
        });
        let (notes, review_warnings, change) = match review {
            Some(r) => (r.notes, r.warnings, Some(r.summary)),
            None => (Vec::new(), Vec::new(), None),
        };
        let assemble_request = AssembleRequest {
            question: asked.question.to_owned(),
            analysis: Some(asked.analysis),
            classification,
            notes,
            knobs: asked.knobs,
            ..AssembleRequest::default()
        };
        if !scanning
            && let Some(more) = self
                .complete_leading(&selected.candidates, &assemble_request, cache)
                .await?
        {
            candidates.extend(more);
            selected = self.apply_selection(&candidates, &selection).await?;
        }
        let mut review_warnings = review_warnings;
        if !scanning
            && let Some(why) = self
                .read_leading(request, &mut selected.candidates, &assemble_request)
                .await
        {
            review_warnings.push(why);
        }
        // Assembly is CPU-bound (token counting): it runs on the engine's
        // assembly thread. The size memo travels there and back.
        let mut sizes = std::mem::take(&mut cache.sizes);
        let (assembly, selected, sizes) = crate::assembler::run(move || {
            let assembly =
                loupe_assemble::assemble_with(&selected.candidates, &assemble_request, &mut sizes);
            (assembly, selected, sizes)
        })
        .await?;
        cache.sizes = sizes;
        Ok((assembly, selected, review_warnings, change))
    }

    /// The re-ranker's step: the `read_files` files that lead the ranking
    /// without it are read with the question (on a blocking thread; pairs
    /// read before come from the reader's cache), and each file's best
    /// chunk gains the blended relevance of its logit: the file moves in
    /// the ranking, its weaker chunks stay where their own evidence puts
    /// them (raised to every chunk, they took budget from other files'
    /// evidence: all gold packed at 27k fell 3–4 points). Gives the warning
    /// to show when the model could not read (no file, a damaged one):
    /// the answer then keeps today's ranking.
    async fn read_leading(
        &self,
        request: &AskRequest,
        candidates: &mut [Candidate],
        assemble: &AssembleRequest,
    ) -> Option<String> {
        let reader = self.cfg.reader.clone()?;
        let knobs = &assemble.knobs;
        if request.reading == Reading::Skip || knobs.read_files == 0 {
            return None;
        }
        let mut files = loupe_assemble::ranked_files(candidates, assemble);
        files.truncate(knobs.read_files);
        let (files, best): (Vec<String>, Vec<usize>) = files.into_iter().unzip();
        if files.is_empty() {
            return None;
        }
        let mut chunks: HashMap<&str, Vec<&Candidate>> = HashMap::new();
        for c in candidates.iter() {
            chunks.entry(c.chunk.path.as_str()).or_default().push(c);
        }
        let texts: Vec<String> = files
            .iter()
            .map(|f| {
                let of_file = chunks.get(f.as_str()).map(Vec::as_slice).unwrap_or(&[]);
                reader::candidate_text(f, of_file.iter().copied())
            })
            .collect();
        let question = assemble.question.clone();
        let window = knobs.read_window;
        let read = tokio::task::spawn_blocking(move || {
            let blend = reader.model().map_err(Error::Embed)?.blend();
            Ok::<_, Error>(blend.gains(&reader.score(&question, &texts, window)?))
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
        let gains = match read {
            Ok(gains) => gains,
            Err(why) => return Some(format!("not re-ranked (today's ranking): {why}")),
        };
        for (i, g) in best.into_iter().zip(gains) {
            if let Some(c) = candidates.get_mut(i) {
                c.signals.reader = Some(g);
            }
        }
        None
    }

    /// What the answer must say about itself in the report's warnings:
    /// `@symbols` that pinned nothing, why nothing was selected, a prompt
    /// from a scan or a partial index, a vector search that failed.
    async fn warn(
        &self,
        assembly: &mut Assembly,
        selected: &Selected,
        pinned_symbols: &[String],
        scanning: bool,
        signals: &SignalsUsed,
    ) -> Result<()> {
        let mut warnings = Vec::new();
        let symbols = self.definitions(pinned_symbols, 1).await?;
        for sym in pinned_symbols
            .iter()
            .filter(|s| symbols.exact(s).is_empty())
        {
            warnings.push(match scanning {
                true => format!("@{sym}: symbols are not indexed yet: nothing pinned"),
                false => format!("@{sym} names no indexed file or symbol: nothing pinned"),
            });
        }
        if let Some(why) = self.why_nothing(selected, assembly).await? {
            warnings.push(why);
        }
        // A prompt from a scan, a partial index or without the vectors it
        // asked for: the user should know.
        if signals.scan.is_none()
            && let Some(why) = &signals.vectors_failed
        {
            warnings.push(format!(
                "answered without vectors: the vector search failed on this question ({why})"
            ));
        } else if signals.scan.is_some() || signals.vectors_partial() {
            warnings.push(format!("partial index: {}", signals.describe()));
        }
        assembly.report.warnings.extend(warnings);
        Ok(())
    }
}

/// The facade's other doors: retrieval alone, symbol look-ups, pins and
/// bans, sources, completions and the token map. Each is the project's
/// handles handed to the job's own type (`retrieve`, `selection`, `map`).
impl Project {
    /// Gather candidates for `query`, best first by
    /// [`interim_score`](crate::asking::retrieve::interim_score). A
    /// question the embedder fails on is answered without vectors (logged);
    /// [`Project::retrieve_noting`] says so to the caller.
    pub async fn retrieve(&self, query: &RetrieveQuery) -> Result<Vec<Candidate>> {
        Ok(self.retrieve_noting(query).await?.candidates)
    }

    /// [`Project::retrieve`], also saying whether the vectors failed.
    pub async fn retrieve_noting(&self, query: &RetrieveQuery) -> Result<Retrieved> {
        let snapshot = self.snapshot().await?;
        self.retrieve_from(&snapshot, query).await
    }

    /// [`Project::retrieve_noting`] over a snapshot the caller took (and
    /// keys its cache on).
    ///
    /// The catalog is read as it is now, not at the snapshot: a run that
    /// committed since (another process's, or this one's between its
    /// catalog and lexical commits) has deleted the old chunks of the files
    /// it rewrote, which an older lexical reader still finds. Those files
    /// would drop out of the answer, so a retrieval that finds chunks the
    /// catalog no longer holds is asked again from a fresh snapshot, once
    /// the lexical commit has landed (this process's: the `committing`
    /// window closed; another's: [`Project::snapshot`] catches up with
    /// it); after [`retrieve::STALE_RETRIES`] it answers with what it found.
    pub(crate) async fn retrieve_from(
        &self,
        snapshot: &Snapshot,
        query: &RetrieveQuery,
    ) -> Result<Retrieved> {
        let mut fresh;
        let mut snapshot = snapshot;
        for retry in 1..=retrieve::STALE_RETRIES {
            let (retrieved, vanished) = retrieve::Retrieval::new(self, snapshot, query)
                .run()
                .await?;
            if vanished == 0 {
                return Ok(retrieved);
            }
            tracing::debug!(
                vanished,
                generation = snapshot.generation,
                retry,
                "chunks rewritten under a question; asking again"
            );
            // An error is a timeout: the pause and the fresh snapshot
            // below still bound the wait.
            let _ =
                tokio::time::timeout(crate::project::CATCH_UP_WAIT, self.committing.read()).await;
            tokio::time::sleep(retrieve::STALE_PAUSE * retry).await;
            fresh = self.snapshot().await?;
            snapshot = &fresh;
        }
        Ok(retrieve::Retrieval::new(self, snapshot, query)
            .run()
            .await?
            .0)
    }

    /// What the index knows of `name` as a symbol (an agent's target).
    pub async fn look_up(&self, name: &str) -> Result<NameLookup> {
        self.catch_up().await?;
        NameLookup::find(&self.catalog, &self.lexical, name).await
    }

    /// The chunks defining each of `names` (any case), at most `limit` per
    /// name, lowest ids first.
    pub async fn definitions(&self, names: &[String], limit: usize) -> Result<Definitions> {
        Definitions::of(&self.catalog, names, limit).await
    }

    /// The look-ups by path, id or name, over the index as it is now.
    fn lookup(&self) -> Lookup<'_> {
        Lookup {
            root: &self.root,
            catalog: &self.catalog,
            indexed: self.indexed_paths(),
            max_file_bytes: self.cfg.walk.max_file_bytes,
        }
    }

    /// Apply `selection` to retrieved `candidates`: drop banned ones, mark
    /// pinned ones, and add pinned chunks retrieval did not return (looked
    /// up in the catalog by path, not re-retrieved).
    pub async fn apply_selection(
        &self,
        candidates: &[Candidate],
        selection: &Selection,
    ) -> Result<Selected> {
        self.lookup().select(candidates, selection).await
    }

    /// The chunk with catalog id `id`, if it still exists.
    pub async fn chunk(&self, id: ChunkId) -> Result<Option<Chunk>> {
        self.lookup().chunk(id).await
    }

    /// The text of the indexed file `path` as it is on disk now, and whether
    /// it changed since indexing. Only indexed paths can be read, so this
    /// never reaches outside the project or into ignored files.
    pub async fn indexed_source(&self, path: &str) -> Result<IndexedSource> {
        self.lookup().source(path).await
    }

    /// Which of `paths` changed on disk (or vanished) since they were
    /// indexed. Size and mtime decide, like the incremental index; a file
    /// that cannot be read counts as changed.
    pub async fn stale_paths(&self, paths: &[String]) -> Result<Vec<String>> {
        self.lookup().stale(paths).await
    }

    /// Up to `limit` indexed files and symbol names matching what follows an
    /// `@` (case-insensitive): prefix matches first (of the path, its file
    /// name or the symbol), then matches at a segment or word start, then
    /// anywhere; within a class files before symbols, shorter first.
    pub async fn complete(&self, typed: &str, limit: usize) -> Result<Vec<Completion>> {
        self.lookup().complete(typed, limit).await
    }

    /// The token map of everything indexed, marked by `marks` when given.
    pub async fn token_map(&self, marks: Option<Marks<'_>>) -> Result<MapNode> {
        self.catch_up().await?;
        let generation = self.catalog.generation().await?;
        let files = self
            .file_tokens
            .files(generation, self.catalog.file_tokens())
            .await?;
        Ok(map::of_project(&self.root, &files, marks))
    }
}

/// A request made ready for retrieval: the question as asked (or the stock
/// review question), what is searched, its analysis and query, and the
/// knobs with the ablations and the clock applied.
struct Asked<'r> {
    question: &'r str,
    searched: String,
    analysis: QueryAnalysis,
    query: RetrieveQuery,
    knobs: Knobs,
}

impl<'r> Asked<'r> {
    fn new(request: &'r AskRequest, review: Option<&Review>) -> Result<Self> {
        let question = match review {
            Some(_) if request.question.trim().is_empty() => DEFAULT_REVIEW_QUESTION,
            _ => request.question.as_str(),
        };
        if question.trim().is_empty() {
            return Err(Error::Request("the question is empty".into()));
        }
        let mut knobs = request.knobs.clone();
        request.ablations.apply_knobs(&mut knobs);
        if knobs.now == 0 {
            knobs.now = unix_now();
        }
        // The question is searched without a pasted report's template
        // scaffolding; in change mode with the changed lines too, as they
        // are (a `# comment` line of a change is no template heading).
        let asked = classify::searchable(question);
        let searched = match review {
            // The stock question's words would only find things named "review".
            Some(r) if question == DEFAULT_REVIEW_QUESTION => r.searched.clone(),
            Some(r) => format!("{}\n{}", asked.text, r.searched),
            None => asked.text.into_owned(),
        };
        let analysis = QueryAnalysis {
            scaffolding_lines: asked.left_out,
            ..classify::analyze_text(&searched)
        };
        let mut query = RetrieveQuery::from_analysis(&searched, &analysis);
        query.primers = Some(knobs.primers.clone());
        Ok(Self {
            question,
            searched,
            analysis,
            query,
            knobs,
        })
    }

    /// The secondary LLM's search terms (never the classification), asked
    /// only when retrieval runs, so a knob change does not ask it again;
    /// skipped when the question @mentions what it wants or the change is
    /// the question.
    async fn expansion(&self, request: &AskRequest) -> Result<Option<Expansion>> {
        Ok(match &request.expand {
            None => None,
            Some(cfg) if !self.analysis.mentions.is_empty() => Some(Expansion::skipped(
                cfg,
                "skipped: the question @mentions what it wants",
            )),
            Some(cfg) if self.question == DEFAULT_REVIEW_QUESTION => Some(Expansion::skipped(
                cfg,
                "skipped: the change is the question",
            )),
            Some(cfg) => {
                let cfg = cfg.clone();
                let asked = self.question.to_owned();
                Some(
                    tokio::task::spawn_blocking(move || {
                        crate::asking::expand::expand(&cfg, &asked)
                    })
                    .await?,
                )
            }
        })
    }
}

impl Project {
    /// The chunks of the files leading `candidates` under `request`
    /// ([`loupe_assemble::leading_files`]) that retrieval did not find, or
    /// `None` when there are none. Assembly raises a leading file's other
    /// chunks, but only those retrieval brought: the rest of a fix shares
    /// none of the question's words, and on the dev sets up to 11 % of all
    /// changed lines sat in a top-3 file but in no candidate (`git show
    /// 6f9883b:EVAL.md`; what reading them gains: EVAL.md, "What was tried"
    /// → Packing, `025318b`, `c313435`). Each file is
    /// read once per question, so a knob change reads only files that
    /// newly lead.
    // Long: one pass per question: the leading files found, each read once (kept in the cache), chunked, and what retrieval missed kept.
    async fn complete_leading(
        &self,
        candidates: &[Candidate],
        request: &AssembleRequest,
        cache: &mut AskCache,
    ) -> Result<Option<Vec<Candidate>>> {
        let leading = loupe_assemble::leading_files(candidates, request);
        let unknown: Vec<String> = leading
            .paths
            .iter()
            .filter(|p| !cache.files.contains_key(*p))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            let states = self.catalog.file_states_of(&unknown).await?;
            for p in unknown {
                let bytes = states.get(&p).map_or(u64::MAX, |s| s.size);
                cache.files.insert(
                    p,
                    LeadingFile {
                        bytes,
                        chunks: None,
                    },
                );
            }
        }
        // A file far larger than the limit is not read at all: a
        // question's leading files are often its largest, and reading one
        // of thousands of lines cost a vendor-corpus question up to 13 ms.
        let readable = u64::from(leading.max_tokens) * MAX_BYTES_PER_TOKEN;
        let unread: Vec<String> = leading
            .paths
            .iter()
            .filter(|p| {
                cache
                    .files
                    .get(*p)
                    .is_some_and(|f| f.chunks.is_none() && f.bytes <= readable)
            })
            .cloned()
            .collect();
        if !unread.is_empty() {
            for p in &unread {
                if let Some(file) = cache.files.get_mut(p) {
                    file.chunks = Some(Vec::new());
                }
            }
            for (chunk, mtime_ns) in self.catalog.chunks_of_paths(&unread).await? {
                let signals = loupe_assemble::Signals {
                    mtime: mtime_ns / 1_000_000_000,
                    ..Default::default()
                };
                if let Some(chunks) = cache
                    .files
                    .get_mut(&chunk.path)
                    .and_then(|f| f.chunks.as_mut())
                {
                    chunks.push(Candidate { chunk, signals });
                }
            }
            // Retrieval read the index at its snapshot; the chunks above
            // are the catalog's now. A run that rewrote a file in between
            // gave its chunks new ids: added beside the retrieved ones,
            // they would show two versions of the same code. Such a file
            // adds nothing to this question (the next one retrieves from
            // the new index).
            for p in &unread {
                let Some(file) = cache.files.get_mut(p) else {
                    continue;
                };
                let now: HashSet<loupe_assemble::ChunkId> =
                    file.chunks.iter().flatten().map(|c| c.chunk.id).collect();
                if candidates
                    .iter()
                    .any(|c| &c.chunk.path == p && !now.contains(&c.chunk.id))
                {
                    file.chunks = Some(Vec::new());
                }
            }
        }
        let known: HashSet<loupe_assemble::ChunkId> =
            candidates.iter().map(|c| c.chunk.id).collect();
        let more: Vec<Candidate> = leading
            .paths
            .iter()
            .filter_map(|p| cache.files.get(p)?.chunks.as_ref())
            .filter(|file| file.iter().map(|c| c.chunk.tokens).sum::<u32>() <= leading.max_tokens)
            .flatten()
            .filter(|c| !known.contains(&c.chunk.id))
            .cloned()
            .collect();
        Ok((!more.is_empty()).then_some(more))
    }

    /// Retrieval from the index at `snapshot`, or, when `scanning`, from a
    /// scan of the folder (with the number of files it read); stopped by
    /// `cancel`.
    async fn gather(
        &self,
        snapshot: &crate::project::Snapshot,
        query: &crate::RetrieveQuery,
        scanning: bool,
        cancel: &crate::CancelToken,
    ) -> Result<(crate::Retrieved, Option<u64>)> {
        cancel.check()?;
        if !scanning {
            return Ok((self.retrieve_from(snapshot, query).await?, None));
        }
        let (root, walk, chunk) = (
            self.root.clone(),
            self.cfg.walk.clone(),
            self.cfg.chunk.clone(),
        );
        let query = query.clone();
        let cancel = cancel.clone();
        let scanned = tokio::task::spawn_blocking(move || {
            crate::asking::retrieve::scan(&root, &walk, &chunk, &query, &cancel)
        })
        .await??;
        let retrieved = crate::Retrieved {
            candidates: scanned.candidates,
            ..crate::Retrieved::default()
        };
        Ok((retrieved, Some(scanned.files)))
    }

    /// Reads `spec`'s diff and turns it into pins, search words and notes.
    // Long: the diff read on a blocking thread, then its pins, search words and notes from the same per-file hunks.
    async fn review(&self, spec: &DiffSpec, knobs: &Knobs) -> Result<Review> {
        let root = self.root.clone();
        let read_spec = spec.clone();
        let history = self.cfg.history;
        let (diff, commits) = tokio::task::spawn_blocking(move || -> Result<_> {
            let diff = change::read(&root, &read_spec)?;
            let touched: Vec<&str> = diff
                .files
                .iter()
                .filter(|f| f.kind != change::ChangeKind::Added)
                .map(|f| f.old_path.as_deref().unwrap_or(&f.path))
                .take(MAX_HISTORY_FILES)
                .collect();
            let commits = if history {
                change::recent_commits(&root, &touched, 3)
            } else {
                Vec::new()
            };
            Ok((diff, commits))
        })
        .await??;
        let room = loupe_assemble::room(knobs);
        let share = (f64::from(room.usable) * DIFF_SHARE) as usize;
        let style = if knobs.toggles.diff_as_code {
            change::DiffStyle::Code
        } else {
            change::DiffStyle::Unified
        };
        let rendered = diff.render(room.measure, share, style);
        let mut warnings = rendered.warnings;
        let indexed = self.indexed_paths();
        let mut pins = Vec::new();
        for f in diff.files.iter().filter(|f| f.in_new_tree()) {
            if !indexed.contains(&f.path) {
                warnings.push(format!(
                    "{}: not in the index (skipped by the walk, or not indexed yet): its code is not pinned",
                    f.path
                ));
                continue;
            }
            pins.extend(f.pin_lines().into_iter().map(|line| Target::Chunk {
                path: f.path.clone(),
                symbol: None,
                start_line: line,
            }));
        }
        // The names the changed chunks define lead the search: their
        // callers and tests are found by those names.
        let paths: Vec<String> = diff
            .files
            .iter()
            .filter(|f| f.in_new_tree())
            .map(|f| f.path.clone())
            .collect();
        let chunks = self.catalog.chunks_of_paths(&paths).await?;
        let mut names: Vec<String> = Vec::new();
        for pin in &pins {
            let Target::Chunk {
                path, start_line, ..
            } = pin
            else {
                continue;
            };
            for (c, _) in &chunks {
                if &c.path == path && c.start_line <= *start_line && *start_line <= c.end_line {
                    names.extend(c.symbol.clone());
                }
            }
        }
        names.sort();
        names.dedup();
        let mut searched = names.join(" ");
        searched.push('\n');
        searched.push_str(&diff.changed_text(MAX_SEARCHED_CHARS));
        let mut notes = vec![rendered.text];
        if !commits.is_empty() {
            let mut text = String::from("Recent commits touching the changed files:\n");
            for (path, subjects) in &commits {
                text.push_str(&format!("{path}:\n"));
                for s in subjects {
                    text.push_str(&format!("  {s}\n"));
                }
            }
            notes.push(text);
        }
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let summary = ChangeSummary {
            spec: spec.to_string(),
            files: count(diff.files.len()),
            hunks: count(diff.files.iter().map(|f| f.hunks.len()).sum()),
            added_lines: count(
                diff.files
                    .iter()
                    .flat_map(|f| &f.hunks)
                    .map(|h| h.added.len())
                    .sum(),
            ),
            pinned: count(pins.len()),
        };
        Ok(Review {
            searched,
            pins,
            notes,
            warnings,
            summary,
        })
    }

    /// When the prompt holds no code at all, the likely reason in words: a
    /// prompt of instructions and a question alone must never pass as an
    /// answer.
    async fn why_nothing(
        &self,
        selected: &Selected,
        assembly: &Assembly,
    ) -> Result<Option<String>> {
        if assembly.items.iter().any(|i| i.lod.is_some()) {
            return Ok(None);
        }
        if selected.candidates.is_empty() {
            let status = self.status().await?;
            let why = if status.generation == 0 {
                format!(
                    "nothing was retrieved: no file under {} that Loupe can read uses the question's words (a scan: the first index is not built yet)",
                    self.root().display()
                )
            } else if status.chunks == 0 {
                format!(
                    "nothing was retrieved: the index of {} is empty (no file Loupe can read; see `loupe status`)",
                    self.root().display()
                )
            } else if assembly.report.analysis.terms.is_empty()
                && assembly.report.analysis.paths.is_empty()
            {
                "nothing was retrieved: the question has no searchable words (add names of files, functions or terms)".to_owned()
            } else {
                format!(
                    "nothing was retrieved: no indexed text of the {} files matches the question's words",
                    status.files
                )
            };
            return Ok(Some(why));
        }
        let hidden: Vec<&str> = assembly
            .items
            .iter()
            .filter_map(|i| match &i.status {
                loupe_assemble::report::ItemStatus::Dropped(
                    loupe_assemble::report::DropReason::HiddenByPathWeight { glob },
                ) => Some(glob.as_str()),
                _ => None,
            })
            .collect();
        if hidden.len() == assembly.items.len() {
            let mut globs = hidden;
            globs.sort_unstable();
            globs.dedup();
            return Ok(Some(format!(
                "nothing is in the prompt: every retrieved chunk is hidden by a path weight of 0 ({})",
                globs.join(", ")
            )));
        }
        Ok(Some(
            "nothing is in the prompt: no retrieved chunk fits the budget (see the dropped items)"
                .to_owned(),
        ))
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(0))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::no_progress;
    use crate::{CancelToken, ProjectConfig};

    /// The chunks `complete_leading` adds for `path`.
    fn added(more: &Option<Vec<Candidate>>, path: &str) -> Vec<String> {
        more.iter()
            .flatten()
            .filter(|c| c.chunk.path == path)
            .map(|c| c.chunk.text.clone())
            .collect()
    }

    /// A file rewritten between a question's retrieval and the read of its
    /// leading files gives none of its chunks to that question: the new
    /// version of a chunk retrieval found would sit beside the old one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_leading_file_rewritten_since_retrieval_adds_nothing() {
        let folder = tempfile::tempdir().expect("tempdir");
        let data = tempfile::tempdir().expect("tempdir");
        let ledger = folder.path().join("ledger.rs");
        let body = |stmt: &str| format!("    {stmt}\n").repeat(15);
        let write = |sum: &str| {
            let text = format!(
                "/// Sum an invoice's lines.\npub fn invoice_total(lines: &[u32]) -> u32 {{\n{}    {sum}\n}}\n\n\
                 /// Halve, rounding down.\npub fn zqx_halve(mut v: u64) -> u64 {{\n{}    v / 2\n}}\n",
                body("debug_assert!(lines.len() < usize::MAX);"),
                body("v = v.saturating_add(0);"),
            );
            std::fs::write(&ledger, text).expect("write");
        };
        write("lines.iter().sum()");
        let project = Project::open(folder.path(), ProjectConfig::new(data.path()))
            .await
            .expect("open");
        let cancel = CancelToken::new();
        project.index(&no_progress, &cancel).await.expect("index");
        let question = "why is invoice_total wrong for an empty invoice?";
        let candidates = project
            .retrieve(&RetrieveQuery::from_question(question))
            .await
            .expect("retrieve");
        assert!(
            candidates
                .iter()
                .any(|c| c.chunk.symbol.as_deref() == Some("invoice_total"))
        );
        let request = AssembleRequest {
            question: question.into(),
            ..AssembleRequest::default()
        };
        // The file leads and is read whole: its other function comes in.
        let more = project
            .complete_leading(&candidates, &request, &mut AskCache::default())
            .await
            .expect("complete");
        let read = added(&more, "ledger.rs");
        assert!(read.iter().any(|t| t.contains("v / 2")), "{read:?}");

        // The function retrieval found changes: its chunk gets a new id.
        write("lines.iter().copied().sum()");
        project
            .update_paths(std::slice::from_ref(&ledger), &no_progress, &cancel)
            .await
            .expect("update");
        let more = project
            .complete_leading(&candidates, &request, &mut AskCache::default())
            .await
            .expect("complete");
        assert_eq!(added(&more, "ledger.rs"), Vec::<String>::new());
    }

    /// The re-ranker in the door: it reads the leading files (the knob
    /// says how many), their chunks carry what it gave, the report shows
    /// it as its own share; `Reading::Skip` and `read_files = 0` leave
    /// today's ranking; a model that cannot be read is one warning, never
    /// an error or an empty prompt.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_reader_reranks_the_leading_files_and_a_missing_model_is_a_warning() {
        use crate::signals::reader::{Reader, tests};
        let folder = tempfile::tempdir().expect("tempdir");
        let data = tempfile::tempdir().expect("tempdir");
        for (name, body) in [
            (
                "parse.rs",
                "pub fn parse_header(raw: &str) -> Option<u32> { raw.trim().parse().ok() }\n",
            ),
            (
                "header.rs",
                "/// The parsed header of a request.\npub struct Header { pub size: u32 }\n",
            ),
            (
                "other.rs",
                "pub fn unrelated_total(v: &[u32]) -> u32 { v.iter().sum() }\n",
            ),
        ] {
            std::fs::write(folder.path().join(name), body).expect("write");
        }
        let model = data.path().join("reader.safetensors");
        std::fs::write(&model, tests::tiny_model(tests::BLEND)).expect("model");
        let mut cfg = ProjectConfig::new(data.path().join("idx"));
        cfg.reader = Some(Arc::new(Reader::at(model.clone())));
        let project = Project::open(folder.path(), cfg).await.expect("open");
        project
            .index(&no_progress, &CancelToken::new())
            .await
            .expect("index");
        let knobs = Knobs {
            read_files: 2,
            ..Knobs::default()
        };
        let request = AskRequest::new("why does parse_header reject a header size?", knobs);
        let mut cache = AskCache::default();
        let answer = project.ask(&request, &mut cache).await.expect("ask");
        let read: HashSet<&str> = answer
            .selected
            .candidates
            .iter()
            .filter(|c| c.signals.reader.is_some())
            .map(|c| c.chunk.path.as_str())
            .collect();
        assert_eq!(read.len(), 2, "{read:?}");
        // One chunk per file read: its best, which carries the file's rank.
        let gained = answer
            .selected
            .candidates
            .iter()
            .filter(|c| c.signals.reader.is_some());
        assert_eq!(gained.count(), 2);
        assert!(
            answer
                .assembly
                .items
                .iter()
                .any(|i| i.score.reader == tests::BLEND.weight)
        );
        assert!(
            answer
                .assembly
                .report
                .warnings
                .iter()
                .all(|w| !w.contains("re-ranked"))
        );

        let skip = AskRequest {
            reading: Reading::Skip,
            ..request.clone()
        };
        let answer = project.ask(&skip, &mut cache).await.expect("ask");
        assert!(
            answer
                .selected
                .candidates
                .iter()
                .all(|c| c.signals.reader.is_none())
        );
        let mut off = request.clone();
        off.knobs.read_files = 0;
        let answer = project.ask(&off, &mut cache).await.expect("ask");
        assert!(answer.assembly.items.iter().all(|i| i.score.reader == 0.0));

        // The model file gone before its first load: today's ranking, said once.
        drop(project);
        let mut cfg = ProjectConfig::new(data.path().join("idx"));
        cfg.reader = Some(Arc::new(Reader::at(
            data.path().join("missing.safetensors"),
        )));
        let project = Project::open(folder.path(), cfg).await.expect("open");
        let answer = project
            .ask(&request, &mut AskCache::default())
            .await
            .expect("an answer without the model");
        let warned: Vec<&String> = answer
            .assembly
            .report
            .warnings
            .iter()
            .filter(|w| w.contains("not re-ranked"))
            .collect();
        assert_eq!(warned.len(), 1, "{:?}", answer.assembly.report.warnings);
        assert!(warned[0].contains("missing.safetensors"), "{warned:?}");
        assert!(!answer.assembly.prompt.is_empty());
        let _ = model;
    }
}
