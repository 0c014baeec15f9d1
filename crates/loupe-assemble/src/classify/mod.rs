//! Classify a question: what it is about, what kind of answer it wants, and
//! which retrieval intent it carries; and extract its search terms.
//!
//! Everything here is local and deterministic. It does not retrieve and it
//! calls no model.

pub mod query;

pub use query::{Mention, MentionKind, QueryAnalysis, analyze};
