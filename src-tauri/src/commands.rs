//! The Tauri commands: each takes the managed state, converts the DTO, makes
//! one engine (or assembly) call and converts the result back. Errors cross
//! IPC as [`ErrorDto`] `{ code, message }`.
//!
//! *API boundary:* the command names and argument names here are what
//! `ui/src/lib/backend/tauri.ts` invokes (arguments are camelCase in JS).
//!
//! No SQL, walking or ranking happens here. Commands that touch the disk
//! (even a small prefs file) are `async`: Tauri runs plain `fn` commands on
//! the main thread, where a write would stall the window.

use crate::dto::{
    AgentRequestDetailDto, AgentRequestDto, AgentRequestsDto, AssemblyDto, ChunkDetailDto,
    CompletionDto, DiagnosticDto, ErrorCode, ErrorDto, GoldenRunDto, IndexEvent, KnobsDto,
    MapNodeDto, MapViewDto, MarkDto, ModelDto, OpenedDto, PresetDto, ProjectSettingsDto,
    QuestionTypeDto, RecentDto, SelectionDto, ShownDto, StatusDto, TargetDto, WatchEventDto,
};
use crate::dto::{ExpanderDto, ExpanderInputDto};
use crate::prefs;
use crate::state::{AppState, OpenProject};
use loupe_engine::asking::agent_log;
use loupe_engine::asking::ask::unix_now;
use loupe_engine::asking::golden;
use loupe_engine::asking::map::Marks;
use loupe_engine::watch::WatchEvent;
use loupe_engine::{AskRequest, Progress, Reading, Unindexed};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, Runtime, State};

/// Progress reports closer together than this are dropped (the engine
/// reports per file). Each one the page shows is a frame to draw; four a
/// second still move the bar and the counts. Composited in software (no
/// GPU, before `page::choose_compositing`), 20 a second had cost the page's
/// process 69 % of a core while the vendor corpus indexed, four 35 %.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

type CommandResult<T> = Result<T, ErrorDto>;

fn not_open(root: &str) -> ErrorDto {
    ErrorDto::new(
        ErrorCode::NotOpen,
        format!("{root} is not open; open it first"),
    )
}

fn opened(state: &AppState, root: &str) -> CommandResult<Arc<OpenProject>> {
    state.get(root).ok_or_else(|| not_open(root))
}

/// Open the project at `path` (creating or repairing its index) and bring
/// the index up to date, streaming progress through `on_progress`.
/// Cancellable with [`cancel_index`]; a cancelled run leaves the previous
/// index usable and returns the `cancelled` code.
#[tauri::command]
pub async fn open_project(
    state: State<'_, AppState>,
    path: String,
    on_progress: Channel<IndexEvent>,
) -> CommandResult<OpenedDto> {
    let open = state.open(Path::new(&path)).await?;
    let cancel = open.begin_index();
    let started = Instant::now();
    let last_sent: Mutex<Option<(Instant, String)>> = Mutex::new(None);
    let sink = |p: Progress| {
        let event = IndexEvent::new(&p, started.elapsed());
        let mut last = last_sent.lock().unwrap_or_else(PoisonError::into_inner);
        let due = match last.as_ref() {
            None => true,
            Some((at, stage)) => {
                *stage != event.stage
                    || IndexEvent::is_done(&p)
                    || at.elapsed() >= PROGRESS_INTERVAL
            }
        };
        if due {
            *last = Some((Instant::now(), event.stage.clone()));
            // A closed window cannot receive progress; indexing goes on.
            let _ = on_progress.send(event);
        }
    };
    let result = open.project.index(&sink, &cancel).await;
    open.end_index();
    let report = result?;
    // Questions answer sooner from one lexical segment; after a large run
    // the merge goes on in the background (a watcher's update waits for
    // it, answers do not).
    let project = Arc::clone(&open.project);
    let chunks_added = report.chunks_added;
    tauri::async_runtime::spawn(async move {
        if let Err(e) = project.compact_after(chunks_added).await {
            tracing::warn!("lexical index not merged: {e}");
        }
    });
    let status = open.project.status().await?;
    let root = status.root.to_string_lossy();
    // The recent list is a convenience: failing to write it fails nothing.
    if let Err(e) = prefs::touch_recent(state.data_root(), &root, unix_now()) {
        tracing::warn!("recent projects not saved: {e}");
    }
    Ok(OpenedDto::new(&status, &report))
}

/// Open an already indexed project without indexing: its status at once,
/// or `null` when it was never indexed (then `open_project` is needed).
/// The UI shows the project from this and brings the index up to date
/// with `open_project` in the background, so reopening is instant.
#[tauri::command]
pub async fn open_indexed(
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<Option<StatusDto>> {
    let open = state.open(Path::new(&path)).await?;
    let status = open.project.status().await?;
    if status.generation == 0 || status.files == 0 {
        return Ok(None);
    }
    if let Err(e) = prefs::touch_recent(
        state.data_root(),
        &status.root.to_string_lossy(),
        unix_now(),
    ) {
        tracing::warn!("recent projects not saved: {e}");
    }
    Ok(Some((&status).into()))
}

/// The status of a project whose first index is still running, to show it
/// before that index lands (generation 0 until it does): questions asked
/// meanwhile are answered from a scan of its files (`assemble` asks with
/// `Unindexed::Scan`), and their report says so.
#[tauri::command]
pub async fn open_scanning(state: State<'_, AppState>, path: String) -> CommandResult<StatusDto> {
    let open = state.open(Path::new(&path)).await?;
    Ok((&open.project.status().await?).into())
}

/// Ask the running index job of `root` to stop; `false` when none runs.
#[tauri::command]
pub fn cancel_index(state: State<'_, AppState>, root: String) -> CommandResult<bool> {
    Ok(opened(&state, &root)?.cancel_index())
}

/// Stop the panel's and the token map's answers to `question` in `root`
/// (the user has asked something else meanwhile): they end with the
/// `cancelled` code. `false` when that is not the question either asked
/// last.
#[tauri::command]
pub fn cancel_question(
    state: State<'_, AppState>,
    root: String,
    question: String,
) -> CommandResult<bool> {
    Ok(opened(&state, &root)?.cancel_question(&question))
}

/// The index status of an open project.
#[tauri::command]
pub async fn project_status(state: State<'_, AppState>, root: String) -> CommandResult<StatusDto> {
    let open = opened(&state, &root)?;
    Ok((&open.project.status().await?).into())
}

/// Files skipped or degraded by the last indexing run, and why.
#[tauri::command]
pub async fn diagnostics(
    state: State<'_, AppState>,
    root: String,
) -> CommandResult<Vec<DiagnosticDto>> {
    let open = opened(&state, &root)?;
    let diagnostics = open.project.diagnostics().await?;
    Ok(diagnostics.iter().map(DiagnosticDto::from).collect())
}

/// The model table for the picker.
#[tauri::command]
pub fn models() -> Vec<ModelDto> {
    loupe_assemble::models::builtin()
        .iter()
        .map(ModelDto::from)
        .collect()
}

/// The built-in instruction preamble of every question type, for the
/// editor that lets a user write their own (`KnobsDto::instructions`).
#[tauri::command]
pub fn builtin_instructions() -> std::collections::BTreeMap<QuestionTypeDto, String> {
    use loupe_assemble::classify::{QuestionType, instructions};
    [
        QuestionType::Implementation,
        QuestionType::Architectural,
        QuestionType::Debugging,
        QuestionType::CodeExplanation,
        QuestionType::FeatureRequest,
        QuestionType::Review,
    ]
    .into_iter()
    .map(|kind| (kind.into(), instructions(kind).to_owned()))
    .collect()
}

/// The knobs a new project starts with.
#[tauri::command]
pub fn default_knobs() -> KnobsDto {
    KnobsDto::default()
}

/// Assemble the prompt for `question` under `knobs`: the chunk table, the
/// report and the prompt. Retrieval is cached per question, so a knob change
/// only reruns the (pure, fast) assembly. With `change` (`unstaged`,
/// `staged` or `BASE..HEAD`) the question is a review of that diff (and
/// may be empty); with `agent_request`, that agent call's pins, bans and
/// change apply instead of the project's. With `skip_reading`, the
/// re-ranker does not read the leading files: the panel shows that answer
/// at once, then asks again without it for the re-ranked one.
#[tauri::command]
pub async fn assemble(
    state: State<'_, AppState>,
    root: String,
    question: String,
    knobs: KnobsDto,
    agent_request: Option<String>,
    change: Option<String>,
    skip_reading: Option<bool>,
) -> CommandResult<AssemblyDto> {
    let open = opened(&state, &root)?;
    let cancel = open.begin_question(&question);
    let reading = match skip_reading {
        Some(true) => Reading::Skip,
        Some(false) | None => Reading::Wait,
    };
    let shown = Shown {
        question,
        knobs,
        agent_request,
        change,
        reading,
    };
    let (answer, agent, _) = ask_as_shown(&open, shown, state.data_root(), cancel).await?;
    let mut dto = AssemblyDto::new(&answer.assembly, &answer.selected, answer.stale);
    dto.change = answer.change.map(Into::into);
    dto.search_terms = answer.expansion.as_ref().map(|e| e.describe());
    dto.agent_match =
        agent.map(|a| a.report.prompt_hash == agent_log::prompt_hash(&answer.assembly.prompt));
    Ok(dto)
}

/// What the panel (or the map) shows and asks: the question and knobs on
/// screen, an agent call re-opened, the Changes switch, and whether the
/// re-ranker reads this time.
struct Shown {
    question: String,
    knobs: KnobsDto,
    agent_request: Option<String>,
    change: Option<String>,
    reading: Reading,
}

/// Asks what the panel shows: the question and knobs on screen, the
/// project's pins and bans and the Changes switch, or (with
/// `agent_request`) that agent call's own, stopped by `cancel`. Returns
/// the answer, the agent call, and the knobs it was asked with.
async fn ask_as_shown(
    open: &Arc<OpenProject>,
    shown: Shown,
    data_root: &std::path::Path,
    cancel: loupe_engine::CancelToken,
) -> CommandResult<(
    loupe_engine::Answer,
    Option<agent_log::AgentRequest>,
    loupe_assemble::Knobs,
)> {
    let Shown {
        question,
        knobs,
        agent_request,
        change,
        reading,
    } = shown;
    // An agent's call, re-opened: its own pins, bans and change, and the
    // prompt it got to compare with.
    let agent = match agent_request {
        Some(id) => Some(agent_call(open, id).await?),
        None => None,
    };
    let (selection, change) = match &agent {
        Some(a) => (
            a.call.selection.clone(),
            a.call.change.as_deref().map(str::parse).transpose()?,
        ),
        None => (
            open.selection(),
            change.as_deref().map(str::parse).transpose()?,
        ),
    };
    let knobs_question_type = knobs.question_type.map(Into::into);
    let mut knobs: loupe_assemble::Knobs = knobs.into();
    if let Some(a) = &agent {
        // Recency as the agent's call measured it: the same prompt, not
        // one a day of file ages away from it.
        knobs.now = a.call.knobs.now;
    }
    let request = AskRequest {
        question,
        question_type: knobs_question_type,
        knobs,
        selection,
        change,
        // The user's secondary LLM, if set; an agent's call is shown as it
        // was searched: without it.
        expand: match &agent {
            Some(_) => None,
            None => prefs::expander(data_root),
        },
        // Asked while a first index runs: from a scan, and the answer says so.
        unindexed: Unindexed::Scan,
        cancel,
        reading,
        ..AskRequest::default()
    };
    let answer = open.ask(&request).await?;
    Ok((answer, agent, request.knobs))
}

/// The token map under `view.under` (`""`: the project), `view.depth`
/// levels deep with at most `view.per_folder` children each, marked by the
/// assembly `assemble` gives for the same arguments (unmarked when there is
/// nothing to ask: no question, no change, no agent call). Retrieval is the
/// cached one, so this costs one packing and one catalog read.
#[tauri::command]
pub async fn token_map(
    state: State<'_, AppState>,
    root: String,
    question: String,
    knobs: KnobsDto,
    agent_request: Option<String>,
    change: Option<String>,
    view: MapViewDto,
) -> CommandResult<MapNodeDto> {
    /// Deeper or wider maps are not drawn legibly and cost the IPC.
    const MAX_DEPTH: u32 = 4;
    const MAX_PER_FOLDER: u32 = 500;
    let open = opened(&state, &root)?;
    let asked = if question.trim().is_empty() && agent_request.is_none() && change.is_none() {
        None
    } else {
        // Stopped, like the panel's answer, once another question is asked.
        let cancel = open.begin_map_question(&question);
        let shown = Shown {
            question,
            knobs,
            agent_request,
            change,
            // Its marks are the re-ranked prompt's: it waits for the reading.
            reading: Reading::Wait,
        };
        let (answer, _, knobs) = ask_as_shown(&open, shown, state.data_root(), cancel).await?;
        let banned = answer.selected.banned_paths();
        Some((answer.assembly, knobs.path_weights, banned))
    };
    let marks = asked
        .as_ref()
        .map(|(assembly, path_weights, banned)| Marks {
            assembly,
            path_weights,
            banned,
        });
    let map = open.project.token_map(marks).await?;
    let node = map.find(&view.under).ok_or_else(|| {
        ErrorDto::new(
            ErrorCode::BadRequest,
            format!(
                "{:?} is not an indexed folder or file of {root}",
                view.under
            ),
        )
    })?;
    Ok(MapNodeDto::new(
        node,
        view.depth.clamp(1, MAX_DEPTH),
        view.per_folder.clamp(1, MAX_PER_FOLDER) as usize,
    ))
}

/// The project's golden questions (`.loupe/golden.toml`) run under the
/// knobs on screen (less the question type and intent, which belong to
/// one question; each golden question's own overrides apply), so a user
/// sees at once what a weight change broke. Each question's retrieval is
/// cached, so a knob change re-runs only the assemblies. No file: an
/// empty run that says so; a file that does not parse: its line and why.
#[tauri::command]
pub async fn golden_run(
    state: State<'_, AppState>,
    root: String,
    mut knobs: KnobsDto,
) -> CommandResult<GoldenRunDto> {
    let open = opened(&state, &root)?;
    let path = open.project.root().join(golden::GOLDEN_FILE);
    if !path.exists() {
        return Ok(GoldenRunDto::absent(golden::GOLDEN_FILE));
    }
    let file = tokio::task::spawn_blocking(move || golden::load(&path))
        .await
        .map_err(|e| ErrorDto::new(ErrorCode::Engine, e.to_string()))?
        .map_err(|e| {
            ErrorDto::new(
                ErrorCode::BadRequest,
                format!("{}: {e}", golden::GOLDEN_FILE),
            )
        })?;
    knobs.question_type = None;
    knobs.intent = None;
    let report = open.golden(&file, &knobs.into()).await?;
    Ok(GoldenRunDto::new(golden::GOLDEN_FILE, &report))
}

/// The agents' calls on the project (`loupe mcp` records them), newest
/// first. With `known` still the log's version, nothing is re-sent: the UI
/// polls this while a project is open.
#[tauri::command]
pub async fn agent_requests(
    state: State<'_, AppState>,
    root: String,
    known: Option<String>,
) -> CommandResult<AgentRequestsDto> {
    /// The newest calls listed.
    const LISTED: usize = 200;
    let open = opened(&state, &root)?;
    let reading = Arc::clone(&open);
    let (version, log) = blocking(move || reading.agent_log()).await?;
    let version = version.to_string();
    let agent_knobs = open
        .project
        .data_dir()
        .join(agent_log::AGENT_KNOBS_FILE)
        .exists();
    let changed = known.as_deref() != Some(version.as_str());
    let requests = if changed {
        log.entries
            .iter()
            .rev()
            .take(LISTED)
            .map(AgentRequestDto::from)
            .collect()
    } else {
        Vec::new()
    };
    Ok(AgentRequestsDto {
        version,
        changed,
        requests,
        skipped: u32::try_from(log.skipped).unwrap_or(u32::MAX),
        agent_knobs,
    })
}

/// One agent call, to re-open in the inspector.
#[tauri::command]
pub async fn agent_request(
    state: State<'_, AppState>,
    root: String,
    id: String,
) -> CommandResult<AgentRequestDetailDto> {
    let open = opened(&state, &root)?;
    Ok((&agent_call(&open, id).await?).into())
}

/// Runs blocking file work off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> loupe_engine::Result<T> + Send + 'static,
) -> CommandResult<T> {
    let done = tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ErrorDto::new(ErrorCode::Engine, e.to_string()))?;
    Ok(done?)
}

/// The agent call `id`, from the project's agent log as last read (the
/// log is re-read only when its files changed: tuning a re-opened call
/// does not read it again on every knob move).
async fn agent_call(open: &Arc<OpenProject>, id: String) -> CommandResult<agent_log::AgentRequest> {
    let reading = Arc::clone(open);
    blocking(move || {
        let (_, log) = reading.agent_log()?;
        log.find(&id).cloned()
    })
    .await
}

/// Save `knobs` as what agents' calls on this project start from (stored
/// as the difference from the team's defaults); `null` forgets them.
#[tauri::command]
pub async fn save_agent_knobs(
    state: State<'_, AppState>,
    root: String,
    knobs: Option<KnobsDto>,
) -> CommandResult<()> {
    let open = opened(&state, &root)?;
    let team = loupe_engine::team::load(open.project.root()).knobs;
    let patch = knobs.map(|k| loupe_assemble::KnobsPatch::between(&team, &k.into()));
    Ok(agent_log::save_agent_knobs(
        open.project.data_dir(),
        patch.as_ref(),
    )?)
}

/// The knobs of a project (built-in defaults, then the team's `.loupe.toml`,
/// then the user's saved changes) and its pins and bans.
#[tauri::command]
pub async fn project_settings(
    state: State<'_, AppState>,
    root: String,
) -> CommandResult<ProjectSettingsDto> {
    let open = opened(&state, &root)?;
    let (team, team_file, mut warnings) = prefs::team_knobs(open.project.root());
    let stored = open.prefs();
    let (knobs, more) = prefs::layer(&team, &stored.knobs, "saved knobs");
    warnings.extend(more);
    Ok(ProjectSettingsDto {
        knobs,
        team_knobs: team,
        team_file,
        warnings,
        selection: (&stored.selection).into(),
    })
}

/// Remember `knobs` for the project (only what differs from the team's defaults).
#[tauri::command]
pub async fn save_knobs(
    state: State<'_, AppState>,
    root: String,
    knobs: KnobsDto,
) -> CommandResult<()> {
    let open = opened(&state, &root)?;
    let (team, _, _) = prefs::team_knobs(open.project.root());
    Ok(open.set_knob_changes(prefs::difference(&team, &knobs))?)
}

/// Pin, ban or clear a chunk or a file; returns every pin and ban. The
/// next `assemble` applies it without re-retrieving.
#[tauri::command]
pub async fn mark(
    state: State<'_, AppState>,
    root: String,
    target: TargetDto,
    mark: MarkDto,
) -> CommandResult<SelectionDto> {
    let open = opened(&state, &root)?;
    let selection = open.mark(target.into(), mark.into())?;
    Ok((&selection).into())
}

/// The secondary LLM's settings, or `null` when it is off.
#[tauri::command]
pub async fn expander_settings(state: State<'_, AppState>) -> CommandResult<Option<ExpanderDto>> {
    Ok(prefs::expander(state.data_root())
        .as_ref()
        .map(ExpanderDto::from))
}

/// Store the secondary LLM's settings (`null`: turn it off); the next
/// question asks it. Returns what is stored.
#[tauri::command]
pub async fn save_expander_settings(
    state: State<'_, AppState>,
    settings: Option<ExpanderInputDto>,
) -> CommandResult<Option<ExpanderDto>> {
    let stored = prefs::expander(state.data_root());
    let config = settings
        .map(|s| s.to_config(stored.as_ref()))
        .transpose()
        .map_err(|e| ErrorDto::new(ErrorCode::BadRequest, e))?;
    prefs::save_expander(state.data_root(), config.as_ref())?;
    Ok(config.as_ref().map(ExpanderDto::from))
}

/// Saved knob presets.
#[tauri::command]
pub async fn presets(state: State<'_, AppState>) -> CommandResult<Vec<PresetDto>> {
    Ok(prefs::presets(state.data_root())
        .into_iter()
        .map(PresetDto::from)
        .collect())
}

/// Save `knobs` as the preset `name` (replacing one of that name).
#[tauri::command]
pub async fn save_preset(
    state: State<'_, AppState>,
    name: String,
    knobs: KnobsDto,
) -> CommandResult<Vec<PresetDto>> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ErrorDto::new(
            ErrorCode::BadRequest,
            "a preset needs a name",
        ));
    }
    let list = prefs::save_preset(state.data_root(), name, knobs)?;
    Ok(list.into_iter().map(PresetDto::from).collect())
}

/// Delete the preset `name`.
#[tauri::command]
pub async fn delete_preset(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<Vec<PresetDto>> {
    let list = prefs::delete_preset(state.data_root(), &name)?;
    Ok(list.into_iter().map(PresetDto::from).collect())
}

/// Recently opened projects, newest first.
#[tauri::command]
pub async fn recent_projects(state: State<'_, AppState>) -> CommandResult<Vec<RecentDto>> {
    Ok(prefs::recent(state.data_root())
        .into_iter()
        .map(RecentDto::from)
        .collect())
}

/// Remove `root` from the recent projects.
#[tauri::command]
pub async fn forget_recent(
    state: State<'_, AppState>,
    root: String,
) -> CommandResult<Vec<RecentDto>> {
    let list = prefs::forget_recent(state.data_root(), &root)?;
    Ok(list.into_iter().map(RecentDto::from).collect())
}

/// One chunk as the prompt shows it at `lod` (with `knobs`' sanitizing and
/// redaction) next to its whole file as it is on disk now.
#[tauri::command]
pub async fn chunk_detail(
    state: State<'_, AppState>,
    root: String,
    id: i64,
    lod: u8,
    knobs: KnobsDto,
) -> CommandResult<ChunkDetailDto> {
    let open = opened(&state, &root)?;
    let Some(chunk) = open.chunk(id).await? else {
        return Err(ErrorDto::new(
            ErrorCode::BadRequest,
            format!("chunk {id} is no longer in the index"),
        ));
    };
    let (rendered, redactions) = crate::state::render_as_in_prompt(&chunk, lod, &knobs.into());
    let (source, source_error, stale) = match open.project.indexed_source(&chunk.path).await {
        Ok(s) => (Some(s.text), None, s.stale),
        Err(e) => (None, Some(e.to_string()), true),
    };
    Ok(ChunkDetailDto {
        id,
        path: chunk.path,
        start_line: chunk.start_line,
        end_line: chunk.end_line,
        symbol: chunk.symbol,
        lod: lod.min(loupe_assemble::compress::MAX_LOD),
        rendered,
        redactions,
        source,
        source_error,
        stale,
    })
}

/// Files and symbols completing an `@` mention (at most `limit`).
#[tauri::command]
pub async fn complete(
    state: State<'_, AppState>,
    root: String,
    typed: String,
    limit: u32,
) -> CommandResult<Vec<CompletionDto>> {
    let open = opened(&state, &root)?;
    let found = open
        .project
        .complete(&typed, limit.min(50) as usize)
        .await?;
    Ok(found.into_iter().map(CompletionDto::from).collect())
}

/// Watch the project's folder and keep its index fresh, reporting through
/// `on_event`. Replaces an earlier watcher of the same project.
#[tauri::command]
pub async fn watch_project(
    state: State<'_, AppState>,
    root: String,
    on_event: Channel<WatchEventDto>,
) -> CommandResult<()> {
    let open = opened(&state, &root)?;
    let shown = open.project.root().to_path_buf();
    open.watch(move |e| {
        let event = match e {
            WatchEvent::Changed(paths) => WatchEventDto::Changed {
                paths: u32::try_from(paths.len()).unwrap_or(u32::MAX),
            },
            WatchEvent::Indexed(r) => WatchEventDto::Indexed {
                generation: u32::try_from(r.generation).unwrap_or(u32::MAX),
                files_changed: u32::try_from(r.files_changed).unwrap_or(u32::MAX),
                files_deleted: u32::try_from(r.files_deleted).unwrap_or(u32::MAX),
            },
            WatchEvent::Failed(message) => WatchEventDto::Failed { message },
            WatchEvent::History(commits) => WatchEventDto::History {
                commits: u32::try_from(commits).unwrap_or(u32::MAX),
            },
        };
        // A closed window cannot be told; the index stays fresh anyway.
        let _ = on_event.send(event);
    })
    .await?;
    state.show(&shown);
    Ok(())
}

/// Stop watching the project; `false` when no watcher ran.
#[tauri::command]
pub async fn unwatch_project(state: State<'_, AppState>, root: String) -> CommandResult<bool> {
    let open = opened(&state, &root)?;
    state.hide(open.project.root());
    Ok(open.unwatch().await)
}

/// The project the page showed (the one it watches), the question it
/// asked last and whether its index is still arriving, or `null`: a page
/// reloaded after its process died asks, and shows the user what they
/// were looking at instead of the first screen. The engine, its index,
/// its watcher and any index run lived on.
#[tauri::command]
pub async fn shown_project(state: State<'_, AppState>) -> CommandResult<Option<ShownDto>> {
    let Some(open) = state.shown() else {
        return Ok(None);
    };
    let status = open.project.status().await?;
    // Only a page that died asks with a project shown: worth the log.
    tracing::warn!(
        "the reloaded page shows {} again, with its last question",
        status.root.display()
    );
    Ok(Some(ShownDto {
        status: (&status).into(),
        question: open.last_question(),
        indexing: open.is_indexing(),
    }))
}

/// Ask where to save the prompt (the native save dialog, opened from Rust
/// so the webview never names a path to write), then write it there.
/// Returns the path, or `null` when the user cancelled.
#[tauri::command]
pub async fn save_prompt<R: Runtime>(
    app: AppHandle<R>,
    text: String,
    file_name: String,
) -> CommandResult<Option<String>> {
    let Some(dialog) = app.try_state::<tauri_plugin_dialog::Dialog<R>>() else {
        return Err(ErrorDto::new(
            ErrorCode::Engine,
            "the save dialog is not available",
        ));
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    dialog
        .file()
        .set_title("Save the prompt")
        .set_file_name(file_name)
        .save_file(move |picked| {
            // The receiver is gone only if the command was dropped.
            let _ = tx.send(picked);
        });
    let picked = rx.await.map_err(|_| {
        ErrorDto::new(
            ErrorCode::Engine,
            "the save dialog closed without an answer",
        )
    })?;
    let Some(picked) = picked else {
        return Ok(None);
    };
    let path = picked
        .into_path()
        .map_err(|e| ErrorDto::new(ErrorCode::BadRequest, format!("not a local file: {e}")))?;
    write_text(path.clone(), text).await?;
    Ok(Some(path.display().to_string()))
}

/// Write `text` to `path` off the IPC threads; `storage` when it cannot be
/// written.
pub async fn write_text(path: PathBuf, text: String) -> CommandResult<()> {
    tauri::async_runtime::spawn_blocking(move || std::fs::write(&path, text).map_err(|e| (path, e)))
        .await
        .map_err(|e| ErrorDto::new(ErrorCode::Engine, format!("saving failed: {e}")))?
        .map_err(|(path, e)| {
            ErrorDto::new(
                ErrorCode::Storage,
                format!("writing {}: {e}", path.display()),
            )
        })
}
