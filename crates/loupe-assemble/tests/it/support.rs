//! Hand-made candidates for the integration tests.

use loupe_assemble::{Candidate, Chunk, ChunkKind, OutlineSpan, Role, Signals, SpanKind};

/// Builds a chunk from text with `«kind|...»` markup for its outline;
/// unmarked text is `Code`.
pub fn chunk(
    id: i64,
    path: &str,
    language: &str,
    kind: ChunkKind,
    symbol: Option<&str>,
    start_line: u32,
    marked: &str,
) -> Chunk {
    let mut text = String::new();
    let mut outline = Vec::new();
    let push = |text: &mut String, outline: &mut Vec<OutlineSpan>, kind, s: &str| {
        if !s.is_empty() {
            let start = text.len() as u32;
            text.push_str(s);
            outline.push(OutlineSpan {
                kind,
                start,
                end: text.len() as u32,
            });
        }
    };
    let mut rest = marked;
    while let Some(open) = rest.find('«') {
        push(&mut text, &mut outline, SpanKind::Code, &rest[..open]);
        let after = &rest[open + '«'.len_utf8()..];
        let bar = after.find('|').unwrap_or(0);
        let close = after.find('»').unwrap_or(after.len());
        let kind = match &after[..bar] {
            "sig" => SpanKind::Signature,
            "doc" => SpanKind::Doc,
            "body" => SpanKind::Body,
            "imp" => SpanKind::Import,
            "com" => SpanKind::Comment,
            _ => SpanKind::Code,
        };
        push(&mut text, &mut outline, kind, &after[bar + 1..close]);
        rest = &after[(close + '»'.len_utf8()).min(after.len())..];
    }
    push(&mut text, &mut outline, SpanKind::Code, rest);
    let lines = text.lines().count().max(1) as u32;
    Chunk {
        id,
        path: path.into(),
        language: language.into(),
        kind,
        symbol: symbol.map(str::to_string),
        parent: None,
        start_byte: id as u32 * 10_000,
        end_byte: id as u32 * 10_000 + text.len() as u32,
        start_line,
        end_line: start_line + lines - 1,
        role: if language == "markdown" {
            Role::Docs
        } else if path.contains("test") {
            Role::Tests
        } else {
            Role::Code
        },
        tokens: loupe_assemble::tokens::count(loupe_assemble::tokens::Encoding::O200kBase, &text)
            as u32,
        hash: format!("hash{id}"),
        text,
        outline,
    }
}

/// A candidate with BM25 and vector ranks.
pub fn candidate(chunk: Chunk, bm25_rank: Option<u32>, vector_rank: Option<u32>) -> Candidate {
    Candidate {
        chunk,
        signals: Signals {
            bm25_rank,
            vector_rank,
            ..Default::default()
        },
    }
}

/// A small project: a packer, a renderer, a test, a doc and a primer.
pub fn project() -> Vec<Candidate> {
    let pack = chunk(
        1,
        "src/pack.rs",
        "rust",
        ChunkKind::Function,
        Some("pack"),
        10,
        "«imp|use crate::Item;\n»\n«doc|/// Packs items greedily under a budget.\n»«sig|pub fn pack(items: &[Item], budget: u32) -> Vec<Item> »«body|{\n    // phase one: admit\n    let mut out = Vec::new();\n    for item in items {\n        if item.size <= budget {\n            out.push(item.clone());\n        }\n    }\n    out\n}»\n",
    );
    let render = chunk(
        2,
        "src/render.rs",
        "rust",
        ChunkKind::Function,
        Some("render"),
        1,
        "«doc|/// Renders packed items as XML.\n»«sig|pub fn render(items: &[Item]) -> String »«body|{\n    items.iter().map(|i| format!(\"<document>{}</document>\", i.text)).collect()\n}»\n",
    );
    let test = chunk(
        3,
        "tests/pack_test.rs",
        "rust",
        ChunkKind::Function,
        Some("packs_under_budget"),
        1,
        "«sig|#[test]\nfn packs_under_budget() »«body|{\n    assert!(pack(&items(), 10).len() <= 2);\n}»\n",
    );
    let doc = chunk(
        4,
        "docs/packing.md",
        "markdown",
        ChunkKind::Section,
        Some("Packing"),
        1,
        "«sig|# Packing\n»\n«doc|The packer admits items by priority. It degrades detail before it drops anything.\n»",
    );
    let primer = chunk(
        5,
        "AGENTS.md",
        "markdown",
        ChunkKind::Section,
        Some("Agents"),
        1,
        "«sig|# Agents\n»\n«doc|Loupe assembles prompts. Keep assembly pure.\n»",
    );
    vec![
        candidate(pack, Some(1), Some(2)),
        candidate(render, Some(3), Some(4)),
        candidate(test, Some(2), None),
        candidate(doc, None, Some(1)),
        candidate(primer, None, Some(9)),
    ]
}
