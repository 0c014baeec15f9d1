//! Where a project's index lives on disk, and the lock that makes one process
//! its only writer.
//!
//! Layout under the data root (default `$XDG_DATA_HOME/loupe`, overridable):
//! `projects/<first 16 hex of blake3(canonical root)>/` holding
//! `catalog.sqlite` (+ WAL), `lexical/`, `vectors/`, `project.json` (the root
//! path, for listings) and `write.lock`.
//!
//! Never writes inside the user's project.

use crate::progress::CancelToken;
use crate::{Error, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// Environment variable overriding the data root.
pub const DATA_DIR_ENV: &str = "LOUPE_DATA_DIR";

/// The data root: `$LOUPE_DATA_DIR`, else `$XDG_DATA_HOME/loupe`, else
/// `~/.local/share/loupe`.
pub fn default_data_root() -> PathBuf {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("loupe");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/loupe")
}

/// Resolve and check a project root: it must exist and be a directory.
pub fn canonical_root(path: &Path) -> Result<PathBuf> {
    let bad = |reason: &str| Error::BadProject {
        path: path.to_path_buf(),
        reason: reason.into(),
    };
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => bad("does not exist"),
        std::io::ErrorKind::PermissionDenied => bad("permission denied"),
        _ => bad(&e.to_string()),
    })?;
    if !meta.is_dir() {
        return Err(bad("is a file, not a folder"));
    }
    fs::canonicalize(path).map_err(|e| bad(&e.to_string()))
}

/// The data directory of the project rooted at `root` (canonical).
pub fn project_dir(data_root: &Path, root: &Path) -> PathBuf {
    let hash = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
    data_root.join("projects").join(&hash.as_str()[..16])
}

/// Create `dir` (and parents), mapping failures to a clear error.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::DataDir {
        path: dir.to_path_buf(),
        source: e,
    })?;
    // Creating is not enough: a read-only directory would fail later, mid-run.
    let probe = dir.join(".write-probe");
    fs::write(&probe, b"ok").map_err(|e| Error::DataDir {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let _ = fs::remove_file(probe);
    Ok(())
}

/// An exclusive, advisory lock on a project's index, held while writing.
/// Released when dropped (or when the process dies).
#[derive(Debug)]
pub struct WriteLock {
    _file: fs::File,
}

/// Pause between attempts while another process holds the lock.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(25);

impl WriteLock {
    /// Take the lock, waiting for as long as another process holds it
    /// (another process's index run: writes serialize, none is refused).
    /// `on_wait` is called once, when the first attempt finds it held, so
    /// the caller can say why nothing moves. Waiting ends with `Cancelled`
    /// when `cancel` is set. A child this process forks (`git` for the
    /// history) shares every open file until it execs, so a lock just
    /// released on one thread can look held for that instant too. The wait
    /// sleeps on the async runtime: it holds no worker thread, however long
    /// the other run takes.
    pub async fn acquire(dir: &Path, cancel: &CancelToken, on_wait: impl FnOnce()) -> Result<Self> {
        let mut on_wait = Some(on_wait);
        loop {
            match Self::try_acquire(dir)? {
                Some(lock) => return Ok(lock),
                None => {
                    if let Some(f) = on_wait.take() {
                        f();
                    }
                    cancel.check()?;
                    tokio::time::sleep(LOCK_RETRY).await;
                }
            }
        }
    }

    /// The lock, or `None` while another process holds it.
    pub(crate) fn try_acquire(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join("write.lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::Io {
                what: "open write lock",
                path: path.clone(),
                source: e,
            })?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => Err(Error::Io {
                what: "take write lock",
                path,
                source: e,
            }),
        }
    }
}

/// Move a damaged file aside (`name.corrupt-<unix secs>`) so a fresh one can
/// be created, keeping the old one for inspection.
pub fn quarantine(path: &Path) -> Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".corrupt-{secs}"));
    let target = path.with_file_name(name);
    fs::rename(path, &target).map_err(|e| Error::Io {
        what: "move damaged file aside",
        path: path.to_path_buf(),
        source: e,
    })?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_lock_is_waited_for_and_the_wait_can_be_cancelled() {
        let dir = tempfile::tempdir().expect("tempdir");
        let none = CancelToken::new();
        let held = WriteLock::acquire(dir.path(), &none, || {})
            .await
            .expect("first");
        // Held for a while by another holder: waited for, then taken.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(LOCK_RETRY * 8);
            drop(held);
        });
        let mut waited = false;
        let second = WriteLock::acquire(dir.path(), &none, || waited = true)
            .await
            .expect("taken once released");
        releaser.join().expect("releaser");
        assert!(waited, "the wait was announced");
        // Held, and the waiter cancelled: it stops waiting with Cancelled.
        let cancel = CancelToken::new();
        let refused = WriteLock::acquire(dir.path(), &cancel, || cancel.cancel()).await;
        assert!(matches!(refused, Err(Error::Cancelled)), "{refused:?}");
        drop(second);
        let mut waited = false;
        assert!(
            WriteLock::acquire(dir.path(), &none, || waited = true)
                .await
                .is_ok()
        );
        assert!(!waited, "a free lock is taken at once");
    }
}
