//! Java: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// Java.
pub static JAVA: LanguageConfig = LanguageConfig {
    name: "java",
    extensions: &["java"],
    file_names: &[],
    grammar: || tree_sitter_java::LANGUAGE.into(),
    defs_query: include_str!("queries/java_defs.scm"),
    refs_query: include_str!("queries/java_refs.scm"),
    comment_kinds: &["line_comment", "block_comment"],
    attach_kinds: &[],
    doc_prefixes: &["/**"],
    inner_doc_prefixes: &[],
    import_kinds: &["import_declaration", "package_declaration"],
    transparent_kinds: &[],
    body_style: BodyStyle::Braces,
    test_modules: &[],
    compiled: OnceLock::new(),
};
