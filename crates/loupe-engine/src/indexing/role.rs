//! The role of a file (code, docs, tests, config, other), from its path alone,
//! and of a chunk: its file's, except Rust's inline test modules.
//!
//! Does not read the file. Rules are checked in order: tests first (a Markdown
//! file under `tests/` is a test fixture, not documentation), then config,
//! then docs, then code; anything left is `Other`.

use crate::indexing::lang;
use loupe_assemble::{ChunkKind, Role};

/// Directory names whose contents are tests, fixtures or benchmarks.
const TEST_DIRS: &[&str] = &[
    "tests",
    "test",
    "__tests__",
    "spec",
    "specs",
    "benches",
    "bench",
    "fixtures",
    "testdata",
    "e2e",
];
/// Directory names whose contents are documentation.
const DOC_DIRS: &[&str] = &["docs", "doc", "documentation"];
/// Directory names whose contents are configuration (CI, editor, tooling).
const CONFIG_DIRS: &[&str] = &[
    ".github",
    ".gitlab",
    ".circleci",
    ".ci",
    ".cargo",
    ".vscode",
    ".devcontainer",
];
/// File names that are configuration whatever their extension.
const CONFIG_FILES: &[&str] = &[
    "makefile",
    "gnumakefile",
    "dockerfile",
    "containerfile",
    "justfile",
    "cmakelists.txt",
    "cargo.lock",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.mod",
    "go.sum",
    "gemfile",
    "gemfile.lock",
    "rakefile",
    "pipfile",
    "pipfile.lock",
    "poetry.lock",
    "requirements.txt",
    "setup.py",
    "setup.cfg",
    "build.gradle",
    "pom.xml",
    "build.rs",
    ".gitignore",
    ".gitattributes",
    ".editorconfig",
    ".dockerignore",
    ".loupeignore",
    ".env",
    ".npmrc",
    ".prettierrc",
    ".eslintrc",
];
/// Extensions of configuration files.
const CONFIG_EXTS: &[&str] = &[
    "toml",
    "yaml",
    "yml",
    "json",
    "jsonc",
    "json5",
    "ini",
    "cfg",
    "conf",
    "properties",
    "lock",
    "gradle",
    "csproj",
    "sln",
    "editorconfig",
];
/// Extensions of prose documentation.
const DOC_EXTS: &[&str] = &[
    "md", "markdown", "mdx", "rst", "txt", "adoc", "asciidoc", "org", "tex",
];
/// Source extensions without a parser in the registry.
const CODE_EXTS: &[&str] = &[
    "kt", "kts", "swift", "php", "lua", "scala", "sh", "bash", "zsh", "fish", "ps1", "sql",
    "svelte", "vue", "css", "scss", "sass", "less", "html", "htm", "ex", "exs", "erl", "hs", "ml",
    "mli", "clj", "dart", "r", "jl", "zig", "nim", "pl", "pm", "m", "mm", "f90", "proto",
    "graphql", "wgsl", "glsl", "hlsl", "vim", "el",
];

/// Classify a relative path (with `/` separators).
pub fn role_for_path(rel_path: &str) -> Role {
    let path = rel_path.replace('\\', "/");
    let mut parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let file = parts.pop().unwrap_or("").to_ascii_lowercase();
    let dirs: Vec<String> = parts.iter().map(|d| d.to_ascii_lowercase()).collect();
    let ext = lang::extension(&file).unwrap_or("");

    if dirs.iter().any(|d| TEST_DIRS.contains(&d.as_str())) || is_test_file(&file, ext) {
        return Role::Tests;
    }
    if dirs.iter().any(|d| CONFIG_DIRS.contains(&d.as_str()))
        || CONFIG_FILES.contains(&file.as_str())
        || file.starts_with("dockerfile")
        || file.starts_with(".env")
        || CONFIG_EXTS.contains(&ext)
    {
        return Role::Config;
    }
    if DOC_EXTS.contains(&ext)
        || dirs.iter().any(|d| DOC_DIRS.contains(&d.as_str()))
        || [
            "readme",
            "changelog",
            "license",
            "contributing",
            "authors",
            "copying",
            "notice",
        ]
        .iter()
        .any(|n| file == *n || file.starts_with(&format!("{n}.")))
    {
        return Role::Docs;
    }
    if lang::for_path(rel_path).is_some() || CODE_EXTS.contains(&ext) {
        return Role::Code;
    }
    Role::Other
}

/// Test files by naming convention: `*_test.go`, `test_*.py`, `*_test.py`,
/// `*.spec.ts`, `*.test.js`, `*_spec.rb`, `FooTest.java`, `FooTests.cs`.
fn is_test_file(file: &str, ext: &str) -> bool {
    let stem = file
        .strip_suffix(ext)
        .and_then(|s| s.strip_suffix('.'))
        .unwrap_or(file);
    let source = lang::for_path(file).is_some();
    source
        && (stem.ends_with("_test")
            || stem.ends_with("_spec")
            || stem.starts_with("test_")
            || stem.ends_with(".test")
            || stem.ends_with(".spec")
            || stem.ends_with("test") && matches!(ext, "java" | "cs" | "kt")
            || stem.ends_with("tests") && matches!(ext, "java" | "cs"))
}

/// The role of one chunk of a file whose role is `file_role`: languages
/// that keep unit tests inside source files (Rust's `#[cfg(test)] mod
/// tests`, listed as data in [`lang::LanguageConfig::test_modules`]) have
/// such a module, and any chunk split out of one, as `Tests` rather than
/// `Code`. Ranking then treats it as the tests it is (a code question no
/// longer gets a test module that quotes its words as the top chunk).
pub fn role_for_chunk(
    file_role: Role,
    language: &str,
    kind: ChunkKind,
    symbol: Option<&str>,
    parent: Option<&str>,
) -> Role {
    let Some(config) = lang::by_name(language).filter(|_| file_role == Role::Code) else {
        return file_role;
    };
    let test_module = kind == ChunkKind::Module && symbol.is_some_and(|s| config.is_test_module(s))
        || parent.is_some_and(|p| config.is_test_module(p));
    if test_module { Role::Tests } else { file_role }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_test_modules_are_tests() {
        use ChunkKind::{Function, Module};
        let rust = |kind, symbol, parent| role_for_chunk(Role::Code, "rust", kind, symbol, parent);
        assert_eq!(rust(Module, Some("tests"), None), Role::Tests);
        assert_eq!(rust(Module, Some("walk_tests"), None), Role::Tests);
        assert_eq!(rust(Function, Some("parses"), Some("tests")), Role::Tests);
        assert_eq!(rust(Module, Some("testing"), None), Role::Code);
        assert_eq!(rust(Function, Some("tests"), None), Role::Code);
        assert_eq!(rust(Function, Some("run"), Some("walker")), Role::Code);
        // Other languages, and files that are not code, keep their role.
        assert_eq!(
            role_for_chunk(Role::Code, "python", Module, Some("tests"), None),
            Role::Code
        );
        assert_eq!(
            role_for_chunk(Role::Docs, "rust", Module, Some("tests"), None),
            Role::Docs
        );
    }

    #[test]
    fn classifies_paths() {
        let table = [
            ("src/lib.rs", Role::Code),
            ("crates/a/src/walk.rs", Role::Code),
            ("tests/it/main.rs", Role::Tests),
            ("crates/a/tests/x.rs", Role::Tests),
            ("web/__tests__/app.js", Role::Tests),
            ("spec/models/user_spec.rb", Role::Tests),
            ("pkg/server_test.go", Role::Tests),
            ("test_parser.py", Role::Tests),
            ("parser_test.py", Role::Tests),
            ("ui/button.spec.ts", Role::Tests),
            ("ui/button.test.js", Role::Tests),
            ("src/test/java/FooTest.java", Role::Tests),
            ("benches/index.rs", Role::Tests),
            ("tests/fixtures/polyglot/README.md", Role::Tests),
            ("README.md", Role::Docs),
            ("docs/guide.rst", Role::Docs),
            ("doc/notes.txt", Role::Docs),
            ("LICENSE", Role::Docs),
            ("Cargo.toml", Role::Config),
            ("package.json", Role::Config),
            ("config/app.yaml", Role::Config),
            (".github/workflows/ci.yml", Role::Config),
            ("Makefile", Role::Config),
            ("Dockerfile", Role::Config),
            ("settings.ini", Role::Config),
            ("go.mod", Role::Config),
            ("scripts/deploy.sh", Role::Code),
            ("ui/App.svelte", Role::Code),
            ("icons/icon.png", Role::Other),
            ("contest.rs", Role::Code),
            ("attestation.py", Role::Code),
        ];
        for (path, want) in table {
            assert_eq!(role_for_path(path), want, "{path}");
        }
    }
}
