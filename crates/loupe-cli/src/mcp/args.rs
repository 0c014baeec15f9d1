//! What an agent may send to `loupe mcp`'s tools, and the checks that
//! turn it into the engine's request.
//!
//! Each tool's arguments are one struct: serde decodes them (unknown fields
//! are refused, so a misspelt `budjet` is an error and not a silent
//! default) and schemars derives the JSON Schema the server lists. The doc
//! comments are the descriptions an agent reads.
//!
//! The knob arguments become the same all-optional [`KnobsPatch`] the CLI's
//! flags, the team file and golden questions are, checked against the same
//! ranges and laid over the team's knobs. A name in
//! `pins`, `bans` or `target` is resolved against the index (a path, a
//! unique path suffix, or a symbol) before anything is asked.
//!
//! Nothing here opens a project, retrieves or assembles: checks are pure
//! functions of the arguments, the base knobs and the index's names, so
//! they are unit-tested here.

use loupe_assemble::knobs::limits::{MIN_BUDGET, PATH_WEIGHT};
use loupe_assemble::models;
use loupe_assemble::render::Format;
use loupe_assemble::{Budget, ChunkId, Knobs, KnobsPatch};
use loupe_engine::asking::retrieve::NameLookup;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// Budget when neither the call nor the project's `.loupe.toml` sets one:
/// an agent's window also holds its conversation and its own files, so a
/// fixed slice is handed out rather than the model's whole default (20,000
/// for gpt-4o, 50,000 for Claude). Never more than the model's default.
pub const DEFAULT_BUDGET: u32 = 16_000;
/// `search` rows when the call sets no limit (what `loupe search` prints).
pub const DEFAULT_LIMIT: usize = 20;
/// Most `search` rows one call returns.
pub const MAX_LIMIT: usize = 100;
/// Most entries in one of `pins`, `bans` or `path_weights`.
pub const MAX_LIST: usize = 64;
/// Longest question accepted, in bytes: a pasted stack trace fits; the
/// prompt caps the question it shows at 8,000 characters anyway.
pub const MAX_QUESTION_BYTES: usize = 64 * 1024;
/// Chunks one symbol pin or ban may name (a common name defined in many
/// files would otherwise pin half the project).
pub const MAX_CHUNKS_PER_NAME: usize = 20;
/// Names offered when a pin, ban or target names nothing.
const SUGGESTIONS: usize = 3;
/// Candidate paths listed when a path suffix is ambiguous.
const AMBIGUOUS_SHOWN: usize = 5;

/// A bad argument: its message goes back as an MCP invalid-params error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadArg(pub String);

impl std::fmt::Display for BadArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Prompt formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PromptFormat {
    /// Claude-style `<documents>` XML (the default).
    Xml,
    /// Markdown: a `@path:a-b` header and a fenced block per item.
    #[serde(alias = "md")]
    Markdown,
    /// One JSON object with the sections and items.
    Json,
}

impl From<PromptFormat> for Format {
    fn from(f: PromptFormat) -> Self {
        match f {
            PromptFormat::Xml => Format::Xml,
            PromptFormat::Markdown => Format::Markdown,
            PromptFormat::Json => Format::Json,
        }
    }
}

/// One path weight rule.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathWeightArg {
    /// A glob over project-relative paths, e.g. `src/core/**` or `**/*_test.go`.
    pub glob: String,
    /// Multiplier of the matched files' scores: 0 hides them, 1 is neutral, 2 doubles.
    #[schemars(range(min = PATH_WEIGHT.min, max = PATH_WEIGHT.max))]
    pub weight: f32,
}

/// Arguments of `context`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// The question or task in plain words, as you would ask a colleague
    /// (a pasted error or stack trace is fine). `@path` or `@Symbol` in it
    /// pins that item.
    pub question: String,
    /// Token budget for the prompt, a hard cap: from 100 to the model's
    /// context window. Default: the project's `.loupe.toml` budget, else 16000
    /// (never more than the model's default budget).
    #[schemars(range(min = MIN_BUDGET))]
    pub budget: Option<u32>,
    /// The model the prompt is for: picks the tokenizer and context window
    /// (e.g. `gpt-4o`, `claude-sonnet-4`). Default: `.loupe.toml`'s, else gpt-4o.
    pub model: Option<String>,
    /// Prompt format. Default: `.loupe.toml`'s, else xml.
    pub format: Option<PromptFormat>,
    /// Path weight rules over the project's own (same glob: this weight wins).
    pub path_weights: Option<Vec<PathWeightArg>>,
    /// Files (project-relative paths), folders (`src/api/`: every file
    /// under it) or symbol names that must be in the prompt, whatever their
    /// score.
    pub pins: Option<Vec<String>>,
    /// Files (project-relative paths), folders (`vendor/`) or symbol names
    /// to keep out of the prompt.
    pub bans: Option<Vec<String>>,
    /// The project folder (absolute, or relative to the server's working
    /// folder). Default: the one the server was started on; another must be
    /// inside a folder the server allows (`--allow-root`).
    pub project: Option<String>,
    /// Review a change instead of (or as well as) answering a question:
    /// `unstaged` (the working tree, new files included), `staged`, or a
    /// commit range `BASE..HEAD`. The diff goes into the prompt, its hunks'
    /// code is pinned, and callers, callees and tests follow; `question`
    /// may then be empty ("Review this change.").
    pub diff: Option<String>,
    /// With `diff`: show the change as its new code, numbered, the changed
    /// lines marked `+`, instead of as a unified diff. Default false.
    pub diff_as_code: Option<bool>,
}

/// Arguments of `search`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// The question or task in plain words.
    pub question: String,
    /// How many ranked candidates to return: 1 to 100, default 20.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<usize>,
    /// The project folder (see `context`).
    pub project: Option<String>,
}

/// Arguments of `explain`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainArgs {
    /// The question whose prompt to look into (as given to `context`).
    pub question: String,
    /// A file (project-relative path, or a unique end of one such as
    /// `auth/session.rs`) or a symbol name.
    pub target: String,
    /// The budget the prompt was built with (see `context`).
    #[schemars(range(min = MIN_BUDGET))]
    pub budget: Option<u32>,
    /// The model the prompt was built for (see `context`).
    pub model: Option<String>,
    /// The path weights the prompt was built with (see `context`).
    pub path_weights: Option<Vec<PathWeightArg>>,
    /// The pins the prompt was built with (see `context`).
    pub pins: Option<Vec<String>>,
    /// The bans the prompt was built with (see `context`).
    pub bans: Option<Vec<String>>,
    /// The project folder (see `context`).
    pub project: Option<String>,
}

/// Arguments of `status`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// The project folder (see `context`).
    pub project: Option<String>,
}

/// The knob arguments `context` and `explain` share, checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    /// The knob arguments, in range.
    pub knobs: KnobsPatch,
    /// Names to pin, as given.
    pub pins: Vec<String>,
    /// Names to ban, as given.
    pub bans: Vec<String>,
    /// The change to review (`context` only).
    pub change: Option<loupe_engine::asking::change::DiffSpec>,
}

impl ContextArgs {
    /// The checked question and knob arguments.
    pub fn shape(&self) -> Result<(String, Shape), BadArg> {
        let change = self
            .diff
            .as_deref()
            .map(|d| {
                d.parse()
                    .map_err(|e: loupe_engine::Error| BadArg(format!("`diff`: {e}")))
            })
            .transpose()?;
        let question = match &change {
            Some(_) if self.question.trim().is_empty() => String::new(),
            _ => question(&self.question)?,
        };
        let mut shape = shape(
            self.budget,
            self.model.as_deref(),
            self.format,
            self.path_weights.as_deref(),
            self.pins.as_deref(),
            self.bans.as_deref(),
        )?;
        if let Some(as_code) = self.diff_as_code {
            if change.is_none() {
                return Err(BadArg(
                    "`diff_as_code` shapes a `diff`: give `diff` too".into(),
                ));
            }
            shape.knobs.toggles = Some(loupe_assemble::knobs::TogglesPatch {
                diff_as_code: Some(as_code),
                ..Default::default()
            });
        }
        shape.change = change;
        Ok((question, shape))
    }
}

impl ExplainArgs {
    /// The checked question, target and knob arguments.
    pub fn shape(&self) -> Result<(String, String, Shape), BadArg> {
        let target = self.target.trim();
        if target.is_empty() {
            return Err(BadArg("`target` is empty: name a file or a symbol".into()));
        }
        Ok((
            question(&self.question)?,
            target.to_owned(),
            shape(
                self.budget,
                self.model.as_deref(),
                None,
                self.path_weights.as_deref(),
                self.pins.as_deref(),
                self.bans.as_deref(),
            )?,
        ))
    }
}

impl SearchArgs {
    /// The checked question and row limit.
    pub fn checked(&self) -> Result<(String, usize), BadArg> {
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(BadArg(format!(
                "`limit` {limit}: must be between 1 and {MAX_LIMIT}"
            )));
        }
        Ok((question(&self.question)?, limit))
    }
}

/// Decodes a tool's arguments (a JSON object). The server takes the raw
/// arguments rather than rmcp's `Parameters`, which would turn a decoding
/// error into a tool result: here every bad argument, undecodable or out of
/// range, is the same MCP invalid-params error, naming the argument.
pub fn decode<T: serde::de::DeserializeOwned>(args: JsonObject) -> Result<T, BadArg> {
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let inner = e.inner().to_string();
        let mut path = e.path().to_string();
        if inner.starts_with("unknown field") {
            // The path ends with the unknown field: name where it was.
            path = path
                .rsplit_once('.')
                .map_or_else(|| ".".to_owned(), |(parent, _)| parent.to_owned());
        }
        BadArg(if path == "." {
            format!("bad arguments: {inner}")
        } else {
            format!("bad arguments: `{path}`: {inner}")
        })
    })
}

/// A question that is not empty and not over [`MAX_QUESTION_BYTES`].
pub fn question(q: &str) -> Result<String, BadArg> {
    if q.trim().is_empty() {
        return Err(BadArg(
            "`question` is empty: say what you are working on".into(),
        ));
    }
    if q.len() > MAX_QUESTION_BYTES {
        return Err(BadArg(format!(
            "`question` is {} bytes, over the {MAX_QUESTION_BYTES}-byte limit: shorten it",
            q.len()
        )));
    }
    Ok(q.to_owned())
}

fn shape(
    budget: Option<u32>,
    model: Option<&str>,
    format: Option<PromptFormat>,
    weights: Option<&[PathWeightArg]>,
    pins: Option<&[String]>,
    bans: Option<&[String]>,
) -> Result<Shape, BadArg> {
    let list = |name: &str, items: Option<&[String]>| -> Result<Vec<String>, BadArg> {
        let items = items.unwrap_or_default();
        if items.len() > MAX_LIST {
            return Err(BadArg(format!(
                "`{name}` has {} entries, more than {MAX_LIST}",
                items.len()
            )));
        }
        items
            .iter()
            .map(|i| {
                let i = i.trim();
                if i.trim_start_matches('@').is_empty() {
                    Err(BadArg(format!("`{name}` has an empty entry")))
                } else {
                    Ok(i.to_owned())
                }
            })
            .collect()
    };
    let weights = weights.unwrap_or_default();
    if weights.len() > MAX_LIST {
        return Err(BadArg(format!(
            "`path_weights` has {} rules, more than {MAX_LIST}",
            weights.len()
        )));
    }
    let mut knobs = KnobsPatch {
        budget: budget.map(Budget::Tokens),
        model: model.map(str::to_owned),
        format: format.map(Format::from),
        path_weights: Some(
            weights
                .iter()
                .map(|w| loupe_assemble::rank::PathWeight {
                    glob: w.glob.clone(),
                    weight: w.weight,
                })
                .collect(),
        ),
        ..KnobsPatch::default()
    };
    if let Some(problem) = knobs.validate().into_iter().next() {
        return Err(BadArg(problem.to_string()));
    }
    Ok(Shape {
        knobs,
        pins: list("pins", pins)?,
        bans: list("bans", bans)?,
        change: None,
    })
}

impl Shape {
    /// `base` (the team's knobs) with these arguments over it, and the
    /// budget checked against the model's window. With no budget from
    /// either, [`DEFAULT_BUDGET`] (at most the model's default budget).
    pub fn knobs(&self, base: Knobs) -> Result<Knobs, BadArg> {
        let mut knobs = self.knobs.applied(&base);
        let spec = models::resolve(&knobs.model, &knobs.models);
        if let Some(Budget::Tokens(b)) = self.knobs.budget
            && b > spec.context_window
        {
            return Err(BadArg(format!(
                "`budget` {b}: more than {}'s {}-token context window",
                knobs.model, spec.context_window
            )));
        }
        if knobs.budget.is_none() {
            knobs.budget = Some(Budget::Tokens(DEFAULT_BUDGET.min(spec.default_budget)));
        }
        Ok(knobs)
    }
}

/// What a name in `pins`, `bans` or `target` is in the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// A folder holding indexed files (project-relative, no trailing `/`).
    Folder(String),
    /// An indexed file (project-relative path).
    File(String),
    /// A defined symbol and the chunks defining it.
    Symbol(String, Vec<ChunkId>),
    /// Nothing indexed by that name; `suggestions` are near symbol names.
    Unknown {
        /// The name, normalized.
        name: String,
        /// Whether it looks like a path (has a `/` or an extension).
        looks_like_path: bool,
        /// Symbol names within a small edit distance.
        suggestions: Vec<String>,
    },
}

/// Normalizes a written path to the index's form: `/`-separated, no `@`,
/// no `./`, and relative to `root` when it is an absolute path inside it.
pub fn normalize(name: &str, root: &Path) -> String {
    let name = name.trim().trim_start_matches('@');
    let relative = Path::new(name)
        .strip_prefix(root)
        .ok()
        .and_then(|p| p.to_str())
        .unwrap_or(name);
    let mut p = relative.replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_owned();
    }
    p
}

/// Resolves `name`: a folder when it ends with `/`; else an indexed path,
/// then a path suffix that ends exactly one indexed path at a `/`, then a
/// symbol, then a folder. A suffix of several paths is an error that lists
/// them. `symbol` is what the index knows of `normalize(name, root)` as a
/// symbol name ([`Project::look_up`](loupe_engine::Project::look_up)).
pub fn resolve(
    name: &str,
    root: &Path,
    paths: &BTreeSet<String>,
    symbol: &NameLookup,
) -> Result<Named, BadArg> {
    let name = normalize(name, root);
    let is_folder = |folder: &str| {
        let prefix = format!("{folder}/");
        paths
            .range(prefix.clone()..)
            .next()
            .is_some_and(|p| p.starts_with(&prefix))
    };
    if let Some(folder) = name.strip_suffix('/') {
        let folder = folder.trim_end_matches('/');
        if !folder.is_empty() && is_folder(folder) {
            return Ok(Named::Folder(folder.to_owned()));
        }
        return Err(BadArg(format!(
            "{name:?}: no indexed file is under that folder (give its path from the project root)"
        )));
    }
    if paths.contains(&name) {
        return Ok(Named::File(name));
    }
    let tail = format!("/{name}");
    let ending: Vec<&String> = paths.iter().filter(|p| p.ends_with(&tail)).collect();
    match ending.as_slice() {
        [one] => return Ok(Named::File((*one).clone())),
        [] => {}
        many => {
            let shown: Vec<&str> = many
                .iter()
                .take(AMBIGUOUS_SHOWN)
                .map(|p| p.as_str())
                .collect();
            return Err(BadArg(format!(
                "{name:?} ends {} indexed paths ({}{}): give more of the path",
                many.len(),
                shown.join(", "),
                if many.len() > AMBIGUOUS_SHOWN {
                    ", …"
                } else {
                    ""
                }
            )));
        }
    }
    if !symbol.defined_by.is_empty() {
        return Ok(Named::Symbol(name, symbol.defined_by.clone()));
    }
    if is_folder(&name) {
        return Ok(Named::Folder(name));
    }
    let looks_like_path = name.contains('/')
        || Path::new(&name)
            .extension()
            .is_some_and(|e| e.len() <= 4 && !name.contains("::"));
    let suggestions = symbol.similar.iter().take(SUGGESTIONS).cloned().collect();
    Ok(Named::Unknown {
        name,
        looks_like_path,
        suggestions,
    })
}

/// The error for a pin or ban naming nothing.
pub fn unknown(list: &str, name: &str, suggestions: &[String]) -> BadArg {
    let hint = if suggestions.is_empty() {
        " (misspelt, renamed, ignored, or not indexed yet?)".to_owned()
    } else {
        format!(" (did you mean {}?)", suggestions.join(", "))
    };
    BadArg(format!(
        "`{list}`: no indexed file or symbol is named {name:?}{hint}"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use serde_json::json;

    /// Decodes `value` as the server decodes a tool's arguments.
    fn decode<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
        let serde_json::Value::Object(args) = value else {
            return Err("not an object".into());
        };
        super::decode(args).map_err(|e| e.0)
    }

    fn check_context(value: serde_json::Value, base: Knobs, expect: &str) {
        let got = decode::<ContextArgs>(value).and_then(|a| {
            let (q, shape) = a.shape().map_err(|e| e.0)?;
            let k = shape.knobs(base).map_err(|e| e.0)?;
            Ok(format!(
                "{q:?} model={} budget={:?} format={:?} weights={:?} pins={:?} bans={:?}",
                k.model,
                k.budget,
                k.format,
                k.path_weights
                    .iter()
                    .map(|w| format!("{}={}", w.glob, w.weight))
                    .collect::<Vec<_>>(),
                shape.pins,
                shape.bans
            ))
        });
        let got = match got {
            Ok(s) => s,
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, expect);
    }

    #[test]
    fn context_defaults_and_overrides() {
        check_context(
            json!({"question": "how are tokens counted?"}),
            Knobs::default(),
            "\"how are tokens counted?\" model=gpt-4o budget=Some(Tokens(16000)) format=Xml weights=[] pins=[] bans=[]",
        );
        check_context(
            json!({"question": "q", "budget": 4000, "model": "gpt-4", "format": "md",
                   "path_weights": [{"glob": "src/**", "weight": 1.5}, {"glob": " vendor/** ", "weight": 0}],
                   "pins": ["@src/lib.rs", "count_tokens"], "bans": ["./old.rs"]}),
            Knobs::default(),
            "\"q\" model=gpt-4 budget=Some(Tokens(4000)) format=Markdown weights=[\"src/**=1.5\", \"vendor/**=0\"] pins=[\"@src/lib.rs\", \"count_tokens\"] bans=[\"./old.rs\"]",
        );
        // A model with a smaller default budget keeps it; null is "not given".
        check_context(
            json!({"question": "q", "model": "gpt-3.5-turbo", "pins": null}),
            Knobs::default(),
            "\"q\" model=gpt-3.5-turbo budget=Some(Tokens(4000)) format=Xml weights=[] pins=[] bans=[]",
        );
    }

    #[test]
    fn the_team_budget_and_weights_stay_under_the_arguments() {
        let team = Knobs {
            budget: Some(Budget::Tokens(9000)),
            path_weights: vec![
                loupe_assemble::rank::PathWeight {
                    glob: "docs/**".into(),
                    weight: 0.0,
                },
                loupe_assemble::rank::PathWeight {
                    glob: "src/**".into(),
                    weight: 2.0,
                },
            ],
            ..Knobs::default()
        };
        check_context(
            json!({"question": "q", "path_weights": [{"glob": "docs/**", "weight": 1}]}),
            team,
            "\"q\" model=gpt-4o budget=Some(Tokens(9000)) format=Xml weights=[\"docs/**=1\", \"src/**=2\"] pins=[] bans=[]",
        );
    }

    #[test]
    fn bad_context_arguments_say_what_is_wrong() {
        let bad = |value: serde_json::Value, expect: &str| {
            check_context(value, Knobs::default(), &format!("error: {expect}"))
        };
        bad(json!({}), "bad arguments: missing field `question`");
        bad(
            json!({"question": "   "}),
            "`question` is empty: say what you are working on",
        );
        bad(
            json!({"question": "q", "budget": 5}),
            "`budget` 5: must be at least 100 (the instructions and the question need room too)",
        );
        bad(
            json!({"question": "q", "budget": 200000}),
            "`budget` 200000: more than gpt-4o's 128000-token context window",
        );
        bad(
            json!({"question": "q", "budget": 9000, "model": "gpt-4"}),
            "`budget` 9000: more than gpt-4's 8192-token context window",
        );
        bad(
            json!({"question": "q", "budget": -3}),
            "bad arguments: `budget`: invalid value: integer `-3`, expected u32",
        );
        bad(
            json!({"question": "q", "budget": "lots"}),
            "bad arguments: `budget`: invalid type: string \"lots\", expected u32",
        );
        bad(
            json!({"question": "q", "budjet": 300}),
            "bad arguments: unknown field `budjet`, expected one of `question`, `budget`, `model`, `format`, `path_weights`, `pins`, `bans`, `project`, `diff`, `diff_as_code`",
        );
        bad(
            json!({"question": "q", "diff": "HEAD"}),
            "`diff`: change \"HEAD\": expected `unstaged`, `staged` or a range `BASE..HEAD`",
        );
        bad(
            json!({"question": "  ", "diff": null}),
            "`question` is empty: say what you are working on",
        );
        bad(
            json!({"question": "q", "format": "html"}),
            "bad arguments: `format`: unknown variant `html`, expected one of `xml`, `markdown`, `md`, `json`",
        );
        bad(
            json!({"question": "q", "model": " "}),
            "`model` is empty: omit it for the default",
        );
        bad(
            json!({"question": "q", "path_weights": [{"glob": "src/**", "weight": 3}]}),
            "`path_weights`: weight 3 for \"src/**\": must be between 0 and 2",
        );
        bad(
            json!({"question": "q", "path_weights": [{"glob": "src/[", "weight": 1}]}),
            "`path_weights`: \"src/[\": unclosed character class; missing ']'",
        );
        bad(
            json!({"question": "q", "path_weights": [{"glob": "a", "weight": 1, "why": 2}]}),
            "bad arguments: `path_weights[0]`: unknown field `why`, expected `glob` or `weight`",
        );
        bad(
            json!({"question": "q", "pins": ["a.rs", "@"]}),
            "`pins` has an empty entry",
        );
        bad(
            json!({"question": "q", "bans": vec!["x"; MAX_LIST + 1]}),
            "`bans` has 65 entries, more than 64",
        );
        bad(
            json!({"question": "x".repeat(MAX_QUESTION_BYTES + 1)}),
            "`question` is 65537 bytes, over the 65536-byte limit: shorten it",
        );
    }

    #[test]
    fn search_limits_and_explain_targets() {
        let search = |value| {
            decode::<SearchArgs>(value)
                .and_then(|a| a.checked().map_err(|e| e.0))
                .map(|(q, n)| format!("{q} {n}"))
                .unwrap_or_else(|e| format!("error: {e}"))
        };
        assert_eq!(search(json!({"question": "q"})), "q 20");
        assert_eq!(search(json!({"question": "q", "limit": 100})), "q 100");
        assert_eq!(
            search(json!({"question": "q", "limit": 0})),
            "error: `limit` 0: must be between 1 and 100"
        );
        assert_eq!(
            search(json!({"question": "q", "limit": 101})),
            "error: `limit` 101: must be between 1 and 100"
        );
        let explain = |value| {
            decode::<ExplainArgs>(value)
                .and_then(|a| a.shape().map_err(|e| e.0))
                .map(|(q, t, s)| format!("{q} {t} {:?}", s.knobs.budget))
                .unwrap_or_else(|e| format!("error: {e}"))
        };
        assert_eq!(
            explain(json!({"question": "q", "target": " src/a.rs ", "budget": 300})),
            "q src/a.rs Some(Tokens(300))"
        );
        assert_eq!(
            explain(json!({"question": "q", "target": ""})),
            "error: `target` is empty: name a file or a symbol"
        );
        assert_eq!(
            explain(json!({"question": "q"})),
            "error: bad arguments: missing field `target`"
        );
        assert_eq!(
            explain(json!({"question": "q", "target": "a", "format": "xml"})),
            "error: bad arguments: unknown field `format`, expected one of `question`, `target`, `budget`, `model`, `path_weights`, `pins`, `bans`, `project`"
        );
    }

    fn check_resolve(name: &str, expect: &str) {
        let paths: BTreeSet<String> = ["src/lib.rs", "src/auth/session.rs", "web/session.rs"]
            .iter()
            .map(|p| p.to_string())
            .collect();
        // What `Project::look_up` gives in an index defining `count_tokens`
        // (chunks 7 and 9) and `session` (chunk 3).
        let root = Path::new("/work/proj");
        let symbol = match normalize(name, root).to_lowercase().as_str() {
            "count_tokens" => NameLookup {
                defined_by: vec![7, 9],
                similar: vec![],
            },
            "session" => NameLookup {
                defined_by: vec![3],
                similar: vec![],
            },
            "count_token" => NameLookup {
                defined_by: vec![],
                similar: vec!["count_tokens".into()],
            },
            _ => NameLookup::default(),
        };
        let got = match resolve(name, root, &paths, &symbol) {
            Ok(n) => format!("{n:?}"),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, expect, "{name}");
    }

    #[test]
    fn names_resolve_to_paths_suffixes_or_symbols() {
        check_resolve("src/lib.rs", "File(\"src/lib.rs\")");
        check_resolve("@./src/lib.rs", "File(\"src/lib.rs\")");
        check_resolve("/work/proj/src/lib.rs", "File(\"src/lib.rs\")");
        check_resolve("src\\lib.rs", "File(\"src/lib.rs\")");
        check_resolve("lib.rs", "File(\"src/lib.rs\")");
        check_resolve("auth/session.rs", "File(\"src/auth/session.rs\")");
        check_resolve(
            "session.rs",
            "error: \"session.rs\" ends 2 indexed paths (src/auth/session.rs, web/session.rs): give more of the path",
        );
        check_resolve("Count_Tokens", "Symbol(\"Count_Tokens\", [7, 9])");
        check_resolve("session", "Symbol(\"session\", [3])");
        check_resolve(
            "count_token",
            "Unknown { name: \"count_token\", looks_like_path: false, suggestions: [\"count_tokens\"] }",
        );
        check_resolve(
            "src/gone.rs",
            "Unknown { name: \"src/gone.rs\", looks_like_path: true, suggestions: [] }",
        );
        check_resolve(
            "/elsewhere/x.py",
            "Unknown { name: \"/elsewhere/x.py\", looks_like_path: true, suggestions: [] }",
        );
    }

    #[test]
    fn unknown_names_suggest_near_symbols() {
        assert_eq!(
            unknown("pins", "count_token", &["count_tokens".into()]).0,
            "`pins`: no indexed file or symbol is named \"count_token\" (did you mean count_tokens?)"
        );
        assert_eq!(
            unknown("bans", "zz", &[]).0,
            "`bans`: no indexed file or symbol is named \"zz\" (misspelt, renamed, ignored, or not indexed yet?)"
        );
    }

    #[test]
    fn every_tool_schema_is_an_object_with_described_properties() {
        for (name, schema) in [
            ("context", schemars::schema_for!(ContextArgs)),
            ("search", schemars::schema_for!(SearchArgs)),
            ("explain", schemars::schema_for!(ExplainArgs)),
            ("status", schemars::schema_for!(StatusArgs)),
        ] {
            let value = serde_json::to_value(&schema).unwrap();
            assert_eq!(value["type"], "object", "{name}");
            for (prop, body) in value["properties"].as_object().unwrap() {
                assert!(
                    body.get("description").is_some() || body.get("$ref").is_some(),
                    "{name}.{prop} has no description"
                );
            }
        }
        let context = serde_json::to_value(schemars::schema_for!(ContextArgs)).unwrap();
        assert_eq!(context["required"], json!(["question"]));
        assert_eq!(context["properties"]["budget"]["minimum"], 100);
    }

    /// JSON values an agent might send, nested a few levels.
    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            "\\PC{0,40}".prop_map(serde_json::Value::from),
            prop::sample::select(
                &[
                    "src/**", "", "  ", "gpt-4o", "xml", "md", "json", "@main", "*"
                ][..]
            )
            .prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::btree_map(key(), inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The tools' own argument names, and a few that are not.
    fn key() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            prop::sample::select(
                &[
                    "question",
                    "budget",
                    "model",
                    "format",
                    "path_weights",
                    "pins",
                    "bans",
                    "target",
                    "limit",
                    "glob",
                    "weight",
                    "extra",
                ][..]
            )
            .prop_map(str::to_owned),
            "[a-z_]{1,12}",
        ]
    }

    proptest::proptest! {
        /// Issue 16's fuzzing of the MCP arguments: whatever an agent sends,
        /// decoding and checking answer Ok or a `BadArg`, never a panic
        /// (cases: `PROPTEST_CASES`, 256 by default; `make fuzz` runs more).
        #[test]
        fn any_arguments_decode_or_are_refused_in_words(
            args in proptest::collection::btree_map(key(), json_value(), 0..8)
        ) {
            let object = serde_json::Value::Object(args.into_iter().collect());
            if let Ok(a) = decode::<ContextArgs>(object.clone())
                && let Ok((_, shape)) = a.shape()
            {
                let _ = shape.knobs(Knobs::default());
            }
            if let Ok(a) = decode::<ExplainArgs>(object.clone())
                && let Ok((_, _, shape)) = a.shape()
            {
                let _ = shape.knobs(Knobs::default());
            }
            if let Ok(a) = decode::<SearchArgs>(object.clone()) {
                let _ = a.checked();
            }
            let _ = decode::<StatusArgs>(object);
        }
    }
}
