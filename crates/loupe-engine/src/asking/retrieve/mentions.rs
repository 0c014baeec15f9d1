//! The mention signals: files the question names (`src/lib.rs`, with or
//! without a line), files and symbols it pins (`@path`, `@symbol`), and
//! the primer files that go in whatever the question.

use super::{DEFAULT_PRIMERS, Definitions, Retrieval, strip_line_suffix};
use crate::{Error, Result};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

impl Retrieval<'_> {
    /// Chunks of the files the question mentions or pins, of the symbols it
    /// pins, and of the primer files. A pinned path that names no indexed
    /// file is an error; a pinned name that names no symbol is not.
    pub(super) async fn gather_mentions(&mut self) -> Result<()> {
        let (query, all_paths) = (self.query, &self.snapshot.paths);
        let matching = |needle: &str| -> Vec<String> {
            all_paths
                .iter()
                .filter(|p| names_path(p, needle))
                .cloned()
                .collect()
        };
        let mut path_files = Vec::new();
        for p in &query.paths {
            path_files.extend(matching(p));
        }
        let mut pinned_files = Vec::new();
        for p in &query.pinned_paths {
            let found = matching(p);
            if found.is_empty() {
                return Err(Error::Request(format!(
                    "@{p}: no indexed file has that path"
                )));
            }
            pinned_files.extend(found);
        }
        let primer_names: Vec<String> = query
            .primers
            .clone()
            .unwrap_or_else(|| DEFAULT_PRIMERS.iter().map(|s| (*s).to_owned()).collect());
        let primer_files = self.primer_files(all_paths, &primer_names);
        let wanted: Vec<String> = path_files
            .iter()
            .chain(&pinned_files)
            .chain(&primer_files)
            .cloned()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        for (path, id) in self.catalog.chunk_ids_of_paths(&wanted).await? {
            let is_pinned = pinned_files.contains(&path);
            let is_primer = primer_files.contains(&path);
            let mentioned = path_files.contains(&path);
            if mentioned || is_pinned || is_primer {
                let s = self.g.get(id);
                if mentioned {
                    s.path_hits += 1;
                }
                s.pinned |= is_pinned;
                s.primer |= is_primer;
            }
        }
        let pinned_symbols =
            Definitions::of(self.catalog, &query.pinned_symbols, usize::MAX).await?;
        for sym in &query.pinned_symbols {
            // `@name` that names no symbol is most often a person in a pasted
            // issue (`@octocat`), not a typo: it pins nothing, and
            // `Project::assemble` reports it. A path mention that names no
            // file stays an error above.
            for &id in pinned_symbols.exact(sym) {
                self.g.get(id).pinned = true;
            }
        }
        Ok(())
    }
}

/// Whether `mention` (`src/lib.rs`, `lib.rs`, `@./src/lib.rs`,
/// `lib.rs:12`) names the file at `path`: the path itself, or a suffix of
/// it that starts at a `/`.
pub(super) fn names_path(path: &str, mention: &str) -> bool {
    let m = strip_line_suffix(mention.trim_start_matches('@').trim_start_matches("./"));
    !m.is_empty() && (path == m || path.ends_with(m) && path[..path.len() - m.len()].ends_with('/'))
}

/// Whether `path` is a primer file for `names`: a bare name matches a file
/// of that name anywhere, a name with a slash only the path itself.
pub(super) fn is_primer_path(path: &str, names: &[String]) -> bool {
    names.iter().any(|n| {
        path.ends_with(n.as_str())
            && (path.len() == n.len()
                || !n.contains('/') && path[..path.len() - n.len()].ends_with('/'))
    })
}

impl Retrieval<'_> {
    /// Indexed paths that are primer files for `names`. A bare name matches
    /// a file of that name anywhere; a name with a slash only the path
    /// itself.
    fn primer_files(&self, paths: &Arc<BTreeSet<String>>, names: &[String]) -> Vec<String> {
        let mut memo = self.primers.lock().unwrap_or_else(|e| e.into_inner());
        memo.files(paths, names, || {
            paths
                .iter()
                .filter(|p| is_primer_path(p, names))
                .cloned()
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_names_a_file_by_its_path_or_a_suffix_at_a_slash() {
        assert!(names_path("src/lib.rs", "src/lib.rs"));
        assert!(names_path("src/lib.rs", "lib.rs:12"));
        assert!(names_path("src/lib.rs", "@./src/lib.rs"));
        assert!(!names_path("src/mylib.rs", "lib.rs"));
        assert!(!names_path("src/lib.rs", ""));
    }
}
