//! The token map: a project's indexed tokens as a tree of folders and
//! files, each file marked with what an assembly did with it (in the
//! prompt, degraded, dropped and why, hidden by a path weight, or never
//! retrieved). `loupe map` prints it; it is the data a treemap draws.
//!
//! Tokens are the index tokenizer's (o200k_base), summed over a file's
//! chunks: what the file would cost in full, not what the prompt spent.

use loupe_assemble::rank::{PathRules, PathWeight};
use loupe_assemble::report::{DropReason, ItemStatus};
use loupe_assemble::{Assembly, ItemRow};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::project::FileTokens;

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
    /// Retrieved, and the user banned it (or its retrieved chunks).
    Banned,
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
            FileStatus::Banned => "banned".into(),
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
    /// Banned by the user.
    pub banned: u32,
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
            FileStatus::Banned => self.banned += 1,
            FileStatus::NotRetrieved => self.not_retrieved += 1,
        }
    }

    /// Add `other`'s counts.
    pub fn merge(&mut self, other: &StatusCounts) {
        self.included += other.included;
        self.degraded += other.degraded;
        self.dropped += other.dropped;
        self.hidden += other.hidden;
        self.banned += other.banned;
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

    /// The folder or file at the project-relative `path` under this node
    /// (`""`: this node).
    pub fn find(&self, path: &str) -> Option<&MapNode> {
        let path = path.trim_matches('/');
        if path == self.path {
            return Some(self);
        }
        let inside = |child: &str| {
            path.strip_prefix(child)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        self.children
            .iter()
            .find(|c| inside(&c.path))
            .and_then(|c| c.find(path))
    }
}

/// Each file's status in `assembly`, or banned (`banned`: a chunk of it
/// was retrieved and banned), or hidden/not retrieved by `rules`.
fn file_status(
    path: &str,
    items: Option<&Vec<&ItemRow>>,
    banned: bool,
    rules: &PathRules,
) -> FileStatus {
    let in_prompt = items.is_some_and(|items| {
        items
            .iter()
            .any(|i| matches!(i.status, ItemStatus::Included | ItemStatus::Degraded { .. }))
    });
    if banned && !in_prompt {
        return FileStatus::Banned;
    }
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

/// What marks a map: an assembly, the path weights it was asked with (to
/// tell hidden files from files never retrieved) and the paths of the
/// retrieved chunks the user banned (they are not among its items).
#[derive(Clone, Copy, Debug)]
pub struct Marks<'a> {
    /// The assembly.
    pub assembly: &'a Assembly,
    /// The knobs' path weights.
    pub path_weights: &'a [PathWeight],
    /// Paths of banned candidates.
    pub banned: &'a [String],
}

/// The map of `files` (path, tokens, chunks), marked by `marks` when given.
pub fn build(root_name: &str, files: &[(String, u64, u32)], marks: Option<Marks<'_>>) -> MapNode {
    let assembly = marks.map(|m| m.assembly);
    let (rules, _) = PathRules::new(marks.map_or(&[][..], |m| m.path_weights));
    let banned: std::collections::BTreeSet<&str> = marks
        .map(|m| m.banned.iter().map(String::as_str).collect())
        .unwrap_or_default();
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
            status: assembly.map(|_| {
                file_status(
                    path,
                    by_path.get(path.as_str()),
                    banned.contains(path.as_str()),
                    &rules,
                )
            }),
            counts: None,
            children: Vec::new(),
        });
    }
    root.into_node(root_name.to_owned(), String::new())
}

/// The token map of `files`, its root named after the project folder
/// `root`, marked by `marks` when given.
pub(crate) fn of_project(root: &Path, files: &FileTokens, marks: Option<Marks<'_>>) -> MapNode {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    build(&name, files, marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<(String, u64, u32)> {
        [
            ("src/a.rs", 30),
            ("src/ab/c.rs", 20),
            ("src/ab.rs", 5),
            ("docs/x.md", 7),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_owned(), t, 1))
        .collect()
    }

    #[test]
    fn find_walks_to_a_folder_or_file_and_not_to_a_name_prefix() {
        let root = build("proj", &files(), None);
        assert_eq!(root.find("").map(|n| n.tokens), Some(62));
        assert_eq!(root.find("src").map(|n| n.tokens), Some(55));
        assert_eq!(root.find("src/ab/").map(|n| n.tokens), Some(20));
        // `src/ab.rs` is not inside the folder `src/ab`.
        assert_eq!(root.find("src/ab.rs").map(|n| n.is_file()), Some(true));
        assert_eq!(
            root.find("src/ab/c.rs").map(|n| n.name.as_str()),
            Some("c.rs")
        );
        assert!(root.find("src/zz").is_none());
        assert!(root.find("sr").is_none());
    }
}
