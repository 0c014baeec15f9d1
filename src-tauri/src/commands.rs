//! The Tauri commands: each takes the managed state, converts the DTO, makes
//! one engine (or assembly) call and converts the result back. Errors cross
//! IPC as [`ErrorDto`] `{ code, message }`.
//!
//! *API boundary:* the command names and argument names here are what
//! `ui/src/lib/backend/tauri.ts` invokes (arguments are camelCase in JS).
//!
//! No SQL, walking or ranking happens here.

use crate::dto::{
    AssemblyDto, DiagnosticDto, ErrorCode, ErrorDto, IndexEvent, KnobsDto, ModelDto, OpenedDto,
    StatusDto,
};
use crate::state::{AppState, OpenProject};
use loupe_engine::Progress;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tauri::State;
use tauri::ipc::Channel;

/// Progress reports closer together than this are dropped (the engine
/// reports per file; a 60 Hz screen needs no more than one every 16 ms, and
/// ~20 a second keeps the bar smooth without flooding IPC).
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

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
    Ok(OpenedDto::new(&open.project.status().await?, &report))
}

/// Ask the running index job of `root` to stop; `false` when none runs.
#[tauri::command]
pub fn cancel_index(state: State<'_, AppState>, root: String) -> CommandResult<bool> {
    Ok(opened(&state, &root)?.cancel_index())
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

/// The knobs a new project starts with.
#[tauri::command]
pub fn default_knobs() -> KnobsDto {
    KnobsDto::default()
}

/// Assemble the prompt for `question` under `knobs`: the chunk table, the
/// report and the prompt. Retrieval is cached per question, so a knob change
/// only reruns the (pure, fast) assembly.
#[tauri::command]
pub async fn assemble(
    state: State<'_, AppState>,
    root: String,
    question: String,
    knobs: KnobsDto,
) -> CommandResult<AssemblyDto> {
    let open = opened(&state, &root)?;
    let mut knobs: loupe_assemble::Knobs = knobs.into();
    let candidates = open.candidates(&question, &knobs.primers).await?;
    knobs.now = unix_now();
    let request = loupe_assemble::AssembleRequest {
        question,
        knobs,
        ..Default::default()
    };
    // Assembly is CPU-bound (token counting); keep it off the IPC threads.
    tauri::async_runtime::spawn_blocking(move || {
        let assembly = loupe_assemble::assemble(&candidates, &request);
        AssemblyDto::new(&assembly, &candidates)
    })
    .await
    .map_err(|e| ErrorDto::new(ErrorCode::Engine, format!("assembly failed: {e}")))
}

/// Seconds since the Unix epoch (recency boosts); 0 if the clock is broken.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(0))
        .unwrap_or(0)
}
