//! The lexical index's tantivy directory: tantivy's `MmapDirectory` without
//! fsync.
//!
//! tantivy syncs every file of a new segment, the directory and `meta.json`
//! on each commit: 100–250 ms of a one-file update on our benchmark machine
//! (BENCHMARKS.md), most of the watcher's latency. The lexical index is a
//! cache of the catalog, which stays durable (SQLite in WAL mode does its own
//! syncing). What skipping the syncs risks, and why that is fine:
//!
//! - *The process crashes:* nothing. Every write has reached the kernel;
//!   the page cache outlives the process. `meta.json` is still replaced by
//!   a rename, so a reader sees the old or the new commit, never half.
//! - *The machine loses power:* recent index files may be missing or torn.
//!   On the next open the commit payload (the catalog generation) disagrees
//!   or a file fails its checksum, and the index is rebuilt from the catalog
//!   ([`crate::stores::lexical::LexicalIndex::open`]). Slower, but nothing is lost.
//!
//! It also waits a moment for the writer's lock ([`LOCK_WAIT`]) where
//! tantivy gives up at once. The lock is an `flock` on a file, held by the
//! open file, and a process spawned from any thread (`git` for history and
//! change mode, the clipboard helper) holds a copy of every open file from
//! its fork until its exec: a writer dropped and a new one asked for in that
//! window fail with "LockBusy" though no writer is left. Seen once in the
//! app's tests, where other tests spawn `git` all the time. Another process
//! that really holds the writer still gets "LockBusy", after the wait.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite,
    WatchCallback, WatchHandle, WritePtr,
};

/// How long a busy writer's lock is tried again before "LockBusy" (see the
/// module's doc).
pub const LOCK_WAIT: Duration = Duration::from_secs(1);

/// `MmapDirectory` whose writes and renames skip fsync.
#[derive(Clone, Debug)]
pub struct UnsyncedDirectory {
    inner: MmapDirectory,
    root: PathBuf,
}

impl UnsyncedDirectory {
    /// Opens `root`, which must exist.
    pub fn open(root: &Path) -> tantivy::Result<Self> {
        Ok(Self {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
        })
    }
}

/// A new file: written through, closed without syncing.
struct UnsyncedFile(File);

impl Write for UnsyncedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl TerminatingWrite for UnsyncedFile {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        self.0.flush()
    }
}

impl Directory for UnsyncedDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.root.join(path))
            .map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(e, path.to_path_buf())
                }
            })?;
        Ok(BufWriter::new(Box::new(UnsyncedFile(file))))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    /// Write a temporary file beside the target and rename it over: readers
    /// see the old or the new content, never a mix.
    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let target = self.root.join(path);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = target.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()));
        let written = std::fs::write(&temp, data).and_then(|()| std::fs::rename(&temp, &target));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match self.inner.acquire_lock(lock) {
                Err(LockError::LockBusy) if !lock.is_blocking && start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                acquired => return acquired,
            }
        }
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_atomic_writes_land_and_do_not_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let d = UnsyncedDirectory::open(dir.path()).unwrap();
        let mut w = d.open_write(Path::new("a.bin")).unwrap();
        w.write_all(b"hello").unwrap();
        w.terminate().unwrap();
        assert_eq!(std::fs::read(dir.path().join("a.bin")).unwrap(), b"hello");
        assert!(matches!(
            d.open_write(Path::new("a.bin")),
            Err(OpenWriteError::FileAlreadyExists(_))
        ));
        d.atomic_write(Path::new("meta.json"), b"{1}").unwrap();
        d.atomic_write(Path::new("meta.json"), b"{2}").unwrap();
        assert_eq!(d.atomic_read(Path::new("meta.json")).unwrap(), b"{2}");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_writer_lock_let_go_of_within_the_wait_is_taken_and_one_held_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let d = UnsyncedDirectory::open(dir.path()).unwrap();
        let lock = Lock {
            filepath: PathBuf::from(".writer.lock"),
            is_blocking: false,
        };
        // Held (as by a process forked meanwhile), let go of 150 ms later.
        let held = d.acquire_lock(&lock).unwrap();
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            drop(held);
        });
        let start = Instant::now();
        let taken = d.acquire_lock(&lock);
        assert!(taken.is_ok(), "{:?}", taken.err());
        assert!(start.elapsed() >= Duration::from_millis(100));
        letting_go.join().unwrap();

        // Held throughout: busy, once the wait is over.
        let start = Instant::now();
        assert!(matches!(d.acquire_lock(&lock), Err(LockError::LockBusy)));
        assert!(start.elapsed() >= LOCK_WAIT);
    }
}
