//! The `loupe` binary: a thin shell over `loupe-engine` and `loupe-assemble`.
//!
//! Each subcommand parses its flags, builds the engine's config, makes one
//! engine call and prints the result. No indexing or ranking logic lives here.

#[macro_use]
mod out;
mod clipboard;
mod commands;
mod map;
mod mcp;
mod progress;
mod setup;
mod shared;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Show exactly what code context an LLM will see, and shape it.
#[derive(Parser, Debug)]
#[command(name = "loupe", version, about)]
pub struct Cli {
    /// Where indexes live (default: $XDG_DATA_HOME/loupe).
    #[arg(long, global = true, env = "LOUPE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Which embedder computes vectors.
    #[arg(long, global = true, value_enum, default_value_t = EmbedderArg::Code)]
    pub embedder: EmbedderArg,
    /// Base URL of an OpenAI-compatible embeddings API (with --embedder http).
    #[arg(long, global = true, env = "LOUPE_EMBED_URL")]
    pub embed_url: Option<String>,
    /// Model name for the embeddings API (with --embedder http).
    #[arg(long, global = true, env = "LOUPE_EMBED_MODEL")]
    pub embed_model: Option<String>,
    /// Skip files larger than this many bytes.
    #[arg(long, global = true, default_value_t = 1 << 20)]
    pub max_file_bytes: u64,
    /// Do not read the project's commit history (`git log`) as evidence.
    #[arg(long, global = true, env = "LOUPE_NO_HISTORY", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_history: bool,
    /// Do not re-rank: today's ranking alone, without the model that reads
    /// the leading files with the question (the `read_files` knob = 0
    /// does the same per question).
    #[arg(long, global = true, env = "LOUPE_NO_READER", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_reader: bool,
    /// The re-ranker's model file, instead of the shipped one (experiments:
    /// `make train-reranker` writes one).
    #[arg(long, global = true, env = "LOUPE_READER_MODEL")]
    pub reader_model: Option<PathBuf>,
    /// The team's shared store, a PostgreSQL URL (postgres://user@host/db):
    /// index runs pull what it holds for their files' bytes and push what
    /// they derive. Without a password: PGPASSWORD or ~/.pgpass hold it.
    /// Else LOUPE_SHARED_URL, else `[shared] url` in the project's
    /// .loupe.toml.
    #[arg(long, global = true, value_name = "URL")]
    pub shared: Option<String>,
    /// `read`: pull only, never write (CI jobs, agents); `read-write`
    /// (default): push what this machine derives.
    #[arg(long, global = true, value_name = "MODE")]
    pub shared_mode: Option<String>,
    /// Seconds one call to the shared store may take before the run
    /// derives the rest here.
    #[arg(
        long,
        global = true,
        env = "LOUPE_SHARED_TIMEOUT",
        default_value_t = 5.0
    )]
    pub shared_timeout: f64,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `loupe shared …`.
#[derive(Subcommand, Debug)]
pub enum SharedCommand {
    /// Rows and bytes per table and deriver, this build's marked.
    Status {
        /// The project whose .loupe.toml may name the store.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete the parses an older build derived and the vectors of models
    /// other than this one's embedder (run it from the newest build).
    Gc {
        /// The project whose .loupe.toml may name the store.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Embedder choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EmbedderArg {
    /// Loupe's own code-search vectors (the default): a static model
    /// trained on fixes mined from public repositories, shipped with Loupe
    /// (no download, no first-run work).
    Code,
    /// The bundled MiniLM model distilled into one vector per token (each
    /// token's vector is distilled the first time a text needs it and kept
    /// under the data dir's `models/`); a build with the `minilm` feature.
    Static,
    /// The bundled MiniLM model itself (no download); a build with the
    /// `minilm` feature.
    Bundled,
    /// An OpenAI-compatible HTTP endpoint (--embed-url, --embed-model).
    Http,
    /// No vectors: lexical, symbol and graph signals only.
    None,
}

/// Prompt formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Claude-style XML documents.
    Xml,
    /// Markdown with `@path:a-b` headers.
    Md,
    /// Structured JSON.
    Json,
}

/// The knob flags of `loupe query` and `loupe map`: they go over the
/// built-in defaults and the project's `.loupe.toml` (the team's defaults,
/// as the app reads them).
#[derive(clap::Args, Debug, Default)]
pub struct KnobArgs {
    /// Model (picks tokenizer, context window and default budget)
    /// [default: .loupe.toml's, else gpt-4o].
    #[arg(long)]
    pub model: Option<String>,
    /// Budget in tokens [default: .loupe.toml's, else the model's].
    #[arg(long, conflicts_with = "chars")]
    pub budget: Option<u32>,
    /// Budget in characters instead of tokens.
    #[arg(long)]
    pub chars: Option<u32>,
    /// Output format [default: .loupe.toml's, else xml].
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Path weight `GLOB=MULTIPLIER`, 0 to 2 (0 hides, 1 neutral); repeatable. Sets that
    /// glob's weight over .loupe.toml's rules, which otherwise stay.
    #[arg(long = "weight")]
    pub weights: Vec<String>,
    /// Primer file name or path; repeatable (replaces .loupe.toml's or the defaults).
    #[arg(long = "primer")]
    pub primers: Vec<String>,
    /// Ignore the project's `.loupe.toml` (start from the built-in knobs).
    #[arg(long)]
    pub no_team_defaults: bool,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Index a folder (incrementally: only changed files are re-read).
    Index {
        /// The project folder.
        path: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show what is indexed and which signals are ready.
    Status {
        /// The project folder.
        path: PathBuf,
        /// List every diagnostic (skipped or degraded file).
        #[arg(long)]
        diagnostics: bool,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Retrieve the candidate chunks for a question, with their signals.
    Search {
        /// The project folder.
        path: PathBuf,
        /// The question.
        question: String,
        /// How many candidates to print.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Assemble the prompt for a question under a budget (prints the prompt).
    ///
    /// Knobs: the built-in defaults, then the project's `.loupe.toml` (the
    /// team's defaults, as the app reads them), then these flags.
    Query {
        /// The project folder.
        path: PathBuf,
        /// The question; `@path` or `@Symbol` pins an item. Optional with
        /// --diff ("Review this change.").
        question: Option<String>,
        /// Review a change: the diff of the working tree (`unstaged`, the
        /// default), of the index (`staged`) or of a range (`BASE..HEAD`).
        /// Its hunks are pinned, the diff goes into the prompt, and the code
        /// around it (callers, callees, tests) is retrieved. Put the
        /// question before this flag.
        #[arg(long, num_args = 0..=1, default_missing_value = "unstaged", value_name = "CHANGE")]
        diff: Option<String>,
        /// Show the change as its new code, numbered, with the changed
        /// lines marked, instead of as a unified diff.
        #[arg(long, requires = "diff")]
        diff_as_code: bool,
        /// A secondary LLM: the base URL of an OpenAI-compatible chat
        /// endpoint (`/chat/completions` is appended) that turns the
        /// question into 3–5 search terms; off when unset. The key, if the
        /// server wants one: LOUPE_EXPAND_API_KEY.
        #[arg(long, env = "LOUPE_EXPAND_URL", value_name = "URL")]
        expand_url: Option<String>,
        /// The chat model the secondary LLM runs.
        #[arg(
            long,
            env = "LOUPE_EXPAND_MODEL",
            requires = "expand_url",
            default_value = "gpt-4o-mini"
        )]
        expand_model: String,
        /// How long it may take before the local analyzer alone is used.
        #[arg(long, requires = "expand_url", default_value_t = loupe_engine::asking::expand::DEFAULT_TIMEOUT_MS)]
        expand_timeout_ms: u64,
        /// On a project that is not indexed yet: answer as soon as the
        /// lexical index, symbols and graph are built (`lexical`, the
        /// default; the vectors come with the next `loupe index`), once
        /// every signal is (`all`, which also completes the vectors of an
        /// index that lacks some), or at once from a scan of the files for
        /// the question's words, without indexing (`scan`: seconds on any
        /// folder; no symbols, graph, history or vectors, and the report
        /// says so).
        #[arg(long, value_enum, default_value_t = Wait::Lexical)]
        wait: Wait,
        /// The knobs.
        #[command(flatten)]
        knobs: KnobArgs,
        /// Pin a file or symbol (same as writing `@X` in the question); repeatable.
        #[arg(long = "pin")]
        pins: Vec<String>,
        /// Print the table of items (score, LOD, tokens, status) to stderr.
        #[arg(long)]
        report: bool,
        /// Print the whole assembly (prompt, items, report) as JSON.
        #[arg(long)]
        json: bool,
        /// Put the prompt on the system clipboard instead of printing it.
        #[arg(long)]
        copy: bool,
    },
    /// The team's shared store (see --shared): what it holds, and
    /// dropping what this build no longer derives.
    #[command(subcommand)]
    Shared(SharedCommand),
    /// The model table: each model's tokenizer, whether its counts are
    /// exact or estimated (and the share of the budget kept free for the
    /// difference), its context window and default budget.
    Models {
        /// Only the row a model name resolves to (prefix match, as `--model`).
        model: Option<String>,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Where a project's tokens are: a tree of folders and files sized by
    /// their indexed tokens (o200k_base), most first, like
    /// `repomix --token-count-tree`. With --question, each file is marked
    /// with what that question's prompt did with it (included, degraded,
    /// dropped and why, hidden by a path weight) and each folder counts them.
    Map {
        /// The project folder.
        path: PathBuf,
        /// Mark the map with this question's assembly.
        #[arg(long, short)]
        question: Option<String>,
        /// Folder levels shown (deeper ones are summed into their folder).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        depth: Option<u32>,
        /// Entries under this many tokens are summed into one line per folder.
        #[arg(long, default_value_t = 0)]
        min_tokens: u64,
        /// The knobs the question is assembled with.
        #[command(flatten)]
        knobs: KnobArgs,
        /// Print the map as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the project's golden questions: is every expected file and symbol in its prompt?
    ///
    /// Reads PATH/.loupe/golden.toml (or --file): `[[question]]` tables with
    /// `ask = "..."`, `files = [...]`, `symbols = [...]` and optional
    /// `budget`, `model`, `weights = { "glob" = 1.5 }`, `primers`, `k`,
    /// `min_score`, `lod`. Knobs: the built-in defaults, then the project's
    /// `.loupe.toml`, then --budget, then the question's own. Indexes first
    /// (incrementally). Exits non-zero when any expected item is missing.
    Golden {
        /// The project folder.
        path: PathBuf,
        /// The golden file (default: PATH/.loupe/golden.toml).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Budget in tokens for questions that set none [default: .loupe.toml's, else the model's].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        budget: Option<u32>,
        /// Ignore the project's `.loupe.toml` (start from the built-in knobs).
        #[arg(long)]
        no_team_defaults: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
        format: ReportFormat,
    },
    /// Evaluate retrieval and packing on a dataset of real questions (see EVAL.md).
    Eval(loupe_eval::EvalArgs),
    /// Serve the project to coding agents over MCP (stdio): tools `context`,
    /// `search`, `explain` and `status`.
    ///
    /// Indexes PATH (incrementally), keeps it fresh while files change, and
    /// answers on stdout with MCP messages only (progress and logs go to
    /// stderr). Knobs: the built-in defaults, then the project's
    /// `.loupe.toml`, then each tool call's arguments.
    Mcp(mcp::McpArgs),
    /// Keep the index fresh while files change (Ctrl+C stops).
    Watch {
        /// The project folder.
        path: PathBuf,
    },
    /// Internal: serve a `query --copy` on the X11 clipboard until replaced.
    #[command(name = clipboard::SERVE_COMMAND, hide = true)]
    ServeClipboard,
}

/// How much of the index `loupe query` waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Wait {
    /// The lexical index, symbols and graph.
    Lexical,
    /// Every signal, vectors included.
    All,
    /// Nothing: a scan of the files, no index run.
    Scan,
}

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A table for people.
    Table,
    /// JSON for programs.
    Json,
}

#[global_allocator]
static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env(loupe_engine::LOG_ENV).unwrap_or_else(
                |_| tracing_subscriber::EnvFilter::new(loupe_engine::DEFAULT_LOG_FILTER),
            ),
        )
        .with_writer(std::io::stderr)
        .init();
    loupe_engine::alloc::return_freed_memory();
    let cli = Cli::parse();
    if matches!(cli.command, Command::ServeClipboard) {
        return clipboard::serve();
    }
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(commands::dispatch(cli))
}
