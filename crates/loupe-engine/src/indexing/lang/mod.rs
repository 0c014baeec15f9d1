//! The language registry: one static [`LanguageConfig`] per language, with its
//! tree-sitter grammar and `.scm` queries, looked up by file name.
//!
//! Languages are data: adding one means a new file here with a static config
//! and two query files under `queries/`, plus a line in [`ALL`]. This module
//! does not parse or chunk anything (that is `crate::indexing::chunk`); it only says
//! which grammar and which queries describe a file.
//!
//! Query conventions (every language follows them, the chunker relies on them):
//! - `<lang>_defs.scm` captures a whole definition as `@definition.<kind>`
//!   where `<kind>` is one of `function`, `method`, `class`, `struct`, `enum`,
//!   `trait`, `interface`, `impl`, `module`, `type`, `constant`; its name as
//!   `@name`; optionally its body as `@body` (when it is not the node's `body`
//!   field), a docstring inside the body as `@doc`, and the name of an owning
//!   type declared outside the definition (a Go receiver) as `@parent`.
//!   When several patterns match the same node, the first pattern wins.
//! - `<lang>_refs.scm` captures referenced names as `@reference.call`,
//!   `@reference.import` or `@reference.type`, and whole import statements
//!   that are not a node kind of their own (Ruby's `require`) as `@import`.

use loupe_assemble::ChunkKind;
use std::sync::OnceLock;
use tree_sitter::{Language, Query};

mod c;
mod cpp;
mod csharp;
mod go;
mod java;
mod javascript;
mod python;
mod ruby;
mod rust;
mod typescript;

/// How a language delimits a function body; a hint for renderers that elide
/// bodies (`{ ... }` versus an indented `...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyStyle {
    /// The body span includes its `{` and `}`: replace it with `{ ... }`.
    Braces,
    /// The body is an indented block (Python): replace it with `...`.
    Indent,
    /// The body is followed by an `end` keyword kept outside the span (Ruby):
    /// replace it with `...`.
    End,
}

/// A language's static description.
pub struct LanguageConfig {
    /// Registry name (`rust`, `python`, `typescript`, `tsx`, ...).
    pub name: &'static str,
    /// File extensions without the dot, lowercase.
    pub extensions: &'static [&'static str],
    /// Exact file names (without directories) that use this language.
    pub file_names: &'static [&'static str],
    /// The tree-sitter grammar.
    pub grammar: fn() -> Language,
    /// Definitions query text (see the module docs for its captures).
    pub defs_query: &'static str,
    /// References query text (see the module docs for its captures).
    pub refs_query: &'static str,
    /// Node kinds that are comments.
    pub comment_kinds: &'static [&'static str],
    /// Node kinds (besides comments) that attach to the definition right after
    /// them: attributes, decorators, annotations.
    pub attach_kinds: &'static [&'static str],
    /// A comment attached to a definition is a doc comment only if it starts
    /// with one of these; an empty list means every attached comment is one.
    pub doc_prefixes: &'static [&'static str],
    /// Comments that document the enclosing item wherever they stand (`//!`).
    pub inner_doc_prefixes: &'static [&'static str],
    /// Node kinds that are import statements.
    pub import_kinds: &'static [&'static str],
    /// Node kinds whose children are chunked as if they stood at the level
    /// of the node itself: include guards (`#ifndef ... #endif`), `extern "C"`
    /// blocks and their declaration lists.
    pub transparent_kinds: &'static [&'static str],
    /// How function bodies are delimited.
    pub body_style: BodyStyle,
    /// Names of modules that hold unit tests inside source files (Rust's
    /// `#[cfg(test)] mod tests`); `*` matches any prefix. Their chunks get
    /// the tests role ([`crate::indexing::role::role_for_chunk`]).
    pub test_modules: &'static [&'static str],
    /// Compiled queries, built on first use.
    pub(crate) compiled: OnceLock<Result<CompiledQueries, String>>,
}

impl std::fmt::Debug for LanguageConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageConfig")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The two queries of a language, compiled for its grammar.
#[derive(Debug)]
pub struct CompiledQueries {
    /// The definitions query followed by the references query, compiled as
    /// one so a single cursor pass over the tree runs both (two passes cost
    /// about as much as the parse).
    pub both: Query,
    /// Index of the first references pattern in `both`.
    pub refs_from: usize,
}

impl LanguageConfig {
    /// The tree-sitter language.
    pub fn language(&self) -> Language {
        (self.grammar)()
    }

    /// The compiled queries, or the query error as text (a bug in a bundled
    /// `.scm` file; tested for every language).
    pub fn queries(&self) -> Result<&CompiledQueries, &str> {
        self.compiled
            .get_or_init(|| {
                let language = self.language();
                // Each alone first, so an error names the file it is in.
                let defs = Query::new(&language, self.defs_query)
                    .map_err(|e| format!("{} definitions query: {e}", self.name))?;
                Query::new(&language, self.refs_query)
                    .map_err(|e| format!("{} references query: {e}", self.name))?;
                let both = Query::new(
                    &language,
                    &format!("{}\n{}", self.defs_query, self.refs_query),
                )
                .map_err(|e| format!("{} queries together: {e}", self.name))?;
                Ok(CompiledQueries {
                    both,
                    refs_from: defs.pattern_count(),
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Whether a node kind is a comment.
    pub fn is_comment(&self, kind: &str) -> bool {
        self.comment_kinds.contains(&kind)
    }

    /// Whether a comment with this text is a doc comment when attached to a
    /// definition.
    pub fn is_doc_comment(&self, text: &str) -> bool {
        self.doc_prefixes.is_empty() || self.doc_prefixes.iter().any(|p| text.starts_with(p))
    }

    /// Whether a comment documents its enclosing item (`//!`, `/*!`).
    pub fn is_inner_doc_comment(&self, text: &str) -> bool {
        self.inner_doc_prefixes.iter().any(|p| text.starts_with(p))
    }

    /// Whether a module of this name holds unit tests ([`Self::test_modules`]).
    pub fn is_test_module(&self, name: &str) -> bool {
        self.test_modules.iter().any(|m| match m.strip_prefix('*') {
            Some(suffix) => name.ends_with(suffix),
            None => name == *m,
        })
    }
}

/// Every language with a parser.
pub static ALL: [&LanguageConfig; 11] = [
    &rust::RUST,
    &python::PYTHON,
    &typescript::TYPESCRIPT,
    &typescript::TSX,
    &javascript::JAVASCRIPT,
    &go::GO,
    &java::JAVA,
    &c::C,
    &cpp::CPP,
    &csharp::CSHARP,
    &ruby::RUBY,
];

/// The language of a file, by its file name first and then its extension.
/// `None` for files without a parser (Markdown and plain text included).
pub fn for_path(rel_path: &str) -> Option<&'static LanguageConfig> {
    let file_name = rel_path.rsplit(['/', '\\']).next().unwrap_or(rel_path);
    if let Some(config) = ALL.iter().find(|c| c.file_names.contains(&file_name)) {
        return Some(config);
    }
    let ext = extension(file_name)?;
    ALL.iter()
        .copied()
        .find(|c| c.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
}

/// A language by its registry name.
pub fn by_name(name: &str) -> Option<&'static LanguageConfig> {
    ALL.iter().copied().find(|c| c.name == name)
}

/// The extension of a file name (without the dot), if it has one. A leading
/// dot alone (`.gitignore`) is not an extension.
pub fn extension(file_name: &str) -> Option<&str> {
    let (stem, ext) = file_name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then_some(ext)
}

/// Whether a file is Markdown (chunked by headings).
pub fn is_markdown(rel_path: &str) -> bool {
    let file_name = rel_path.rsplit(['/', '\\']).next().unwrap_or(rel_path);
    extension(file_name).is_some_and(|e| {
        ["md", "markdown", "mdx"]
            .iter()
            .any(|m| m.eq_ignore_ascii_case(e))
    })
}

/// A language name for a file without a parser, from its extension: `toml`,
/// `yaml`, `json`, ... or `text`.
pub fn plain_language_name(rel_path: &str) -> &'static str {
    /// Extensions worth naming even though nothing parses them.
    const NAMED: &[(&str, &str)] = &[
        ("toml", "toml"),
        ("yaml", "yaml"),
        ("yml", "yaml"),
        ("json", "json"),
        ("ini", "ini"),
        ("cfg", "ini"),
        ("xml", "xml"),
        ("html", "html"),
        ("htm", "html"),
        ("css", "css"),
        ("scss", "css"),
        ("sh", "shell"),
        ("bash", "shell"),
        ("sql", "sql"),
        ("rst", "rst"),
        ("svelte", "svelte"),
        ("vue", "vue"),
        ("kt", "kotlin"),
        ("swift", "swift"),
        ("php", "php"),
        ("lua", "lua"),
        ("scala", "scala"),
    ];
    let file_name = rel_path.rsplit(['/', '\\']).next().unwrap_or(rel_path);
    extension(file_name)
        .and_then(|ext| NAMED.iter().find(|(e, _)| e.eq_ignore_ascii_case(ext)))
        .map_or("text", |(_, name)| name)
}

/// The chunk kind a `@definition.<kind>` capture names.
pub fn kind_from_capture(suffix: &str) -> Option<ChunkKind> {
    Some(match suffix {
        "function" => ChunkKind::Function,
        "method" => ChunkKind::Method,
        "class" => ChunkKind::Class,
        "struct" => ChunkKind::Struct,
        "enum" => ChunkKind::Enum,
        "trait" => ChunkKind::Trait,
        "interface" => ChunkKind::Interface,
        "impl" => ChunkKind::Impl,
        "module" => ChunkKind::Module,
        "type" => ChunkKind::Type,
        "constant" => ChunkKind::Constant,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        let errors: Vec<&str> = ALL.iter().filter_map(|c| c.queries().err()).collect();
        assert!(errors.is_empty(), "{}", errors.join("\n\n"));
    }

    #[test]
    fn picks_languages_by_path() {
        let cases = [
            ("src/main.rs", Some("rust")),
            ("a/b.PY", Some("python")),
            ("x.pyi", Some("python")),
            ("web/app.ts", Some("typescript")),
            ("web/App.tsx", Some("tsx")),
            ("web/app.mjs", Some("javascript")),
            ("web/App.jsx", Some("javascript")),
            ("cmd/main.go", Some("go")),
            ("Main.java", Some("java")),
            ("lib.c", Some("c")),
            ("lib.h", Some("c")),
            ("lib.hpp", Some("cpp")),
            ("lib.cc", Some("cpp")),
            ("Program.cs", Some("csharp")),
            ("app.rb", Some("ruby")),
            ("Rakefile", Some("ruby")),
            ("Gemfile", Some("ruby")),
            ("README.md", None),
            ("Cargo.toml", None),
            (".gitignore", None),
            ("noext", None),
        ];
        for (path, want) in cases {
            assert_eq!(for_path(path).map(|c| c.name), want, "{path}");
        }
    }

    #[test]
    fn names_plain_files() {
        assert_eq!(plain_language_name("Cargo.toml"), "toml");
        assert_eq!(plain_language_name(".github/ci.yml"), "yaml");
        assert_eq!(plain_language_name("notes"), "text");
        assert!(is_markdown("docs/Guide.MD"));
        assert!(!is_markdown("md"));
    }
}
