//! Subcommand bodies: build config, call the engine once, print.

use crate::map::{MapView, map};
use crate::setup::{
    cancel_on_ctrl_c, embedder, index_if_new, index_with_bar, knob_patch, open, team_knobs,
    wait_for_graph_with_bar,
};
use crate::{Cli, Command, ReportFormat, Wait};
use anyhow::{Result, bail};
use loupe_assemble::{Budget, Knobs, KnobsPatch};
use loupe_engine::asking::change::DiffSpec;
use loupe_engine::asking::golden::{self, Expected, GoldenError, GoldenReport, Outcome};
use loupe_engine::{AskRequest, IndexReport, Project, RetrieveQuery, Unindexed, Until};
use std::path::Path;
use std::sync::Arc;

/// Run one subcommand.
pub async fn dispatch(cli: Cli) -> Result<()> {
    if matches!(cli.command, Command::Mcp(_)) {
        // The server keeps the global flags to open more projects later.
        return crate::mcp::run(cli).await;
    }
    match &cli.command {
        Command::Index { path, json } => index(&cli, path, *json).await,
        Command::Status {
            path,
            diagnostics,
            json,
        } => status(&cli, path, *diagnostics, *json).await,
        Command::Search {
            path,
            question,
            limit,
            json,
        } => search(&cli, path, question, *limit, *json).await,
        Command::Watch { path } => watch(&cli, path).await,
        Command::Query { path, question, .. } => {
            query(&cli, path, question.as_deref().unwrap_or_default()).await
        }
        Command::Map {
            path,
            question,
            depth,
            min_tokens,
            knobs,
            json,
        } => {
            let view = MapView {
                depth: *depth,
                min_tokens: *min_tokens,
                json: *json,
            };
            map(&cli, path, question.as_deref(), knobs, view).await
        }
        Command::Models { model, json } => models(model.as_deref(), *json),
        Command::Shared(what) => {
            let model = embedder(&cli)
                .ok()
                .flatten()
                .map(|e| e.model_id().to_owned());
            crate::shared::command(&cli, what, model).await
        }
        Command::Eval(args) => {
            let context = loupe_eval::EvalContext {
                data_dir: cli.data_dir.clone(),
                max_file_bytes: cli.max_file_bytes,
                embedder: embedder(&cli)?,
                reader: crate::setup::reader(&cli),
                cancel: cancel_on_ctrl_c(),
            };
            loupe_eval::run(&context, args).await
        }
        Command::Mcp(_) => bail!("the MCP server is started above"),
        Command::Golden {
            path,
            file,
            budget,
            format,
            no_team_defaults,
        } => {
            let flags = GoldenFlags {
                budget: *budget,
                no_team_defaults: *no_team_defaults,
            };
            run_golden(&cli, path, file.as_deref(), flags, *format).await
        }
        Command::ServeClipboard => bail!("the clipboard helper runs before the runtime starts"),
    }
}

/// `loupe models`: the built-in model table, or the row `model` resolves to.
fn models(model: Option<&str>, json: bool) -> Result<()> {
    use loupe_assemble::models;
    let rows = match model {
        Some(name) => match models::lookup(name, &[]) {
            Some(row) => vec![row],
            None => {
                eprintln!(
                    "loupe: {name:?} is not in the table: counted with o200k_base as a guess (give its row in .loupe.toml's `models`)"
                );
                vec![models::fallback(name)]
            }
        },
        None => models::builtin(),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    outln!(
        "{:<20} {:<12} {:<22} {:>10} {:>9}",
        "model",
        "tokenizer",
        "count",
        "window",
        "budget"
    );
    for row in &rows {
        let count = if row.exact {
            "exact".to_owned()
        } else if row.safety_margin > 0.0 {
            format!("estimated, {:.0}% free", row.safety_margin * 100.0)
        } else {
            "estimated (unknown)".to_owned()
        };
        outln!(
            "{:<20} {:<12} {:<22} {:>10} {:>9}",
            row.name,
            row.encoding.name(),
            count,
            row.context_window,
            row.default_budget
        );
    }
    Ok(())
}

/// What `loupe query --wait` asks for: a new folder up to its lexical
/// stage, or every signal (completing the vectors an earlier `--wait
/// lexical` left out).
async fn index_for(project: &Project, path: &Path, wait: Wait) -> Result<()> {
    match wait {
        // An indexed project answers from its index; a new one from a scan.
        Wait::Scan => Ok(()),
        Wait::Lexical => index_if_new(project, path, Until::Searchable).await,
        Wait::All => {
            index_if_new(project, path, Until::Complete).await?;
            let status = project.status().await?;
            if status.vector_model.is_some() && !status.vectors_ready {
                index_with_bar(project, path).await?;
            }
            Ok(())
        }
    }
}

async fn index(cli: &Cli, path: &Path, json: bool) -> Result<()> {
    let project = open(cli, path).await?;
    let report = index_with_bar(&project, path).await?;
    wait_for_graph_with_bar(&project).await;
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(())
}

fn print_report(r: &IndexReport) {
    outln!(
        "{} files: {} changed, {} unchanged, {} deleted; {} chunks written",
        r.files_seen,
        r.files_changed,
        r.files_unchanged,
        r.files_deleted,
        r.chunks_added
    );
    if r.chunks_embedded + r.embeddings_cached > 0 || r.embedding_incomplete {
        outln!(
            "embeddings: {} computed, {} from cache{}",
            r.chunks_embedded,
            r.embeddings_cached,
            if r.embedding_incomplete {
                " (cancelled: lexical search is complete)"
            } else {
                ""
            }
        );
    }
    let t = &r.times;
    outln!(
        "time: walk {:.0?}, parse {:.0?}, catalog {:.0?}, lexical {:.0?}, embed {:.0?}, vectors {:.0?}",
        t.walk,
        t.parse,
        t.catalog,
        t.lexical,
        t.embed,
        t.vectors
    );
    if let Some(shared) = &r.shared {
        outln!("{}", crate::shared::describe(shared));
    }
    if !r.diagnostics.is_empty() {
        let mut counts = std::collections::BTreeMap::new();
        for d in &r.diagnostics {
            *counts.entry(d.kind.as_str()).or_insert(0) += 1;
        }
        let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        outln!(
            "skipped or degraded: {} (see `loupe status --diagnostics`)",
            parts.join(", ")
        );
    }
}

async fn status(cli: &Cli, path: &Path, diagnostics: bool, json: bool) -> Result<()> {
    let project = open(cli, path).await?;
    let status = project.status().await?;
    let diags = if diagnostics {
        project.diagnostics().await?
    } else {
        Vec::new()
    };
    if json {
        let value = serde_json::json!({ "status": status, "diagnostics": diags });
        outln!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    outln!("project:  {}", status.root.display());
    outln!("index:    {}", status.data_dir.display());
    outln!(
        "files:    {}   chunks: {}   generation: {}",
        status.files,
        status.chunks,
        status.generation
    );
    outln!("lexical:  {} chunks", status.lexical_chunks);
    match &status.vector_model {
        Some(model) => outln!(
            "vectors:  {}/{} chunks ({model}), {}{}",
            status.vector_chunks,
            status.chunks,
            status.vector_search,
            if status.vectors_ready {
                ""
            } else {
                " — run `loupe index` to finish"
            }
        ),
        None => outln!("vectors:  off"),
    }
    match &status.history_note {
        None => outln!(
            "history:  {} commit{}",
            status.history_commits,
            if status.history_commits == 1 { "" } else { "s" }
        ),
        Some(why) => outln!("history:  none ({why})"),
    }
    if let Some(shared) = &status.shared {
        outln!("{} (last index run)", crate::shared::describe(shared));
    }
    outln!("diagnostics: {}", status.diagnostics);
    for d in diags {
        outln!("  {:<13} {}  {}", d.kind.as_str(), d.path, d.message);
    }
    Ok(())
}

async fn search(cli: &Cli, path: &Path, question: &str, limit: usize, json: bool) -> Result<()> {
    if question.trim().is_empty() {
        bail!("the question is empty");
    }
    let project = open(cli, path).await?;
    let query = RetrieveQuery::from_question(question);
    let retrieved = project.retrieve_noting(&query).await?;
    if let Some(why) = &retrieved.vectors_failed {
        eprintln!(
            "warning: searched without vectors: the vector search failed on this question ({why})"
        );
    }
    let candidates = retrieved.candidates;
    let shown = &candidates[..candidates.len().min(limit)];
    if json {
        let rows: Vec<serde_json::Value> = shown
            .iter()
            .map(|c| {
                serde_json::json!({
                    "path": c.chunk.path,
                    "start_line": c.chunk.start_line,
                    "end_line": c.chunk.end_line,
                    "kind": c.chunk.kind,
                    "symbol": c.chunk.symbol,
                    "tokens": c.chunk.tokens,
                    "signals": c.signals,
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if candidates.is_empty() {
        outln!("no candidates: nothing in the index matches this question");
        return Ok(());
    }
    outln!(
        "{:>3}  {:<48} {:<24} {:>7} {:>5} {:>5} {:>3}",
        "#",
        "chunk",
        "symbol",
        "bm25",
        "vec",
        "sym",
        "hop"
    );
    for (i, c) in shown.iter().enumerate() {
        let s = &c.signals;
        let loc = format!(
            "{}:{}-{}",
            c.chunk.path, c.chunk.start_line, c.chunk.end_line
        );
        outln!(
            "{:>3}  {:<48} {:<24} {:>7} {:>5} {:>5} {:>3}",
            i + 1,
            loc,
            c.chunk.symbol.as_deref().unwrap_or("-"),
            s.bm25
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "-".into()),
            s.vector
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "-".into()),
            s.symbol_hits,
            s.graph_distance
                .map(|d| d.to_string())
                .unwrap_or_else(|| "-".into()),
        );
    }
    outln!("{} candidates in all", candidates.len());
    Ok(())
}

async fn watch(cli: &Cli, path: &Path) -> Result<()> {
    let project = Arc::new(open(cli, path).await?);
    let cancel = cancel_on_ctrl_c();
    let report = project
        .index(&loupe_engine::progress::no_progress, &cancel)
        .await?;
    print_report(&report);
    outln!("watching {} (Ctrl+C stops)", project.root().display());
    let handle = loupe_engine::watch::watch(Arc::clone(&project), |event| match event {
        loupe_engine::watch::WatchEvent::Changed(paths) => {
            outln!("changed: {} path(s)", paths.len());
        }
        loupe_engine::watch::WatchEvent::Indexed(r) => print_report(&r),
        loupe_engine::watch::WatchEvent::Failed(e) => eprintln!("error: {e}"),
        loupe_engine::watch::WatchEvent::History(commits) => {
            outln!("HEAD moved: commit history read again ({commits} commits)");
        }
    })?;
    while !cancel.is_cancelled() {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    handle.stop().await;
    Ok(())
}

async fn query(cli: &Cli, path: &Path, question: &str) -> Result<()> {
    let Command::Query {
        pins,
        report,
        json,
        copy,
        knobs: knob_args,
        diff,
        diff_as_code,
        expand_url,
        expand_model,
        expand_timeout_ms,
        wait,
        ..
    } = &cli.command
    else {
        bail!("not a query")
    };
    if *copy {
        // Before any work: no display means nothing to do.
        crate::clipboard::check_available()?;
    }
    let mut flags = knob_patch(knob_args)?;
    if *diff_as_code {
        flags.toggles = Some(loupe_assemble::knobs::TogglesPatch {
            diff_as_code: Some(true),
            ..Default::default()
        });
    }
    let mut question = question.to_owned();
    for pin in pins {
        question.push_str(&format!(" @{}", pin.trim_start_matches('@')));
    }
    let change: Option<DiffSpec> = diff.as_deref().map(str::parse).transpose()?;
    if question.trim().is_empty() && change.is_none() {
        bail!("the question is empty (or review a change with --diff)");
    }
    let project = open(cli, path).await?;
    if change.is_some() {
        // The diff's new side must be what is indexed: catch up first.
        index_with_bar(&project, path).await?;
    } else {
        index_for(&project, path, *wait).await?;
    }
    let knobs = flags.applied(&team_knobs(project.root(), knob_args.no_team_defaults));
    let expand = expand_url
        .as_ref()
        .map(|url| loupe_engine::asking::expand::ExpandConfig {
            base_url: url.clone(),
            model: expand_model.clone(),
            api_key: std::env::var("LOUPE_EXPAND_API_KEY").ok(),
            timeout_ms: *expand_timeout_ms,
        });
    let request = AskRequest {
        change,
        expand,
        unindexed: match wait {
            Wait::Scan => Unindexed::Scan,
            Wait::Lexical | Wait::All => Unindexed::Refuse,
        },
        ..AskRequest::new(question, knobs)
    };
    let answer = project
        .ask(&request, &mut loupe_engine::AskCache::default())
        .await?;
    let assembly = answer.assembly;
    if *copy {
        // Nothing is printed until the copy is known to be on the clipboard.
        // It waits on another process: keep it off the async workers.
        tokio::task::block_in_place(|| crate::clipboard::copy(&assembly.prompt))?;
    }
    if *json {
        outln!("{}", serde_json::to_string_pretty(&assembly)?);
    } else if !*copy {
        outln!("{}", assembly.prompt);
    }
    if *copy {
        let r = &assembly.report;
        eprintln!(
            "copied {} {} to the clipboard ({})",
            r.used, r.unit, r.model
        );
    }
    if *report {
        print_items(&assembly);
    } else if !*json {
        // What the report says that a user should not miss (a diff cut
        // to fit, an unknown model, a pin that names nothing).
        for w in &assembly.report.warnings {
            eprintln!("warning: {w}");
        }
    }
    if let Some(e) = &answer.expansion {
        // The secondary LLM's part in the search, or why it had none.
        eprintln!("{}", e.describe());
    }
    if *report {
        eprintln!("{}", answer.signals.describe());
    }
    Ok(())
}

fn print_items(a: &loupe_assemble::Assembly) {
    let r = &a.report;
    eprintln!(
        "{} {} used of {} usable (budget {}, answer reserve {}); truncated: {}; dropped: {}",
        r.used, r.unit, r.usable, r.budget, r.answer_reserve, r.was_truncated, r.dropped_count
    );
    eprintln!(
        "{}",
        loupe_assemble::report::Verdict::of(&a.items, r).describe(&r.unit)
    );
    if let Some(note) = r.analysis.scaffolding_note() {
        eprintln!("{note}");
    }
    // `read`: the share of the score the re-ranker gave ("read by the
    // model"), before the multipliers; `-` for a file it did not read.
    eprintln!(
        "{:>3}  {:<50} {:>6} {:>5} {:>3} {:>6}  status",
        "#", "chunk", "score", "read", "lod", "size"
    );
    let mut items: Vec<&loupe_assemble::ItemRow> = a.items.iter().collect();
    items.sort_by(|x, y| y.score.score.total_cmp(&x.score.score));
    for (i, item) in items.into_iter().enumerate() {
        let loc = format!("{}:{}-{}", item.path, item.start_line, item.end_line);
        let lod = item
            .lod
            .map(|l| l.to_string())
            .unwrap_or_else(|| "-".into());
        let status = item.status.describe(&r.unit);
        let read = match item.score.reader {
            r if r > 0.0 => format!("{r:.3}"),
            _ => "-".into(),
        };
        eprintln!(
            "{:>3}  {:<50} {:>6.3} {:>5} {:>3} {:>6}  {status}",
            i + 1,
            loc,
            item.score.score,
            read,
            lod,
            item.size
        );
    }
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
}

/// What `loupe golden`'s flags say about the knobs every question starts from.
struct GoldenFlags {
    /// `--budget`: over the team's budget, under a question's own.
    budget: Option<u32>,
    /// `--no-team-defaults`.
    no_team_defaults: bool,
}

/// `base` with `patch` over it, once `patch` is known to be in range.
fn knobs_patch_applied(mut patch: KnobsPatch, base: Knobs) -> Result<Knobs> {
    if let Some(problem) = patch.validate().into_iter().next() {
        bail!("--{}: {}", problem.knob, problem.message);
    }
    Ok(patch.applied(&base))
}

async fn run_golden(
    cli: &Cli,
    path: &Path,
    file: Option<&Path>,
    flags: GoldenFlags,
    format: ReportFormat,
) -> Result<()> {
    let file = file.map_or_else(|| path.join(golden::GOLDEN_FILE), Path::to_path_buf);
    if !file.exists() {
        bail!(
            "no golden questions at {} (see `loupe golden --help` for the format)",
            file.display()
        );
    }
    let questions = golden::load(&file).map_err(|e| match e {
        GoldenError::Io { .. } => anyhow::anyhow!(e),
        other => anyhow::anyhow!("{}: {other}", file.display()),
    })?;
    let project = open(cli, path).await?;
    // Knobs: built-in → `.loupe.toml` → --budget → each question's overrides
    // (applied by `golden::check`), so a team sees what its weights break.
    let base = knobs_patch_applied(
        KnobsPatch {
            budget: flags.budget.map(Budget::Tokens),
            ..KnobsPatch::default()
        },
        team_knobs(project.root(), flags.no_team_defaults),
    )?;
    index_with_bar(&project, path).await?;
    let report = golden::check(&project, &questions, &base).await?;
    match format {
        ReportFormat::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        ReportFormat::Table => print_golden(&report),
    }
    if !report.passed() {
        bail!(
            "{} of {} expected items are not in their prompts",
            report.expected - report.found,
            report.expected
        );
    }
    Ok(())
}

fn print_golden(report: &GoldenReport) {
    for q in &report.questions {
        let verdict = if q.found() == q.items.len() {
            "ok"
        } else {
            "FAIL"
        };
        let size = match &q.error {
            Some(e) => format!("error: {e}"),
            None => format!("{} of {} {}, {}", q.used, q.budget, q.unit, q.model),
        };
        outln!("line {:<4} {verdict:<4}  {:?}  ({size})", q.line, q.ask);
        for item in &q.items {
            let (kind, name) = match &item.expected {
                Expected::File(p) => ("file", p.as_str()),
                Expected::Symbol(s) => ("symbol", s.as_str()),
            };
            let (word, detail) = match &item.outcome {
                Outcome::Found {
                    rank,
                    lod,
                    degraded,
                    chunk,
                    chunks_in,
                    chunks,
                } => (
                    "found",
                    format!(
                        "rank {rank}, LOD {lod}{}, chunks in {chunks_in}/{chunks}, best {chunk}",
                        if *degraded { " (degraded)" } else { "" }
                    ),
                ),
                Outcome::Dropped {
                    rank,
                    reason,
                    chunks,
                } => (
                    "dropped",
                    format!(
                        "rank {rank}, chunks in 0/{chunks}: {}",
                        reason.describe(&q.unit)
                    ),
                ),
                Outcome::NotRetrieved => (
                    "missing",
                    "indexed, but not retrieved for this question".to_owned(),
                ),
                Outcome::Unknown => (
                    "unknown",
                    format!(
                        "no indexed {kind} by that name (misspelled, renamed, ignored or hidden?)"
                    ),
                ),
                Outcome::NotAssembled => ("missing", "the question failed".to_owned()),
            };
            outln!("           {word:<8} {kind:<6} {name:<32} {detail}");
        }
    }
    outln!(
        "{} of {} expected items in their prompts ({} questions)",
        report.found,
        report.expected,
        report.questions.len()
    );
}
