//! TypeScript and TSX: the static language configs. Holds data only; the
//! chunker interprets it. Both dialects share one pair of queries; they differ
//! only in the grammar (TSX adds JSX).

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// TypeScript (`.ts`, `.mts`, `.cts`).
pub static TYPESCRIPT: LanguageConfig = LanguageConfig {
    name: "typescript",
    extensions: &["ts", "mts", "cts"],
    file_names: &[],
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    defs_query: include_str!("queries/typescript_defs.scm"),
    refs_query: include_str!("queries/typescript_refs.scm"),
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

/// TSX (`.tsx`): TypeScript with JSX.
pub static TSX: LanguageConfig = LanguageConfig {
    name: "tsx",
    extensions: &["tsx"],
    file_names: &[],
    grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
    defs_query: include_str!("queries/typescript_defs.scm"),
    refs_query: include_str!("queries/tsx_refs.scm"),
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
