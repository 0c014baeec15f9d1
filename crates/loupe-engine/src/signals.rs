//! Signals: evidence about code computed beside the index, that retrieval
//! later reads.
//!
//! ```text
//! chunk text / question → embed (code model, MiniLM, HTTP) → unit vectors → stores::vectors
//! git log (last 5,000 commits) → history (in-memory tantivy) → files ranked by similar commits
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
