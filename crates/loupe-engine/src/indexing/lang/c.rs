//! C: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// C.
pub static C: LanguageConfig = LanguageConfig {
    name: "c",
    extensions: &["c", "h"],
    file_names: &[],
    grammar: || tree_sitter_c::LANGUAGE.into(),
    defs_query: include_str!("queries/c_defs.scm"),
    refs_query: include_str!("queries/c_refs.scm"),
    comment_kinds: &["comment"],
    attach_kinds: &[],
    doc_prefixes: &[],
    inner_doc_prefixes: &[],
    import_kinds: &["preproc_include"],
    transparent_kinds: &[
        "preproc_ifdef",
        "preproc_if",
        "preproc_else",
        "preproc_elif",
        "linkage_specification",
        "declaration_list",
    ],
    body_style: BodyStyle::Braces,
    test_modules: &[],
    compiled: OnceLock::new(),
};
