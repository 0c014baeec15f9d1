//! What every command does before its own work, in one home for the
//! dispatcher (`commands`), `loupe map` and `loupe mcp`: open the project as
//! the global flags say, index a folder never indexed with a progress bar,
//! and the knobs a command starts from (the team file, then the flags).

use crate::progress::Bar;
use crate::{Cli, Command, EmbedderArg, FormatArg, KnobArgs};
use anyhow::{Context, Result, bail};
use loupe_assemble::rank::PathWeight;
use loupe_assemble::render::Format;
use loupe_assemble::{Budget, Knobs, KnobsPatch};
use loupe_engine::signals::embed::{CodeEmbedder, Embedder, HttpEmbedder, HttpEmbedderConfig};
use loupe_engine::signals::reader::Reader;
use loupe_engine::stores::graph::GraphPolicy;
use loupe_engine::{CancelToken, IndexReport, Progress, Project, ProjectConfig, Stage, Until};
use std::path::Path;
use std::sync::Arc;

/// The embedder the flags name; an error if it cannot be loaded (`loupe
/// eval`: a measurement must not quietly run without the vectors it names).
pub(crate) fn embedder(cli: &Cli) -> Result<Option<Arc<dyn Embedder>>> {
    Ok(match cli.embedder {
        EmbedderArg::None => None,
        EmbedderArg::Code => Some(Arc::new(
            CodeEmbedder::new().context("loading the code embedder")?,
        )),
        EmbedderArg::Bundled => {
            Some(loupe_engine::signals::embed::bundled().context("loading the bundled embedder")?)
        }
        // Cheap: the token table fills while the project embeds.
        EmbedderArg::Static => Some(
            loupe_engine::signals::embed::static_table(&data_root(cli))
                .context("loading the static embedder")?,
        ),
        EmbedderArg::Http => {
            let (Some(url), Some(model)) = (&cli.embed_url, &cli.embed_model) else {
                bail!("--embedder http needs --embed-url and --embed-model");
            };
            let cfg = HttpEmbedderConfig {
                base_url: url.clone(),
                model: model.clone(),
                api_key: std::env::var("LOUPE_EMBED_API_KEY").ok(),
                timeout_secs: loupe_engine::signals::embed::HTTP_EMBED_TIMEOUT_SECS,
            };
            Some(Arc::new(
                HttpEmbedder::new(cfg).with_context(|| format!("connecting to {url}"))?,
            ))
        }
    })
}

/// The re-ranker the flags ask for: the shipped model, another file, or none.
pub(crate) fn reader(cli: &Cli) -> Option<Arc<Reader>> {
    match (&cli.reader_model, cli.no_reader) {
        (_, true) => None,
        (Some(path), false) => Some(Arc::new(Reader::at(path.clone()))),
        (None, false) => Some(Reader::shipped()),
    }
}

/// `--data-dir` / `LOUPE_DATA_DIR`, else the default data root.
fn data_root(cli: &Cli) -> std::path::PathBuf {
    cli.data_dir
        .clone()
        .unwrap_or_else(loupe_engine::stores::store::default_data_root)
}

pub(crate) async fn open(cli: &Cli, path: &Path) -> Result<Project> {
    let mut cfg = ProjectConfig::new(data_root(cli));
    cfg.walk.max_file_bytes = cli.max_file_bytes;
    cfg.embedder = match (embedder(cli), cli.embedder) {
        (Ok(e), _) => e,
        // The default code model is a file beside the binary: without it,
        // answer from the other signals and say so, as the app does.
        (Err(e), EmbedderArg::Code) => {
            eprintln!("warning: code vectors off: {e:#}");
            None
        }
        (Err(e), _) => return Err(e),
    };
    cfg.history = !cli.no_history;
    cfg.reader = reader(cli);
    cfg.graph = graph_policy(cli);
    cfg.shared = crate::shared::config(cli, path)?;
    let project = Project::open(path, cfg)
        .await
        .with_context(|| format!("opening the index of {}", path.display()))?;
    // Not `status()`: it waits for the history read, which runs beside the
    // first parse.
    for note in project.recovered() {
        eprintln!("note: {note}");
    }
    Ok(project)
}

/// Which commands give a large project's vectors a graph: those that
/// index fully (`index`, which waits for it) or stay up (`mcp`, `watch`,
/// which build it in the background). A one-shot question would exit long
/// before a graph is built or even loaded, and scans.
fn graph_policy(cli: &Cli) -> GraphPolicy {
    match cli.command {
        Command::Index { .. } | Command::Mcp(_) | Command::Watch { .. } => {
            GraphPolicy::default().from_env()
        }
        _ => GraphPolicy::off(),
    }
}

pub(crate) fn cancel_on_ctrl_c() -> CancelToken {
    let cancel = CancelToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ncancelling…");
            c.cancel();
        }
    });
    cancel
}

/// An incremental index pass with a progress bar; Ctrl+C cancels it.
pub(crate) async fn index_with_bar(project: &Project, path: &Path) -> Result<IndexReport> {
    index_until_with_bar(project, path, Until::Complete).await
}

/// Wait for the vector graph that an index run started, if any, with a
/// progress bar; Ctrl+C stops waiting (the graph is built again next time).
pub(crate) async fn wait_for_graph_with_bar(project: &Project) {
    let bar = Bar::new();
    let waiting = project.wait_for_graph(|done, total| {
        bar.update(Progress {
            stage: Stage::Graph,
            done,
            total: Some(total),
        })
    });
    tokio::select! {
        () = waiting => {}
        _ = tokio::signal::ctrl_c() => eprintln!("\nnot waiting for the vector graph"),
    }
    bar.finish();
}

/// [`index_with_bar`], stopping where `until` says.
async fn index_until_with_bar(project: &Project, path: &Path, until: Until) -> Result<IndexReport> {
    let cancel = cancel_on_ctrl_c();
    let bar = Bar::new();
    let sink = |p| bar.update(p);
    let result = project.index_until(until, &sink, &cancel).await;
    bar.finish();
    result.with_context(|| format!("indexing {}", path.display()))
}

/// Never a prompt about nothing: a folder that was never indexed is
/// indexed first, up to `until`, with the progress bar (on stderr: stdout
/// is the answer).
pub(crate) async fn index_if_new(project: &Project, path: &Path, until: Until) -> Result<()> {
    if project.catalog().generation().await? != 0 {
        return Ok(());
    }
    eprintln!("{} is not indexed yet: indexing it first", path.display());
    let r = index_until_with_bar(project, path, until).await?;
    eprintln!(
        "indexed {} files ({} chunks written{})",
        r.files_seen,
        r.chunks_added,
        if r.vectors_deferred {
            "; vectors not built: `loupe index` builds them"
        } else {
            ""
        }
    );
    Ok(())
}

/// The knobs a command starts from: the built-in defaults with the
/// project's `.loupe.toml` over them (unless `ignore`); what the file had
/// that was ignored goes to stderr.
pub(crate) fn team_knobs(root: &Path, ignore: bool) -> Knobs {
    if ignore {
        return Knobs::default();
    }
    let team = loupe_engine::team::load(root);
    for w in &team.warnings {
        eprintln!("warning: {w}");
    }
    team.knobs
}

/// What `loupe query`'s and `loupe map`'s knob flags set, as the patch
/// every door lays over the team's knobs. Parsed before any work, so a bad
/// flag fails fast; the ranges are the app's and the team file's.
pub(crate) fn knob_patch(args: &KnobArgs) -> Result<KnobsPatch> {
    let KnobArgs {
        model,
        budget,
        chars,
        format,
        weights,
        primers,
        ..
    } = args;
    let budget = match (budget, chars) {
        (Some(t), _) => Some(Budget::Tokens(*t)),
        (None, Some(c)) => Some(Budget::Chars(*c)),
        (None, None) => None,
    };
    let format = format.map(|f| match f {
        FormatArg::Xml => Format::Xml,
        FormatArg::Md => Format::Markdown,
        FormatArg::Json => Format::Json,
    });
    let mut rules = Vec::with_capacity(weights.len());
    for w in weights {
        let Some((glob, value)) = w.rsplit_once('=') else {
            bail!("--weight {w:?}: expected GLOB=MULTIPLIER, e.g. 'src/core/**=1.5'");
        };
        let weight: f32 = value
            .trim()
            .parse()
            .with_context(|| format!("--weight {w:?}: bad multiplier"))?;
        rules.push(PathWeight {
            glob: glob.to_owned(),
            weight,
        });
    }
    let mut patch = KnobsPatch {
        model: model.clone(),
        budget,
        format,
        path_weights: (!rules.is_empty()).then_some(rules),
        primers: (!primers.is_empty()).then(|| primers.clone()),
        ..KnobsPatch::default()
    };
    if let Some(problem) = patch.validate().into_iter().next() {
        let flag = match problem.knob {
            "path_weights" => "weight",
            "budget" if chars.is_some() && args.budget.is_none() => "chars",
            other => other,
        };
        bail!("--{flag}: {}", problem.message);
    }
    Ok(patch)
}
