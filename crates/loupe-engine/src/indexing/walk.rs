//! Walk a project: list the files worth indexing, honouring `.gitignore`,
//! global git excludes and `.loupeignore`, via the `ignore` crate.
//!
//! Only metadata is read here (size, mtime); contents are read by the parse
//! stage. Every path that is skipped for a reason the user might not expect
//! (too large, unreadable, a symlink loop) becomes a [`Diagnostic`]; nothing
//! here fails the whole walk except an unusable root.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::progress::{CancelToken, Progress, ProgressSink, Stage};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The ignore file Loupe reads in addition to `.gitignore`.
pub const LOUPE_IGNORE: &str = ".loupeignore";

/// Walk settings.
#[derive(Clone, Debug)]
pub struct WalkConfig {
    /// Files larger than this are skipped with a diagnostic.
    pub max_file_bytes: u64,
    /// Follow symbolic links (loops are detected and reported).
    pub follow_links: bool,
}

impl Default for WalkConfig {
    fn default() -> Self {
        // 1 MiB: larger files are almost always generated or data, and would
        // crowd out real code in a prompt.
        Self {
            max_file_bytes: 1 << 20,
            follow_links: true,
        }
    }
}

/// A file found by the walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkedFile {
    /// Path relative to the root, `/`-separated.
    pub rel: String,
    /// Absolute path.
    pub abs: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch (0 if unknown).
    pub mtime_ns: i64,
}

/// The result of a walk: files sorted by relative path, plus diagnostics.
#[derive(Debug, Default)]
pub struct Walk {
    /// Files to consider.
    pub files: Vec<WalkedFile>,
    /// Paths skipped and why.
    pub diagnostics: Vec<Diagnostic>,
}

/// Relative, `/`-separated form of `path` under `root`, if it is under it and
/// valid UTF-8.
pub fn rel_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for (i, part) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(part.as_os_str().to_str()?);
    }
    (!out.is_empty()).then_some(out)
}

/// Modification time of `meta` in nanoseconds since the epoch, or 0.
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// List the files under `root`.
// Long: the `ignore` walker's setup and its one callback (files, links, errors) in one place.
pub fn walk(
    root: &Path,
    cfg: &WalkConfig,
    progress: ProgressSink<'_>,
    cancel: &CancelToken,
) -> crate::Result<Walk> {
    let mut out = Walk::default();
    let walker = ignore::WalkBuilder::new(root)
        .follow_links(cfg.follow_links)
        .add_custom_ignore_filename(LOUPE_IGNORE)
        // Respect .gitignore even when the folder is not (yet) a git repository:
        // users drop in plain folders, and their ignore files still mean something.
        .require_git(false)
        .build();
    let mut seen = 0u64;
    for entry in walker {
        cancel.check()?;
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                out.diagnostics.push(diagnostic_for_walk_error(root, &err));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let abs = entry.path().to_path_buf();
        let Some(rel) = rel_path(root, &abs) else {
            out.diagnostics.push(Diagnostic::new(
                abs.to_string_lossy(),
                DiagnosticKind::BadPath,
                "path is not valid UTF-8",
            ));
            continue;
        };
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(err) => {
                out.diagnostics
                    .push(Diagnostic::new(rel, DiagnosticKind::Unreadable, err));
                continue;
            }
        };
        if meta.len() > cfg.max_file_bytes {
            out.diagnostics.push(Diagnostic::new(
                rel,
                DiagnosticKind::TooLarge,
                format!(
                    "{} bytes, over the {} byte limit",
                    meta.len(),
                    cfg.max_file_bytes
                ),
            ));
            continue;
        }
        seen += 1;
        if seen.is_multiple_of(256) {
            progress(Progress {
                stage: Stage::Walk,
                done: seen,
                total: None,
            });
        }
        out.files.push(WalkedFile {
            rel,
            abs,
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
        });
    }
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    // A symlink can make one file appear twice; keep the first.
    out.files.dedup_by(|a, b| a.rel == b.rel);
    progress(Progress {
        stage: Stage::Walk,
        done: seen,
        total: Some(seen),
    });
    Ok(out)
}

/// Stat already-indexed files (relative paths) without walking: those that
/// are still regular files within the size cap come back as files, the rest
/// as paths to delete (with a diagnostic when over the cap).
pub fn stat_known(root: &Path, rels: &[String], cfg: &WalkConfig) -> (Walk, Vec<String>) {
    let mut out = Walk::default();
    let mut gone = Vec::new();
    for rel in rels {
        let abs = root.join(rel);
        let meta = if cfg.follow_links {
            std::fs::metadata(&abs)
        } else {
            std::fs::symlink_metadata(&abs)
        };
        match meta {
            Ok(m) if m.is_file() && m.len() <= cfg.max_file_bytes => out.files.push(WalkedFile {
                rel: rel.clone(),
                abs,
                size: m.len(),
                mtime_ns: mtime_ns(&m),
            }),
            Ok(m) if m.is_file() => {
                out.diagnostics.push(Diagnostic::new(
                    rel.clone(),
                    DiagnosticKind::TooLarge,
                    format!(
                        "{} bytes, over the {} byte limit",
                        m.len(),
                        cfg.max_file_bytes
                    ),
                ));
                gone.push(rel.clone());
            }
            _ => gone.push(rel.clone()),
        }
    }
    (out, gone)
}

fn diagnostic_for_walk_error(root: &Path, err: &ignore::Error) -> Diagnostic {
    let path = walk_error_path(err)
        .and_then(|p| rel_path(root, p))
        .unwrap_or_else(|| root.display().to_string());
    let kind = if is_loop(err) {
        DiagnosticKind::SymlinkLoop
    } else {
        DiagnosticKind::Unreadable
    };
    Diagnostic::new(path, kind, err)
}

fn walk_error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } => walk_error_path(err),
        ignore::Error::WithLineNumber { err, .. } => walk_error_path(err),
        ignore::Error::Loop { child, .. } => Some(child),
        ignore::Error::Partial(errs) => errs.first().and_then(walk_error_path),
        _ => None,
    }
}

fn is_loop(err: &ignore::Error) -> bool {
    match err {
        ignore::Error::Loop { .. } => true,
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => is_loop(err),
        _ => false,
    }
}
