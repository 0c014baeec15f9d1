//! The wire type of the token map (the treemap's data): one folder's
//! subtree, cut at a depth and at a number of children per folder so a
//! 34k-file project still sends a few hundred nodes. What is cut is
//! summed, never lost: a folder says how many children and tokens it did
//! not send.

use super::count;
use loupe_engine::asking::map::{FileStatus, MapNode, StatusCounts};
use serde::{Deserialize, Serialize};

/// Which part of the map to send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MapViewDto {
    /// The folder (or file) shown, project-relative; `""` for the project.
    pub under: String,
    /// Levels of children sent (1–4).
    pub depth: u32,
    /// Children sent per folder, the largest (1–500); the rest are folded.
    pub per_folder: u32,
}

/// What the current assembly did with a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum MapStatusDto {
    /// In the prompt at its default detail.
    Included,
    /// In the prompt, coarser.
    Degraded,
    /// Retrieved, not in the prompt.
    Dropped,
    /// A path weight of 0 hides it.
    Hidden,
    /// Retrieved, and banned by the user.
    Banned,
    /// Never a candidate for this question.
    NotRetrieved,
}

/// Files per status under a folder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MapCountsDto {
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

impl From<&StatusCounts> for MapCountsDto {
    fn from(k: &StatusCounts) -> Self {
        MapCountsDto {
            included: k.included,
            degraded: k.degraded,
            dropped: k.dropped,
            hidden: k.hidden,
            banned: k.banned,
            not_retrieved: k.not_retrieved,
        }
    }
}

/// A folder or a file of the token map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MapNodeDto {
    /// The last path component (the project's folder name at the root).
    pub name: String,
    /// Project-relative path, `/`-separated; empty at the root.
    pub path: String,
    /// A file (else a folder).
    pub file: bool,
    /// Indexed tokens under it (o200k_base, what it would cost in full).
    #[cfg_attr(test, ts(type = "number"))]
    pub tokens: u64,
    /// Indexed files under it.
    pub files: u32,
    /// A file's status for the current question (`null` with no question).
    pub status: Option<MapStatusDto>,
    /// Why a file is out or coarser, in words ("dropped: beyond k",
    /// "hidden by the path weight \"tests/**\" = 0", "degraded (LOD 2)").
    pub why: Option<String>,
    /// Files per status under a folder (`null` with no question).
    pub counts: Option<MapCountsDto>,
    /// Folders and files in it, most tokens first; empty below the depth
    /// asked for.
    pub children: Vec<MapNodeDto>,
    /// Children not sent (past the depth, or past the per-folder cap).
    pub folded: u32,
    /// Their tokens.
    #[cfg_attr(test, ts(type = "number"))]
    pub folded_tokens: u64,
}

impl MapNodeDto {
    /// `node`'s subtree down to `depth` levels of children, at most
    /// `per_folder` children each (the largest; the rest folded).
    pub fn new(node: &MapNode, depth: u32, per_folder: usize) -> Self {
        let (status, why) = match &node.status {
            None => (None, None),
            Some(s) => {
                let status = match s {
                    FileStatus::Included => MapStatusDto::Included,
                    FileStatus::Degraded { .. } => MapStatusDto::Degraded,
                    FileStatus::Dropped { .. } => MapStatusDto::Dropped,
                    FileStatus::Hidden { .. } => MapStatusDto::Hidden,
                    FileStatus::Banned => MapStatusDto::Banned,
                    FileStatus::NotRetrieved => MapStatusDto::NotRetrieved,
                };
                (Some(status), Some(s.describe()))
            }
        };
        let sent = if depth == 0 {
            0
        } else {
            node.children.len().min(per_folder)
        };
        let children: Vec<MapNodeDto> = node.children[..sent]
            .iter()
            .map(|c| MapNodeDto::new(c, depth - 1, per_folder))
            .collect();
        let rest = &node.children[sent..];
        MapNodeDto {
            name: node.name.clone(),
            path: node.path.clone(),
            file: node.is_file(),
            tokens: node.tokens,
            files: node.files,
            status,
            why,
            counts: node.counts.as_ref().map(Into::into),
            children,
            folded: count(rest.len() as u64),
            folded_tokens: rest.iter().map(|c| c.tokens).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loupe_engine::asking::map::build;

    #[test]
    fn a_cut_subtree_keeps_every_token_and_says_what_it_folded() {
        let files: Vec<(String, u64, u32)> = [
            ("src/a.rs", 50),
            ("src/b.rs", 30),
            ("src/c.rs", 10),
            ("src/deep/x.rs", 5),
            ("README.md", 3),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_owned(), t, 1))
        .collect();
        let root = build("proj", &files, None);
        let dto = MapNodeDto::new(&root, 1, 2);
        assert_eq!(dto.tokens, 98);
        let names: Vec<&str> = dto.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["src", "README.md"]);
        let src = &dto.children[0];
        assert!(!src.file && dto.children[1].file);
        // One level only: src's children are folded into numbers.
        assert!(src.children.is_empty());
        assert_eq!((src.folded, src.folded_tokens), (4, 95));
        let src = MapNodeDto::new(root.find("src").expect("src"), 2, 2);
        assert_eq!((src.folded, src.folded_tokens), (2, 15));
        let shown: u64 = src.children.iter().map(|c| c.tokens).sum();
        assert_eq!(shown + src.folded_tokens, src.tokens);
        assert!(src.status.is_none() && src.counts.is_none());
    }
}
