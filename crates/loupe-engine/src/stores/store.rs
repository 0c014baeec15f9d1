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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime};

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

/// How long a waiter sleeps between attempts at the write lock.
const LOCK_RETRY: Duration = Duration::from_millis(25);

/// How often a holder of the write lock says it is alive, by setting the
/// lock file's modification time from a thread of its own.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// A holder whose heartbeat has been silent this long has stopped
/// answering (a stopped or frozen process): a waiter says so and gives up
/// instead of waiting for ever. Thirty heartbeats: a busy machine delays
/// one by seconds, not by a minute.
pub const SILENT_AFTER: Duration = Duration::from_secs(60);

/// An exclusive, advisory lock on a project's index, held while writing.
/// Released when dropped (or when the process dies). The lock file holds
/// the holder's process id, and its modification time is the holder's
/// heartbeat ([`HEARTBEAT`]).
#[derive(Debug)]
pub struct WriteLock {
    // Dropped first: its thread holds a second handle on the lock's open
    // file, and the lock is released only when every handle is closed.
    _beat: Heartbeat,
    _file: fs::File,
}

/// The thread that keeps a held lock's heartbeat; stopped and joined on
/// drop.
#[derive(Debug)]
struct Heartbeat {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    fn start(file: fs::File, every: Duration) -> Self {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("loupe-lock-beat".into())
            .spawn(move || {
                let (stopped, wake) = &*signal;
                let mut done = stopped.lock().unwrap_or_else(|p| p.into_inner());
                while !*done {
                    let (guard, _) = wake
                        .wait_timeout(done, every)
                        .unwrap_or_else(|p| p.into_inner());
                    done = guard;
                    if !*done {
                        // A failed touch only ages the heartbeat: a waiter
                        // may then report this process as silent, never
                        // take its lock.
                        let _ = file.set_modified(SystemTime::now());
                    }
                }
            })
            .ok();
        Self { stop, thread }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        let (stopped, wake) = &*self.stop;
        *stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl WriteLock {
    /// Take the lock, waiting for as long as another process holds it
    /// (another process's index run: writes serialize, none is refused)
    /// and keeps answering: a holder whose heartbeat has been silent for
    /// [`SILENT_AFTER`] ends the wait with [`Error::LockHolderSilent`].
    /// `on_wait` is called once, when the first attempt finds it held, so
    /// the caller can say why nothing moves. Waiting ends with `Cancelled`
    /// when `cancel` is set. A child this process forks (`git` for the
    /// history) shares every open file until it execs, so a lock just
    /// released on one thread can look held for that instant too. The wait
    /// sleeps on the async runtime: it holds no worker thread, however long
    /// the other run takes.
    pub async fn acquire(dir: &Path, cancel: &CancelToken, on_wait: impl FnOnce()) -> Result<Self> {
        Self::acquire_within(dir, cancel, on_wait, SILENT_AFTER, HEARTBEAT).await
    }

    /// [`WriteLock::acquire`] with its times given: how long a holder may
    /// be silent, and how often this process beats while it holds the lock.
    pub(crate) async fn acquire_within(
        dir: &Path,
        cancel: &CancelToken,
        on_wait: impl FnOnce(),
        silent_after: Duration,
        beat: Duration,
    ) -> Result<Self> {
        let mut on_wait = Some(on_wait);
        loop {
            match Self::try_acquire_beating(dir, beat)? {
                Some(lock) => return Ok(lock),
                None => {
                    if let Some(f) = on_wait.take() {
                        f();
                    }
                    cancel.check()?;
                    if let Some(silent) = silent_holder(dir, silent_after) {
                        return Err(silent);
                    }
                    tokio::time::sleep(LOCK_RETRY).await;
                }
            }
        }
    }

    /// The lock, or `None` while another process holds it.
    pub(crate) fn try_acquire(dir: &Path) -> Result<Option<Self>> {
        Self::try_acquire_beating(dir, HEARTBEAT)
    }

    fn try_acquire_beating(dir: &Path, beat: Duration) -> Result<Option<Self>> {
        let path = dir.join(LOCK_FILE);
        let io = |what: &'static str| {
            let path = path.clone();
            move |source| Error::Io { what, path, source }
        };
        let mut file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open write lock"))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(e)) => return Err(io("take write lock")(e)),
        }
        // Who holds it, for a waiter's message; writing also sets the
        // heartbeat's first beat.
        file.set_len(0).map_err(io("write write lock"))?;
        file.write_all(format!("{}\n", std::process::id()).as_bytes())
            .map_err(io("write write lock"))?;
        let beat_file = file.try_clone().map_err(io("write write lock"))?;
        Ok(Some(Self {
            _beat: Heartbeat::start(beat_file, beat),
            _file: file,
        }))
    }
}

/// The lock file's name in a project's data directory.
const LOCK_FILE: &str = "write.lock";

/// [`Error::LockHolderSilent`] when the lock file's heartbeat is older than
/// `silent_after`; `None` when it is recent or cannot be read (then the
/// wait goes on).
fn silent_holder(dir: &Path, silent_after: Duration) -> Option<Error> {
    let path = dir.join(LOCK_FILE);
    let beat = fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    let silent = SystemTime::now().duration_since(beat).ok()?;
    if silent < silent_after {
        return None;
    }
    let holder = fs::read_to_string(&path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "(unknown)".into());
    Some(Error::LockHolderSilent {
        path: dir.to_path_buf(),
        holder,
        silent_secs: silent.as_secs(),
    })
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

    /// A holder that stopped beating (a stopped or frozen process; here a
    /// lock taken by hand, its heartbeat set in the past) is reported with
    /// its process id instead of waited for.
    #[tokio::test]
    async fn a_silent_holder_is_reported_not_waited_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.path().join(LOCK_FILE))
            .expect("lock file");
        file.try_lock().expect("held by hand");
        file.write_all(b"4242\n").expect("holder");
        file.set_modified(SystemTime::now() - Duration::from_secs(10))
            .expect("an old beat");
        let started = std::time::Instant::now();
        let got = WriteLock::acquire_within(
            dir.path(),
            &CancelToken::new(),
            || {},
            Duration::from_secs(5),
            HEARTBEAT,
        )
        .await;
        match got {
            Err(e @ Error::LockHolderSilent { .. }) => {
                let said = e.to_string();
                assert!(
                    said.contains("process 4242") && said.contains("not answered"),
                    "{said}"
                );
            }
            other => panic!("not reported: {other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "reported at once"
        );
        // Still held: the report never takes the lock from its holder.
        assert!(WriteLock::try_acquire(dir.path()).expect("try").is_none());
    }

    /// A holder that keeps beating is waited for however long it holds the
    /// lock, past the silence limit.
    #[tokio::test]
    async fn a_beating_holder_is_waited_for_past_the_silence_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let none = CancelToken::new();
        let beat = Duration::from_millis(50);
        let held = WriteLock::acquire_within(dir.path(), &none, || {}, SILENT_AFTER, beat)
            .await
            .expect("first");
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2_500));
            drop(held);
        });
        let got =
            WriteLock::acquire_within(dir.path(), &none, || {}, Duration::from_secs(1), beat).await;
        releaser.join().expect("releaser");
        assert!(got.is_ok(), "{got:?}");
    }

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
