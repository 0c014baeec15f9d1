//! Go: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// Go.
pub static GO: LanguageConfig = LanguageConfig {
    name: "go",
    extensions: &["go"],
    file_names: &[],
    grammar: || tree_sitter_go::LANGUAGE.into(),
    defs_query: include_str!("queries/go_defs.scm"),
    refs_query: include_str!("queries/go_refs.scm"),
    comment_kinds: &["comment"],
    attach_kinds: &[],
    doc_prefixes: &[],
    inner_doc_prefixes: &[],
    import_kinds: &["import_declaration"],
    transparent_kinds: &[],
    body_style: BodyStyle::Braces,
    test_modules: &[],
    compiled: OnceLock::new(),
};
