//! Ruby: the static language config. Holds data only; the chunker interprets it.

use super::{BodyStyle, LanguageConfig};
use std::sync::OnceLock;

/// Ruby.
pub static RUBY: LanguageConfig = LanguageConfig {
    name: "ruby",
    extensions: &["rb", "rake", "gemspec", "ru"],
    file_names: &["Rakefile", "Gemfile", "Guardfile", "Vagrantfile"],
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    defs_query: include_str!("queries/ruby_defs.scm"),
    refs_query: include_str!("queries/ruby_refs.scm"),
    comment_kinds: &["comment"],
    attach_kinds: &[],
    doc_prefixes: &[],
    inner_doc_prefixes: &[],
    import_kinds: &[],
    transparent_kinds: &[],
    body_style: BodyStyle::End,
    test_modules: &[],
    compiled: OnceLock::new(),
};
