//! The app's log: the engine's warnings and errors (`tracing`) and every
//! panic with its backtrace, appended to `<data root>/logs/app.log` and
//! echoed on stderr.
//!
//! A desktop app's stderr goes nowhere the user can read it afterwards (a
//! launcher drops it), and a panic in a synchronous command, which runs on
//! the main thread inside a WebKit callback, takes the whole process down:
//! without a file, a crash leaves no word of why. The file is moved aside
//! to `app.log.1` once it passes [`ROTATE_BYTES`] at start, so it never
//! grows without bound.
//!
//! `LOUPE_LOG` takes a filter as the CLI's does (`warn` by default).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tracing_subscriber::fmt::writer::MakeWriterExt;

/// The log's size at start beyond which it is moved aside.
pub const ROTATE_BYTES: u64 = 4 << 20;

/// Where the app logs under `data_root`.
pub fn log_path(data_root: &Path) -> PathBuf {
    data_root.join("logs").join("app.log")
}

/// Move `path` aside to `<path>.1` (replacing an older one) if it is larger
/// than `limit` bytes.
fn rotate(path: &Path, limit: u64) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > limit => {
            let mut aside = path.as_os_str().to_owned();
            aside.push(".1");
            std::fs::rename(path, aside)
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Open (rotated) the log under `data_root` for appending.
fn open_log(data_root: &Path) -> std::io::Result<(PathBuf, File)> {
    let path = log_path(data_root);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    rotate(&path, ROTATE_BYTES)?;
    let file = OpenOptions::new().create(true).append(true).open(&path)?;
    Ok((path, file))
}

/// Start logging to the file under `data_root` and stderr, and record
/// panics there. Returns the log's path, or `None` (said on stderr) when
/// it cannot be opened: the app runs on, logging to stderr alone.
pub fn init(data_root: &Path) -> Option<PathBuf> {
    let filter = tracing_subscriber::EnvFilter::try_from_env(loupe_engine::LOG_ENV)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(loupe_engine::DEFAULT_LOG_FILTER));
    let opened = open_log(data_root);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    let (path, installed) = match opened {
        Ok((path, file)) => {
            let file = Arc::new(file);
            let writer = std::io::stderr.and(Arc::clone(&file));
            record_panics(file);
            (Some(path), builder.with_writer(writer).try_init())
        }
        Err(e) => {
            eprintln!(
                "loupe: cannot open the log {}: {e}",
                log_path(data_root).display()
            );
            (None, builder.with_writer(std::io::stderr).try_init())
        }
    };
    if let Err(e) = installed {
        eprintln!("loupe: logging was set up already: {e}");
    }
    path
}

/// Write every panic, where it happened and its backtrace to `file`, then
/// run the hook that was there before (the default prints to stderr).
fn record_panics(file: Arc<File>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let when = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let backtrace = std::backtrace::Backtrace::force_capture();
        // One write, so a panic on another thread does not interleave.
        let text = format!(
            "PANIC at unix time {when} on thread '{}': {info}\n{backtrace}\n",
            thread.name().unwrap_or("<unnamed>")
        );
        // Nothing more to do if the disk refuses: stderr still hears of it.
        let _ = (&*file).write_all(text.as_bytes());
        previous(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_past_the_limit_is_moved_aside_and_a_small_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app.log");
        rotate(&path, 10).unwrap(); // none yet: nothing to do
        std::fs::write(&path, "0123456789").unwrap();
        rotate(&path, 10).unwrap();
        assert!(path.exists(), "at the limit it stays");
        std::fs::write(&path, "0123456789a").unwrap();
        rotate(&path, 10).unwrap();
        assert!(!path.exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("app.log.1")).unwrap(),
            "0123456789a"
        );
    }

    #[test]
    fn a_panic_is_written_to_the_log_with_its_place_and_backtrace() {
        let dir = tempfile::tempdir().unwrap();
        let path = init(dir.path()).unwrap();
        assert_eq!(path, log_path(dir.path()));
        tracing::warn!("a warning the app logs");
        let panicked = std::thread::Builder::new()
            .name("asker".into())
            .spawn(|| panic!("the engine broke here"))
            .unwrap()
            .join();
        assert!(panicked.is_err());
        let _ = std::panic::take_hook(); // back to the default for other tests
        let log = std::fs::read_to_string(&path).unwrap();
        assert!(log.contains("a warning the app logs"), "{log}");
        assert!(
            log.contains("PANIC at unix time")
                && log.contains("thread 'asker'")
                && log.contains("the engine broke here")
                && log.contains("src-tauri/src/log.rs"),
            "{log}"
        );
    }
}
