//! `loupe eval`: run a dataset of real questions against git mirrors, write
//! one prediction line per example, and score them.
//!
//! Per repository, examples run in commit order on one work tree and one
//! Loupe index, both updated incrementally (see [`crate::git`]).
//! Each example: check out `base_commit`, index, retrieve once (with any
//! ablations), assemble at every budget, write a line. The output is
//! resumable (ids already answered without error are skipped) and a failed
//! example is recorded as a line with `error`, never fatal.
//!
//! Besides `--out` (one line per example, every budget under `budgets`),
//! the run writes `OUT.b<budget>.jsonl` (the flat shape
//! `score_predictions.py` reads) and `OUT.scores.json`.

use crate::dataset::{Example, parse_dataset};
use crate::features::feature_line;
use crate::git::{Worktree, commit_order, find_mirror};
use crate::predict::{Packed, packed, ranked_files, ranked_files_aggregated};
use crate::score::{self, PredView};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use loupe_assemble::learned::LinearModel;
use loupe_assemble::rank::Ranker;
use loupe_assemble::{Budget, Candidate, Knobs, KnobsPatch};
use loupe_engine::asking::ablate::Ablations;
use loupe_engine::signals::embed::Embedder;
use loupe_engine::{
    AskCache, AskRequest, CancelToken, Project, ProjectConfig, Unindexed, UnknownPins,
};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Flags of `loupe eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// The dataset (JSONL: repo, base_commit, query, gold_files, gold_hunks_in_base).
    pub dataset: PathBuf,
    /// Folder of bare git mirrors: `DIR/owner+name/repo` or `DIR/owner+name`.
    #[arg(long)]
    pub repos: PathBuf,
    /// Token budgets (o200k), comma-separated.
    #[arg(long, default_value = "13000,27000,50000", value_delimiter = ',')]
    pub budgets: Vec<u32>,
    /// Predictions file (appended to; ids already in it are skipped).
    /// Default: `WORK/<dataset>[.<ablations>].pred.jsonl`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only the first N examples of the dataset (scored on those N).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Turn signals or stages off (comma-separated, repeatable): bm25,
    /// vector, symbols, paths, graph, primers, recency, weights, lod, k.
    #[arg(long)]
    pub ablate: Vec<String>,
    /// Also run these ablations (on top of --ablate) in the same pass, each
    /// into `OUT.no-<names>.jsonl`; repeatable. Shares checkout and indexing.
    #[arg(long)]
    pub compare: Vec<String>,
    /// Where work trees (and, without --data-dir, indexes) live; outside
    /// the project. Default: $TMPDIR/loupe-eval.
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Model for assembly (tokenizer and window; the budget must fit its window).
    #[arg(long, default_value = "gpt-4.1")]
    pub model: String,
    /// Print the scores as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write each example's candidates as ranking-model feature rows
    /// (JSONL, appended) for training the learned ranker (TRAINING.md).
    #[arg(long)]
    pub features: Option<PathBuf>,
    /// The ranking model: `default` (the product's, `Knobs::default()`),
    /// `learned` (the shipped model), `formula` (the hand-set weights), or
    /// the path of a model file.
    #[arg(long, default_value = "default")]
    pub ranker: String,
    /// Knobs laid over the defaults for every example, as the JSON of a
    /// knobs patch (the team file's keys), e.g. `{"diversity": 0.8}`: to
    /// measure a knob's default before changing it. The budget still comes
    /// from --budgets, and an output file should hold one patch's answers
    /// (a resumed run skips ids already in it).
    #[arg(long)]
    pub knobs: Option<String>,
    /// Answer every question from a scan of the checkout, never indexing
    /// it: what a user gets while a folder's first index is being built
    /// (`loupe query --wait scan`).
    #[arg(long)]
    pub scan: bool,
}

/// The knobs every example starts from: the defaults, the `--model`, the
/// `--ranker` and the `--knobs` patch; an out-of-range patch is an error.
fn base_knobs(args: &EvalArgs) -> Result<Knobs> {
    let mut knobs = Knobs {
        model: args.model.clone(),
        ranker: ranker(&args.ranker)?,
        ..Knobs::default()
    };
    if let Some(json) = &args.knobs {
        let mut patch: KnobsPatch =
            serde_json::from_str(json).context("--knobs is not a knobs patch")?;
        if let Some(problem) = patch.validate().first() {
            bail!("--knobs: {problem}");
        }
        patch.apply(&mut knobs);
    }
    Ok(knobs)
}

/// The `--ranker` value as a knob.
fn ranker(spec: &str) -> Result<Ranker> {
    Ok(match spec {
        "default" => Ranker::default(),
        "learned" => Ranker::Learned,
        "formula" => Ranker::Formula,
        path => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the ranking model {path}"))?;
            let model =
                LinearModel::from_json(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
            Ranker::Model(model)
        }
    })
}

/// Timings of one example, in milliseconds.
#[derive(Debug, Default, Serialize)]
struct Timing {
    checkout_ms: f64,
    index_ms: f64,
    retrieve_ms: f64,
    assemble_ms: f64,
    total_ms: f64,
}

/// What the incremental index pass did for one example.
#[derive(Debug, Default, Serialize)]
struct IndexStats {
    files_seen: u64,
    files_changed: u64,
    files_unchanged: u64,
    files_deleted: u64,
    chunks_embedded: u64,
    embeddings_cached: u64,
}

/// One prediction line.
#[derive(Debug, Default, Serialize)]
struct Line {
    id: String,
    repo: String,
    base_commit: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    ranked_files: Vec<String>,
    /// Diagnostic: files by best + ½ second + ¼ third chunk score.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ranked_files_sum3: Vec<String>,
    /// The packed fields of the middle budget, so the line scores as is.
    #[serde(skip_serializing_if = "Option::is_none")]
    packed_files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packed_spans: Option<BTreeMap<String, Vec<(u32, u32)>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packed_tokens: Option<u32>,
    budgets: BTreeMap<String, Packed>,
    candidates: usize,
    pins_dropped: bool,
    ablate: Vec<&'static str>,
    timing: Timing,
    index: IndexStats,
}

fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e4).round() / 10.0
}

fn default_work() -> PathBuf {
    std::env::temp_dir().join("loupe-eval")
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset".into())
}

/// `OUT` with `suffix` appended to its stem: `p.jsonl` + `.b100` → `p.b100.jsonl`.
fn sibling(out: &Path, suffix: &str) -> PathBuf {
    let name = format!("{}{suffix}", stem(out));
    out.with_file_name(name)
}

/// One configuration of the pipeline and where its predictions go.
struct Variant {
    ablations: Ablations,
    out: PathBuf,
    done: HashSet<String>,
    file: Option<std::fs::File>,
    failures: usize,
}

/// What `loupe eval` takes from the command line's global flags.
pub struct EvalContext {
    /// `--data-dir`: where indexes live (default: under the work folder).
    pub data_dir: Option<PathBuf>,
    /// `--max-file-bytes`.
    pub max_file_bytes: u64,
    /// The embedder the global flags chose (`None`: no vectors).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The re-ranker the global flags chose (`None`: `--no-reader`).
    pub reader: Option<Arc<loupe_engine::signals::reader::Reader>>,
    /// Cancelled by Ctrl+C: the run stops after the current example.
    pub cancel: CancelToken,
}

/// Run the evaluation, then score.
pub async fn run(cli: &EvalContext, args: &EvalArgs) -> Result<()> {
    if args.budgets.is_empty() || args.budgets.contains(&0) {
        bail!("--budgets needs at least one positive token budget");
    }
    let ablations = Ablations::parse(&args.ablate)?;
    let base = base_knobs(args)?;
    let text = std::fs::read_to_string(&args.dataset)
        .with_context(|| format!("reading {}", args.dataset.display()))?;
    let mut examples =
        parse_dataset(&text).with_context(|| format!("parsing {}", args.dataset.display()))?;
    if let Some(n) = args.limit {
        examples.truncate(n);
    }
    let work = args.work.clone().unwrap_or_else(default_work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let out = args.out.clone().unwrap_or_else(|| {
        let mut name = stem(&args.dataset);
        if !ablations.names().is_empty() {
            name.push_str(&format!(".no-{}", ablations.names().join("-")));
        }
        work.join(format!("{name}.pred.jsonl"))
    });
    let budget_keys: Vec<String> = args.budgets.iter().map(u32::to_string).collect();

    let mut variants = vec![Variant {
        done: answered(&out, &budget_keys, &ablations)?,
        ablations: ablations.clone(),
        out: out.clone(),
        file: None,
        failures: 0,
    }];
    for extra in &args.compare {
        let more = Ablations::parse(std::slice::from_ref(extra))?;
        let names: Vec<&str> = more.names();
        let combined = Ablations::parse(&[ablations.names().join(","), names.join(",")])?;
        let path = sibling(&out, &format!(".no-{}.jsonl", names.join("-")));
        variants.push(Variant {
            done: answered(&path, &budget_keys, &combined)?,
            ablations: combined,
            out: path,
            file: None,
            failures: 0,
        });
    }
    let todo: Vec<&Example> = examples
        .iter()
        .filter(|e| variants.iter().any(|v| !v.done.contains(&e.id)))
        .collect();
    eprintln!(
        "{}: {} examples, {} to run ({} variant(s); predictions in {})",
        args.dataset.display(),
        examples.len(),
        todo.len(),
        variants.len(),
        out.display(),
    );
    if !todo.is_empty() {
        run_examples(cli, args, &base, &mut variants, &work, &todo).await?;
    }
    let mut json: Vec<serde_json::Value> = Vec::new();
    for v in &variants {
        if args.json {
            let mut value = report(args, &examples, &v.out, &budget_keys)?;
            if let Some(map) = value.as_object_mut() {
                map.insert("ablate".into(), v.ablations.names().into());
                map.insert("out".into(), v.out.to_string_lossy().into_owned().into());
            }
            json.push(value);
            continue;
        }
        if variants.len() > 1 {
            let names = v.ablations.names();
            println!(
                "\n## ablated: {}",
                if names.is_empty() {
                    "nothing".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
        report(args, &examples, &v.out, &budget_keys)?;
    }
    if args.json {
        // The main variant's scores at the top; the others under "compare".
        let mut main = json.remove(0);
        if let Some(map) = main.as_object_mut() {
            map.insert("compare".into(), json.into());
        }
        println!("{}", serde_json::to_string_pretty(&main)?);
    }
    Ok(())
}

/// Ids in `out` answered without error at every requested budget, with
/// the same ablations (a line from another configuration is run again).
fn answered(out: &Path, budgets: &[String], ablations: &Ablations) -> Result<HashSet<String>> {
    let names: Vec<serde_json::Value> = ablations.names().into_iter().map(Into::into).collect();
    if !out.exists() {
        return Ok(HashSet::new());
    }
    let text =
        std::fs::read_to_string(out).with_context(|| format!("reading {}", out.display()))?;
    let raw =
        score::parse_predictions(&text).with_context(|| format!("parsing {}", out.display()))?;
    Ok(raw
        .into_iter()
        .filter(|(_, v)| v.get("error").is_none_or(|e| e.is_null()))
        .filter(|(_, v)| v.get("ablate").and_then(|a| a.as_array()) == Some(&names))
        .filter(|(_, v)| {
            budgets
                .iter()
                .all(|b| v.get("budgets").and_then(|m| m.get(b)).is_some())
        })
        .map(|(id, _)| id)
        .collect())
}

fn open_append(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))
}

async fn run_examples(
    cli: &EvalContext,
    args: &EvalArgs,
    base: &Knobs,
    variants: &mut [Variant],
    work: &Path,
    todo: &[&Example],
) -> Result<()> {
    for v in variants.iter_mut() {
        v.file = Some(open_append(&v.out)?);
    }
    let mut features = match &args.features {
        Some(path) => Some(open_append(path)?),
        None => None,
    };
    let data_root = cli.data_dir.clone().unwrap_or_else(|| work.join("data"));
    let embedder = cli.embedder.clone();
    let cancel = cli.cancel.clone();
    let bar = ProgressBar::with_draw_target(Some(todo.len() as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} ({elapsed}, eta {eta}) {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }

    // Repositories in order of first appearance; examples in commit order.
    let mut repos: Vec<&str> = Vec::new();
    for e in todo {
        if !repos.contains(&e.repo.as_str()) {
            repos.push(&e.repo);
        }
    }
    for repo in repos {
        let examples: Vec<&Example> = todo.iter().copied().filter(|e| e.repo == repo).collect();
        let Some(mirror) = find_mirror(&args.repos, repo) else {
            for e in &examples {
                let error = format!("no mirror of {repo} under {}", args.repos.display());
                for v in variants.iter_mut().filter(|v| !v.done.contains(&e.id)) {
                    write_line(v, &failed(e, error.clone()))?;
                }
                bar.inc(1);
            }
            continue;
        };
        let commits: Vec<&str> = examples.iter().map(|e| e.base_commit.as_str()).collect();
        let order = commit_order(&mirror, &commits);
        let wt = Worktree::new(&mirror, &work.join(repo.replace('/', "+")));
        let mut project: Option<Project> = None;
        for i in order {
            if cancel.is_cancelled() {
                break;
            }
            let e = examples[i];
            bar.set_message(format!(
                "{repo} @ {}",
                e.base_commit.get(..10).unwrap_or(&e.base_commit)
            ));
            let mut cfg = ProjectConfig::new(&data_root);
            cfg.walk.max_file_bytes = cli.max_file_bytes;
            cfg.embedder = embedder.clone();
            cfg.reader = cli.reader.clone();
            // The size a project gets a graph from, as the CLI's long-lived
            // commands have it (`LOUPE_GRAPH_MIN_POINTS` to measure one).
            cfg.graph = loupe_engine::stores::graph::GraphPolicy::default().from_env();
            let prepared = prepare(e, &wt, &mut project, cfg, args.scan, &cancel, &bar).await;
            // One retrieval per example, shared by every budget and variant.
            let mut cache = AskCache::default();
            for (n, v) in variants.iter_mut().enumerate() {
                if v.done.contains(&e.id) {
                    continue;
                }
                // Feature rows of the main variant only: the others are ablations of it.
                let rows = if n == 0 { features.as_mut() } else { None };
                let result = match (&prepared, project.as_ref()) {
                    (Ok(prep), Some(p)) => {
                        predict(e, p, prep, args, base, &v.ablations, &mut cache, rows).await
                    }
                    (Err(err), _) => Err(anyhow::anyhow!("{err:#}")),
                    (Ok(_), None) => Err(anyhow::anyhow!("no project")),
                };
                let line = match result {
                    Ok(line) => line,
                    Err(err) => {
                        if cancel.is_cancelled() {
                            break;
                        }
                        bar.println(format!("failed {}: {err:#}", e.id));
                        failed(e, format!("{err:#}"))
                    }
                };
                write_line(v, &line)?;
            }
            bar.inc(1);
        }
        if cancel.is_cancelled() {
            break;
        }
    }
    bar.finish_and_clear();
    for v in variants.iter() {
        if v.failures > 0 {
            eprintln!(
                "{} example(s) failed (recorded with \"error\" in {})",
                v.failures,
                v.out.display()
            );
        }
    }
    if cancel.is_cancelled() {
        bail!("cancelled; run the same command again to resume");
    }
    Ok(())
}

fn failed(e: &Example, error: String) -> Line {
    Line {
        id: e.id.clone(),
        repo: e.repo.clone(),
        base_commit: e.base_commit.clone(),
        error: Some(error),
        ..Line::default()
    }
}

fn write_line(v: &mut Variant, line: &Line) -> Result<()> {
    if line.error.is_some() {
        v.failures += 1;
    }
    let mut text = serde_json::to_string(line)?;
    text.push('\n');
    let Some(file) = v.file.as_mut() else {
        bail!("{} is not open", v.out.display());
    };
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .with_context(|| format!("writing {}", v.out.display()))
}

/// The shared part of an example: the work tree at its commit, indexed.
struct Prepared {
    /// The base commit's time: the clock its questions are asked at.
    now: i64,
    checkout_ms: f64,
    index_ms: f64,
    index: IndexStats,
}

/// Check out `e.base_commit` and bring the index up to date (unless the
/// questions are answered from a scan).
#[allow(clippy::too_many_arguments)] // one example's whole context; a struct would only rename them
async fn prepare(
    e: &Example,
    wt: &Worktree,
    project: &mut Option<Project>,
    cfg: ProjectConfig,
    scan: bool,
    cancel: &CancelToken,
    bar: &ProgressBar,
) -> Result<Prepared> {
    let start = Instant::now();
    wt.checkout(&e.base_commit)
        .with_context(|| format!("checking out {}", e.base_commit))?;
    let checkout_ms = ms(start.elapsed());
    let now = crate::git::commit_time(wt.mirror(), &e.base_commit)
        .with_context(|| format!("reading the time of {}", e.base_commit))?;

    let t = Instant::now();
    if project.is_none() {
        let p = Project::open(wt.root(), cfg)
            .await
            .with_context(|| format!("opening the index of {}", wt.root().display()))?;
        *project = Some(p);
    }
    let Some(project) = project.as_ref() else {
        bail!("no project");
    };
    let sink = |p: loupe_engine::Progress| {
        if let Some(total) = p.total
            && total > 200
        {
            bar.set_message(format!(
                "{} indexing: {:?} {}/{total}",
                e.repo, p.stage, p.done
            ));
        }
    };
    if scan {
        return Ok(Prepared {
            now,
            checkout_ms,
            index_ms: 0.0,
            index: IndexStats::default(),
        });
    }
    let report = project.index(&sink, cancel).await.context("indexing")?;
    // A graph the run started (`LOUPE_GRAPH_MIN_POINTS` set low) answers
    // every question of this commit, not only the later ones.
    project.wait_for_graph(|_, _| {}).await;
    // The work tree has no `.git`: its history is the mirror's, up to the
    // example's base commit (never the fix itself, which comes after it).
    project
        .use_history(loupe_engine::signals::history::HistorySource::GitDir {
            git_dir: wt.mirror().to_path_buf(),
            rev: e.base_commit.clone(),
        })
        .await
        .context("reading the commit history")?;
    Ok(Prepared {
        now,
        checkout_ms,
        index_ms: ms(t.elapsed()),
        index: IndexStats {
            files_seen: report.files_seen,
            files_changed: report.files_changed,
            files_unchanged: report.files_unchanged,
            files_deleted: report.files_deleted,
            chunks_embedded: report.chunks_embedded,
            embeddings_cached: report.embeddings_cached,
        },
    })
}

/// Ask once per budget (retrieval is cached across budgets and variants in
/// `cache`) with `ablations`; with `features`, write the candidates'
/// feature rows there too.
#[allow(clippy::too_many_arguments)] // one example's whole context; a struct would only rename them
async fn predict(
    e: &Example,
    project: &Project,
    prep: &Prepared,
    args: &EvalArgs,
    base: &Knobs,
    ablations: &Ablations,
    cache: &mut AskCache,
    features: Option<&mut std::fs::File>,
) -> Result<Line> {
    let mut timing = Timing {
        checkout_ms: prep.checkout_ms,
        index_ms: prep.index_ms,
        ..Timing::default()
    };
    // The built-in knobs on purpose: eval measures Loupe's defaults, so an
    // evaluated repo's own `.loupe.toml` (its team's weights, budget, model)
    // is never read; `loupe_engine::team` is deliberately not called here.
    let knobs = Knobs {
        // The commit's time, not the clock: the work tree's mtimes are when
        // it was checked out (after the commit), so every file's recency is
        // the same, and a rerun scores exactly alike (with the clock, the
        // seconds between checkouts moved items across LOD bands: 5 of 150
        // predictions differed between two runs of requests).
        now: prep.now,
        ..base.clone()
    };
    let mut request = AskRequest {
        question: e.query.clone(),
        knobs,
        ablations: ablations.clone(),
        // `@name` in a pasted issue is usually a person, not a pin.
        unknown_pins: UnknownPins::Ignore,
        unindexed: match args.scan {
            true => Unindexed::Scan,
            false => Unindexed::Refuse,
        },
        ..AskRequest::default()
    };
    let t = Instant::now();
    let mut budgets = BTreeMap::new();
    let mut ranked = Vec::new();
    let mut ranked_sum3 = Vec::new();
    let mut pins_dropped = false;
    let mut candidates = 0;
    let mut features = features;
    for (n, &b) in args.budgets.iter().enumerate() {
        request.knobs.budget = Some(Budget::Tokens(b));
        let answer = project.ask(&request, cache).await.context("asking")?;
        let selected = &answer.selected.candidates;
        if n == 0 {
            // The first ask retrieved; later budgets re-use it.
            timing.retrieve_ms = ms(t.elapsed());
            ranked = ranked_files(selected, &answer.assembly);
            ranked_sum3 = ranked_files_aggregated(selected, &answer.assembly, &[1.0, 0.5, 0.25]);
            pins_dropped = answer.pins_dropped;
            // What retrieval found: not the chunks read because their file
            // leads, which have no signal to learn from.
            let retrieved = |c: &&Candidate| c.signals.has_evidence();
            candidates = selected.iter().filter(retrieved).count();
            if let Some(file) = features.take() {
                let retrieved: Vec<Candidate> =
                    selected.iter().filter(retrieved).cloned().collect();
                let line = feature_line(
                    &e.id,
                    &e.repo,
                    &retrieved,
                    &answer.assembly.report.classification,
                    &request.knobs,
                );
                let mut text = serde_json::to_string(&line)?;
                text.push('\n');
                file.write_all(text.as_bytes())
                    .context("writing the feature rows")?;
            }
        }
        budgets.insert(b.to_string(), packed(selected, &answer.assembly));
    }
    timing.assemble_ms = ms(t.elapsed()) - timing.retrieve_ms;
    timing.total_ms = prep.checkout_ms + prep.index_ms + timing.retrieve_ms + timing.assemble_ms;

    let mid = args.budgets.get(args.budgets.len() / 2).map(u32::to_string);
    let primary = mid
        .and_then(|k| budgets.get(&k))
        .cloned()
        .unwrap_or_default();
    Ok(Line {
        id: e.id.clone(),
        repo: e.repo.clone(),
        base_commit: e.base_commit.clone(),
        error: None,
        ranked_files: ranked,
        ranked_files_sum3: ranked_sum3,
        packed_files: Some(primary.packed_files),
        packed_spans: Some(primary.packed_spans),
        packed_tokens: Some(primary.packed_tokens),
        budgets,
        candidates,
        pins_dropped,
        ablate: ablations.names(),
        timing,
        index: IndexStats {
            files_seen: prep.index.files_seen,
            files_changed: prep.index.files_changed,
            files_unchanged: prep.index.files_unchanged,
            files_deleted: prep.index.files_deleted,
            chunks_embedded: prep.index.chunks_embedded,
            embeddings_cached: prep.index.embeddings_cached,
        },
    })
}

/// Score `out` against the dataset, print the table, write the flat
/// per-budget files and the scores.
fn report(
    args: &EvalArgs,
    examples: &[Example],
    out: &Path,
    budgets: &[String],
) -> Result<serde_json::Value> {
    let text =
        std::fs::read_to_string(out).with_context(|| format!("reading {}", out.display()))?;
    let raw =
        score::parse_predictions(&text).with_context(|| format!("parsing {}", out.display()))?;
    let wanted: HashSet<&str> = examples.iter().map(|e| e.id.as_str()).collect();
    let raw: HashMap<String, serde_json::Value> = raw
        .into_iter()
        .filter(|(id, _)| wanted.contains(id.as_str()))
        .collect();

    let mut all = BTreeMap::new();
    for b in budgets {
        let views: HashMap<String, PredView> = raw
            .iter()
            .map(|(id, v)| (id.clone(), score::view(v, Some(b))))
            .collect();
        all.insert(b.clone(), score::score(examples, &views));
        // The flat shape of score_predictions.py, in dataset order.
        let flat_path = sibling(out, &format!(".b{b}.jsonl"));
        let mut flat = String::new();
        for e in examples {
            let Some(v) = raw.get(&e.id) else { continue };
            let p = v.get("budgets").and_then(|m| m.get(b));
            let mut line = serde_json::Map::new();
            line.insert("id".into(), e.id.clone().into());
            line.insert(
                "ranked_files".into(),
                v.get("ranked_files").cloned().unwrap_or_default(),
            );
            for key in ["packed_files", "packed_spans", "packed_tokens"] {
                // Absent, not null: the Python scorer tests `key in p`.
                if let Some(x) = p.and_then(|p| p.get(key)).filter(|x| !x.is_null()) {
                    line.insert(key.into(), x.clone());
                }
            }
            let line = serde_json::Value::Object(line);
            flat.push_str(&line.to_string());
            flat.push('\n');
        }
        std::fs::write(&flat_path, flat)
            .with_context(|| format!("writing {}", flat_path.display()))?;
    }
    let scores_path = sibling(out, ".scores.json");
    std::fs::write(&scores_path, serde_json::to_string_pretty(&all)?)
        .with_context(|| format!("writing {}", scores_path.display()))?;

    let timing = timing_summary(&raw);
    let value = serde_json::json!({ "scores": all, "timing": timing });
    if args.json {
        return Ok(value);
    }
    let errors = raw
        .values()
        .filter(|v| v.get("error").is_some_and(|e| !e.is_null()))
        .count();
    let Some(first) = all.values().next() else {
        return Ok(value);
    };
    let g = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    println!(
        "{}: n={} predicted={} failed={errors}",
        args.dataset.display(),
        g(first, "n"),
        g(first, "n_predicted")
    );
    println!(
        "ranking:  acc@1 {:.1}  acc@3 {:.1}  acc@5 {:.1}  acc@10 {:.1}  acc@20 {:.1}  recall@5 {:.1}  recall@10 {:.1}  mrr {:.1}",
        g(first, "acc@1"),
        g(first, "acc@3"),
        g(first, "acc@5"),
        g(first, "acc@10"),
        g(first, "acc@20"),
        g(first, "recall@5"),
        g(first, "recall@10"),
        g(first, "mrr")
    );
    println!(
        "{:>8}  {:>10}  {:>18}  {:>18}  {:>12}",
        "budget", "packed_all", "packed_file_recall", "packed_line_recall", "tokens_mean"
    );
    for (b, m) in &all {
        println!(
            "{:>8}  {:>10.1}  {:>18.1}  {:>18.1}  {:>12.0}",
            b,
            g(m, "packed_all"),
            g(m, "packed_file_recall"),
            g(m, "packed_line_recall"),
            g(m, "packed_tokens_mean")
        );
    }
    if let Some(t) = timing {
        println!(
            "per example (n={}): total mean {:.0} ms (median {:.0}); index update mean {:.0} ms (median {:.0}); retrieve mean {:.0} ms; assemble ({} budgets) mean {:.0} ms",
            t.n,
            t.total.0,
            t.total.1,
            t.index.0,
            t.index.1,
            t.retrieve.0,
            budgets.len(),
            t.assemble.0
        );
    }
    println!(
        "predictions: {}  (flat per budget: {})  scores: {}",
        out.display(),
        sibling(out, ".b<budget>.jsonl").display(),
        scores_path.display()
    );
    Ok(value)
}

/// (mean, median) of timing fields over successful lines.
#[derive(Debug, Serialize)]
struct TimingSummary {
    n: usize,
    total: (f64, f64),
    index: (f64, f64),
    retrieve: (f64, f64),
    assemble: (f64, f64),
}

fn timing_summary(raw: &HashMap<String, serde_json::Value>) -> Option<TimingSummary> {
    let field = |k: &str| -> Vec<f64> {
        raw.values()
            .filter(|v| v.get("error").is_none_or(|e| e.is_null()))
            .filter_map(|v| v.get("timing")?.get(k)?.as_f64())
            .collect()
    };
    let stats = |mut xs: Vec<f64>| -> (f64, f64) {
        if xs.is_empty() {
            return (0.0, 0.0);
        }
        xs.sort_by(f64::total_cmp);
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        (mean, xs[xs.len() / 2])
    };
    let total = field("total_ms");
    if total.is_empty() {
        return None;
    }
    Some(TimingSummary {
        n: total.len(),
        total: stats(total),
        index: stats(field("index_ms")),
        retrieve: stats(field("retrieve_ms")),
        assemble: stats(field("assemble_ms")),
    })
}
