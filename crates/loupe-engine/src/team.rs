//! The team's knob defaults: a `.loupe.toml` committed in the project root.
//!
//! ```text
//! Knobs::default() → .loupe.toml (this module) → the caller's own layer
//!                                                 (CLI flags, golden overrides, the app's saved changes)
//! ```
//!
//! The file's keys are [`KnobsPatch`]'s fields (read from its serde
//! definition: a new knob is a key here with no edit), plus `budget_unit`;
//! the CLI and the app both read the file through [`load`]. Every key is
//! optional and replaces the built-in default:
//!
//! ```toml
//! model = "gpt-4o"
//! budget = 16000                 # > 0; `budget_unit = "chars"` counts characters
//! primers = ["ARCHITECTURE.md"]  # replaces the default primer names
//! primer_boost = 0.25
//! k = 40                         # automatic items at most
//! min_score = 0.1                # 0..=1
//! lod = true
//! format = "markdown"            # xml | markdown | json
//! recency_weight = 0.05
//! recency_half_life_days = 30
//! sibling_share = 0.5            # 0..=1: the leading files' other chunks raised to this share
//! read_files = 10                # files the re-ranker reads with the question (the default; 0: off)
//! read_window = 256              # word pieces it reads per file, 32..=512 (the default)
//! answer_reserve = 4096
//! sanitize = true
//! redact_secrets = true
//! glue = true                    # the enclosing definition's header above a lone method
//! diversity = 0.5                # MMR λ in 0..=1 (none by default: off)
//! intent = "code"                # docs | tests | code | default
//! toggles = { sources = true, scores = false, structured = false, lost_in_middle = false, diff_as_code = false }
//!
//! [[path_weights]]               # glob → 0..=2, 0 hides
//! glob = "vendor/**"
//! weight = 0.0
//!
//! [[models]]                     # rows checked before the built-in model table
//! name = "our-llama"
//! context_window = 32768
//! default_budget = 16000
//! encoding = "cl100k_base"       # default o200k_base
//! safety_margin = 0.1            # default 0
//!
//! [instructions]                 # the preamble per question type, over the built-in
//! review = "Review this change against our API guidelines in docs/api.md."
//!
//! [shared]                       # the team's shared store (not a knob: [`shared_store`])
//! url = "postgres://loupe@db.internal/loupe"  # never a password: PGPASSWORD or ~/.pgpass
//! mode = "read"                  # default read-write
//! ```
//!
//! *Invariant:* the file never stops anything. A missing file is no layer;
//! an unreadable, oversized or malformed file, an unknown key or an unusable
//! value becomes a [`TeamWarning`] (with its line where there is one) and the
//! rest of the file still applies. Keys are checked one at a time for that
//! reason, then the good ones decoded as one patch.
//!
//! Reads the file, never writes it, and knows no transport: the app's DTO
//! names happen to be the same words, but the app converts from [`Knobs`].

use loupe_assemble::models::ModelSpec;
use loupe_assemble::rank::PathWeight;
use loupe_assemble::tokens::Encoding;
use loupe_assemble::{Budget, Knobs, KnobsPatch};
use serde::Deserialize;
use serde::de::value::MapDeserializer;
use serde::de::{DeserializeOwned, IntoDeserializer, Visitor};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::LazyLock;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The team's defaults, committed in the project root.
pub const TEAM_FILE: &str = ".loupe.toml";
/// Files larger than this are ignored with a warning (a knob file is a few
/// hundred bytes; anything this big is not one).
pub const TEAM_FILE_MAX_BYTES: u64 = 64 * 1024;

/// The keys the file may set: [`KnobsPatch`]'s fields (`budget` as a
/// number, its unit beside it) and `budget_unit`.
pub static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut keys = field_names::<KnobsPatch>().to_vec();
    keys.push("budget_unit");
    keys
});

/// The field names a serde struct's `Deserialize` hands to
/// `deserialize_struct` (its serde names, in declaration order).
fn field_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Names<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("names read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(Names(&mut names));
    names
}

/// Something in the file that was ignored, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamWarning {
    /// 1-based line in the file, when the problem has one.
    pub line: Option<usize>,
    /// What was ignored.
    pub message: String,
}

impl fmt::Display for TeamWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{TEAM_FILE}, line {line}: {}", self.message),
            None => write!(f, "{TEAM_FILE}: {}", self.message),
        }
    }
}

/// The built-in knobs with a project's `.loupe.toml` laid over them.
#[derive(Clone, Debug, PartialEq)]
pub struct TeamDefaults {
    /// The resulting knobs.
    pub knobs: Knobs,
    /// Whether the project has a `.loupe.toml` at all.
    pub present: bool,
    /// What in it was ignored, in file order.
    pub warnings: Vec<TeamWarning>,
}

/// Reads `<project_root>/.loupe.toml` over [`Knobs::default`].
pub fn load(project_root: &Path) -> TeamDefaults {
    let path = project_root.join(TEAM_FILE);
    let mut knobs = Knobs::default();
    let Ok(meta) = std::fs::metadata(&path) else {
        return TeamDefaults {
            knobs,
            present: false,
            warnings: Vec::new(),
        };
    };
    let whole_file = |message: String| TeamWarning {
        line: None,
        message,
    };
    let warnings = if meta.len() > TEAM_FILE_MAX_BYTES {
        vec![whole_file(format!(
            "over {TEAM_FILE_MAX_BYTES} bytes, ignored"
        ))]
    } else {
        match std::fs::read_to_string(&path) {
            Ok(text) => apply(&text, &mut knobs),
            Err(e) => vec![whole_file(format!("{e}, ignored"))],
        }
    };
    TeamDefaults {
        knobs,
        present: true,
        warnings,
    }
}

/// Lays the file's text over `knobs`, key by key; returns what was ignored.
/// A file that is not valid TOML changes nothing.
pub fn apply(text: &str, knobs: &mut Knobs) -> Vec<TeamWarning> {
    let (patch, warnings) = patch(text);
    patch.apply(knobs);
    warnings
}

/// The file's text as a [`KnobsPatch`] (what is out of range already taken
/// out) and the warnings for what was ignored, in line order.
pub fn patch(text: &str) -> (KnobsPatch, Vec<TeamWarning>) {
    let table = match DeTable::parse(text) {
        Ok(t) => t.into_inner(),
        Err(e) => {
            let warning = TeamWarning {
                line: e.span().map(|s| line_of(text, s.start)),
                message: format!("{}; the file is ignored", e.message().trim()),
            };
            return (KnobsPatch::default(), vec![warning]);
        }
    };
    let mut layer = Layer {
        text,
        patch: KnobsPatch::default(),
        warnings: Vec::new(),
        lines: HashMap::new(),
        budget: None,
        unit: None,
        plain: Vec::new(),
    };
    for (key, value) in table {
        let line = line_of(text, key.span().start);
        layer.key(key.get_ref(), line, value);
    }
    layer.finish();
    let Layer {
        patch,
        mut warnings,
        ..
    } = layer;
    warnings.sort_by_key(|w| w.line);
    (patch, warnings)
}

pub use loupe_assemble::knobs::{check_path_weight, set_path_weight};

/// The table that names the team's shared store (`stores/shared.rs`).
pub const SHARED_TABLE: &str = "shared";

/// `[shared]` as written: the store's URL (never with a password) and,
/// optionally, `mode = "read"`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SharedTable {
    /// `postgres://user@host:port/db`.
    pub url: String,
    /// `read` or `read-write`.
    pub mode: Option<String>,
}

/// The `[shared]` table of `<project_root>/.loupe.toml`: `Ok(None)` when
/// the file or the table is absent, an error naming the file when the
/// table is malformed (a team that asked for a store is told why it is
/// not used, rather than silently indexing alone).
pub fn shared_store(project_root: &Path) -> Result<Option<SharedTable>, String> {
    #[derive(Deserialize)]
    struct File {
        shared: Option<toml::Value>,
    }
    let path = project_root.join(TEAM_FILE);
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    if meta.len() > TEAM_FILE_MAX_BYTES {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{TEAM_FILE}: {e}"))?;
    let Ok(file) = toml::from_str::<File>(&text) else {
        // A file that is not TOML at all is reported by [`load`].
        return Ok(None);
    };
    file.shared
        .map(|table| {
            table
                .try_into::<SharedTable>()
                .map_err(|e| format!("{TEAM_FILE}, [{SHARED_TABLE}]: {}", e.message().trim()))
        })
        .transpose()
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    let before = text.get(..at.min(text.len())).unwrap_or(text);
    before.matches('\n').count() + 1
}

/// `[[path_weights]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWeight {
    glob: String,
    weight: f32,
}

/// `[[models]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: String,
    context_window: u32,
    default_budget: u32,
    #[serde(default)]
    encoding: Encoding,
    #[serde(default)]
    safety_margin: f32,
    #[serde(default)]
    exact: bool,
}

/// `budget_unit` as written.
#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawUnit {
    Tokens,
    Chars,
}

/// One pass over the file's keys, into a patch.
struct Layer<'a> {
    text: &'a str,
    patch: KnobsPatch,
    warnings: Vec<TeamWarning>,
    /// Each key's line and, for a list, each entry's line: where
    /// [`KnobsPatch::validate`]'s problems are reported.
    lines: HashMap<&'static str, (usize, Vec<usize>)>,
    /// `budget` and `budget_unit` are one knob; they meet in [`Layer::finish`].
    budget: Option<(usize, u32)>,
    unit: Option<RawUnit>,
    /// The keys written as [`KnobsPatch`]'s fields, each already decoded
    /// alone without error, in file order.
    plain: Vec<(&'a str, Spanned<DeValue<'a>>)>,
}

/// `name = value` as a one-entry map, for a patch decode.
fn one<'a>(
    name: &'a str,
    value: Spanned<DeValue<'a>>,
) -> MapDeserializer<'a, std::iter::Once<(&'a str, Spanned<DeValue<'a>>)>, toml::de::Error> {
    MapDeserializer::new(std::iter::once((name, value)))
}

impl<'a> Layer<'a> {
    fn warn(&mut self, line: usize, message: String) {
        self.warnings.push(TeamWarning {
            line: Some(line),
            message,
        });
    }

    /// `value` as a `T`, or a warning (at the value's own line when the
    /// parser knows it) and `None`.
    fn value<T: DeserializeOwned>(
        &mut self,
        key: &str,
        line: usize,
        value: impl IntoDeserializer<'a, toml::de::Error>,
    ) -> Option<T> {
        match T::deserialize(value.into_deserializer()) {
            Ok(v) => Some(v),
            Err(e) => {
                let at = e.span().map_or(line, |s| line_of(self.text, s.start));
                self.warn(at, format!("`{key}` ignored: {}", e.message().trim()));
                None
            }
        }
    }

    /// A list whose entries are checked one by one: their lines are kept.
    fn list<T: DeserializeOwned>(
        &mut self,
        key: &'static str,
        line: usize,
        value: Spanned<DeValue<'a>>,
    ) -> Option<Vec<T>> {
        let items: Vec<Spanned<T>> = self.value(key, line, value)?;
        let lines = items
            .iter()
            .map(|s| line_of(self.text, s.span().start))
            .collect();
        self.lines.insert(key, (line, lines));
        Some(items.into_iter().map(Spanned::into_inner).collect())
    }

    fn key(&mut self, key: &str, line: usize, value: Spanned<DeValue<'a>>) {
        if key == SHARED_TABLE {
            // Not a knob: read by [`shared_store`].
            return;
        }
        let Some(&name) = KEYS.iter().find(|k| **k == key) else {
            self.warn(line, format!("unknown knob `{key}` ignored"));
            return;
        };
        self.lines.entry(name).or_insert((line, Vec::new()));
        match name {
            "models" => {
                self.patch.models = self.list::<RawModel>(name, line, value).map(|rows| {
                    rows.into_iter()
                        .map(|row| ModelSpec {
                            name: row.name,
                            encoding: row.encoding,
                            context_window: row.context_window,
                            default_budget: row.default_budget,
                            safety_margin: row.safety_margin,
                            exact: row.exact,
                        })
                        .collect()
                })
            }
            "budget" => self.budget = self.value(key, line, value).map(|b| (line, b)),
            "budget_unit" => self.unit = self.value(key, line, value),
            "path_weights" => {
                self.patch.path_weights = self.list::<RawWeight>(name, line, value).map(|rules| {
                    rules
                        .into_iter()
                        .map(|r| PathWeight {
                            glob: r.glob,
                            weight: r.weight,
                        })
                        .collect()
                })
            }
            _ => {
                // Written as the patch's field is: decoded alone first, so
                // a bad value is a warning of its own and the rest applies.
                if self
                    .value::<KnobsPatch>(key, line, one(name, value.clone()))
                    .is_some()
                {
                    self.plain.push((name, value));
                }
            }
        }
    }

    /// `budget` with its unit (tokens unless `budget_unit` says otherwise),
    /// then every value checked against its range: what is out of range is
    /// a warning at its line (an entry of a list at the entry's line).
    fn finish(&mut self) {
        let plain: MapDeserializer<'a, _, toml::de::Error> =
            MapDeserializer::new(std::mem::take(&mut self.plain).into_iter());
        match KnobsPatch::deserialize(plain) {
            Ok(patch) => {
                let special = std::mem::replace(&mut self.patch, patch);
                self.patch.models = special.models;
                self.patch.path_weights = special.path_weights;
            }
            // Each value decoded alone above: together they do too.
            Err(e) => self.warn(1, format!("ignored: {}", e.message().trim())),
        }
        if let Some((line, n)) = self.budget {
            self.lines.insert("budget", (line, Vec::new()));
            self.patch.budget = Some(match self.unit {
                Some(RawUnit::Chars) => Budget::Chars(n),
                Some(RawUnit::Tokens) | None => Budget::Tokens(n),
            });
        }
        for problem in self.patch.validate() {
            let (line, entries) = self
                .lines
                .get(problem.knob)
                .cloned()
                .unwrap_or((1, Vec::new()));
            let at = problem
                .entry
                .and_then(|i| entries.get(i).copied())
                .unwrap_or(line);
            let message = match problem.entry {
                Some(_) if problem.knob == "path_weights" => {
                    format!("path weight ignored: {}", problem.message)
                }
                Some(_) => format!("model row ignored: {}", problem.message),
                None => format!("`{}` ignored: {}", problem.knob, problem.message),
            };
            self.warn(at, message);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    /// Lays `text` over the defaults and renders what changed and the warnings.
    fn check(text: &str, expect_changed: &[&str], expect_warnings: &[&str]) {
        let mut knobs = Knobs::default();
        let warnings = apply(text, &mut knobs);
        let before = serde_json::to_value(Knobs::default()).unwrap();
        let after = serde_json::to_value(&knobs).unwrap();
        let changed: Vec<String> = after
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| before.get(k.as_str()) != Some(v))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(changed, expect_changed, "for:\n{text}");
        assert_eq!(warnings, expect_warnings, "for:\n{text}");
    }

    #[test]
    fn the_shared_table_names_the_store_and_is_no_knob() {
        let text =
            "budget = 9000\n\n[shared]\nurl = \"postgres://team@db/loupe\"\nmode = \"read\"\n";
        check(text, &["budget={\"tokens\":9000}"], &[]);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(shared_store(dir.path()), Ok(None));
        std::fs::write(dir.path().join(TEAM_FILE), text).unwrap();
        assert_eq!(
            shared_store(dir.path()),
            Ok(Some(SharedTable {
                url: "postgres://team@db/loupe".into(),
                mode: Some("read".into()),
            }))
        );
        std::fs::write(
            dir.path().join(TEAM_FILE),
            "[shared]\nurl = 1\nhost = \"db\"\n",
        )
        .unwrap();
        let err = shared_store(dir.path()).unwrap_err();
        assert!(err.starts_with(".loupe.toml, [shared]"), "{err}");
    }

    #[test]
    fn every_key_is_read() {
        check(
            "model = \"gpt-4o-mini\"\nbudget = 9000\nbudget_unit = \"chars\"\n\
             primers = [\" README.md \", \"\"]\nprimer_boost = 1\nk = 30\nlod = false\n\
             format = \"markdown\"\nrecency_weight = 0.25\nrecency_half_life_days = 7\n\
             min_score = 0.5\nanswer_reserve = 100\nsanitize = false\nredact_secrets = false\n\
             intent = \"tests\"\ntoggles = { scores = true }\n\
             instructions = { review = \"Check the API.\" }\n\
             glue = false\ndiversity = 0.5\nread_files = 5\nread_window = 64\n\
             [[path_weights]]\nglob = \" vendor/** \"\nweight = 0\n\
             [[models]]\nname = \"Ours\"\ncontext_window = 1000\ndefault_budget = 5000\n",
            &[
                "answer_reserve=100",
                "budget={\"chars\":9000}",
                "diversity=0.5",
                "format=\"markdown\"",
                "glue=false",
                "instructions={\"review\":\"Check the API.\"}",
                "intent=\"tests\"",
                "k=30",
                "lod=false",
                "min_score=0.5",
                "model=\"gpt-4o-mini\"",
                "models=[{\"context_window\":1000,\"default_budget\":1000,\"encoding\":\"o200k_base\",\"exact\":false,\"name\":\"ours\",\"safety_margin\":0.0}]",
                "path_weights=[{\"glob\":\"vendor/**\",\"weight\":0.0}]",
                "primer_boost=1.0",
                "primers=[\"README.md\"]",
                "read_files=5",
                "read_window=64",
                "recency_half_life_days=7.0",
                "recency_weight=0.25",
                "redact_secrets=false",
                "sanitize=false",
                "toggles={\"diff_as_code\":false,\"lost_in_middle\":false,\"scores\":true,\"sources\":true,\"structured\":false}",
            ],
            &[],
        );
    }

    #[test]
    fn bad_keys_and_values_are_warnings_with_lines_and_the_rest_applies() {
        check(
            "budget = \"lots\"\nnot_a_knob = 1\nk = 12\n\
             [[path_weights]]\nglob = \"a/**\"\nweight = 3\n\
             [[path_weights]]\nglob = \"b/**\"\nweight = 0\n\
             [[path_weights]]\nglob = \"c/[\"\nweight = 1\n\
             [toggles]\nsourcez = true\n",
            &["k=12", "path_weights=[{\"glob\":\"b/**\",\"weight\":0.0}]"],
            &[
                ".loupe.toml, line 1: `budget` ignored: invalid type: string \"lots\", expected u32",
                ".loupe.toml, line 2: unknown knob `not_a_knob` ignored",
                ".loupe.toml, line 4: path weight ignored: weight 3 for \"a/**\": must be between 0 and 2",
                ".loupe.toml, line 10: path weight ignored: \"c/[\": unclosed character class; missing ']'",
                ".loupe.toml, line 14: `toggles` ignored: unknown field `sourcez`, expected one of `sources`, `scores`, `structured`, `lost_in_middle`, `diff_as_code`",
            ],
        );
        check(
            "budget = 0\nformat = \"html\"\nmin_score = 2.0\nrecency_weight = -1.0\n",
            &[],
            &[
                ".loupe.toml, line 1: `budget` ignored: 0: must be at least 100 (the instructions and the question need room too)",
                ".loupe.toml, line 2: `format` ignored: unknown variant `html`, expected one of `xml`, `markdown`, `json`",
                ".loupe.toml, line 3: `min_score` ignored: 2: must be between 0 and 1",
                ".loupe.toml, line 4: `recency_weight` ignored: -1: must be between 0 and 0.5",
            ],
        );
    }

    #[test]
    fn the_sibling_share_is_a_team_knob() {
        check("sibling_share = 0.0\n", &["sibling_share=0.0"], &[]);
        check(
            "sibling_share = 1.5\n",
            &[],
            &[".loupe.toml, line 1: `sibling_share` ignored: 1.5: must be between 0 and 1"],
        );
    }

    #[test]
    fn every_listed_key_is_known() {
        for key in KEYS.iter() {
            let warnings = apply(&format!("{key} = {{}}\n"), &mut Knobs::default());
            assert!(
                warnings
                    .iter()
                    .all(|w| !w.message.contains("unknown knob") && !w.message.contains("not read")),
                "{key}: {warnings:?}"
            );
        }
    }

    /// The module docs' example shows every key the file may set.
    #[test]
    fn the_docs_example_shows_every_key() {
        let docs: String = include_str!("team.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .collect::<Vec<_>>()
            .join("\n");
        for key in KEYS.iter() {
            assert!(
                docs.contains(&format!("{key} ="))
                    || docs.contains(&format!("[{key}]"))
                    || docs.contains(&format!("[[{key}]]")),
                "{key} is missing from the module docs' example"
            );
        }
    }

    #[test]
    fn a_file_that_is_not_toml_changes_nothing() {
        check(
            "budget = 9000\nprimers = [\n",
            &[],
            &[".loupe.toml, line 2: unclosed array, expected `]`; the file is ignored"],
        );
    }

    #[test]
    fn load_reads_the_project_root_and_tells_a_missing_file_apart() {
        let dir = tempfile::tempdir().unwrap();
        let none = load(dir.path());
        assert!(!none.present);
        assert_eq!(none.knobs, Knobs::default());
        std::fs::write(dir.path().join(TEAM_FILE), "budget = 1234\n").unwrap();
        let team = load(dir.path());
        assert!(team.present && team.warnings.is_empty());
        assert_eq!(team.knobs.budget, Some(Budget::Tokens(1234)));
        let big = "# padding\n".repeat(7000);
        std::fs::write(dir.path().join(TEAM_FILE), big).unwrap();
        let team = load(dir.path());
        assert_eq!(team.knobs, Knobs::default());
        assert_eq!(
            team.warnings[0].to_string(),
            ".loupe.toml: over 65536 bytes, ignored"
        );
    }

    #[test]
    fn set_path_weight_replaces_by_glob_and_adds_new_globs() {
        let mut weights = vec![
            PathWeight {
                glob: "vendor/**".into(),
                weight: 0.0,
            },
            PathWeight {
                glob: "docs/**".into(),
                weight: 0.5,
            },
        ];
        set_path_weight(
            &mut weights,
            PathWeight {
                glob: "vendor/**".into(),
                weight: 1.0,
            },
        );
        set_path_weight(
            &mut weights,
            PathWeight {
                glob: "src/**".into(),
                weight: 2.0,
            },
        );
        let got: Vec<(&str, f32)> = weights
            .iter()
            .map(|w| (w.glob.as_str(), w.weight))
            .collect();
        assert_eq!(got, [("vendor/**", 1.0), ("docs/**", 0.5), ("src/**", 2.0)]);
    }
}
