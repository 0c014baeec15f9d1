//! The engine's error type. Per-file problems are not errors: they are
//! [`crate::Diagnostic`]s recorded next to a successful run.

use std::path::PathBuf;

/// Everything that can stop an engine operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The project path does not exist or is not a directory.
    #[error("project path {path}: {reason}")]
    BadProject {
        /// The path the user gave.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The data directory could not be created or written.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// An I/O error on an index file.
    #[error("{what} ({path}): {source}")]
    Io {
        /// What we were doing.
        what: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The SQLite catalog failed.
    #[error("catalog: {0}")]
    Catalog(sqlx::Error),
    /// A catalog migration failed.
    #[error("catalog migration: {0}")]
    Migrate(sqlx::migrate::MigrateError),
    /// The tantivy index failed.
    #[error("lexical index: {0}")]
    Lexical(tantivy::TantivyError),
    /// The vector index failed.
    #[error("vector index: {0}")]
    Vectors(String),
    /// The embedder failed.
    #[error("embedder: {0}")]
    Embed(String),
    /// Stored data did not decode.
    #[error("corrupt {what}: {detail}")]
    Corrupt {
        /// Which store.
        what: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The operation was cancelled by the caller.
    #[error("cancelled")]
    Cancelled,
    /// Another process holds the index's write lock and has stopped
    /// answering (stopped, frozen or hung): waiting for it would never end.
    #[error(
        "the index in {path} is locked by process {holder}, which has not answered for {silent_secs} s (stopped or hung?): end that process, then try again"
    )]
    LockHolderSilent {
        /// The project's data directory.
        path: PathBuf,
        /// What the holder wrote into the lock file (its process id).
        holder: String,
        /// How long its heartbeat has been silent.
        silent_secs: u64,
    },
    /// The watcher could not be started.
    #[error("watcher: {0}")]
    Watch(String),
    /// A background task died.
    #[error("background task failed: {0}")]
    Task(String),
    /// A question or request that cannot be answered as asked.
    #[error("{0}")]
    Request(String),
}

impl Error {
    /// True when SQLite says the catalog file itself is damaged
    /// (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, any extended code of either), as
    /// opposed to a busy database or a bad query: the case where the
    /// catalog is set aside and rebuilt (`Project::open`).
    pub fn is_catalog_damage(&self) -> bool {
        let db = match self {
            Error::Catalog(sqlx::Error::Database(db)) => db,
            Error::Migrate(sqlx::migrate::MigrateError::Execute(sqlx::Error::Database(db))) => db,
            _ => return false,
        };
        let primary = db
            .code()
            .and_then(|c| c.parse::<i32>().ok())
            .map(|c| c & 0xff);
        matches!(primary, Some(11 | 26))
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

// The wrapped errors are part of the message and deliberately not a
// `source()`: a reporter that prints the chain (anyhow's `{:#}`) would
// otherwise print SQLite's words twice or three times in one line.
impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        Error::Catalog(e)
    }
}

impl From<sqlx::migrate::MigrateError> for Error {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        Error::Migrate(e)
    }
}

impl From<tantivy::TantivyError> for Error {
    fn from(e: tantivy::TantivyError) -> Self {
        Error::Lexical(e)
    }
}

impl From<tokio::task::JoinError> for Error {
    fn from(e: tokio::task::JoinError) -> Self {
        Error::Task(e.to_string())
    }
}

/// What a caught panic said (its `&str` or `String` payload).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `{:#}` of anyhow prints: every message of the source chain.
    fn chain(e: &dyn std::error::Error) -> String {
        let mut out = e.to_string();
        let mut next = e.source();
        while let Some(s) = next {
            out.push_str(": ");
            out.push_str(&s.to_string());
            next = s.source();
        }
        out
    }

    #[test]
    fn a_store_error_is_said_once() {
        let e = Error::from(sqlx::Error::Protocol("disk image is malformed".into()));
        let said = chain(&e);
        assert_eq!(said.matches("malformed").count(), 1, "{said}");
        let e = Error::from(sqlx::migrate::MigrateError::Execute(sqlx::Error::Protocol(
            "disk image is malformed".into(),
        )));
        let said = chain(&e);
        assert_eq!(said.matches("malformed").count(), 1, "{said}");
    }
}
