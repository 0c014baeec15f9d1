//! Python: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// Python.
pub static PYTHON: LanguageConfig = LanguageConfig {
    name: "python",
    extensions: &["py", "pyi", "pyw"],
    file_names: &["SConstruct", "SConscript"],
    grammar: || tree_sitter_python::LANGUAGE.into(),
    defs_query: include_str!("queries/python_defs.scm"),
    refs_query: include_str!("queries/python_refs.scm"),
    comment_kinds: &["comment"],
    attach_kinds: &[],
    doc_prefixes: &[],
    inner_doc_prefixes: &[],
    import_kinds: &[
        "import_statement",
        "import_from_statement",
        "future_import_statement",
    ],
    transparent_kinds: &[],
    body_style: BodyStyle::Indent,
    test_modules: &[],
    compiled: OnceLock::new(),
};
