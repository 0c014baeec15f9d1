//! The token map: a project's indexed tokens as a tree of folders and
//! files, each file marked with what an assembly did with it (in the
//! prompt, degraded, dropped and why, hidden by a path weight, or never
//! retrieved). `loupe map` prints it; it is the data a treemap draws.
//!
//! Tokens are the index tokenizer's (o200k_base), summed over a file's
//! chunks: what the file would cost in full, not what the prompt spent.

use crate::Result;
use crate::project::Project;
use loupe_assemble::rank::{PathRules, PathWeight};
use loupe_assemble::report::{DropReason, ItemStatus};
use loupe_assemble::{Assembly, ItemRow};
use serde::Serialize;
use std::collections::BTreeMap;

/// What an assembly did with one file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum FileStatus {
    /// At least one chunk is in the prompt at its default detail.
    Included,
    /// In the prompt, but only coarser than its default detail.
    Degraded {
        /// The finest level of detail it got.
        lod: u8,
    },
    /// Retrieved, and none of its chunks made it in.
    Dropped {
        /// Why its best-scored chunk is out, in words.
        reason: String,
    },
    /// A path weight of 0 hides it.
    Hidden {
        /// The glob that hides it.
        glob: String,
    },
    /// Never a candidate for this question.
    NotRetrieved,
}

impl FileStatus {
    /// The status in words, as `loupe map` prints it.
    pub fn describe(&self) -> String {
        match self {
            FileStatus::Included => "included".into(),
            FileStatus::Degraded { lod } => format!("degraded (LOD {lod})"),
            FileStatus::Dropped { reason } => format!("dropped: {reason}"),
            FileStatus::Hidden { glob } => format!("hidden by the path weight {glob:?} = 0"),
            FileStatus::NotRetrieved => "not retrieved".into(),
        }
    }
}

/// Files per status under a folder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatusCounts {
    /// In the prompt at their default detail.
    pub included: u32,
    /// In the prompt, coarser.
    pub degraded: u32,
    /// Retrieved, not in the prompt.
    pub dropped: u32,
    /// Hidden by a path weight.
    pub hidden: u32,
    /// Not retrieved.
    pub not_retrieved: u32,
}

impl StatusCounts {
    /// Count one more file with `status`.
    pub fn add(&mut self, status: &FileStatus) {
        match status {
            FileStatus::Included => self.included += 1,
            FileStatus::Degraded { .. } => self.degraded += 1,
            FileStatus::Dropped { .. } => self.dropped += 1,
            FileStatus::Hidden { .. } => self.hidden += 1,
            FileStatus::NotRetrieved => self.not_retrieved += 1,
        }
    }

    /// Add `other`'s counts.
    pub fn merge(&mut self, other: &StatusCounts) {
        self.included += other.included;
        self.degraded += other.degraded;
        self.dropped += other.dropped;
        self.hidden += other.hidden;
        self.not_retrieved += other.not_retrieved;
    }
}

/// A folder or a file of the map.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MapNode {
    /// The last path component (the project's folder name at the root).
    pub name: String,
    /// Project-relative path, `/`-separated; empty at the root.
    pub path: String,
    /// Indexed tokens under it.
    pub tokens: u64,
    /// Indexed files under it (1 for a file).
    pub files: u32,
    /// Chunks under it.
    pub chunks: u32,
    /// A file's status, when the map was built for an assembly.
    pub status: Option<FileStatus>,
    /// Files per status under it, when built for an assembly.
    pub counts: Option<StatusCounts>,
    /// Folders and files in it, most tokens first (then by name).
    pub children: Vec<MapNode>,
}

impl MapNode {
    /// Whether this node is a file (folders exist only around files).
    pub fn is_file(&self) -> bool {
        self.children.is_empty() && !self.path.is_empty()
    }
}

/// Each file's status in `assembly`, or hidden/not retrieved by `rules`.
fn file_status(path: &str, items: Option<&Vec<&ItemRow>>, rules: &PathRules) -> FileStatus {
    let Some(items) = items.filter(|i| !i.is_empty()) else {
        return match rules.weight(path) {
            Some(rule) if rule.weight <= 0.0 => FileStatus::Hidden {
                glob: rule.glob.clone(),
            },
            _ => FileStatus::NotRetrieved,
        };
    };
    if items
        .iter()
        .any(|i| matches!(i.status, ItemStatus::Included))
    {
        return FileStatus::Included;
    }
    if let Some(lod) = items
        .iter()
        .filter(|i| matches!(i.status, ItemStatus::Degraded { .. }))
        .filter_map(|i| i.lod)
        .min()
    {
        return FileStatus::Degraded { lod };
    }
    let best = items.iter().max_by(|a, b| {
        a.score
            .score
            .total_cmp(&b.score.score)
            .then(b.id.cmp(&a.id))
    });
    match best.map(|i| &i.status) {
        Some(ItemStatus::Dropped(DropReason::HiddenByPathWeight { glob })) => {
            FileStatus::Hidden { glob: glob.clone() }
        }
        Some(ItemStatus::Dropped(reason)) => FileStatus::Dropped {
            reason: reason.describe("tokens"),
        },
        _ => FileStatus::NotRetrieved,
    }
}

#[derive(Default)]
struct Folder {
    folders: BTreeMap<String, Folder>,
    files: Vec<MapNode>,
}

impl Folder {
    fn into_node(self, name: String, path: String) -> MapNode {
        let mut children: Vec<MapNode> = self
            .folders
            .into_iter()
            .map(|(n, f)| {
                let p = if path.is_empty() {
                    n.clone()
                } else {
                    format!("{path}/{n}")
                };
                f.into_node(n, p)
            })
            .chain(self.files)
            .collect();
        children.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
        let mut counts: Option<StatusCounts> = None;
        for c in &children {
            let add = match (&c.counts, &c.status) {
                (Some(k), _) => Some(*k),
                (None, Some(s)) => {
                    let mut k = StatusCounts::default();
                    k.add(s);
                    Some(k)
                }
                (None, None) => None,
            };
            if let Some(add) = add {
                counts.get_or_insert_with(StatusCounts::default).merge(&add);
            }
        }
        MapNode {
            name,
            path,
            tokens: children.iter().map(|c| c.tokens).sum(),
            files: children.iter().map(|c| c.files).sum(),
            chunks: children.iter().map(|c| c.chunks).sum(),
            status: None,
            counts,
            children,
        }
    }
}

/// The map of `files` (path, tokens, chunks), marked by `assembly` when
/// given (with `path_weights`, the knobs it was assembled with, to tell
/// hidden files from files never retrieved).
pub fn build(
    root_name: &str,
    files: &[(String, u64, u32)],
    assembly: Option<&Assembly>,
    path_weights: &[PathWeight],
) -> MapNode {
    let (rules, _) = PathRules::new(path_weights);
    let mut by_path: BTreeMap<&str, Vec<&ItemRow>> = BTreeMap::new();
    if let Some(a) = assembly {
        for item in &a.items {
            by_path.entry(item.path.as_str()).or_default().push(item);
        }
    }
    let mut root = Folder::default();
    for (path, tokens, chunks) in files {
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().unwrap_or_default().to_owned();
        let mut folder = &mut root;
        for part in parts {
            folder = folder.folders.entry(part.to_owned()).or_default();
        }
        folder.files.push(MapNode {
            name,
            path: path.clone(),
            tokens: *tokens,
            files: 1,
            chunks: *chunks,
            status: assembly.map(|_| file_status(path, by_path.get(path.as_str()), &rules)),
            counts: None,
            children: Vec::new(),
        });
    }
    root.into_node(root_name.to_owned(), String::new())
}

impl Project {
    /// The token map of everything indexed, marked by `assembly` (asked
    /// with `path_weights`) when given.
    pub async fn token_map(
        &self,
        assembly: Option<&Assembly>,
        path_weights: &[PathWeight],
    ) -> Result<MapNode> {
        self.catch_up().await?;
        let files = self.catalog.file_tokens().await?;
        let name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.root.display().to_string());
        Ok(build(&name, &files, assembly, path_weights))
    }
}
