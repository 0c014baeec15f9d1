//! Commit history as evidence: past commits whose messages resemble the
//! question point at the files they changed.
//!
//! A question like "add Kconfig to the file types" shares no word with the
//! table it is answered in, but earlier commits "add hy", "add `.env` to
//! `sh`" changed that same table. [`History`] reads the last
//! [`MAX_COMMITS`] non-merge commits reachable from a revision with `git
//! log` (read-only; the project is never written to), indexes their
//! messages in an in-memory tantivy index with the code analyzer, and turns
//! the commits most similar to a question into a ranking of files: each
//! commit gives its BM25 score, shared among the files it changed.
//!
//! No git, no repository or no commits → no history, and retrieval works
//! as before. Paths are made relative to the project root; files outside it
//! are dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::{Index, IndexReader, Term, doc};

use crate::Result;
use crate::stores::lexical::{ANALYZER, analyzer};

/// Commits read, newest first. Enough for years of a busy project; reading
/// them is one `git log` of a second or two on a large repository.
pub const MAX_COMMITS: usize = 5_000;
/// Commits that changed more files than this (mass renames, reformatting,
/// vendoring) say nothing about any one file and are skipped.
pub const MAX_FILES_PER_COMMIT: usize = 40;
/// Most similar commits whose files are ranked.
const TOP_COMMITS: usize = 30;

/// Where the history comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistorySource {
    /// The repository the project root is in, at its `HEAD`.
    Repo(PathBuf),
    /// A git directory (bare mirror) at a revision, for a work tree that has
    /// no `.git` of its own (`loupe eval`).
    GitDir {
        /// The git directory.
        git_dir: PathBuf,
        /// Commit, branch or tag.
        rev: String,
    },
}

/// An index of commit messages and the files each commit changed.
pub struct History {
    reader: IndexReader,
    message: Field,
    ordinal: Field,
    /// Per commit (by ordinal): indices into `paths`.
    files: Vec<Vec<u32>>,
    paths: Vec<String>,
    /// The revision read, as a full hash.
    head: String,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("commits", &self.files.len())
            .field("head", &self.head)
            .finish()
    }
}

/// A git command with `args` in the context of `source`: paths as bytes,
/// not C-quoted; no lock files, no pager, no prompts.
fn git_command(source: &HistorySource, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    match source {
        HistorySource::Repo(root) => cmd.arg("-C").arg(root),
        HistorySource::GitDir { git_dir, .. } => cmd.arg("--git-dir").arg(git_dir),
    };
    cmd.args(["-c", "core.quotepath=false"])
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(std::process::Stdio::null());
    cmd
}

/// Runs git with `args` in the context of `source`; `None` when git is
/// missing or says no (not a repository, unknown revision, no commits).
fn git(source: &HistorySource, args: &[&str]) -> Option<String> {
    let out = git_command(source, args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Why `source` gives no history, in words for the user: asked of git
/// only after a read found none.
pub fn why_none(source: &HistorySource) -> String {
    let commit = format!("{}^{{commit}}", revision(source));
    let out = git_command(source, &["rev-parse", "--verify", &commit]).output();
    let Ok(out) = out else {
        return "git is not installed".into();
    };
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if out.status.success() {
        "git log gave no commits".into()
    } else if err.contains("dubious ownership") {
        "git refuses the repository: another user owns it \
         (`git config --global --add safe.directory <path>` allows it)"
            .into()
    } else if err.contains("not a git repository") {
        "not in a git repository".into()
    } else if err.contains("Needed a single revision") || err.contains("unknown revision") {
        "the repository has no commits yet".into()
    } else if first.is_empty() {
        format!("git failed ({})", out.status)
    } else {
        format!("git: {}", first.trim_start_matches("fatal: "))
    }
}

/// The revision `source` names: `HEAD`, or a mirror's commit.
fn revision(source: &HistorySource) -> &str {
    match source {
        HistorySource::Repo(_) => "HEAD",
        HistorySource::GitDir { rev, .. } => rev.as_str(),
    }
}

/// The commit `source` points at (full hash), if it has one.
pub fn head(source: &HistorySource) -> Option<String> {
    let commit = format!("{}^{{commit}}", revision(source));
    let out = git(source, &["rev-parse", "--verify", "--quiet", &commit])?;
    let head = out.trim();
    (!head.is_empty()).then(|| head.to_owned())
}

impl History {
    /// Reads the history of `source`. `Ok(None)` when there is none to read.
    pub fn read(source: &HistorySource) -> Result<Option<History>> {
        let Some(head) = head(source) else {
            return Ok(None);
        };
        // Paths in `git log` are relative to the repository's top level.
        let prefix = match source {
            HistorySource::Repo(_) => git(source, &["rev-parse", "--show-prefix"])
                .map(|p| p.trim_end_matches(['\n', '\r']).to_owned())
                .unwrap_or_default(),
            HistorySource::GitDir { .. } => String::new(),
        };
        let limit = format!("--max-count={MAX_COMMITS}");
        let Some(log) = git(
            source,
            &[
                "log",
                "--no-merges",
                "--no-renames",
                &limit,
                "--format=%x1e%s%n%b%x1f",
                "--name-only",
                &head,
            ],
        ) else {
            return Ok(None);
        };
        Self::from_log(&log, &prefix, &head).map(Some)
    }

    /// Builds the index from `git log` output: records separated by 0x1E,
    /// each a message, 0x1F, then one changed path per line.
    fn from_log(log: &str, prefix: &str, head: &str) -> Result<History> {
        let mut schema = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let message = schema.add_text_field("message", text);
        let ordinal = schema.add_u64_field("ordinal", FAST);
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(ANALYZER, analyzer());
        let mut writer = index.writer_with_num_threads(1, 15_000_000)?;

        let mut files: Vec<Vec<u32>> = Vec::new();
        let mut paths: Vec<String> = Vec::new();
        let mut path_ids: HashMap<String, u32> = HashMap::new();
        for record in log.split('\u{1e}').skip(1) {
            let Some((text, changed)) = record.split_once('\u{1f}') else {
                continue;
            };
            let mut ids = Vec::new();
            for line in changed.lines() {
                let Some(rel) = line.strip_prefix(prefix) else {
                    continue;
                };
                if rel.is_empty() {
                    continue;
                }
                let next = u32::try_from(paths.len()).unwrap_or(u32::MAX);
                let id = *path_ids.entry(rel.to_owned()).or_insert_with(|| {
                    paths.push(rel.to_owned());
                    next
                });
                ids.push(id);
            }
            if ids.is_empty() || ids.len() > MAX_FILES_PER_COMMIT || text.trim().is_empty() {
                continue;
            }
            let n = files.len() as u64;
            files.push(ids);
            writer.add_document(doc!(message => text, ordinal => n))?;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(History {
            reader,
            message,
            ordinal,
            files,
            paths,
            head: head.to_owned(),
        })
    }

    /// Commits indexed.
    pub fn commits(&self) -> usize {
        self.files.len()
    }

    /// The revision this history was read at (full hash).
    pub fn head(&self) -> &str {
        &self.head
    }

    /// Files changed by the commits most similar to `terms` (analysed, with
    /// weights, as [`crate::stores::lexical::query_terms`] gives them), best first,
    /// with their scores: each commit's BM25 shared equally among its files.
    pub fn files(&self, terms: &[(String, f32)], limit: usize) -> Result<Vec<(String, f32)>> {
        if terms.is_empty() || limit == 0 || self.files.is_empty() {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(term, weight)| {
                let q = TermQuery::new(
                    Term::from_field_text(self.message, term),
                    IndexRecordOption::WithFreqs,
                );
                (
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(q), *weight)) as Box<dyn Query>,
                )
            })
            .collect();
        let searcher = self.reader.searcher();
        // Ties by commit ordinal, not by document address (which segment
        // layout, and so a background merge, decides): the same history
        // and question give the same commits.
        let ordinal = self.ordinal;
        let collector = TopDocs::with_limit(TOP_COMMITS).tweak_score(
            move |segment: &tantivy::SegmentReader| {
                let column = segment
                    .fast_fields()
                    .u64(segment.schema().get_field_name(ordinal))
                    .ok();
                move |doc: tantivy::DocId, score: tantivy::Score| {
                    let n = column
                        .as_ref()
                        .and_then(|c| c.first(doc))
                        .unwrap_or(u64::MAX);
                    ((score * 1024.0).round() / 1024.0, std::cmp::Reverse(n))
                }
            },
        );
        let top = searcher.search(&BooleanQuery::new(clauses), &collector)?;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for ((score, std::cmp::Reverse(n)), _) in top {
            if n == u64::MAX {
                continue;
            }
            let Some(changed) = usize::try_from(n).ok().and_then(|n| self.files.get(n)) else {
                continue;
            };
            let share = score / changed.len() as f32;
            for &id in changed {
                *scores.entry(id).or_default() += share;
            }
        }
        let mut ranked: Vec<(u32, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(ranked
            .into_iter()
            .take(limit)
            .filter_map(|(id, s)| Some((self.paths.get(id as usize)?.clone(), s)))
            .collect())
    }
}

/// The history of the repository `root` is in, if any.
pub fn of_root(root: &Path) -> Result<Option<History>> {
    History::read(&HistorySource::Repo(root.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> String {
        [
            ("add hy to the file types", "ignore/src/default_types.rs\n"),
            (
                "add kconfig type",
                "ignore/src/default_types.rs\nCHANGELOG.md\n",
            ),
            ("fix panic in the printer on long lines", "src/printer.rs\n"),
            ("sub/dir only", "other/x.rs\n"),
        ]
        .iter()
        .map(|(m, f)| format!("\u{1e}{m}\n\u{1f}\n{f}"))
        .collect()
    }

    fn terms(q: &str) -> Vec<(String, f32)> {
        crate::stores::lexical::query_terms(q, &[])
    }

    #[test]
    fn similar_commits_rank_the_files_they_changed() {
        let h = History::from_log(&log(), "", "abc").expect("index");
        assert_eq!(h.commits(), 4);
        let files = h
            .files(&terms("add env to the sh file type"), 5)
            .expect("search");
        assert_eq!(
            files.first().map(|f| f.0.as_str()),
            Some("ignore/src/default_types.rs")
        );
        let printer = h.files(&terms("printer panics"), 5).expect("search");
        assert_eq!(
            printer.first().map(|f| f.0.as_str()),
            Some("src/printer.rs")
        );
        assert!(h.files(&terms("zzzz"), 5).expect("search").is_empty());
    }

    #[test]
    fn paths_outside_the_project_prefix_are_dropped() {
        let h = History::from_log(&log(), "ignore/", "abc").expect("index");
        // Only the two commits touching ignore/ remain, with the prefix cut.
        assert_eq!(h.commits(), 2);
        let files = h.files(&terms("add type"), 5).expect("search");
        assert_eq!(files, vec![("src/default_types.rs".to_owned(), files[0].1)]);
    }

    #[test]
    fn huge_commits_are_skipped() {
        let many: String = (0..=MAX_FILES_PER_COMMIT)
            .map(|i| format!("f{i}.rs\n"))
            .collect();
        let log = format!("\u{1e}reformat everything\n\u{1f}\n{many}");
        let h = History::from_log(&log, "", "abc").expect("index");
        assert_eq!(h.commits(), 0);
    }

    #[test]
    fn no_repository_is_no_history() {
        let dir = tempfile::tempdir().expect("tempdir");
        // GIT_CEILING_DIRECTORIES is not ours to set here; a temp dir that
        // sits inside a repository would give that one's history, so only
        // the absence of errors is asserted for a plain directory, and a
        // missing one gives none.
        assert!(of_root(dir.path()).is_ok());
        assert!(
            of_root(&dir.path().join("missing"))
                .expect("read")
                .is_none()
        );
    }
}
