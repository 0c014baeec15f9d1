//! Rust: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// Rust.
pub static RUST: LanguageConfig = LanguageConfig {
    name: "rust",
    extensions: &["rs"],
    file_names: &[],
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    defs_query: include_str!("queries/rust_defs.scm"),
    refs_query: include_str!("queries/rust_refs.scm"),
    comment_kinds: &["line_comment", "block_comment"],
    attach_kinds: &["attribute_item"],
    doc_prefixes: &["///", "/**"],
    inner_doc_prefixes: &["//!", "/*!"],
    import_kinds: &["use_declaration", "extern_crate_declaration"],
    transparent_kinds: &[],
    body_style: BodyStyle::Braces,
    test_modules: &["tests", "test", "*_tests", "*_test"],
    compiled: OnceLock::new(),
};
