//! JavaScript (with JSX): the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// JavaScript (with JSX).
pub static JAVASCRIPT: LanguageConfig = LanguageConfig {
    name: "javascript",
    extensions: &["js", "mjs", "cjs", "jsx"],
    file_names: &[],
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    defs_query: include_str!("queries/javascript_defs.scm"),
    refs_query: include_str!("queries/javascript_refs.scm"),
    comment_kinds: &["comment"],
    attach_kinds: &["decorator"],
    doc_prefixes: &["/**"],
    inner_doc_prefixes: &[],
    import_kinds: &["import_statement"],
    transparent_kinds: &[],
    body_style: BodyStyle::Braces,
    test_modules: &[],
    compiled: OnceLock::new(),
};
