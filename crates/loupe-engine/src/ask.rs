//! One door from a question to an assembly: [`Project::ask`].
//!
//! ```text
//! AskRequest ─→ knobs (ablations, clock) ─→ retrieve (cached per question,
//!   primers, index generation and history head) ─→ signals off (ablations)
//!   ─→ pins and bans ─→ assemble (the assembly thread, sizes memoised)
//!   ─→ warnings for @names that name nothing ─→ stale files ─→ Answer
//! ```
//!
//! Every shell asks through here: the app's `assemble` command, `loupe
//! query`, `loupe golden` (through [`crate::golden::check`]), `loupe eval`
//! and the MCP server. None of them analyses, retrieves, applies a
//! selection or assembles on its own, so a question gives the same prompt
//! whichever door it came through.
//!
//! *Invariant:* a knob, pin or ban change with the same question, primers,
//! index generation and commit history re-uses the cached retrieval; only
//! the pure assembly runs again, with the question's [`SizeCache`].
//!
//! What it does not do: index (the caller decides when, and shows the
//! progress), read the team file or saved preferences (the caller lays
//! those into [`AskRequest::knobs`]), or know any transport.

use std::sync::Arc;

use loupe_assemble::classify::{self, QuestionType};
use loupe_assemble::{AssembleRequest, Assembly, Candidate, Knobs, SizeCache};

use crate::eval::ablate::Ablations;
use crate::selection::{Selected, Selection};
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
}

/// The last question's retrieval and the body sizes measured for it,
/// kept between asks (one per open project in the app; a fresh one per
/// process in the CLI).
#[derive(Debug, Default)]
pub struct AskCache {
    key: Option<CacheKey>,
    candidates: Arc<Vec<Candidate>>,
    pins_dropped: bool,
    sizes: SizeCache,
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
}

impl Project {
    /// Answers `request`: retrieval (re-used from `cache` when only knobs,
    /// pins or bans changed), selection, assembly and the report.
    pub async fn ask(&self, request: &AskRequest, cache: &mut AskCache) -> Result<Answer> {
        let answer = self.answer(request, cache).await;
        answer.map_err(|e| self.damage_seen(e))
    }

    async fn answer(&self, request: &AskRequest, cache: &mut AskCache) -> Result<Answer> {
        let question = request.question.as_str();
        if question.trim().is_empty() {
            return Err(Error::Request("the question is empty".into()));
        }
        let mut knobs = request.knobs.clone();
        request.ablations.apply_knobs(&mut knobs);
        if knobs.now == 0 {
            knobs.now = unix_now();
        }
        let analysis = classify::analyze(question);
        let mut query = RetrieveQuery::from_analysis(question, &analysis);
        query.primers = Some(knobs.primers.clone());

        let generation = self.catch_up().await?;
        if generation == 0 {
            // Never a prompt about nothing: the shell indexes first (the
            // CLI does, with progress) or says what to run.
            return Err(Error::Request(format!(
                "{} is not indexed yet: run `loupe index {}` (or open it in the app) first",
                self.root().display(),
                self.root().display()
            )));
        }
        let key = CacheKey {
            question: question.to_owned(),
            primers: knobs.primers.clone(),
            generation,
            history: self.history_head(),
        };
        if cache.key.as_ref() != Some(&key) {
            let (candidates, pins_dropped) = match self.retrieve(&query).await {
                Ok(c) => (c, false),
                Err(Error::Request(_))
                    if request.unknown_pins == UnknownPins::Ignore
                        && (!query.pinned_paths.is_empty() || !query.pinned_symbols.is_empty()) =>
                {
                    let mut unpinned = query.clone();
                    unpinned.pinned_paths.clear();
                    unpinned.pinned_symbols.clear();
                    (self.retrieve(&unpinned).await?, true)
                }
                Err(err) => return Err(err),
            };
            *cache = AskCache {
                key: Some(key),
                candidates: Arc::new(candidates),
                pins_dropped,
                sizes: SizeCache::default(),
            };
        }
        if cache.pins_dropped {
            query.pinned_symbols.clear();
        }

        let mut candidates = cache.candidates.as_ref().clone();
        request.ablations.apply_candidates(&mut candidates);
        let selected = self
            .apply_selection(&candidates, &request.selection)
            .await?;

        let classification = request.question_type.map(|t| {
            let mut c = classify::classify(question, &analysis);
            c.question_type = t;
            c
        });
        let assemble_request = AssembleRequest {
            question: question.to_owned(),
            analysis: Some(analysis),
            classification,
            knobs,
            ..AssembleRequest::default()
        };
        // Assembly is CPU-bound (token counting): it runs on the engine's
        // assembly thread. The size memo travels there and back.
        let mut sizes = std::mem::take(&mut cache.sizes);
        let (mut assembly, selected, sizes) = crate::assembler::run(move || {
            let assembly =
                loupe_assemble::assemble_with(&selected.candidates, &assemble_request, &mut sizes);
            (assembly, selected, sizes)
        })
        .await?;
        cache.sizes = sizes;

        let symbols = Arc::clone(&self.symbols.read().unwrap_or_else(|e| e.into_inner()));
        for sym in query
            .pinned_symbols
            .iter()
            .filter(|s| symbols.exact(s).is_empty())
        {
            assembly.report.warnings.push(format!(
                "@{sym} names no indexed file or symbol: nothing pinned"
            ));
        }
        if let Some(why) = self.why_nothing(&selected, &assembly).await? {
            assembly.report.warnings.push(why);
        }
        let mut in_prompt: Vec<String> = assembly
            .items
            .iter()
            .filter(|i| i.lod.is_some())
            .map(|i| i.path.clone())
            .collect();
        in_prompt.sort();
        in_prompt.dedup();
        let stale = self.stale_paths(&in_prompt).await?;
        Ok(Answer {
            assembly,
            selected,
            stale,
            pins_dropped: cache.pins_dropped,
        })
    }
}

impl Project {
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
            let why = if status.chunks == 0 {
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
