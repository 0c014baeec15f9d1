//! Assemble: the whole pure pipeline, from candidates and knobs to an
//! [`Assembly`] — classify → rank → select → guard → pack (with compress)
//! → render → fit — with one report row per candidate.
//!
//! *Architecture invariant:* [`assemble`] is a pure function of its
//! arguments: no I/O, no clock (`now` is a knob), no randomness; the same
//! input gives the same output byte for byte. It never fails: problems
//! become warnings in the report.
//!
//! Sizes are exact in the budget's unit. Each item's rendered block is
//! measured once per level of detail and cached for the call; the finished
//! prompt is measured once more and, should tokenizer joins push it over,
//! packed again with the overshoot taken off.

use std::collections::{HashMap, HashSet};

// The request and result types live in `knobs`; re-exported so `assemble::Knobs` reads naturally.
pub use crate::knobs::*;

use crate::classify::{self, Classification, QueryAnalysis};
use crate::compress::{self, MAX_LOD, RenderOptions};
use crate::fit::{self, Message, MessageRole};
use crate::guard::{self, GuardConfig};
use crate::learned::QueryStats;
use crate::model::{Candidate, Chunk, ChunkKind, Role, SpanKind};
use crate::models;
use crate::pack::{self, PackItem, Packed};
use crate::rank::{self, PathRules, RankConfig, ScoreBreakdown, SelectConfig};
use crate::render::{self, Block, PromptParts};
use crate::report::{DropReason, ItemStatus, Redaction, Section, SectionSize};
use crate::tokens::{self, Measure};

/// Re-packs allowed when tokenizer joins push the measured prompt over budget.
const MAX_REPACKS: usize = 4;

fn measure_tokens(encoding: tokens::Encoding, text: &str) -> u32 {
    tokens::count(encoding, text) as u32
}

/// Budget (in tokens) per automatic item when the user sets no k. Chosen by
/// `loupe eval` over all dev sets (EVAL.md): 200 beat 300 and no cap at 13k
/// (line recall 22–25% → 56% on the Rust sets) while keeping all-gold-packed
/// at 27k within ~3 points of no cap. A 13k budget admits 65 items, 27k 135.
pub const TOKENS_PER_AUTO_ITEM: u32 = 200;
/// Characters per token for [`auto_k`] under a character budget (the
/// seed's 4 characters per token of code).
const AUTO_K_CHARS_PER_TOKEN: u32 = 4;

/// How many automatic items a budget of `usable` admits when the user set
/// no k; never fewer than SourcePrep's 20.
pub fn auto_k(usable: u32, measure: Measure) -> usize {
    let tokens = match measure {
        Measure::Tokens(_) => usable,
        Measure::Chars => usable / AUTO_K_CHARS_PER_TOKEN,
    };
    ((tokens / TOKENS_PER_AUTO_ITEM) as usize).max(crate::knobs::SOURCEPREP_K)
}

/// The default level of detail for a score relative to the top automatic score.
pub fn lod_for(score: f32, top: f32) -> u8 {
    let relative = if top > 0.0 { score / top } else { 0.0 };
    LOD_BANDS
        .iter()
        .find(|(share, _)| relative >= *share)
        .map_or(MAX_LOD, |(_, lod)| *lod)
}

/// Per-item data fixed before packing.
struct Prepared<'c> {
    index: usize,
    chunk: std::borrow::Cow<'c, Chunk>,
    options: RenderOptions,
    context: Option<String>,
    section: Section,
    wanted: u8,
}

fn is_container(kind: ChunkKind) -> bool {
    matches!(
        kind,
        ChunkKind::Class
            | ChunkKind::Impl
            | ChunkKind::Trait
            | ChunkKind::Interface
            | ChunkKind::Struct
            | ChunkKind::Module
    )
}

/// The first line of a chunk's first signature.
fn header_line(chunk: &Chunk) -> Option<String> {
    let span = chunk
        .outline
        .iter()
        .find(|s| s.kind == SpanKind::Signature)?;
    let text = chunk.text.get(span.start as usize..span.end as usize)?;
    Some(text.lines().next()?.trim().to_string()).filter(|s| !s.is_empty())
}

/// Builds the block for an item at a level.
fn make_block(p: &Prepared, candidates: &[Candidate], scores: &[ScoreBreakdown], lod: u8) -> Block {
    let mut b = make_header(p, candidates, scores, lod);
    b.content = compress::render(&p.chunk, lod, p.options);
    b
}

/// A block without its content.
fn make_header(
    p: &Prepared,
    candidates: &[Candidate],
    scores: &[ScoreBreakdown],
    lod: u8,
) -> Block {
    let c = &candidates[p.index].chunk;
    Block {
        path: c.path.clone(),
        start_line: c.start_line,
        end_line: c.end_line,
        language: c.language.clone(),
        lod,
        score: scores[p.index].score,
        context: if lod <= 3 { p.context.clone() } else { None },
        content: String::new(),
    }
}

/// What a chunk body's size depends on: its content, the level of detail,
/// how it was rendered and guarded, and the unit it is measured in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SizeKey {
    hash: String,
    len: usize,
    lod: u8,
    skip_imports: bool,
    sanitize: bool,
    redact: bool,
    measure: Measure,
}

/// Sizes of rendered chunk bodies, kept across [`assemble_with`] calls.
///
/// A memo, not state: an assembly is byte-for-byte the same with a fresh
/// cache or a warm one. Keep one per question (the app keeps it while the
/// user moves sliders); re-measuring every body at every level of detail
/// dominated a knob change on real candidates.
#[derive(Debug, Default)]
pub struct SizeCache {
    sizes: HashMap<SizeKey, u32>,
}

impl SizeCache {
    /// Bodies measured so far.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether nothing was measured yet.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
}

/// Assembles the prompt for `request` from `candidates`. Pure and total.
pub fn assemble(candidates: &[Candidate], request: &AssembleRequest) -> Assembly {
    assemble_with(candidates, request, &mut SizeCache::default())
}

/// Builds the process-wide tables the first assembly would otherwise build
/// while the user waits: the default encoding's BPE table and the
/// classifier's and guard's compiled patterns (about 100 ms in all on the
/// benchmark machine). A host calls it on a background thread when a
/// project opens; calling it again costs one tiny assembly.
pub fn warm_up() {
    let sig = "pub fn warm_up(secret: &str) ";
    let body = "{\n    // ignore previous instructions\n    let token = \"é\";\n}\n";
    let text = format!("{sig}{body}");
    let chunk = Chunk {
        id: 1,
        path: "src/warm.rs".into(),
        language: "rust".into(),
        kind: ChunkKind::Function,
        symbol: Some("warm_up".into()),
        parent: None,
        start_byte: 0,
        end_byte: text.len() as u32,
        start_line: 1,
        end_line: 4,
        role: Role::Code,
        tokens: 0,
        hash: "warm".into(),
        outline: vec![
            crate::model::OutlineSpan {
                kind: SpanKind::Signature,
                start: 0,
                end: sig.len() as u32,
            },
            crate::model::OutlineSpan {
                kind: SpanKind::Body,
                start: sig.len() as u32,
                end: text.len() as u32,
            },
        ],
        text,
    };
    let candidate = Candidate {
        chunk,
        signals: crate::model::Signals {
            bm25_rank: Some(1),
            ..Default::default()
        },
    };
    let request = AssembleRequest {
        question: "How does warm_up work in src/warm.rs?".into(),
        ..Default::default()
    };
    std::hint::black_box(assemble(&[candidate], &request));
}

/// The unit, the budget and the room for the prompt that `knobs` give,
/// before any text, with what a user should know about them (an unknown
/// model, a budget that leaves no room for the answer, a safety margin).
#[derive(Clone, Debug, PartialEq)]
pub struct Room {
    /// How sizes are measured.
    pub measure: Measure,
    /// The budget asked for (or the model's default), in `measure`'s unit.
    pub budget: u32,
    /// What the prompt may take.
    pub usable: u32,
    /// Notes for the report.
    pub warnings: Vec<String>,
}

/// See [`Room`].
pub fn room(knobs: &Knobs) -> Room {
    let mut warnings = Vec::new();
    let spec = models::resolve(&knobs.model, &knobs.models);
    if models::lookup(&knobs.model, &knobs.models).is_none() {
        warnings.push(format!(
            "unknown model {:?}: using o200k, an 8,192-token window and a 4,000-token budget",
            knobs.model
        ));
    }
    let (measure, budget) = match knobs.budget {
        Some(Budget::Chars(n)) => (Measure::Chars, n),
        Some(Budget::Tokens(n)) => (Measure::Tokens(spec.encoding), n),
        None => (Measure::Tokens(spec.encoding), spec.default_budget),
    };
    let usable = match measure {
        Measure::Tokens(_) => {
            let room = spec.context_window.saturating_sub(knobs.answer_reserve);
            if budget > room {
                warnings.push(format!("budget {budget} leaves no {} tokens for the answer in a {}-token window: using {room}", knobs.answer_reserve, spec.context_window));
            }
            let usable = spec.usable(budget.min(room));
            if spec.safety_margin > 0.0 {
                warnings.push(format!("{} is counted with the closest public tokenizer; {:.0}% of the budget is kept as a safety margin", spec.name, spec.safety_margin * 100.0));
            }
            usable
        }
        Measure::Chars => budget,
    };
    Room {
        measure,
        budget,
        usable,
        warnings,
    }
}

/// [`assemble`] reusing body sizes measured by earlier calls.
///
/// The stages, each a function below with its own input and output:
/// budget ([`room`]) → [`question_stage`] → [`rank_stage`] →
/// [`select_stage`] → [`prepare_stage`] → [`fixed_stage`] → [`pack_stage`]
/// (pack, render, measure, repack) → [`rows_stage`] → [`sections_stage`]
/// → [`fit_stage`] → [`report_stage`]. Guarding happens where text enters
/// (the question, each chunk, the notes); every stage adds its warnings.
pub fn assemble_with(
    candidates: &[Candidate],
    request: &AssembleRequest,
    sizes: &mut SizeCache,
) -> Assembly {
    let knobs = &request.knobs;
    let mut redactions: Vec<Redaction> = Vec::new();
    let room = room(knobs);
    let mut warnings = room.warnings.clone();
    let asked = question_stage(request, &mut redactions);
    let mut ranked = rank_stage(
        candidates,
        knobs,
        asked.classification.intent,
        &mut warnings,
    );
    let selected = select_stage(candidates, knobs, &mut ranked, &room);
    let prepared = prepare_stage(
        candidates,
        knobs,
        &selected,
        &ranked.scores,
        &mut redactions,
    );
    let fixed = fixed_stage(request, &asked, &room, &mut redactions, &mut warnings);
    let mut costs = Costs {
        cache: HashMap::new(),
        prepared: &prepared,
        candidates,
        scores: &ranked.scores,
        measure: room.measure,
        format: fixed.format,
        knobs,
        sizes,
    };
    let packed = pack_stage(&mut costs, &fixed, &asked.question, &room, &mut warnings);
    let (rows, dropped_size) = rows_stage(&ranked, &packed, &mut costs);
    let (sections, question_size) =
        sections_stage(&packed.pieces, &rows, packed.used, room.measure);
    let (messages, fit_report) = fit_stage(
        request,
        &packed,
        &asked.question,
        question_size,
        room.measure,
        &mut warnings,
    );
    report_stage(
        Report {
            model: models::resolve(&knobs.model, &knobs.models).name.clone(),
            unit: room.measure.unit().to_string(),
            budget: room.budget,
            answer_reserve: knobs.answer_reserve,
            usable: room.usable,
            used: packed.used,
            sections,
            was_truncated: false,
            dropped_count: 0,
            dropped_size,
            pinned_overflow: packed.result.pinned_overflow.clone(),
            classification: asked.classification,
            analysis: asked.analysis,
            fit: fit_report,
            warnings,
            redactions,
        },
        packed.prompt,
        messages,
        rows,
        room.measure,
    )
}

/// The question as assembly uses it: guarded, capped, analysed, classified.
struct Asked {
    question: String,
    analysis: QueryAnalysis,
    classification: Classification,
}

/// Guards and caps the question, then analyses and classifies it (unless
/// the request brings its own analysis or classification); the intent knob
/// overrides the classified intent.
fn question_stage(request: &AssembleRequest, redactions: &mut Vec<Redaction>) -> Asked {
    let knobs = &request.knobs;
    let guard_question = GuardConfig {
        sanitize: knobs.sanitize,
        injections: false,
        secrets: knobs.redact_secrets,
    };
    let question = guard::guard_text(&request.question, guard_question, "question", 1, redactions);
    let question = guard::cap_user_message(&question, knobs.user_message_cap, redactions);
    let analysis = request
        .analysis
        .clone()
        .unwrap_or_else(|| classify::analyze(&question));
    let mut classification = request
        .classification
        .clone()
        .unwrap_or_else(|| classify::classify(&question, &analysis));
    if let Some(intent) = knobs.intent {
        classification.intent = intent;
    }
    Asked {
        question,
        analysis,
        classification,
    }
}

/// Every candidate's score; those a path weight of 0 hides, with their
/// reason; the others best first.
struct Ranked {
    scores: Vec<ScoreBreakdown>,
    reasons: Vec<Option<DropReason>>,
    visible: Vec<usize>,
}

/// Scores every candidate with the knobs' ranker, path weights, primers,
/// recency and role weights for `intent`.
fn rank_stage(
    candidates: &[Candidate],
    knobs: &Knobs,
    intent: crate::classify::Intent,
    warnings: &mut Vec<String>,
) -> Ranked {
    let (rules, glob_warnings) = PathRules::new(&knobs.path_weights);
    warnings.extend(glob_warnings);
    let model = knobs.ranker.model();
    let rank_config = RankConfig {
        model,
        // Only the learned model reads them: the formula pays nothing.
        stats: if model.is_some() {
            QueryStats::of(candidates)
        } else {
            QueryStats::default()
        },
        path_weights: &knobs.path_weights,
        primers: &knobs.primers,
        primer_boost: knobs.primer_boost,
        recency_half_life_days: knobs.recency_half_life_days,
        recency_weight: knobs.recency_weight,
        role_weights: &knobs.role_weights,
        intent,
        now: knobs.now,
    };
    let scores: Vec<ScoreBreakdown> = candidates
        .iter()
        .map(|c| rank::score(c, &rules, &rank_config))
        .collect();
    let mut reasons: Vec<Option<DropReason>> = vec![None; candidates.len()];
    let mut visible: Vec<usize> = Vec::with_capacity(candidates.len());
    for (i, s) in scores.iter().enumerate() {
        match (&s.path_rule, s.path_weight == 0.0 && !s.pinned) {
            (Some(glob), true) => {
                reasons[i] = Some(DropReason::HiddenByPathWeight { glob: glob.clone() })
            }
            _ => visible.push(i),
        }
    }
    visible
        .sort_by(|&a, &b| rank::order((&candidates[a], &scores[a]), (&candidates[b], &scores[b])));
    Ranked {
        scores,
        reasons,
        visible,
    }
}

/// `k`, the minimum score and diversity as the knobs set them.
fn select_config(knobs: &Knobs, room: &Room) -> SelectConfig {
    SelectConfig {
        // No k from the user: as many automatic items as the budget can
        // show in some detail. Without any cap, hundreds of one-line
        // summaries of weak candidates took a 13k budget from the bodies of
        // the best ones (EVAL.md, finding 4).
        k: knobs.k.or(Some(auto_k(room.usable, room.measure))),
        min_score: knobs.min_score,
        diversity: knobs.diversity,
    }
}

/// The items assembly goes on with, best first: duplicates removed, then
/// k, the minimum score and diversity applied; what is cut gets its reason.
fn select_stage(
    candidates: &[Candidate],
    knobs: &Knobs,
    ranked: &mut Ranked,
    room: &Room,
) -> Vec<usize> {
    let (unique, dups) = pack::dedupe(&ranked.visible, candidates);
    let (mut selected, mut cut) = rank::select(
        &unique,
        candidates,
        &ranked.scores,
        select_config(knobs, room),
    );
    // The leading files' other chunks go before weaker items for packing
    // and detail, never in their place: the minimum score was applied to
    // each chunk's own score, and so was a `k` the user set (raised first,
    // they took the `k` places of weak files' only chunks: all gold files
    // packed at 13k fell on every dev set, EVAL.md "What was tried" →
    // Packing, `6cf069f`). The automatic `k` counts the items a budget can
    // show; a leading file's other chunks are more of a file already in, so
    // it does not cut them.
    // Diversity asks for the opposite, other files, so it turns the lift off.
    if lifts_siblings(knobs) {
        let leading = rank::leading_files(candidates, &ranked.scores, &selected);
        if knobs.k.is_none() {
            // A leading file small enough to be read whole comes in whole;
            // a larger one keeps what `k` kept.
            let limit = whole_file_tokens(room);
            let whole: Vec<&str> = leading
                .iter()
                .map(|(p, _)| *p)
                .filter(|p| {
                    candidates
                        .iter()
                        .filter(|c| c.chunk.path == *p)
                        .map(|c| c.chunk.tokens)
                        .sum::<u32>()
                        <= limit
                })
                .collect();
            cut.retain(|&(i, ref reason)| {
                let readmit = *reason == DropReason::BeyondK
                    && whole.contains(&candidates[i].chunk.path.as_str());
                if readmit {
                    selected.push(i);
                }
                !readmit
            });
        }
        if rank::lift_siblings(
            candidates,
            &mut ranked.scores,
            &mut selected,
            &leading,
            knobs.sibling_share,
        ) {
            let scores = &ranked.scores;
            ranked.visible.sort_by(|&a, &b| {
                rank::order((&candidates[a], &scores[a]), (&candidates[b], &scores[b]))
            });
        }
    }
    for (i, reason) in dups.into_iter().chain(cut) {
        ranked.reasons[i] = Some(reason);
    }
    selected
}

/// Whether assembly raises the leading files' other chunks: not with the
/// lift's share at 0, nor with diversity (which asks for other files).
/// Reading a leading file whole needs this and no `k` from the user too.
fn lifts_siblings(knobs: &Knobs) -> bool {
    knobs.diversity.is_none() && knobs.sibling_share > 0.0
}

/// A leading file is read whole, its chunks beyond an automatic `k` kept,
/// while all its chunks total at most this share of the usable budget.
/// The rest of a fix is often in chunks that share no word with the
/// question (on the dev sets up to 11 % of all changed lines sat in a
/// top-3 file but in no candidate: `git show 6f9883b:EVAL.md`), but reading
/// large files whole took the room weaker files need: this is the largest
/// share that cost no gold file on the mined training questions (EVAL.md,
/// "What was tried" → Packing, `025318b`; 0.15 lost one at 50k).
pub const WHOLE_FILE_SHARE: f32 = 0.1;

/// The most tokens a leading file may have to be read whole ([`WHOLE_FILE_SHARE`]).
fn whole_file_tokens(room: &Room) -> u32 {
    let tokens = match room.measure {
        Measure::Tokens(_) => room.usable,
        Measure::Chars => room.usable / AUTO_K_CHARS_PER_TOKEN,
    };
    (tokens as f32 * WHOLE_FILE_SHARE) as u32
}

/// The files whose other chunks assembly raises for a request
/// ([`leading_files`]), and how large one may be to be read whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Leading {
    /// Best first.
    pub paths: Vec<String>,
    /// A file whose chunks total more tokens is not read whole.
    pub max_tokens: u32,
}

/// The files whose other chunks assembly raises for `request` (the
/// `sibling_share` knob, [`rank::lift_siblings`]); empty when the lift is
/// off or the user set `k`. A caller that can read more of a file than
/// retrieval found adds those chunks before assembling, when the file is
/// at most [`Leading::max_tokens`] (the engine's `ask` does).
pub fn leading_files(candidates: &[Candidate], request: &AssembleRequest) -> Leading {
    let knobs = &request.knobs;
    if !lifts_siblings(knobs) || knobs.k.is_some() {
        return Leading::default();
    }
    let room = room(knobs);
    let asked = question_stage(request, &mut Vec::new());
    let ranked = rank_stage(
        candidates,
        knobs,
        asked.classification.intent,
        &mut Vec::new(),
    );
    let (unique, _) = pack::dedupe(&ranked.visible, candidates);
    let (selected, _) = rank::select(
        &unique,
        candidates,
        &ranked.scores,
        select_config(knobs, &room),
    );
    Leading {
        paths: rank::leading_files(candidates, &ranked.scores, &selected)
            .into_iter()
            .map(|(p, _)| p.to_owned())
            .collect(),
        max_tokens: whole_file_tokens(&room),
    }
}

/// The files of `candidates` in the order ranking puts them for
/// `request`, each with the index of its best chunk in `candidates`: what
/// the engine's re-ranker reads from the top of. Pinned files are left out
/// (the user placed them, the ranking did not), and so are files a path
/// weight hides.
pub fn ranked_files(candidates: &[Candidate], request: &AssembleRequest) -> Vec<(String, usize)> {
    let asked = question_stage(request, &mut Vec::new());
    let ranked = rank_stage(
        candidates,
        &request.knobs,
        asked.classification.intent,
        &mut Vec::new(),
    );
    let mut seen = HashSet::new();
    ranked
        .visible
        .iter()
        .filter(|&&i| !candidates[i].signals.pinned)
        .filter(|&&i| seen.insert(candidates[i].chunk.path.as_str()))
        .map(|&i| (candidates[i].chunk.path.clone(), i))
        .collect()
}

/// Each selected item made ready to render: guarded, in its section, its
/// file's imports shown once, its parent's header glued once, and the
/// level of detail its score wants.
fn prepare_stage<'c>(
    candidates: &'c [Candidate],
    knobs: &Knobs,
    selected: &[usize],
    scores: &[ScoreBreakdown],
    redactions: &mut Vec<Redaction>,
) -> Vec<Prepared<'c>> {
    let guard_chunks = chunk_guard(knobs);
    let selected_set: HashSet<usize> = selected.iter().copied().collect();
    let top_auto = selected
        .iter()
        .filter(|&&i| !scores[i].pinned)
        .map(|&i| scores[i].score)
        .fold(0.0f32, f32::max);
    let mut seen_files: HashSet<&str> = HashSet::new();
    let mut seen_parents: HashSet<(&str, &str)> = HashSet::new();
    let mut prepared: Vec<Prepared> = Vec::with_capacity(selected.len());
    for &i in selected {
        let c = &candidates[i];
        let chunk = match guard::guard_chunk(&c.chunk, guard_chunks, redactions) {
            Some(guarded) => std::borrow::Cow::Owned(guarded),
            None => std::borrow::Cow::Borrowed(&c.chunk),
        };
        let skip_imports = !seen_files.insert(c.chunk.path.as_str());
        let mut context = None;
        if knobs.glue
            && let Some(parent) = c.chunk.parent.as_deref()
            && seen_parents.insert((c.chunk.path.as_str(), parent))
        {
            let parent_chunk = candidates.iter().enumerate().find(|(_, p)| {
                p.chunk.path == c.chunk.path
                    && p.chunk.symbol.as_deref() == Some(parent)
                    && is_container(p.chunk.kind)
            });
            context = match parent_chunk {
                Some((j, _)) if selected_set.contains(&j) => None,
                Some((_, p)) => header_line(&p.chunk).or_else(|| Some(parent.to_string())),
                None => Some(parent.to_string()),
            };
        }
        let s = &scores[i];
        let section = if s.pinned {
            Section::Pinned
        } else if c.signals.primer || rank::is_primer(&c.chunk.path, &knobs.primers) {
            Section::Primers
        } else if c.chunk.role == Role::Docs {
            Section::RetrievedDocs
        } else {
            Section::RetrievedCode
        };
        // The band comes from the chunk's own score: a chunk raised toward
        // its leading file's best is packed earlier, so it gets spare detail
        // first, but it does not take the detail weaker files' chunks need
        // to show a line (EVAL.md, "What was tried" → Packing, `12858ff`).
        let wanted = if s.pinned || !knobs.lod {
            0
        } else {
            lod_for(s.score - s.sibling_lift, top_auto)
        };
        prepared.push(Prepared {
            index: i,
            chunk,
            options: RenderOptions { skip_imports },
            context,
            section,
            wanted,
        });
    }
    prepared
}

/// How retrieved text (chunks and notes) is guarded.
fn chunk_guard(knobs: &Knobs) -> GuardConfig {
    GuardConfig {
        sanitize: knobs.sanitize,
        injections: knobs.sanitize,
        secrets: knobs.redact_secrets,
    }
}

/// The parts of the prompt that are there whatever is packed, and their size.
struct Fixed {
    instructions: String,
    notes: Vec<String>,
    format: render::Format,
    size: u32,
}

/// The instructions for the question's type, the guarded notes, the
/// effective format, and what they and the question take with the group
/// scaffolding (measured with empty probe blocks).
fn fixed_stage(
    request: &AssembleRequest,
    asked: &Asked,
    room: &Room,
    redactions: &mut Vec<Redaction>,
    warnings: &mut Vec<String>,
) -> Fixed {
    let knobs = &request.knobs;
    let measure = room.measure;
    let kind = asked.classification.question_type;
    let instructions = match knobs.instructions.get(&kind) {
        Some(own) if !own.trim().is_empty() => own.clone(),
        _ => classify::instructions(kind).to_string(),
    };
    let notes: Vec<String> = request
        .notes
        .iter()
        .enumerate()
        .map(|(n, note)| {
            guard::guard_text(
                note,
                chunk_guard(knobs),
                &format!("notes[{n}]"),
                1,
                redactions,
            )
        })
        .collect();
    let format = render::effective(knobs.format, knobs.toggles);
    let bare = PromptParts {
        instructions: instructions.clone(),
        notes: notes.clone(),
        question: asked.question.clone(),
        ..PromptParts::default()
    };
    let scaffold_probe = Block {
        path: String::new(),
        start_line: 0,
        end_line: 0,
        language: String::new(),
        lod: 0,
        score: 0.0,
        context: None,
        content: String::new(),
    };
    let with_groups = PromptParts {
        primers: vec![scaffold_probe.clone()],
        pinned: vec![scaffold_probe.clone()],
        retrieved: vec![scaffold_probe.clone()],
        ..bare.clone()
    };
    let probe_size = measure.size(&render::block(&scaffold_probe, 1, format, knobs.toggles)) as u32;
    let size = (measure.size(&render::prompt(&with_groups, format, knobs.toggles).0) as u32)
        .saturating_sub(3 * probe_size)
        .max(measure.size(&render::prompt(&bare, format, knobs.toggles).0) as u32);
    if size > room.usable {
        warnings.push(format!(
            "instructions, notes and question alone take {size} {}, more than the usable {}",
            measure.unit(),
            room.usable
        ));
    }
    Fixed {
        instructions,
        notes,
        format,
        size,
    }
}

/// Exact block sizes per (prepared item, level of detail), measured once:
/// the header apart from the body, bodies memoised across calls in the
/// [`SizeCache`].
struct Costs<'a, 'c> {
    cache: HashMap<(usize, u8), u32>,
    prepared: &'a [Prepared<'c>],
    candidates: &'a [Candidate],
    scores: &'a [ScoreBreakdown],
    measure: Measure,
    format: render::Format,
    knobs: &'a Knobs,
    sizes: &'a mut SizeCache,
}

impl Costs<'_, '_> {
    /// The size of prepared item `n`'s block at `lod`.
    fn get(&mut self, n: usize, lod: u8) -> u32 {
        if let Some(&size) = self.cache.get(&(n, lod)) {
            return size;
        }
        let p = &self.prepared[n];
        let (measure, knobs) = (self.measure, self.knobs);
        // Header (path, index, score, context) and body are measured
        // apart: the body's size survives re-ranking, the header's not.
        let mut head = make_header(p, self.candidates, self.scores, lod);
        head.content = String::new();
        let header = measure.size(&render::block(&head, n + 1, self.format, knobs.toggles)) as u32;
        let key = SizeKey {
            hash: p.chunk.hash.clone(),
            len: p.chunk.text.len(),
            lod,
            skip_imports: p.options.skip_imports,
            sanitize: knobs.sanitize,
            redact: knobs.redact_secrets,
            measure,
        };
        let body = *self.sizes.sizes.entry(key).or_insert_with(|| {
            let rendered = compress::render(&p.chunk, lod, p.options);
            // The index counted each chunk's text with o200k: a rendering
            // that is the text itself (any level of a chunk without
            // comments or bodies to elide) is not counted again. That
            // count was most of a cold question's packing. 0 is "not
            // counted", for candidates made elsewhere.
            if measure == Measure::Tokens(tokens::Encoding::O200kBase)
                && p.chunk.tokens > 0
                && matches!(p.chunk, std::borrow::Cow::Borrowed(_))
                && rendered == p.chunk.text
            {
                return p.chunk.tokens;
            }
            measure.size(&rendered) as u32
        });
        // +1 for the separator the next block may merge with; the
        // measured prompt is checked again after layout (repacks below).
        let size = header + body + 1;
        self.cache.insert((n, lod), size);
        size
    }
}

/// What packing decided and the prompt it laid out.
struct PackedPrompt {
    result: pack::PackResult,
    prompt: String,
    pieces: Vec<(Section, String)>,
    blocks: Vec<(usize, Vec<usize>)>,
    used: u32,
}

/// Packs the prepared items into the room the fixed parts leave, lays the
/// prompt out and measures it; when merging and separators made it
/// larger than the usable room, packs again with that much less (at most
/// [`MAX_REPACKS`] times).
fn pack_stage(
    costs: &mut Costs,
    fixed: &Fixed,
    question: &str,
    room: &Room,
    warnings: &mut Vec<String>,
) -> PackedPrompt {
    let (measure, usable) = (room.measure, room.usable);
    let items: Vec<PackItem> = costs
        .prepared
        .iter()
        .map(|p| PackItem {
            pinned: costs.scores[p.index].pinned,
            wanted: p.wanted,
        })
        .collect();
    let mut available = usable.saturating_sub(fixed.size);
    let mut repacks = 0;
    loop {
        let result = pack::pack(&items, available, |n, lod| costs.get(n, lod));
        let (prompt, pieces, blocks) = layout(
            costs.prepared,
            &result.items,
            costs.candidates,
            costs.scores,
            &fixed.instructions,
            &fixed.notes,
            question,
            costs.knobs,
        );
        let total = measure.size(&prompt) as u32;
        if total <= usable || repacks == MAX_REPACKS || available == 0 {
            if total > usable {
                warnings.push(format!("prompt measures {total} {}, over the usable {usable}: the fixed parts do not fit", measure.unit()));
            }
            return PackedPrompt {
                result,
                prompt,
                pieces,
                blocks,
                used: total,
            };
        }
        available = available.saturating_sub(total - usable);
        repacks += 1;
    }
}

/// One row per candidate in input order, with what happened to it, and
/// the size the over-budget drops would need.
fn rows_stage(ranked: &Ranked, packed: &PackedPrompt, costs: &mut Costs) -> (Vec<ItemRow>, u32) {
    let candidates = costs.candidates;
    let scores = &ranked.scores;
    let mut rows: Vec<ItemRow> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| ItemRow {
            id: c.chunk.id,
            path: c.chunk.path.clone(),
            start_line: c.chunk.start_line,
            end_line: c.chunk.end_line,
            section: if scores[i].pinned {
                Section::Pinned
            } else if c.chunk.role == Role::Docs {
                Section::RetrievedDocs
            } else {
                Section::RetrievedCode
            },
            score: scores[i].clone(),
            lod: None,
            wanted_lod: 0,
            size: 0,
            status: ItemStatus::Dropped(ranked.reasons[i].clone().unwrap_or(DropReason::BeyondK)),
            merged_into: None,
        })
        .collect();
    let mut dropped_size = 0u32;
    for (n, p) in costs.prepared.iter().enumerate() {
        let row = &mut rows[p.index];
        row.section = p.section;
        row.wanted_lod = p.wanted;
        match &packed.result.items[n] {
            Packed::In(lod) => {
                row.lod = Some(*lod);
                row.size = costs.get(n, *lod);
                row.status = if *lod > p.wanted {
                    ItemStatus::Degraded { wanted: p.wanted }
                } else {
                    ItemStatus::Included
                };
            }
            Packed::Out(reason) => {
                if let DropReason::OverBudget { needed } = reason {
                    dropped_size += needed;
                }
                row.status = ItemStatus::Dropped(reason.clone());
            }
        }
    }
    for (leader, members) in &packed.blocks {
        for m in members.iter().filter(|m| *m != leader) {
            rows[*m].merged_into = Some(candidates[*leader].chunk.id);
        }
    }
    (rows, dropped_size)
}

/// Section account: small pieces measured, item sections summed from
/// their (cached) block sizes, and the overhead takes the remainder, so the
/// sections add up to `used` exactly without measuring the prompt twice.
/// Also returns the question's size.
fn sections_stage(
    pieces: &[(Section, String)],
    rows: &[ItemRow],
    used: u32,
    measure: Measure,
) -> (Vec<SectionSize>, u32) {
    let mut by_section: std::collections::BTreeMap<Section, u32> =
        std::collections::BTreeMap::new();
    let mut question_size = 0;
    for (section, text) in pieces {
        match section {
            Section::Primers
            | Section::Pinned
            | Section::RetrievedCode
            | Section::RetrievedDocs
            | Section::Overhead => {}
            _ => {
                let size = measure.size(text) as u32;
                if *section == Section::Question {
                    question_size = size;
                }
                *by_section.entry(*section).or_default() += size;
            }
        }
    }
    for row in rows.iter().filter(|r| r.lod.is_some()) {
        *by_section.entry(row.section).or_default() += row.size;
    }
    let accounted: u32 = by_section.values().sum();
    by_section.insert(Section::Overhead, used.saturating_sub(accounted));
    let sections = by_section
        .into_iter()
        .map(|(section, size)| SectionSize { section, size })
        .collect();
    (sections, question_size)
}

/// The messages (system = everything but the question, the history, user
/// = the question) fitted into the model's window less the answer reserve.
fn fit_stage(
    request: &AssembleRequest,
    packed: &PackedPrompt,
    question: &str,
    question_size: u32,
    measure: Measure,
    warnings: &mut Vec<String>,
) -> (Vec<Message>, fit::FitReport) {
    let knobs = &request.knobs;
    let spec = models::resolve(&knobs.model, &knobs.models);
    let system: String = packed
        .pieces
        .iter()
        .filter(|(s, _)| *s != Section::Question)
        .map(|(_, t)| t.as_str())
        .collect();
    let mut messages = vec![Message {
        role: MessageRole::System,
        content: system,
    }];
    messages.extend(request.history.iter().cloned());
    messages.push(Message {
        role: MessageRole::User,
        content: question.to_owned(),
    });
    let encoding = match measure {
        Measure::Tokens(e) => e,
        Measure::Chars => spec.encoding,
    };
    // The system message is the prompt without its question piece; its size
    // is known up to a tokenizer join, which the per-message slack covers.
    let mut sizes = vec![packed.used.saturating_sub(question_size) + fit::JOIN_SLACK];
    sizes.extend(
        messages[1..messages.len() - 1]
            .iter()
            .map(|m| measure_tokens(encoding, &m.content)),
    );
    sizes.push(tokens::count(encoding, question) as u32);
    let (messages, fit_report) = fit::fit_sized(
        &messages,
        &sizes,
        spec.context_window.saturating_sub(knobs.answer_reserve),
        encoding,
    );
    if let Err(err) = fit::validate(&messages) {
        warnings.push(format!("messages are not sendable: {err}"));
    }
    (messages, fit_report)
}

/// The assembly: `report` with the counts and the truncation flag the rows
/// say, and a warning when pinned items alone overflowed.
fn report_stage(
    mut report: Report,
    prompt: String,
    messages: Vec<Message>,
    rows: Vec<ItemRow>,
    measure: Measure,
) -> Assembly {
    report.dropped_count = rows.iter().filter(|r| !r.status.is_in()).count() as u32;
    let degraded = rows
        .iter()
        .any(|r| matches!(r.status, ItemStatus::Degraded { .. }));
    let over = rows.iter().any(|r| {
        matches!(
            r.status,
            ItemStatus::Dropped(
                DropReason::OverBudget { .. } | DropReason::PinnedOverBudget { .. }
            )
        )
    });
    if let Some(o) = &report.pinned_overflow {
        report.warnings.push(format!(
            "pinned items need {} {unit} at full detail ({} at their smallest) but {} are available: {} over",
            o.needed_full,
            o.needed_smallest,
            o.available,
            o.needed_full.saturating_sub(o.available),
            unit = measure.unit()
        ));
    }
    report.was_truncated =
        degraded || over || report.pinned_overflow.is_some() || !report.fit.trimmed.is_empty();
    Assembly {
        prompt,
        messages,
        items: rows,
        report,
    }
}

/// The laid-out prompt: its text, its pieces by section, and each block's
/// leader and members (candidate indices).
type Layout = (String, Vec<(Section, String)>, Vec<(usize, Vec<usize>)>);

/// Merges, orders and renders the included items. Returns the prompt, its
/// pieces, and each block's leader and members (candidate indices).
#[allow(clippy::too_many_arguments)] // The pieces of one prompt, all borrowed; a struct would only rename them.
fn layout(
    prepared: &[Prepared],
    packed: &[Packed],
    candidates: &[Candidate],
    scores: &[ScoreBreakdown],
    instructions: &str,
    notes: &[String],
    question: &str,
    knobs: &Knobs,
) -> Layout {
    let mut parts = PromptParts {
        instructions: instructions.to_string(),
        notes: notes.to_vec(),
        question: question.to_string(),
        ..PromptParts::default()
    };
    let mut meta = Vec::new();
    let mut retrieved = Vec::new();
    for section in [Section::Primers, Section::Pinned, Section::RetrievedCode] {
        let in_section: Vec<(usize, u8)> = prepared
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.section == section
                    || (section == Section::RetrievedCode && p.section == Section::RetrievedDocs)
            })
            .filter_map(|(n, _)| match packed[n] {
                Packed::In(lod) => Some((n, lod)),
                Packed::Out(_) => None,
            })
            .collect();
        // Merge over prepared positions, then map back to candidates.
        let as_candidates: Vec<(usize, u8)> = in_section
            .iter()
            .map(|&(n, lod)| (prepared[n].index, lod))
            .collect();
        let position: HashMap<usize, usize> = in_section
            .iter()
            .map(|&(n, _)| (prepared[n].index, n))
            .collect();
        for (merged, lod) in pack::merge(&as_candidates, candidates) {
            let leader = merged.members[0];
            let Some(&n) = position.get(&leader) else {
                continue;
            };
            let mut block = make_block(&prepared[n], candidates, scores, lod);
            if merged.members.len() > 1 {
                let view = Prepared {
                    index: leader,
                    chunk: std::borrow::Cow::Owned(merged.chunk.clone()),
                    options: prepared[n].options,
                    context: prepared[n].context.clone(),
                    section,
                    wanted: prepared[n].wanted,
                };
                block.content = compress::render(&view.chunk, lod, view.options);
                block.start_line = merged.chunk.start_line;
                block.end_line = merged.chunk.end_line;
            }
            meta.push((leader, merged.members.clone()));
            match section {
                Section::Primers => parts.primers.push(block),
                Section::Pinned => parts.pinned.push(block),
                _ => retrieved.push(block),
            }
        }
    }
    parts.retrieved = if knobs.toggles.lost_in_middle {
        render::lost_in_middle(retrieved)
    } else {
        retrieved
    };
    let (prompt, pieces) = render::prompt(&parts, knobs.format, knobs.toggles);
    (prompt, pieces, meta)
}
