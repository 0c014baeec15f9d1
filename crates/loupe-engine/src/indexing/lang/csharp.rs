//! C#: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// C#.
pub static CSHARP: LanguageConfig = LanguageConfig {
    name: "csharp",
    extensions: &["cs", "csx"],
    file_names: &[],
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    defs_query: include_str!("queries/csharp_defs.scm"),
    refs_query: include_str!("queries/csharp_refs.scm"),
    comment_kinds: &["comment"],
    attach_kinds: &[],
    doc_prefixes: &["///", "/**"],
    inner_doc_prefixes: &[],
    import_kinds: &["using_directive"],
    transparent_kinds: &[],
    body_style: BodyStyle::Braces,
    test_modules: &[],
    compiled: OnceLock::new(),
};
