//! What the app remembers between sessions, as small JSON files under the
//! data root (never inside the user's project):
//!
//! - per project, `<project data dir>/app.json`: the knobs the user changed
//!   (only the fields that differ from the team's defaults) and the pinned
//!   and banned chunks and files;
//! - `<data root>/app/recent.json`: recently opened projects;
//! - `<data root>/app/presets.json`: named knob presets, shared by all projects;
//! - `<data root>/app/expander.json`: the secondary LLM's endpoint, if the
//!   user set one (with its API key: the file is the user's alone, 0600).
//!
//! Knobs come in three layers: the built-in defaults, then the team's
//! `.loupe.toml` committed in the project root (read, never written, by
//! the engine's [`loupe_engine::team`], as `loupe query` reads it), then
//! the user's own changes. Storing only the user's differences means a
//! later change to `.loupe.toml` still reaches every knob the user did not
//! touch.
//!
//! *Invariant:* a missing, unreadable or malformed file never stops the app:
//! it reads as empty (malformed `.loupe.toml` becomes warnings), and writes
//! go to a temporary file renamed over the old one, so a crash mid-write
//! leaves the previous version.
//!
//! This module knows the DTOs (they are what is stored) but no IPC.

use crate::dto::{ErrorCode, ErrorDto, KnobsDto, MarkDto, PresetDto, RecentDto};
use loupe_engine::{Selection, Target};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub use loupe_engine::team::TEAM_FILE;
/// How many recent projects are remembered.
pub const RECENT_MAX: usize = 12;

/// Per-project state, stored in the project's data directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProjectPrefs {
    /// Knob fields the user changed, over the team's defaults.
    pub knobs: Map<String, Value>,
    /// Pinned and banned chunks and files.
    pub selection: Selection,
}

/// A project opened recently.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recent {
    /// Canonical root.
    pub root: String,
    /// Seconds since the Unix epoch.
    pub opened_at: i64,
}

/// A named set of knobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preset {
    /// Name shown in the picker (unique).
    pub name: String,
    /// The knobs it applies.
    pub knobs: KnobsDto,
}

/// An error reading or writing a prefs file.
#[derive(Debug)]
pub struct PrefsError(pub String);

impl std::fmt::Display for PrefsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A prefs file that cannot be written reaches the UI as a storage error.
impl From<PrefsError> for ErrorDto {
    fn from(e: PrefsError) -> Self {
        ErrorDto::new(ErrorCode::Storage, e.0)
    }
}

// What is stored and what crosses IPC convert here, where both are known
// (the DTOs know nothing of this module).

impl From<MarkDto> for Mark {
    fn from(m: MarkDto) -> Self {
        match m {
            MarkDto::Pin => Mark::Pin,
            MarkDto::Ban => Mark::Ban,
            MarkDto::Clear => Mark::Clear,
        }
    }
}

impl From<Preset> for PresetDto {
    fn from(p: Preset) -> Self {
        Self {
            name: p.name,
            knobs: p.knobs,
        }
    }
}

impl From<Recent> for RecentDto {
    fn from(r: Recent) -> Self {
        Self {
            root: r.root,
            opened_at: r.opened_at,
        }
    }
}

/// Where the app-wide files live.
fn app_dir(data_root: &Path) -> PathBuf {
    data_root.join("app")
}

fn project_file(project_data_dir: &Path) -> PathBuf {
    project_data_dir.join("app.json")
}

/// Read JSON from `path`; missing or malformed files read as `T::default()`.
fn read_json<T: for<'de> Deserialize<'de> + Default>(path: &Path) -> T {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!("ignoring malformed {}: {e}", path.display());
            T::default()
        }),
        Err(_) => T::default(),
    }
}

/// Write `value` as JSON to `path` through a temporary file and a rename.
fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), PrefsError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        PrefsError(format!("{what} {}: {e}", path.display()))
    };
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| fail("encoding", &e))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail("creating the folder of", &e))?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, bytes).map_err(|e| fail("writing", &e))?;
    std::fs::rename(&tmp, path).map_err(|e| fail("replacing", &e))
}

/// The project's stored prefs.
pub fn load_project(project_data_dir: &Path) -> ProjectPrefs {
    read_json(&project_file(project_data_dir))
}

/// Store the project's prefs.
pub fn save_project(project_data_dir: &Path, prefs: &ProjectPrefs) -> Result<(), PrefsError> {
    write_json(&project_file(project_data_dir), prefs)
}

/// `over`'s top-level fields laid over `base`'s: the user's stored changes.
/// Fields of `over` that do not fit (a stored knob from an older Loupe) are
/// skipped with a warning instead of failing the whole layer.
pub fn layer(base: &KnobsDto, over: &Map<String, Value>, source: &str) -> (KnobsDto, Vec<String>) {
    let mut knobs = base.clone();
    let mut warnings = Vec::new();
    for (key, value) in over {
        let Ok(Value::Object(mut merged)) = serde_json::to_value(&knobs) else {
            break;
        };
        if !merged.contains_key(key) {
            warnings.push(format!("{source}: unknown knob `{key}` ignored"));
            continue;
        }
        merged.insert(key.clone(), value.clone());
        match serde_json::from_value::<KnobsDto>(Value::Object(merged)) {
            Ok(k) => knobs = k,
            Err(e) => warnings.push(format!("{source}: `{key}` ignored: {e}")),
        }
    }
    (knobs, warnings)
}

/// The fields of `knobs` that differ from `base` (what a user layer stores).
pub fn difference(base: &KnobsDto, knobs: &KnobsDto) -> Map<String, Value> {
    let (Ok(Value::Object(base)), Ok(Value::Object(knobs))) =
        (serde_json::to_value(base), serde_json::to_value(knobs))
    else {
        return Map::new();
    };
    knobs
        .into_iter()
        .filter(|(k, v)| base.get(k) != Some(v))
        .collect()
}

/// The team's defaults: the built-in knobs with the project's `.loupe.toml`
/// laid over them, whether that file exists, and what in it was ignored.
/// The file is read by the engine ([`loupe_engine::team`]), the one
/// definition of its keys that the CLI uses too.
pub fn team_knobs(project_root: &Path) -> (KnobsDto, bool, Vec<String>) {
    let team = loupe_engine::team::load(project_root);
    let warnings = team.warnings.iter().map(ToString::to_string).collect();
    (team.knobs.into(), team.present, warnings)
}

/// Recently opened projects, newest first.
pub fn recent(data_root: &Path) -> Vec<Recent> {
    read_json(&app_dir(data_root).join("recent.json"))
}

/// Put `root` first in the recent list.
pub fn touch_recent(data_root: &Path, root: &str, now: i64) -> Result<Vec<Recent>, PrefsError> {
    let mut list = recent(data_root);
    list.retain(|r| r.root != root);
    list.insert(
        0,
        Recent {
            root: root.to_owned(),
            opened_at: now,
        },
    );
    list.truncate(RECENT_MAX);
    write_json(&app_dir(data_root).join("recent.json"), &list)?;
    Ok(list)
}

/// Forget `root` in the recent list (its folder is gone).
pub fn forget_recent(data_root: &Path, root: &str) -> Result<Vec<Recent>, PrefsError> {
    let mut list = recent(data_root);
    list.retain(|r| r.root != root);
    write_json(&app_dir(data_root).join("recent.json"), &list)?;
    Ok(list)
}

/// Saved presets, by name.
pub fn presets(data_root: &Path) -> Vec<Preset> {
    read_json(&app_dir(data_root).join("presets.json"))
}

/// Save `knobs` as the preset `name` (replacing one of that name).
pub fn save_preset(
    data_root: &Path,
    name: &str,
    knobs: KnobsDto,
) -> Result<Vec<Preset>, PrefsError> {
    let mut list = presets(data_root);
    list.retain(|p| p.name != name);
    list.push(Preset {
        name: name.to_owned(),
        knobs,
    });
    list.sort_by(|a, b| a.name.cmp(&b.name));
    write_json(&app_dir(data_root).join("presets.json"), &list)?;
    Ok(list)
}

/// Delete the preset `name`.
pub fn delete_preset(data_root: &Path, name: &str) -> Result<Vec<Preset>, PrefsError> {
    let mut list = presets(data_root);
    list.retain(|p| p.name != name);
    write_json(&app_dir(data_root).join("presets.json"), &list)?;
    Ok(list)
}

fn expander_file(data_root: &Path) -> PathBuf {
    app_dir(data_root).join("expander.json")
}

/// The secondary LLM's endpoint, if the user set one.
pub fn expander(data_root: &Path) -> Option<loupe_engine::asking::expand::ExpandConfig> {
    read_json(&expander_file(data_root))
}

/// Store `config` as the secondary LLM (`None`: turn it off).
pub fn save_expander(
    data_root: &Path,
    config: Option<&loupe_engine::asking::expand::ExpandConfig>,
) -> Result<(), PrefsError> {
    let path = expander_file(data_root);
    let Some(config) = config else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(PrefsError(format!("removing {}: {e}", path.display())))
            }
            _ => Ok(()),
        };
    };
    // Like `write_json`, but the file is created readable by the user
    // alone before the key is written into it.
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        PrefsError(format!("{what} {}: {e}", path.display()))
    };
    let bytes = serde_json::to_vec_pretty(config).map_err(|e| fail("encoding", &e))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail("creating the folder of", &e))?;
    }
    let tmp = path.with_extension("json.tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp).map_err(|e| fail("writing", &e))?;
    std::io::Write::write_all(&mut file, &bytes).map_err(|e| fail("writing", &e))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(|e| fail("replacing", &e))
}

/// How a target is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Always include.
    Pin,
    /// Never include.
    Ban,
    /// Neither (removes an earlier pin or ban of the same target).
    Clear,
}

/// Apply `mark` to `target` in `selection`: a target is in at most one list.
pub fn mark(selection: &mut Selection, target: Target, mark: Mark) {
    selection.pinned.retain(|t| *t != target);
    selection.banned.retain(|t| *t != target);
    match mark {
        Mark::Pin => selection.pinned.push(target),
        Mark::Ban => selection.banned.push(target),
        Mark::Clear => {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    #[test]
    fn the_user_layer_keeps_only_differences_and_follows_the_team_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(TEAM_FILE),
            "budget = 9000\nprimer_boost = 0.5\nnot_a_knob = 1\n\
             [[path_weights]]\nglob = \"vendor/**\"\nweight = 0.0\n",
        )
        .unwrap();
        let (team, present, warnings) = team_knobs(dir.path());
        assert!(present);
        assert_eq!(team.budget, Some(9000));
        assert_eq!(team.path_weights.len(), 1);
        assert_eq!(
            warnings,
            [".loupe.toml, line 3: unknown knob `not_a_knob` ignored"]
        );

        let mut mine = team.clone();
        mine.primer_boost = 0.1;
        let diff = difference(&team, &mine);
        assert_eq!(diff.keys().collect::<Vec<_>>(), ["primer_boost"]);

        // The team raises the budget later: the user's layer does not pin the old one.
        std::fs::write(dir.path().join(TEAM_FILE), "budget = 12000\n").unwrap();
        let (team, _, _) = team_knobs(dir.path());
        let (effective, warnings) = layer(&team, &diff, "saved knobs");
        assert!(warnings.is_empty());
        assert_eq!(effective.budget, Some(12000));
        assert_eq!(effective.primer_boost, 0.1);
    }

    #[test]
    fn a_malformed_team_file_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(TEAM_FILE), "budget = [").unwrap();
        let (knobs, present, warnings) = team_knobs(dir.path());
        assert!(present);
        assert_eq!(knobs, KnobsDto::default());
        assert_eq!(warnings.len(), 1);
        std::fs::write(dir.path().join(TEAM_FILE), "budget = \"lots\"\n").unwrap();
        let (knobs, _, warnings) = team_knobs(dir.path());
        assert_eq!(knobs, KnobsDto::default());
        assert!(
            warnings[0].starts_with(".loupe.toml, line 1: `budget` ignored"),
            "{warnings:?}"
        );
    }

    #[test]
    fn recent_projects_are_newest_first_without_duplicates() {
        let data = tempfile::tempdir().unwrap();
        assert!(recent(data.path()).is_empty());
        touch_recent(data.path(), "/a", 1).unwrap();
        touch_recent(data.path(), "/b", 2).unwrap();
        let list = touch_recent(data.path(), "/a", 3).unwrap();
        let roots: Vec<&str> = list.iter().map(|r| r.root.as_str()).collect();
        assert_eq!(roots, ["/a", "/b"]);
        assert_eq!(recent(data.path()), list);
        let list = forget_recent(data.path(), "/a").unwrap();
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn a_corrupt_prefs_file_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.json"), b"{not json").unwrap();
        assert_eq!(load_project(dir.path()), ProjectPrefs::default());
    }

    #[test]
    fn marking_moves_a_target_between_lists() {
        let mut s = Selection::default();
        let t = Target::File {
            path: "a.rs".into(),
        };
        mark(&mut s, t.clone(), Mark::Pin);
        mark(&mut s, t.clone(), Mark::Ban);
        assert!(s.pinned.is_empty());
        assert_eq!(s.banned, std::slice::from_ref(&t));
        mark(&mut s, t, Mark::Clear);
        assert!(s.is_empty());
    }
}
