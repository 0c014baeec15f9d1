//! Indexing: turning a project's files into index data, before anything is
//! stored.
//!
//! ```text
//! project root → walk (paths, sizes, mtimes, Diagnostics)
//!   → chunk (tree-sitter per lang, Markdown, text windows) → ParsedFile
//!   → role (code, docs, tests, config, other, from the path)
//! ```
//!
//! In: a project root and each file's text. Out: [`walk::WalkedFile`]s and
//! [`ParsedFile`](chunk::ParsedFile)s (chunks with outlines, definitions and
//! references), each chunk's role. Pure functions over paths and text: no
//! database, no index, no [`Project`](crate::project::Project); the write
//! path (`project/write.rs`) calls them and hands the result to
//! [`stores`](crate::stores). Uses only the crate's cross-cutting modules
//! ([`progress`](crate::progress), [`diagnostic`](crate::diagnostic)). The
//! watcher, which also starts index runs, is not here but at the crate root
//! ([`crate::watch`]): it drives a [`Project`](crate::project::Project),
//! which depends on this folder.

pub mod chunk;
pub mod derived;
pub mod lang;
pub mod role;
pub mod walk;
