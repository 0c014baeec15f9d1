//! The user's own choices on top of retrieval: pinned and banned files and
//! chunks ([`Selection`]), the source of an indexed file as it is on disk now
//! ([`crate::Project::indexed_source`]), whether files changed since they were
//! indexed ([`crate::Project::stale_paths`]), and `@` completions over the indexed
//! paths and symbol names ([`crate::Project::complete`]).
//!
//! A [`Target`] names a chunk by path and symbol (or start line), not by its
//! catalog id: ids change when a file is re-indexed, and pins must survive
//! that (they are stored by the app between sessions).
//!
//! Does not rank: a pin only sets [`Signals::pinned`] (ranking gives pinned
//! items 1.0 and packing keeps them), a ban only removes candidates. Never
//! writes anything.

use crate::stores::catalog::Catalog;
use crate::{Error, Result};
use loupe_assemble::{Candidate, Chunk, ChunkId, Signals};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// A folder, a file or one chunk of a file, as the user pinned or banned it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// Every chunk of every indexed file under a folder (at any depth).
    Folder {
        /// Project-relative folder path, without a trailing `/`.
        path: String,
    },
    /// Every chunk of a file.
    File {
        /// Project-relative path.
        path: String,
    },
    /// One chunk: the chunk of `path` defining `symbol` (nearest to
    /// `start_line` when several do), or without a symbol the chunk that
    /// covers `start_line`.
    Chunk {
        /// Project-relative path.
        path: String,
        /// The symbol the chunk defines, if any.
        symbol: Option<String>,
        /// First line when it was chosen.
        start_line: u32,
    },
}

impl Target {
    /// The target naming exactly `chunk`.
    pub fn of_chunk(chunk: &Chunk) -> Self {
        Target::Chunk {
            path: chunk.path.clone(),
            symbol: chunk.symbol.clone(),
            start_line: chunk.start_line,
        }
    }

    /// The file this target is in (the folder, for a folder).
    pub fn path(&self) -> &str {
        match self {
            Target::Folder { path } | Target::File { path } | Target::Chunk { path, .. } => path,
        }
    }

    /// Whether the file `path` is (in) what this target names.
    pub fn covers(&self, path: &str) -> bool {
        match self {
            Target::Folder { path: folder } => path
                .strip_prefix(folder.as_str())
                .is_some_and(|rest| rest.starts_with('/')),
            Target::File { path: p } | Target::Chunk { path: p, .. } => p == path,
        }
    }

    /// The indexed files (`indexed`, sorted) this target is in: its own
    /// file, or every file under its folder.
    fn files<'a>(&self, indexed: &'a BTreeSet<String>) -> Vec<&'a String> {
        match self {
            Target::Folder { path } => {
                let prefix = format!("{path}/");
                indexed
                    .range(prefix.clone()..)
                    .take_while(|p| p.starts_with(&prefix))
                    .collect()
            }
            _ => indexed.get(self.path()).into_iter().collect(),
        }
    }

    /// The chunks (`chunks`, all in files this target covers) that this
    /// target names.
    fn resolve<'a>(&self, chunks: &[&'a Chunk]) -> Vec<&'a Chunk> {
        match self {
            Target::Folder { .. } | Target::File { .. } => chunks.to_vec(),
            Target::Chunk {
                symbol: Some(symbol),
                start_line,
                ..
            } => chunks
                .iter()
                .filter(|c| c.symbol.as_deref() == Some(symbol.as_str()))
                .min_by_key(|c| c.start_line.abs_diff(*start_line))
                .map(|c| vec![*c])
                .unwrap_or_default(),
            Target::Chunk {
                symbol: None,
                start_line,
                ..
            } => chunks
                .iter()
                .filter(|c| c.start_line <= *start_line && *start_line <= c.end_line)
                .min_by_key(|c| c.start_line.abs_diff(*start_line))
                .map(|c| vec![*c])
                .unwrap_or_default(),
        }
    }
}

/// What the user pinned and banned in one project.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Selection {
    /// Always in the prompt (score 1.0, packed first).
    pub pinned: Vec<Target>,
    /// Never in the prompt. A pin on the same chunk wins: it is the more
    /// deliberate choice, and a chunk pin inside a banned file is how a user
    /// keeps one function of a file they otherwise do not want.
    pub banned: Vec<Target>,
}

impl Selection {
    /// Whether nothing is pinned or banned.
    pub fn is_empty(&self) -> bool {
        self.pinned.is_empty() && self.banned.is_empty()
    }
}

/// Candidates after a [`Selection`] was applied.
#[derive(Clone, Debug, Default)]
pub struct Selected {
    /// What assembly should see: retrieved candidates minus bans, with pins
    /// marked and pinned chunks that retrieval did not find added.
    pub candidates: Vec<Candidate>,
    /// Candidates taken out by a ban (so the UI can list and unban them).
    pub banned: Vec<Candidate>,
    /// Pins that name nothing in the index any more (file deleted, symbol renamed).
    pub missing: Vec<Target>,
    /// The pin behind each pinned chunk (the first, when several name it).
    pub pinned_by: HashMap<ChunkId, Target>,
    /// The ban behind each banned chunk.
    pub banned_by: HashMap<ChunkId, Target>,
}

impl Selected {
    /// The files of the banned candidates, each once, sorted.
    pub fn banned_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.banned.iter().map(|c| c.chunk.path.clone()).collect();
        paths.sort();
        paths.dedup();
        paths
    }
}

/// A completion of an `@` mention.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// Whether it completes to a file or a symbol.
    pub kind: CompletionKind,
    /// What to insert after `@`.
    pub value: String,
}

/// What a [`Completion`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionKind {
    /// An indexed file (project-relative path).
    File,
    /// A defined symbol name.
    Symbol,
}

/// The current source of an indexed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedSource {
    /// The file's text now.
    pub text: String,
    /// Whether it differs from what was indexed.
    pub stale: bool,
}

/// Ranking classes of a completion, best first: the typed text starts the
/// name (for a path: the path or its file name), starts a path segment or
/// word, or only occurs inside it.
fn completion_class(candidate: &str, needle: &str) -> Option<u8> {
    let lower = candidate.to_lowercase();
    let file_name = lower.rsplit('/').next().unwrap_or(&lower);
    if lower.starts_with(needle) || file_name.starts_with(needle) {
        return Some(0);
    }
    let at = lower.find(needle)?;
    let before = lower[..at].chars().last();
    Some(if matches!(before, Some('/' | '_' | '.' | '-')) {
        1
    } else {
        2
    })
}

/// What the shells look up in the index by path, id or name: pins and
/// bans laid over candidates, one chunk, a file's source as it is on disk
/// now, which files changed since indexing, `@` completions. Made by the
/// facade's doors (`asking/ask.rs`) from the handles it owns; reads only.
pub(crate) struct Lookup<'a> {
    /// The project folder (canonical).
    pub(crate) root: &'a Path,
    /// The catalog, read as it is now.
    pub(crate) catalog: &'a Catalog,
    /// Every indexed path, sorted, as of the last index run.
    pub(crate) indexed: Arc<BTreeSet<String>>,
    /// Files larger than this are not read.
    pub(crate) max_file_bytes: u64,
}

impl Lookup<'_> {
    /// Apply `selection` to retrieved `candidates`: drop banned ones, mark
    /// pinned ones, and add pinned chunks retrieval did not return (looked
    /// up in the catalog by path, not re-retrieved).
    // Long: bans, then pins by path and by symbol, then catalog lookups for pins retrieval missed, in the order the report explains them.
    pub(crate) async fn select(
        &self,
        candidates: &[Candidate],
        selection: &Selection,
    ) -> Result<Selected> {
        if selection.is_empty() {
            return Ok(Selected {
                candidates: candidates.to_vec(),
                ..Selected::default()
            });
        }
        // The stored chunks of every pinned or banned file, and of the files
        // under a pinned folder. A banned folder is matched against the
        // candidates by path instead: banning `vendor/` must not read all
        // of vendor's chunks on every question.
        let indexed = &self.indexed;
        let mut paths: Vec<String> = selection
            .pinned
            .iter()
            .chain(
                selection
                    .banned
                    .iter()
                    .filter(|t| !matches!(t, Target::Folder { .. })),
            )
            .flat_map(|t| t.files(indexed))
            .cloned()
            .collect();
        paths.sort();
        paths.dedup();
        let stored = self.catalog.chunks_of_paths(&paths).await?;
        let mut by_path: HashMap<&str, Vec<&Chunk>> = HashMap::new();
        for (chunk, _) in &stored {
            by_path.entry(chunk.path.as_str()).or_default().push(chunk);
        }
        for c in candidates {
            if !by_path.contains_key(c.chunk.path.as_str()) {
                by_path
                    .entry(c.chunk.path.as_str())
                    .or_default()
                    .push(&c.chunk);
            }
        }
        let resolve = |targets: &[Target], missing: &mut Vec<Target>| {
            let mut by: HashMap<ChunkId, Target> = HashMap::new();
            for t in targets {
                let chunks: Vec<&Chunk> = match t {
                    Target::Folder { .. } => by_path
                        .iter()
                        .filter(|(p, _)| t.covers(p))
                        .flat_map(|(_, cs)| cs.iter().copied())
                        .collect(),
                    _ => by_path.get(t.path()).cloned().unwrap_or_default(),
                };
                let found = t.resolve(&chunks);
                if found.is_empty() {
                    missing.push(t.clone());
                }
                for c in found {
                    by.entry(c.id).or_insert_with(|| t.clone());
                }
            }
            by
        };
        let mut missing = Vec::new();
        let pinned = resolve(&selection.pinned, &mut missing);
        let mut banned = resolve(&selection.banned, &mut Vec::new());
        banned.retain(|id, _| !pinned.contains_key(id));

        let mut out = Selected {
            missing,
            ..Selected::default()
        };
        let mut seen = HashSet::new();
        for c in candidates {
            seen.insert(c.chunk.id);
            let mut c = c.clone();
            if pinned.contains_key(&c.chunk.id) {
                c.signals.pinned = true;
            } else if banned.contains_key(&c.chunk.id) {
                out.banned.push(c);
                continue;
            }
            out.candidates.push(c);
        }
        // Pinned chunks retrieval did not find, in file order.
        for (chunk, mtime_ns) in stored {
            if pinned.contains_key(&chunk.id) && !seen.contains(&chunk.id) {
                out.candidates.push(Candidate {
                    chunk,
                    signals: Signals {
                        pinned: true,
                        mtime: mtime_ns / 1_000_000_000,
                        ..Signals::default()
                    },
                });
            }
        }
        out.pinned_by = pinned;
        out.banned_by = banned;
        Ok(out)
    }

    /// The chunk with catalog id `id`, if it still exists.
    pub(crate) async fn chunk(&self, id: ChunkId) -> Result<Option<Chunk>> {
        Ok(self
            .catalog
            .chunks(&[id])
            .await?
            .into_iter()
            .next()
            .map(|(c, _)| c))
    }

    /// The text of the indexed file `path` as it is on disk now, and whether
    /// it changed since indexing. Only indexed paths can be read, so this
    /// never reaches outside the project or into ignored files.
    pub(crate) async fn source(&self, path: &str) -> Result<IndexedSource> {
        if !self.indexed.contains(path) {
            return Err(Error::Request(format!("{path} is not an indexed file")));
        }
        let full = self.root.join(path);
        let max = self.max_file_bytes;
        let bytes = tokio::task::block_in_place(|| -> Result<Vec<u8>> {
            let io = |source| Error::Io {
                what: "reading an indexed file",
                path: full.clone(),
                source,
            };
            let size = std::fs::metadata(&full).map_err(io)?.len();
            if size > max {
                return Err(Error::Request(format!(
                    "{path} is {size} bytes now, over the {max}-byte limit"
                )));
            }
            std::fs::read(&full).map_err(io)
        })?;
        let hash = blake3::hash(&bytes).to_hex().to_string();
        let state = self
            .catalog
            .file_states_of(&[path.to_owned()])
            .await?
            .remove(path);
        let stale = state.is_none_or(|s| s.hash != hash);
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::Request(format!("{path} is no longer valid UTF-8")))?;
        Ok(IndexedSource { text, stale })
    }

    /// Which of `paths` changed on disk (or vanished) since they were
    /// indexed. Size and mtime decide, like the incremental index; a file
    /// that cannot be read counts as changed.
    pub(crate) async fn stale(&self, paths: &[String]) -> Result<Vec<String>> {
        let states = self.catalog.file_states_of(paths).await?;
        let root = self.root.to_path_buf();
        let paths = paths.to_vec();
        Ok(tokio::task::block_in_place(|| {
            paths
                .into_iter()
                .filter(|p| {
                    let Some(state) = states.get(p) else {
                        return true;
                    };
                    let Ok(meta) = std::fs::metadata(root.join(p)) else {
                        return true;
                    };
                    let mtime_ns = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
                    meta.len() != state.size || mtime_ns != Some(state.mtime_ns)
                })
                .collect()
        }))
    }

    /// Up to `limit` indexed files and symbol names matching what follows an
    /// `@` (case-insensitive): prefix matches first (of the path, its file
    /// name or the symbol), then matches at a segment or word start, then
    /// anywhere; within a class files before symbols, shorter first.
    pub(crate) async fn complete(&self, typed: &str, limit: usize) -> Result<Vec<Completion>> {
        let needle = typed.trim().trim_start_matches('@').to_lowercase();
        if needle.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut found: Vec<(u8, CompletionKind, usize, String)> = Vec::new();
        for p in self.indexed.iter() {
            if let Some(class) = completion_class(p, &needle) {
                found.push((class, CompletionKind::File, p.len(), p.clone()));
            }
        }
        // The catalog orders by match position, so a limited page still
        // holds the best symbol matches.
        let names = self
            .catalog
            .symbol_names_matching(&needle, u32::try_from(limit).unwrap_or(u32::MAX))
            .await?;
        for name in names {
            if let Some(class) = completion_class(&name, &needle) {
                found.push((class, CompletionKind::Symbol, name.len(), name));
            }
        }
        found.sort_by(|a, b| (a.0, a.1 as u8, a.2, &a.3).cmp(&(b.0, b.1 as u8, b.2, &b.3)));
        found.dedup_by(|a, b| a.3 == b.3);
        Ok(found
            .into_iter()
            .take(limit)
            .map(|(_, kind, _, value)| Completion { kind, value })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_classes_prefer_prefixes_then_segment_starts() {
        assert_eq!(completion_class("src/pack.rs", "src"), Some(0));
        assert_eq!(completion_class("src/pack.rs", "pack"), Some(0));
        assert_eq!(completion_class("src/packing/mod.rs", "pack"), Some(1));
        assert_eq!(completion_class("pack_items", "items"), Some(1));
        assert_eq!(completion_class("unpack", "pack"), Some(2));
        assert_eq!(completion_class("render", "pack"), None);
    }
}
