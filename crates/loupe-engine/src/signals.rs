//! Signals: evidence about code computed beside the index, that retrieval
//! later reads.
//!
//! ```text
//! chunk text / question → embed (code model, MiniLM, HTTP) → unit vectors → stores::vectors
//! git log (last 5,000 commits) → history (in-memory tantivy) → files ranked by similar commits
//! question + a file's best chunks → reader (cross-encoder) → one logit per file
//! ```
//!
//! In: chunk text and questions (embedders), a repository's commit log
//! (history). Out: vectors for [`stores::vectors`](crate::stores::vectors)
//! and the query side, and a [`History`](history::History) that ranks files
//! for a question. How each signal is gathered for a question, and merged
//! with the others, is retrieval's job
//! ([`asking::retrieve`](crate::asking::retrieve)). Depends on
//! [`stores`](crate::stores) (vector arithmetic, the data directory, the
//! lexical analyzer), not on `asking`.

pub mod embed;
pub mod history;
pub mod reader;

use std::path::{Path, PathBuf};

/// Where a shipped model file named `name` is looked for, in order: beside
/// an installed binary (`/usr/bin/loupe` → `/usr/share/loupe/`, where the
/// `.deb` puts it), then in the source tree the binary was built from (a
/// development build, the tests).
pub fn shipped_files(name: &str) -> Vec<PathBuf> {
    let exe = std::env::current_exe().ok();
    file_candidates(exe.as_deref().and_then(Path::parent), name)
}

/// [`shipped_files`] for a binary in `bin` (`None`: unknown).
pub(crate) fn file_candidates(bin: Option<&Path>, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(bin) = bin {
        out.push(bin.join("../share/loupe").join(name));
    }
    out.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets")
            .join(name),
    );
    out
}
