//! Chunking: snapshots of every fixture in `tests/fixtures/polyglot/` (chunks,
//! outlines, defs, refs and a signature-only rendering), the partition
//! invariants as property tests, and hostile inputs (garbage, a 1 MB line,
//! CRLF, deep nesting, oversized definitions).

use loupe_assemble::SpanKind;
use loupe_engine::indexing::chunk::{ChunkConfig, ParsedFile, chunk_file};
use loupe_engine::indexing::lang::{self, BodyStyle};
use proptest::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The polyglot fixture project.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/polyglot")
}

/// Every fixture file, relative path with `/`, sorted.
fn fixture_files() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![fixtures()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(fixtures()).expect("prefix");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

fn read_fixture(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).expect("fixture")
}

fn span_name(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Signature => "sig",
        SpanKind::Doc => "doc",
        SpanKind::Body => "body",
        SpanKind::Import => "import",
        SpanKind::Comment => "comment",
        SpanKind::Code => "code",
    }
}

/// A compact, reviewable view of a parsed file: per chunk its kind, symbol,
/// parent and lines, then its outline spans with line ranges; then defs and
/// refs.
fn compact(source: &str, parsed: &ParsedFile) -> String {
    let line_of = |byte: usize| source[..byte].matches('\n').count() + 1;
    let mut out = format!("language: {}\n", parsed.language);
    for w in &parsed.warnings {
        writeln!(out, "warning: {w}").ok();
    }
    for (i, c) in parsed.chunks.iter().enumerate() {
        writeln!(
            out,
            "#{i} {:?} {} parent={} L{}-{}",
            c.kind,
            c.symbol.as_deref().unwrap_or("-"),
            c.parent.as_deref().unwrap_or("-"),
            c.start_line,
            c.end_line
        )
        .ok();
        let spans: Vec<String> = c
            .outline
            .iter()
            .map(|s| {
                let a = line_of(c.start_byte as usize + s.start as usize);
                let b = line_of(c.start_byte as usize + s.end as usize - 1);
                format!("{} {a}-{b}", span_name(s.kind))
            })
            .collect();
        writeln!(out, "    {}", spans.join(" | ")).ok();
    }
    let defs: Vec<String> = parsed
        .defs
        .iter()
        .map(|d| format!("{}:{:?}@{}#{}", d.name, d.kind, d.line, d.chunk))
        .collect();
    writeln!(out, "defs: {}", defs.join(" ")).ok();
    let mut by_chunk: Vec<(usize, String)> = Vec::new();
    for r in &parsed.refs {
        let tag = match r.kind {
            loupe_engine::indexing::chunk::RefKind::Call => "call",
            loupe_engine::indexing::chunk::RefKind::Import => "import",
            loupe_engine::indexing::chunk::RefKind::Type => "type",
        };
        match by_chunk.last_mut() {
            Some((c, s)) if *c == r.chunk => write!(s, " {tag}:{}", r.name).unwrap_or(()),
            _ => by_chunk.push((r.chunk, format!("{tag}:{}", r.name))),
        }
    }
    for (c, s) in by_chunk {
        writeln!(out, "refs #{c}: {s}").ok();
    }
    out
}

/// Render every chunk at "signatures + docs": keep everything but bodies,
/// which become `{ ... }` or `...` per the language's body style.
fn signatures_only(rel: &str, source: &str, parsed: &ParsedFile) -> String {
    let style = lang::for_path(rel).map_or(BodyStyle::Indent, |c| c.body_style);
    let mut out = String::new();
    for c in &parsed.chunks {
        let text = &source[c.start_byte as usize..c.end_byte as usize];
        for s in &c.outline {
            let piece = &text[s.start as usize..s.end as usize];
            if s.kind != SpanKind::Body {
                out.push_str(piece);
                continue;
            }
            let trailing = &piece[piece.trim_end().len()..];
            let elided = match style {
                BodyStyle::Braces if piece.trim_start().starts_with('{') => "{ ... }",
                BodyStyle::Braces if piece.trim_start().starts_with("=>") => "=> ...",
                _ => "...",
            };
            out.push_str(elided);
            out.push_str(trailing);
        }
        out.push_str("\n\n");
    }
    out
}

/// Check the invariants every chunking must satisfy; panics with the path.
fn assert_invariants(rel: &str, source: &str, parsed: &ParsedFile) {
    let windows = parsed
        .chunks
        .iter()
        .any(|c| c.kind == loupe_assemble::ChunkKind::Window);
    let mut covered = vec![0u32; source.len()];
    let mut prev_start = 0;
    for (i, c) in parsed.chunks.iter().enumerate() {
        let (s, e) = (c.start_byte as usize, c.end_byte as usize);
        assert!(
            s < e && e <= source.len(),
            "{rel}: chunk {i} range {s}..{e}"
        );
        assert!(
            source.is_char_boundary(s) && source.is_char_boundary(e),
            "{rel}: chunk {i}"
        );
        assert!(s >= prev_start, "{rel}: chunk {i} out of order");
        prev_start = s;
        assert!(!source[s..e].trim().is_empty(), "{rel}: chunk {i} is blank");
        assert!(c.start_line <= c.end_line, "{rel}: chunk {i} lines");
        for n in &mut covered[s..e] {
            *n += 1;
        }
        // The outline partitions the chunk.
        let mut at = 0;
        for span in &c.outline {
            assert_eq!(span.start, at, "{rel}: chunk {i} outline gap/overlap");
            assert!(span.end > span.start, "{rel}: chunk {i} empty span");
            assert!(
                source.is_char_boundary(s + span.end as usize),
                "{rel}: chunk {i} span"
            );
            at = span.end;
        }
        assert_eq!(
            at as usize,
            e - s,
            "{rel}: chunk {i} outline does not reach the end"
        );
    }
    for (at, ch) in source.char_indices() {
        let n = &covered[at];
        if !ch.is_whitespace() {
            assert!(*n >= 1, "{rel}: a non-whitespace byte is in no chunk");
            assert!(windows || *n == 1, "{rel}: a byte is in {n} chunks");
        }
    }
    for d in &parsed.defs {
        assert!(d.chunk < parsed.chunks.len(), "{rel}: def {} chunk", d.name);
    }
    let mut seen = std::collections::HashSet::new();
    for r in &parsed.refs {
        assert!(r.chunk < parsed.chunks.len(), "{rel}: ref {} chunk", r.name);
        assert!(
            seen.insert((r.chunk, r.kind, r.name.clone())),
            "{rel}: duplicate ref {}",
            r.name
        );
    }
}

/// Chunk one fixture with default settings and snapshot the compact view and
/// the signature-only rendering.
fn check(rel: &str) {
    let source = read_fixture(rel);
    let parsed = chunk_file(rel, &source, &ChunkConfig::default());
    assert_invariants(rel, &source, &parsed);
    let name = rel.replace(['/', '.'], "_");
    insta::assert_snapshot!(name.clone(), compact(&source, &parsed));
    insta::assert_snapshot!(
        format!("{name}_signatures"),
        signatures_only(rel, &source, &parsed)
    );
}

#[test]
fn chunk_fixture_rust() {
    check("src/inventory.rs");
}
#[test]
fn chunk_fixture_python() {
    check("src/scheduler.py");
}
#[test]
fn chunk_fixture_typescript() {
    check("web/cart.ts");
}
#[test]
fn chunk_fixture_tsx() {
    check("web/Badge.tsx");
}
#[test]
fn chunk_fixture_javascript() {
    check("web/router.js");
}
#[test]
fn chunk_fixture_go() {
    check("cmd/server.go");
}
#[test]
fn chunk_fixture_java() {
    check("src/Library.java");
}
#[test]
fn chunk_fixture_c() {
    check("lib/ring.c");
    check("lib/ring.h");
}
#[test]
fn chunk_fixture_cpp() {
    check("lib/matrix.cpp");
}
#[test]
fn chunk_fixture_csharp() {
    check("src/Greeter.cs");
}
#[test]
fn chunk_fixture_ruby() {
    check("lib/account.rb");
}
#[test]
fn chunk_fixture_markdown() {
    check("README.md");
}
#[test]
fn chunk_fixture_toml_windows() {
    check("config.toml");
}

#[test]
fn chunk_fixtures_have_no_warnings() {
    for rel in fixture_files() {
        let parsed = chunk_file(&rel, &read_fixture(&rel), &ChunkConfig::default());
        assert!(parsed.warnings.is_empty(), "{rel}: {:?}", parsed.warnings);
    }
}

/// A small limit forces container and function splits in every fixture; the
/// invariants must still hold.
#[test]
fn chunk_fixture_invariants_at_every_size() {
    for rel in fixture_files() {
        let source = read_fixture(&rel);
        for max in [64, 100, 200, 400, 1000, 4000] {
            let cfg = ChunkConfig {
                max_chunk_bytes: max,
                ..ChunkConfig::default()
            };
            assert_invariants(
                &format!("{rel}@{max}"),
                &source,
                &chunk_file(&rel, &source, &cfg),
            );
        }
    }
}

/// A view of just the chunk headers, for split tests.
fn headers(parsed: &ParsedFile) -> Vec<String> {
    parsed
        .chunks
        .iter()
        .map(|c| {
            format!(
                "{:?} {} parent={}",
                c.kind,
                c.symbol.as_deref().unwrap_or("-"),
                c.parent.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

#[test]
fn chunk_oversized_impl_is_split_into_header_and_methods() {
    let mut src =
        String::from("use std::fmt;\n\n/// A big thing.\nimpl Big {\n    const N: u32 = 3;\n\n");
    for i in 0..6 {
        write!(
            src,
            "    /// Method {i}.\n    fn m{i}(&self) -> u32 {{\n        {i} + 1\n    }}\n\n"
        )
        .ok();
    }
    src.push_str("}\n");
    // Merging is off: this test is about the split itself.
    let cfg = ChunkConfig {
        max_chunk_bytes: 150,
        min_chunk_bytes: 0,
        ..ChunkConfig::default()
    };
    let parsed = chunk_file("big.rs", &src, &cfg);
    assert_invariants("big.rs", &src, &parsed);
    let mut want = vec![
        "Block - parent=-".to_owned(),
        "Impl Big parent=-".to_owned(),
    ];
    want.extend((0..6).map(|i| format!("Method m{i} parent=Big")));
    assert_eq!(headers(&parsed), want);
    // The header keeps the doc comment, the signature and the constant; the
    // closing brace joins the last method.
    let header = &parsed.chunks[1];
    let header_text = &src[header.start_byte as usize..header.end_byte as usize];
    assert!(
        header_text.starts_with("/// A big thing.\nimpl Big {"),
        "{header_text}"
    );
    assert!(header_text.ends_with("const N: u32 = 3;"), "{header_text}");
    let last = &parsed.chunks[7];
    let last_text = &src[last.start_byte as usize..last.end_byte as usize];
    assert!(last_text.ends_with("    }\n\n}"), "{last_text}");
    assert!(parsed.defs.iter().any(|d| d.name == "m5" && d.chunk == 7));
}

#[test]
fn chunk_oversized_python_class_is_split() {
    let mut src = String::from("class Big(Base):\n    \"\"\"Doc.\"\"\"\n\n    LIMIT = 3\n\n");
    for i in 0..5 {
        write!(
            src,
            "    def m{i}(self):\n        \"\"\"Method {i}.\"\"\"\n        return {i}\n\n"
        )
        .ok();
    }
    // Merging is off: this test is about the split itself.
    let cfg = ChunkConfig {
        max_chunk_bytes: 120,
        min_chunk_bytes: 0,
        ..ChunkConfig::default()
    };
    let parsed = chunk_file("big.py", &src, &cfg);
    assert_invariants("big.py", &src, &parsed);
    let mut want = vec!["Class Big parent=-".to_owned()];
    want.extend((0..5).map(|i| format!("Method m{i} parent=Big")));
    assert_eq!(headers(&parsed), want);
    // Each method: signature, docstring, body.
    let kinds: Vec<SpanKind> = parsed.chunks[1].outline.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        vec![SpanKind::Signature, SpanKind::Doc, SpanKind::Body]
    );
}

#[test]
fn chunk_oversized_function_is_split_at_statements() {
    let mut src = String::from("// Long.\nfunction long(a) {\n");
    for i in 0..40 {
        writeln!(src, "  const v{i} = compute(a, {i});").ok();
    }
    src.push_str("  return a;\n}\n");
    let cfg = ChunkConfig {
        max_chunk_bytes: 300,
        ..ChunkConfig::default()
    };
    let parsed = chunk_file("long.js", &src, &cfg);
    assert_invariants("long.js", &src, &parsed);
    assert!(parsed.chunks.len() >= 4, "{:?}", headers(&parsed));
    for c in &parsed.chunks {
        assert_eq!(c.symbol.as_deref(), Some("long"));
        assert_eq!(c.kind, loupe_assemble::ChunkKind::Function);
        assert!(c.end_byte - c.start_byte <= 300 + 16, "piece too big");
        // Every piece starts at a statement (or the comment) and ends at one.
        let text = &src[c.start_byte as usize..c.end_byte as usize];
        assert!(
            text.trim_start().starts_with("const") || text.starts_with("//"),
            "{text}"
        );
        assert!(text.ends_with(';') || text.ends_with('}'), "{text}");
    }
    // The first piece holds the signature; later ones are all body.
    assert_eq!(parsed.chunks[0].outline[1].kind, SpanKind::Signature);
    assert!(
        parsed.chunks[1..]
            .iter()
            .all(|c| c.outline.iter().all(|s| s.kind == SpanKind::Body))
    );
}

/// Text of chunk `i`.
fn chunk_text<'a>(src: &'a str, parsed: &ParsedFile, i: usize) -> &'a str {
    let c = &parsed.chunks[i];
    &src[c.start_byte as usize..c.end_byte as usize]
}

/// Every definition named `name_n` for `n` in `0..count` is in the defs and
/// points at a chunk whose text holds it.
fn assert_all_defined(src: &str, parsed: &ParsedFile, prefix: &str, count: usize) {
    for n in 0..count {
        let name = format!("{prefix}{n}");
        let Some(def) = parsed.defs.iter().find(|d| d.name == name) else {
            panic!("{name} is not in the defs");
        };
        let text = chunk_text(src, parsed, def.chunk);
        assert!(
            text.split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == name),
            "{name} is not in chunk {}",
            def.chunk
        );
    }
}

#[test]
fn chunk_runs_of_small_rust_constants_are_merged() {
    const COUNT: usize = 300;
    let mut src = String::new();
    for n in 0..COUNT {
        writeln!(src, "pub const X_{n}: u32 = {n};").ok();
    }
    let cfg = ChunkConfig::default();
    let parsed = chunk_file("consts.rs", &src, &cfg);
    assert_invariants("consts.rs", &src, &parsed);
    // ~7.5 KB of constants in chunks of at most 4 KB.
    assert!(
        (2..=3).contains(&parsed.chunks.len()),
        "{:?}",
        headers(&parsed)
    );
    for (i, c) in parsed.chunks.iter().enumerate() {
        assert_eq!(c.kind, loupe_assemble::ChunkKind::Constant);
        // The chunk is labelled with its first constant.
        let first = parsed.defs.iter().find(|d| d.chunk == i).map(|d| &d.name);
        assert_eq!(c.symbol.as_ref(), first);
        assert!((c.end_byte - c.start_byte) as usize <= cfg.max_chunk_bytes);
        assert!(c.outline.iter().all(|s| s.kind == SpanKind::Signature));
    }
    assert_eq!(parsed.defs.len(), COUNT);
    assert_all_defined(&src, &parsed, "X_", COUNT);
    // Turning merging off gives one chunk per constant again.
    let unmerged = chunk_file(
        "consts.rs",
        &src,
        &ChunkConfig {
            min_chunk_bytes: 0,
            ..ChunkConfig::default()
        },
    );
    assert_eq!(unmerged.chunks.len(), COUNT);
}

#[test]
fn chunk_runs_of_small_c_defines_are_merged() {
    const COUNT: usize = 1_000;
    let mut src = String::from("#ifndef GEN_H\n#define GEN_H\n\n#include <stdint.h>\n\n");
    for n in 0..COUNT {
        writeln!(src, "#define GEN_FLAG_{n} 0x{n:04x}").ok();
    }
    src.push_str("\n#endif\n");
    let parsed = chunk_file("gen.h", &src, &ChunkConfig::default());
    assert_invariants("gen.h", &src, &parsed);
    // ~30 KB of defines: a handful of chunks of up to 4 KB, not 1,000.
    assert!(
        (8..=12).contains(&parsed.chunks.len()),
        "{} chunks: {:?}",
        parsed.chunks.len(),
        headers(&parsed)
    );
    assert_all_defined(&src, &parsed, "GEN_FLAG_", COUNT);
    assert!(parsed.defs.iter().any(|d| d.name == "GEN_H"));
}

#[test]
fn chunk_small_definitions_of_mixed_kinds_merge_but_big_ones_stay_alone() {
    let mut src = String::from("use crate::Id;\n\n");
    for n in 0..4 {
        writeln!(src, "pub const A_{n}: Id = Id({n});").ok();
        writeln!(src, "pub type T{n} = [u8; {n}];").ok();
    }
    src.push_str("\n#[derive(Clone, Copy)]\npub struct S(u8);\n\nimpl Copy for S {}\n\n");
    // A documented function over the minimum stays a chunk of its own.
    src.push_str("/// Sum of the ids.\npub fn big(ids: &[Id]) -> u64 {\n");
    for n in 0..12 {
        writeln!(
            src,
            "    let v{n} = ids.get({n}).map_or(0, |i| i.0 as u64);"
        )
        .ok();
    }
    src.push_str("    0\n}\n\npub const AFTER: Id = Id(9);\n");
    let parsed = chunk_file("mixed.rs", &src, &ChunkConfig::default());
    assert_invariants("mixed.rs", &src, &parsed);
    assert_eq!(
        headers(&parsed),
        vec![
            "Block A_0 parent=-",
            "Function big parent=-",
            "Constant AFTER parent=-"
        ]
    );
    assert_all_defined(&src, &parsed, "A_", 4);
    assert_all_defined(&src, &parsed, "T", 4);
    for name in ["S", "big", "AFTER"] {
        assert!(parsed.defs.iter().any(|d| d.name == name), "{name}");
    }
    // `Id` is referenced by four constants but listed once for the chunk.
    let id_refs = parsed
        .refs
        .iter()
        .filter(|r| {
            r.chunk == 0 && r.name == "Id" && r.kind == loupe_engine::indexing::chunk::RefKind::Call
        })
        .count();
    assert_eq!(id_refs, 1);
}

#[test]
fn chunk_garbage_and_edge_inputs_never_panic() {
    let inputs: Vec<String> = vec![
        String::new(),
        "\n\n   \n\t".into(),
        "}}}{{{ ))) fn class def ::: <<<".into(),
        "\u{feff}fn main() {}".into(),
        "fn 日本語() { let ü = \"💥\"; }".into(),
        "\0\0\0binary\u{1}\u{2}".into(),
        "/* unterminated".into(),
        "\"unterminated string".into(),
        "def f(:\n  return\n    x\n  y".into(),
    ];
    for ext in [
        "rs", "py", "ts", "tsx", "js", "go", "java", "c", "cpp", "cs", "rb", "md", "txt",
    ] {
        for src in &inputs {
            let rel = format!("x.{ext}");
            let parsed = chunk_file(&rel, src, &ChunkConfig::default());
            assert_invariants(&rel, src, &parsed);
        }
    }
}

#[test]
fn chunk_one_megabyte_single_line() {
    let line = "a = b + c; ".repeat(100_000);
    for rel in ["big.js", "big.txt", "big.py", "big.md"] {
        let parsed = chunk_file(rel, &line, &ChunkConfig::default());
        assert_invariants(rel, &line, &parsed);
        assert!(
            parsed.chunks.len() > 100,
            "{rel}: {} chunks",
            parsed.chunks.len()
        );
        assert!(
            parsed
                .chunks
                .iter()
                .all(|c| c.end_byte - c.start_byte <= 4_000 + 16)
        );
    }
}

#[test]
fn chunk_over_the_parse_limit_falls_back_to_windows() {
    let src = "fn f() {}\n".repeat(100);
    let cfg = ChunkConfig {
        max_parse_bytes: 100,
        ..ChunkConfig::default()
    };
    let parsed = chunk_file("a.rs", &src, &cfg);
    assert_eq!(parsed.language, "rust");
    assert!(
        parsed
            .chunks
            .iter()
            .all(|c| c.kind == loupe_assemble::ChunkKind::Window)
    );
    assert!(
        parsed.warnings.iter().any(|w| w.contains("parse limit")),
        "{:?}",
        parsed.warnings
    );
    assert_invariants("a.rs", &src, &parsed);
}

#[test]
fn chunk_parse_timeout_falls_back_to_windows() {
    let src = "fn f() { let x = [1, 2, 3]; }\n".repeat(20_000);
    let cfg = ChunkConfig {
        parse_timeout: std::time::Duration::ZERO,
        ..ChunkConfig::default()
    };
    let parsed = chunk_file("a.rs", &src, &cfg);
    assert!(
        parsed.warnings.iter().any(|w| w.contains("timed out")),
        "{:?}",
        parsed.warnings
    );
    assert_invariants("a.rs", &src, &parsed);
}

#[test]
fn chunk_crlf_matches_lf() {
    for rel in fixture_files() {
        let lf = read_fixture(&rel);
        let crlf = lf.replace('\n', "\r\n");
        let a = chunk_file(&rel, &lf, &ChunkConfig::default());
        let b = chunk_file(&rel, &crlf, &ChunkConfig::default());
        assert_invariants(&rel, &crlf, &b);
        assert_eq!(headers(&a), headers(&b), "{rel}");
        let lines = |p: &ParsedFile| {
            p.chunks
                .iter()
                .map(|c| (c.start_line, c.end_line))
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(&a), lines(&b), "{rel}");
    }
}

#[test]
fn chunk_deep_nesting_does_not_overflow() {
    const DEPTH: usize = 5_000;
    let parens = format!("x = {}1{}\n", "(".repeat(DEPTH), ")".repeat(DEPTH));
    let braces = format!("fn f() {}{}\n", "{".repeat(DEPTH), "}".repeat(DEPTH));
    let brackets = format!("const a = {}{};\n", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let quotes = format!("{}\n", "> ".repeat(DEPTH));
    let cases = [
        ("deep.py", &parens),
        ("deep.rs", &braces),
        ("deep.js", &brackets),
        ("deep.c", &braces),
        ("deep.go", &braces),
        ("deep.java", &braces),
        ("deep.cs", &braces),
        ("deep.rb", &parens),
        ("deep.cpp", &braces),
        ("deep.ts", &brackets),
        ("deep.md", &quotes),
    ];
    for (rel, src) in cases {
        let cfg = ChunkConfig {
            max_chunk_bytes: 500,
            ..ChunkConfig::default()
        };
        let parsed = chunk_file(rel, src, &cfg);
        assert_invariants(rel, src, &parsed);
    }
}

/// Fragments that make random inputs look like code of every language.
const FRAGMENTS: &[&str] = &[
    "fn ",
    "def ",
    "class ",
    "struct ",
    "impl ",
    "function ",
    "end",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ":",
    ";",
    ",",
    "\n",
    "\r\n",
    "    ",
    "\t",
    "//",
    "/*",
    "*/",
    "#",
    "\"",
    "'",
    "///",
    "\"\"\"",
    "foo",
    "Bar",
    "x",
    "=",
    "=>",
    "->",
    "return ",
    "import ",
    "use ",
    "#include ",
    "<",
    ">",
    "é",
    "日本",
    "💥",
    "@",
    "pub ",
    "if ",
    "else ",
    "namespace ",
    "module ",
    "package ",
    "func ",
];

fn code_like() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..200).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn chunk_prop_windows_cover_everything(
        src in "(\\PC|\n|\r\n| ){0,600}",
        window in 1usize..20,
        overlap in 0usize..25,
    ) {
        let cfg = ChunkConfig { window_lines: window, window_overlap: overlap, max_chunk_bytes: 64, ..ChunkConfig::default() };
        let parsed = chunk_file("notes.txt", &src, &cfg);
        assert_invariants("notes.txt", &src, &parsed);
    }

    #[test]
    fn chunk_prop_code_like_input_keeps_invariants(src in code_like(), max in 64usize..600) {
        let cfg = ChunkConfig { max_chunk_bytes: max, ..ChunkConfig::default() };
        for ext in ["rs", "py", "ts", "tsx", "js", "go", "java", "c", "cpp", "cs", "rb", "md"] {
            let rel = format!("p.{ext}");
            let parsed = chunk_file(&rel, &src, &cfg);
            assert_invariants(&rel, &src, &parsed);
        }
    }

    #[test]
    fn chunk_prop_fixture_edits_keep_invariants(
        pick in 0usize..100,
        cut in 0usize..10_000,
        insert in proptest::sample::select(FRAGMENTS),
        max in 64usize..2000,
    ) {
        let files = fixture_files();
        let rel = &files[pick % files.len()];
        let mut src = read_fixture(rel);
        let mut at = cut % (src.len() + 1);
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        src.insert_str(at, insert);
        let cfg = ChunkConfig { max_chunk_bytes: max, ..ChunkConfig::default() };
        assert_invariants(rel, &src, &chunk_file(rel, &src, &cfg));
    }
}
