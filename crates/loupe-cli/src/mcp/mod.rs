//! `loupe mcp`: a project served to coding agents over the Model Context
//! Protocol (stdio), with the official Rust SDK (`rmcp`).
//!
//! ```text
//! start: open PATH → incremental index (progress on stderr) up to its ready
//!   point → watcher → serve stdio, while the run embeds in the background
//! tool call → arguments (serde + checks, args.rs) → the project (allowed roots)
//!   → team knobs + arguments → pins/bans as a Selection → Project::ask → reply.rs view
//! ```
//!
//! *Architecture invariant:* every tool answers through [`Project::ask`],
//! the engine's one door from a question to an assembly, with a per-project
//! [`AskCache`]: `search` and `explain` read the same assembly `context`
//! would give, and a knob change on the same question re-uses the retrieval.
//! Nothing here classifies, retrieves, ranks or assembles.
//!
//! *API boundary:* stdout carries MCP messages only; progress, the watcher's
//! runs and warnings go to stderr. Bad arguments are MCP invalid-params
//! errors with a message saying what to change; a failure of the engine is
//! a tool result marked as an error, so the agent reads why. A tool call
//! never panics the server.
//!
//! Projects other than PATH are opened (indexed and watched) on the first
//! call that names them, only inside the allowed roots (`--allow-root`,
//! default PATH itself), and at most [`MAX_PROJECTS`] at once. Writes go
//! through the engine's write lock like the app's and the CLI's: another
//! Loupe process may index or query the same project meanwhile.

mod args;
mod reply;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use loupe_engine::asking::agent_log;
use loupe_engine::asking::golden::IndexedNames;
use loupe_engine::asking::retrieve::Definitions;
use loupe_engine::asking::selection::{Selection, Target};
use loupe_engine::progress::{CancelToken, Progress, Stage};
use loupe_engine::watch::{WatchEvent, WatchHandle};
use loupe_engine::{Answer, AskCache, AskRequest, Project};
use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input, schema_for_output};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Serialize;
use tokio::sync::Mutex;

use crate::progress::Bar;
use crate::setup;
use crate::{Cli, Command};
use args::{BadArg, ContextArgs, ExplainArgs, Named, SearchArgs, Shape, StatusArgs};

/// Projects one server keeps open at once (the first included): each holds
/// its indexes' readers and a watcher.
pub const MAX_PROJECTS: usize = 8;

/// Flags of `loupe mcp`.
#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// The project folder.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// A folder inside which tool calls may name another project (their
    /// `project` argument); repeatable. Default: PATH alone.
    #[arg(long = "allow-root", value_name = "DIR")]
    pub allow_roots: Vec<PathBuf>,
    /// Ignore the projects' `.loupe.toml` (start from the built-in knobs).
    #[arg(long)]
    pub no_team_defaults: bool,
}

/// Serves `cli`'s `loupe mcp` until the client closes stdin (or Ctrl+C).
pub async fn run(cli: Cli) -> Result<()> {
    let Command::Mcp(args) = &cli.command else {
        bail!("not `loupe mcp`");
    };
    let allowed = allowed_roots(&args.path, &args.allow_roots)?;
    let no_team_defaults = args.no_team_defaults;
    let path = args.path.clone();
    let first = Served::start(&cli, &path).await?;
    let root = first.project.root().to_path_buf();
    let projects = Arc::new(Projects {
        cli,
        allowed,
        no_team_defaults,
        first,
        others: Mutex::new(Vec::new()),
    });
    eprintln!("loupe mcp: serving {} over stdio", root.display());
    let serving = async {
        let service = LoupeServer::new(Arc::clone(&projects))
            .serve(rmcp::transport::stdio_pipes())
            .await
            .context("starting the MCP session")?;
        service.waiting().await.context("the MCP session failed")?;
        anyhow::Ok(())
    };
    // Ctrl+C ends the server at any point, the handshake included.
    let interrupted = tokio::select! {
        done = serving => done.map(|()| false),
        // A failure to listen for Ctrl+C disables this branch.
        Ok(()) = tokio::signal::ctrl_c() => Ok(true),
    };
    projects.stop().await;
    if let Ok(true) = interrupted {
        // A read of an interactive stdin cannot be cancelled, and the
        // runtime would wait for it on shutdown: leave now, the indexes
        // are committed and the watchers stopped.
        eprintln!("loupe mcp: interrupted");
        std::process::exit(130);
    }
    interrupted.map(|_| ())
}

/// PATH and every `--allow-root`, canonical (so `..` and symlinks cannot
/// lead a `project` argument out of them).
fn allowed_roots(path: &Path, extra: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if extra.is_empty() {
        return Ok(vec![
            std::fs::canonicalize(path)
                .with_context(|| format!("project path {}", path.display()))?,
        ]);
    }
    extra
        .iter()
        .map(|p| std::fs::canonicalize(p).with_context(|| format!("--allow-root {}", p.display())))
        .collect()
}

/// Whether the canonical `dir` is one of `allowed` or inside one.
fn is_allowed(dir: &Path, allowed: &[PathBuf]) -> bool {
    allowed.iter().any(|root| dir.starts_with(root))
}

/// One open project: its answers' cache and its watcher.
struct Served {
    project: Arc<Project>,
    /// The last question's retrieval (one per project, as in the app).
    cache: Mutex<AskCache>,
    watcher: Mutex<Option<WatchHandle>>,
    /// The start's index run, still embedding after it became searchable:
    /// cancelled and awaited on stop.
    background: Mutex<Option<(CancelToken, tokio::task::JoinHandle<()>)>>,
}

impl Served {
    /// Opens `path`, indexes it incrementally (after another process's run,
    /// when one holds the write lock) and starts its watcher. Returns once
    /// the run is searchable (its ready report); the vectors land behind,
    /// and answers say which signals they had meanwhile.
    async fn start(cli: &Cli, path: &Path) -> Result<Arc<Served>> {
        let project = Arc::new(setup::open(cli, path).await?);
        let cancel = CancelToken::new();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
        let run = {
            let (project, cancel) = (Arc::clone(&project), cancel.clone());
            tokio::spawn(async move {
                let bar = Bar::new();
                let ready = std::sync::Mutex::new(Some(ready_tx));
                let sink = |p: Progress| {
                    if p.stage == Stage::Ready
                        && let Some(tx) = ready.lock().ok().and_then(|mut r| r.take())
                    {
                        let _ = tx.send(());
                    }
                    bar.update(p);
                };
                let report = project.index(&sink, &cancel).await;
                bar.finish();
                report
            })
        };
        let label = project.root().display().to_string();
        let background = if ready_rx.await.is_ok() {
            let (label, project) = (label.clone(), Arc::clone(&project));
            let stopping = cancel.clone();
            let done = tokio::spawn(async move {
                match run.await {
                    Ok(Ok(report)) => {
                        log_start(&label, &report);
                        // Questions answer sooner from one lexical segment
                        // (not begun once the server stops: `stop` waits).
                        if stopping.is_cancelled() {
                            return;
                        }
                        if let Err(e) = project.compact_after(report.chunks_added).await {
                            eprintln!("loupe mcp: warning: merging {label}'s lexical index: {e:#}");
                        }
                    }
                    Ok(Err(e)) => eprintln!("loupe mcp: warning: indexing {label}: {e:#}"),
                    Err(e) => eprintln!("loupe mcp: warning: indexing {label}: {e}"),
                }
            });
            Some((cancel, done))
        } else {
            // The run ended before it was searchable: its error.
            log_start(&label, &run.await.context("the index run")??);
            None
        };
        let watcher = loupe_engine::watch::watch(Arc::clone(&project), move |event| {
            log_watch(&label, event);
        })
        .with_context(|| format!("watching {}", path.display()))?;
        Ok(Arc::new(Served {
            project,
            cache: Mutex::new(AskCache::default()),
            watcher: Mutex::new(Some(watcher)),
            background: Mutex::new(background),
        }))
    }

    async fn stop(&self) {
        if let Some((cancel, run)) = self.background.lock().await.take() {
            cancel.cancel();
            let _ = run.await;
        }
        if let Some(w) = self.watcher.lock().await.take() {
            w.stop().await;
        }
    }
}

/// The start's index run, on stderr.
fn log_start(root: &str, r: &loupe_engine::IndexReport) {
    eprintln!(
        "loupe mcp: indexed {root}: {} files ({} changed, {} deleted), {} chunks written{}",
        r.files_seen,
        r.files_changed,
        r.files_deleted,
        r.chunks_added,
        if r.embedding_incomplete {
            "; embedding cancelled"
        } else {
            ""
        }
    );
}

/// The watcher's runs, on stderr.
fn log_watch(root: &str, event: WatchEvent) {
    match event {
        WatchEvent::Changed(_) => {}
        WatchEvent::Indexed(r) => eprintln!(
            "loupe mcp: re-indexed {root}: {} changed, {} deleted (generation {})",
            r.files_changed, r.files_deleted, r.generation
        ),
        WatchEvent::Failed(e) => eprintln!("loupe mcp: warning: re-indexing {root}: {e}"),
        WatchEvent::History(n) => {
            eprintln!("loupe mcp: {root}: HEAD moved, {n} commits of history read again");
        }
    }
}

/// The projects a server answers for.
struct Projects {
    /// The global flags, to open more projects as the first was.
    cli: Cli,
    /// Canonical folders `project` arguments must be inside.
    allowed: Vec<PathBuf>,
    no_team_defaults: bool,
    /// PATH, opened at start.
    first: Arc<Served>,
    /// Others, opened on first use.
    others: Mutex<Vec<Arc<Served>>>,
}

impl Projects {
    /// The project a tool call names (`None`: PATH's).
    async fn get(&self, project: Option<&str>) -> Result<Arc<Served>, Failed> {
        let Some(given) = project.map(str::trim).filter(|p| !p.is_empty()) else {
            return Ok(Arc::clone(&self.first));
        };
        let dir = std::fs::canonicalize(given)
            .map_err(|e| Failed::Args(format!("`project` {given:?}: {e}")))?;
        if !is_allowed(&dir, &self.allowed) {
            let roots: Vec<String> = self
                .allowed
                .iter()
                .map(|r| r.display().to_string())
                .collect();
            return Err(Failed::Args(format!(
                "`project` {given:?} is outside the folders this server may open ({}): start it with --allow-root to allow more",
                roots.join(", ")
            )));
        }
        if dir == self.first.project.root() {
            return Ok(Arc::clone(&self.first));
        }
        let mut others = self.others.lock().await;
        if let Some(s) = others.iter().find(|s| s.project.root() == dir) {
            return Ok(Arc::clone(s));
        }
        if others.len() + 1 >= MAX_PROJECTS {
            return Err(Failed::Engine(format!(
                "this server already has {MAX_PROJECTS} projects open: start another server for {given:?}"
            )));
        }
        let served = Served::start(&self.cli, &dir)
            .await
            .map_err(|e| Failed::Engine(format!("{e:#}")))?;
        others.push(Arc::clone(&served));
        Ok(served)
    }

    /// Stops every watcher (each waits for a running index pass to end).
    async fn stop(&self) {
        self.first.stop().await;
        for s in self.others.lock().await.iter() {
            s.stop().await;
        }
    }

    /// Asks `served`'s project `question` with `shape` over the team's
    /// knobs and the knobs saved for agents in the app; returns the answer
    /// and what it was asked with (for the agent log).
    async fn ask(
        &self,
        served: &Served,
        question: String,
        shape: &Shape,
    ) -> Result<(Answer, AskRequest), Failed> {
        let project = &served.project;
        let mut base = setup::team_knobs(project.root(), self.no_team_defaults);
        let (agent_knobs, warnings) = agent_log::load_agent_knobs(project.data_dir());
        for w in warnings {
            eprintln!("loupe mcp: warning: {w}");
        }
        if let Some(patch) = agent_knobs {
            patch.apply(&mut base);
        }
        let mut knobs = shape.knobs(base)?;
        // The clock recency is measured against, fixed here so the agent
        // log holds it: the app re-asks the call at the same time.
        knobs.now = loupe_engine::asking::ask::unix_now();
        let selection = Selection {
            pinned: targets(project, "pins", &shape.pins).await?,
            banned: targets(project, "bans", &shape.bans).await?,
        };
        let request = AskRequest {
            selection,
            change: shape.change.clone(),
            ..AskRequest::new(question, knobs)
        };
        let mut cache = served.cache.lock().await;
        let answer = project.ask(&request, &mut cache).await?;
        Ok((answer, request))
    }
}

/// Records a tool call in the project's agent log (what the app lists);
/// a failure to record is a warning on stderr, never the call's failure.
fn record(
    served: &Served,
    tool: &str,
    peer: &Peer<RoleServer>,
    request: &AskRequest,
    target: Option<String>,
    answer: &Answer,
) {
    let client = peer
        .peer_info()
        .map(|info| format!("{} {}", info.client_info.name, info.client_info.version));
    let call = agent_log::CallInfo {
        tool: tool.to_owned(),
        client,
        question: request.question.clone(),
        change: request.change.as_ref().map(|c| c.arg().to_owned()),
        target,
        knobs: request.knobs.clone(),
        selection: request.selection.clone(),
    };
    let entry = agent_log::AgentRequest::new(call, answer);
    if let Err(e) = agent_log::record(served.project.data_dir(), &entry) {
        eprintln!("loupe mcp: warning: recording the call for the app: {e}");
    }
}

/// The selection targets `names` (from the `list` argument) stand for: a
/// file, or each chunk defining a symbol.
async fn targets(project: &Project, list: &str, names: &[String]) -> Result<Vec<Target>, Failed> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let paths = project.indexed_paths();
    let mut out = Vec::new();
    for name in names {
        let symbol = project
            .look_up(&args::normalize(name, project.root()))
            .await?;
        match args::resolve(name, project.root(), &paths, &symbol)? {
            Named::Folder(path) => out.push(Target::Folder { path }),
            Named::File(path) => out.push(Target::File { path }),
            Named::Symbol(_, ids) => {
                for id in ids.into_iter().take(args::MAX_CHUNKS_PER_NAME) {
                    if let Some(chunk) = project.chunk(id).await? {
                        out.push(Target::of_chunk(&chunk));
                    }
                }
            }
            Named::Unknown {
                name, suggestions, ..
            } => return Err(args::unknown(list, &name, &suggestions).into()),
        }
    }
    Ok(out)
}

/// Why a tool call did not answer.
#[derive(Debug)]
enum Failed {
    /// The arguments are wrong: an MCP invalid-params error.
    Args(String),
    /// The engine failed: a tool result marked as an error.
    Engine(String),
}

impl From<BadArg> for Failed {
    fn from(e: BadArg) -> Self {
        Failed::Args(e.0)
    }
}

impl From<loupe_engine::Error> for Failed {
    fn from(e: loupe_engine::Error) -> Self {
        match e {
            // A request the engine cannot answer as asked (an `@path` that
            // names no file, ...): the caller's to change.
            loupe_engine::Error::Request(m) => Failed::Args(m),
            other => Failed::Engine(other.to_string()),
        }
    }
}

/// A tool's reply: a result, or an MCP error.
type Reply = Result<CallToolResult, ErrorData>;

impl Failed {
    fn reply(self) -> Reply {
        match self {
            Failed::Args(m) => Err(ErrorData::invalid_params(m, None)),
            Failed::Engine(m) => Ok(CallToolResult::error(vec![ContentBlock::text(m)])),
        }
    }
}

/// A tool's input schema, `T`'s (the unit tests check each is an object;
/// rmcp's own derivation would panic on one that is not).
fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|e| {
        tracing::error!("input schema: {e}");
        schema_for_empty_input()
    })
}

/// A structured reply: the value as `structuredContent` and as JSON text.
fn structured(value: &impl Serialize) -> Result<CallToolResult, Failed> {
    serde_json::to_value(value)
        .map(CallToolResult::structured)
        .map_err(|e| Failed::Engine(format!("encoding the reply: {e}")))
}

/// The MCP server: the tools over [`Projects`].
#[derive(Clone)]
pub struct LoupeServer {
    projects: Arc<Projects>,
    tool_router: ToolRouter<Self>,
}

const CONTEXT_DOC: &str = "Assemble the code context for a question: the project's most relevant code, ranked by lexical, semantic, symbol, call-graph and commit-history evidence and shrunk to fit a token budget (a hard cap). Returns the prompt text, then a JSON report: tokens used of the budget, whether anything was truncated, how many chunks were dropped, the top included chunks (path:lines, score, level of detail) and the top dropped ones with why. Call it before working on code you have not read; pin files you know matter, ban ones that mislead, and call `explain` when something you expected is missing.";
const SEARCH_DOC: &str = "Rank the project's code for a question without building a prompt: the best candidate chunks (path, lines, symbol, score with its breakdown by evidence) and whether each would be in the prompt `context` gives. Use it to find where something lives.";
const EXPLAIN_DOC: &str = "Tell whether a file or symbol is in the prompt `context` gives for a question: at which rank and level of detail, or why not (dropped for the budget or a path weight, banned, not retrieved for this question, or unknown to the index), with what to do about it. Pass the same budget, model, path weights, pins and bans as the `context` call.";
const STATUS_DOC: &str = "What is indexed: files, chunks, the index generation, and which retrieval signals are ready (lexical BM25, embedding vectors, commit history); and the knobs the user saved for agents in the Loupe app, which every call starts from. The server re-indexes files as they change.";
const INSTRUCTIONS: &str = "Loupe finds the code that matters for a question in this project and packs it into a prompt under a token budget. Call `context` with your question (plain words; a pasted error is fine) to get that code; `explain` says why a file is or is not in it; `search` lists the ranked candidates; `status` says what is indexed.";

#[tool_router]
impl LoupeServer {
    fn new(projects: Arc<Projects>) -> Self {
        LoupeServer {
            projects,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = CONTEXT_DOC,
        input_schema = input_schema::<ContextArgs>(),
        output_schema = schema_for_output::<reply::ContextReport>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context(&self, args: JsonObject, peer: Peer<RoleServer>) -> Reply {
        let reply = async { self.context_reply(args::decode(args)?, &peer).await };
        reply.await.or_else(Failed::reply)
    }

    #[tool(
        description = SEARCH_DOC,
        input_schema = input_schema::<SearchArgs>(),
        output_schema = schema_for_output::<reply::SearchReply>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search(&self, args: JsonObject, peer: Peer<RoleServer>) -> Reply {
        let reply = async { self.search_reply(args::decode(args)?, &peer).await };
        reply.await.or_else(Failed::reply)
    }

    #[tool(
        description = EXPLAIN_DOC,
        input_schema = input_schema::<ExplainArgs>(),
        output_schema = schema_for_output::<reply::ExplainReply>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn explain(&self, args: JsonObject, peer: Peer<RoleServer>) -> Reply {
        let reply = async { self.explain_reply(args::decode(args)?, &peer).await };
        reply.await.or_else(Failed::reply)
    }

    #[tool(
        description = STATUS_DOC,
        input_schema = input_schema::<StatusArgs>(),
        output_schema = schema_for_output::<reply::StatusReply>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn status(&self, args: JsonObject) -> Reply {
        let reply = async { self.status_reply(args::decode(args)?).await };
        reply.await.or_else(Failed::reply)
    }
}

impl LoupeServer {
    async fn context_reply(
        &self,
        args: ContextArgs,
        peer: &Peer<RoleServer>,
    ) -> Result<CallToolResult, Failed> {
        let (question, shape) = args.shape()?;
        let served = self.projects.get(args.project.as_deref()).await?;
        let (answer, request) = self.projects.ask(&served, question, &shape).await?;
        let r = &answer.assembly.report;
        if r.used > r.budget {
            return Err(Failed::Engine(format!(
                "the prompt needs {} {} for the instructions and the question alone, over the budget of {}: raise `budget` or shorten the question",
                r.used, r.unit, r.budget
            )));
        }
        record(&served, "context", peer, &request, None, &answer);
        let report = reply::context_report(&answer);
        let value = serde_json::to_value(&report)
            .map_err(|e| Failed::Engine(format!("encoding the report: {e}")))?;
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(answer.assembly.prompt),
            ContentBlock::text(value.to_string()),
        ]);
        result.structured_content = Some(value);
        Ok(result)
    }

    async fn search_reply(
        &self,
        args: SearchArgs,
        peer: &Peer<RoleServer>,
    ) -> Result<CallToolResult, Failed> {
        let (question, limit) = args.checked()?;
        let served = self.projects.get(args.project.as_deref()).await?;
        let (answer, request) = self
            .projects
            .ask(&served, question, &Shape::default())
            .await?;
        record(&served, "search", peer, &request, None, &answer);
        structured(&reply::search_reply(&answer, limit))
    }

    async fn explain_reply(
        &self,
        args: ExplainArgs,
        peer: &Peer<RoleServer>,
    ) -> Result<CallToolResult, Failed> {
        let (question, target, shape) = args.shape()?;
        let served = self.projects.get(args.project.as_deref()).await?;
        let project = &served.project;
        let symbol = project
            .look_up(&args::normalize(&target, project.root()))
            .await?;
        let named = args::resolve(&target, project.root(), &project.indexed_paths(), &symbol)?;
        if let args::Named::Folder(folder) = &named {
            return Err(args::BadArg(format!(
                "`target` {folder:?} is a folder: explain takes one file or symbol (`search` lists a folder's candidates)"
            ))
            .into());
        }
        let (answer, request) = self.projects.ask(&served, question, &shape).await?;
        record(&served, "explain", peer, &request, Some(target), &answer);
        let paths = project.indexed_paths();
        let symbols = match &named {
            args::Named::Symbol(name, ids) => {
                Definitions::from_pairs(ids.iter().map(|&id| (name.clone(), id)).collect())
            }
            _ => Definitions::default(),
        };
        let index = IndexedNames {
            paths: &paths,
            symbols: &symbols,
        };
        structured(&reply::explain_reply(&answer, &named, &index))
    }

    async fn status_reply(&self, args: StatusArgs) -> Result<CallToolResult, Failed> {
        let served = self.projects.get(args.project.as_deref()).await?;
        let status = served.project.status().await?;
        let watching = served.watcher.lock().await.is_some();
        let (agent_knobs, _) = agent_log::load_agent_knobs(served.project.data_dir());
        structured(&reply::status_reply(
            &status,
            watching,
            agent_knobs.as_ref(),
        ))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for LoupeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("loupe", env!("CARGO_PKG_VERSION")).with_title("Loupe"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    #[test]
    fn projects_outside_the_allowed_roots_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let inside = root.join("sub");
        let outside = dir.path().join("elsewhere");
        for d in [&inside, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        let allowed = allowed_roots(&root, &[]).unwrap();
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap();
        assert!(is_allowed(&canon(&root), &allowed));
        assert!(is_allowed(&canon(&inside), &allowed));
        assert!(!is_allowed(&canon(&outside), &allowed));
        // `..` and a symlink out of the root resolve before the check.
        assert!(!is_allowed(
            &canon(&inside.join("../../elsewhere")),
            &allowed
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
            assert!(!is_allowed(&canon(&root.join("link")), &allowed));
        }
        // A prefix of the name is not a parent folder.
        std::fs::create_dir_all(dir.path().join("root2")).unwrap();
        assert!(!is_allowed(&canon(&dir.path().join("root2")), &allowed));
        // --allow-root replaces PATH as the only root.
        let wider = allowed_roots(&root, &[dir.path().to_path_buf()]).unwrap();
        assert!(is_allowed(&canon(&outside), &wider));
        assert!(allowed_roots(&root, &[dir.path().join("missing")]).is_err());
    }

    #[test]
    fn engine_request_errors_are_the_callers_others_are_tool_errors() {
        let args = Failed::from(loupe_engine::Error::Request("@x: no indexed file".into()));
        let err = args.reply().unwrap_err();
        assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(err.message, "@x: no indexed file");
        let engine = Failed::from(loupe_engine::Error::Vectors("damaged".into()));
        let result = engine.reply().unwrap();
        assert_eq!(result.is_error, Some(true));
    }

    #[test]
    fn every_tool_is_listed_with_an_object_schema() {
        let tools = LoupeServer::tool_router().list_all();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(names, ["context", "explain", "search", "status"]);
        for t in &tools {
            assert_eq!(t.input_schema.get("type").unwrap(), "object", "{}", t.name);
            assert!(t.output_schema.is_some(), "{}", t.name);
            assert!(t.description.as_deref().unwrap_or_default().len() > 80);
        }
    }
}
