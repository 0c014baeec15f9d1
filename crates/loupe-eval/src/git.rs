//! Reading bare git mirrors with the `git` CLI: find a repository's mirror,
//! order commits, and keep one work tree per repository at a commit.
//!
//! The work tree is updated with `git read-tree --reset -u COMMIT` against a
//! persistent index file kept next to (not inside) the tree: git compares
//! the new tree with that index and rewrites only the files whose content
//! changed, deletes files that vanished and leaves the others untouched, so
//! their mtimes survive and Loupe's incremental pass skips them. The mirror
//! is only read (`GIT_INDEX_FILE` points outside it).

use super::{EvalError, EvalResult};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `git --git-dir MIRROR ARGS` with optional extra environment; stdout.
fn git(mirror: &Path, args: &[&str], env: &[(&str, &Path)]) -> EvalResult<String> {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(mirror).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let shown = || format!("--git-dir {} {}", mirror.display(), args.join(" "));
    let out = cmd.output().map_err(|e| EvalError::Git {
        args: shown(),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(EvalError::Git {
            args: shown(),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn is_git_dir(p: &Path) -> bool {
    p.join("objects").is_dir() && p.join("HEAD").exists()
}

/// The mirror of `owner/name` under `repos`: `repos/owner+name/repo`, else
/// `repos/owner+name`, if either is a git directory.
pub fn find_mirror(repos: &Path, repo: &str) -> Option<PathBuf> {
    let base = repos.join(repo.replace('/', "+"));
    [base.join("repo"), base]
        .into_iter()
        .find(|p| is_git_dir(p))
}

/// Committer time (seconds) of `commit` in `mirror`.
pub fn commit_time(mirror: &Path, commit: &str) -> EvalResult<i64> {
    let spec = format!("{commit}^{{commit}}");
    let out = git(mirror, &["show", "-s", "--format=%ct", &spec], &[])?;
    out.trim().parse().map_err(|_| EvalError::Git {
        args: format!("show -s --format=%ct {commit}"),
        detail: format!("unexpected output {:?}", out.trim()),
    })
}

/// Indices of `commits` in commit order (committer time, oldest first; ties
/// keep the input order). Commits that do not resolve go last, in input
/// order, so that their examples fail individually.
pub fn commit_order(mirror: &Path, commits: &[&str]) -> Vec<usize> {
    let times: Vec<Option<i64>> = commits
        .iter()
        .map(|c| commit_time(mirror, c).ok())
        .collect();
    let mut order: Vec<usize> = (0..commits.len()).collect();
    order.sort_by_key(|&i| (times[i].is_none(), times[i].unwrap_or(0), i));
    order
}

/// One work tree for one mirror, moved from commit to commit.
#[derive(Debug, Clone)]
pub struct Worktree {
    mirror: PathBuf,
    tree: PathBuf,
    index: PathBuf,
}

impl Worktree {
    /// A work tree at `dir/tree` with its git index file at `dir/git-index`.
    pub fn new(mirror: &Path, dir: &Path) -> Self {
        Self {
            mirror: mirror.to_owned(),
            tree: dir.join("tree"),
            index: dir.join("git-index"),
        }
    }

    /// The folder holding the files (the Loupe project root).
    pub fn root(&self) -> &Path {
        &self.tree
    }

    /// The bare mirror the tree is checked out from (its history).
    pub fn mirror(&self) -> &Path {
        &self.mirror
    }

    /// Makes the tree hold exactly `commit`'s files, rewriting only what
    /// changed. If the incremental update fails (a damaged index file, a
    /// tree changed behind our back), starts over from an empty tree.
    pub fn checkout(&self, commit: &str) -> EvalResult<()> {
        match self.read_tree(commit) {
            Ok(()) => Ok(()),
            Err(first) => {
                // Does the commit exist at all? Then the failure is ours: rebuild.
                commit_time(&self.mirror, commit).map_err(|_| first)?;
                let _ = std::fs::remove_file(&self.index);
                if self.tree.exists() {
                    std::fs::remove_dir_all(&self.tree).map_err(|source| EvalError::Io {
                        what: "clearing the work tree",
                        path: self.tree.clone(),
                        source,
                    })?;
                }
                self.read_tree(commit)
            }
        }
    }

    fn read_tree(&self, commit: &str) -> EvalResult<()> {
        std::fs::create_dir_all(&self.tree).map_err(|source| EvalError::Io {
            what: "creating the work tree",
            path: self.tree.clone(),
            source,
        })?;
        let spec = format!("{commit}^{{tree}}");
        let tree = self.tree.to_string_lossy().into_owned();
        git(
            &self.mirror,
            &["--work-tree", &tree, "read-tree", "--reset", "-u", &spec],
            &[("GIT_INDEX_FILE", &self.index)],
        )
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) -> String {
        sh_at(dir, args, "2001-01-01T00:00:00")
    }

    fn sh_at(dir: &Path, args: &[&str], date: &str) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn checkout_rewrites_only_changed_files_and_deletes_vanished_ones() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let src = tmp.path().join("src");
        std::fs::create_dir_all(&src).expect("mkdir");
        sh(&src, &["init", "-q"]);
        std::fs::write(src.join("keep.rs"), "fn keep() {}\n").expect("write");
        std::fs::write(src.join("gone.rs"), "fn gone() {}\n").expect("write");
        std::fs::write(src.join("edit.rs"), "fn v1() {}\n").expect("write");
        sh(&src, &["add", "."]);
        sh(&src, &["commit", "-qm", "one"]);
        let c1 = sh(&src, &["rev-parse", "HEAD"]);
        std::fs::remove_file(src.join("gone.rs")).expect("rm");
        std::fs::write(src.join("edit.rs"), "fn v2() {}\n").expect("write");
        sh(&src, &["add", "-A"]);
        sh_at(&src, &["commit", "-qm", "two"], "2002-01-01T00:00:00");
        let c2 = sh(&src, &["rev-parse", "HEAD"]);
        let mirror = src.join(".git");

        assert_eq!(
            commit_order(&mirror, &[&c2, "deadbeef", &c1]),
            vec![2, 0, 1]
        );

        let wt = Worktree::new(&mirror, &tmp.path().join("work"));
        wt.checkout(&c1).expect("checkout 1");
        let root = wt.root();
        assert!(root.join("gone.rs").exists());
        let mtime = |f: &str| {
            std::fs::metadata(root.join(f))
                .and_then(|m| m.modified())
                .expect("mtime")
        };
        let (keep1, edit1) = (mtime("keep.rs"), mtime("edit.rs"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        wt.checkout(&c2).expect("checkout 2");
        assert!(!root.join("gone.rs").exists());
        assert_eq!(
            std::fs::read_to_string(root.join("edit.rs")).expect("read"),
            "fn v2() {}\n"
        );
        assert_eq!(mtime("keep.rs"), keep1, "unchanged file was rewritten");
        assert_ne!(mtime("edit.rs"), edit1);

        // A damaged index file is recovered from.
        std::fs::write(tmp.path().join("work/git-index"), "junk").expect("write");
        wt.checkout(&c1).expect("checkout after damage");
        assert!(root.join("gone.rs").exists());
        assert!(wt.checkout("deadbeef").is_err());
    }
}
