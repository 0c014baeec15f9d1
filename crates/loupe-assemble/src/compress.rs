//! Compress: render a chunk at a level of detail (LOD) from its outline,
//! without re-parsing.
//!
//! | LOD | code                                             | Markdown                      |
//! |-----|--------------------------------------------------|-------------------------------|
//! | 0   | full text                                        | full text                     |
//! | 1   | without plain comments                           | without HTML comments         |
//! | 2   | signatures + doc comments, bodies elided         | headings + first sentences    |
//! | 3   | skeleton: signatures and fields, no docs         | headings + first sentences, no code |
//! | 4   | imports + symbol names                           | headings                      |
//! | 5   | one-line summary + exported names                | first heading + first sentence |
//!
//! Bodies are replaced by a marker the language would accept in a sketch
//! (`{ /* … */ }`, `...`, `# …`), so the reader sees that code was left out.
//!
//! This module does not choose the level (see [`crate::pack`]) or count
//! tokens. It never invents text beyond markers and the summary line.
//!
//! *Invariant:* for the same chunk, a higher level never renders longer
//! text than LOD 0; rendering is a pure function of (chunk, level, options).

use crate::model::{Chunk, ChunkKind, OutlineSpan, SpanKind};

/// The coarsest level of detail.
pub const MAX_LOD: u8 = 5;

/// Rendering options that depend on the rest of the prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Leave out import spans (the file's imports are already in the prompt).
    pub skip_imports: bool,
}

/// Comment and body-marker syntax of a language family.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// `//` comments, `{ … }` bodies: Rust, C, C++, C#, Java, Go, JS, TS, ...
    Brace,
    /// `#` comments, indented bodies (`...`): Python.
    Python,
    /// `#` comments, `end`-terminated bodies: Ruby, shell.
    Hash,
    /// Markdown.
    Markdown,
    /// Anything else: `…` markers, no comment prefix.
    Plain,
}

fn family(language: &str) -> Family {
    match language {
        "rust" | "c" | "cpp" | "c_sharp" | "csharp" | "java" | "go" | "javascript"
        | "typescript" | "tsx" | "jsx" | "kotlin" | "swift" | "php" | "scala" | "dart" | "zig" => {
            Family::Brace
        }
        "python" => Family::Python,
        "ruby" | "bash" | "shell" | "toml" | "yaml" | "perl" | "r" | "elixir" => Family::Hash,
        "markdown" | "md" => Family::Markdown,
        _ => Family::Plain,
    }
}

fn comment_prefix(family: Family) -> &'static str {
    match family {
        Family::Brace => "// ",
        Family::Python | Family::Hash => "# ",
        Family::Markdown | Family::Plain => "",
    }
}

/// The marker that replaces an elided body.
fn body_marker(family: Family, body: &str) -> String {
    let trimmed = body.trim_end();
    let tail = &body[trimmed.len()..];
    let marker = match family {
        Family::Brace if trimmed.starts_with('{') && trimmed.ends_with('}') => "{ /* … */ }",
        Family::Brace => "/* … */",
        Family::Python => "...",
        Family::Hash if trimmed.ends_with("end") => "# …\nend",
        Family::Hash => "# …",
        Family::Markdown | Family::Plain => "…",
    };
    format!("{marker}{tail}")
}

fn span_text<'a>(chunk: &'a Chunk, span: &OutlineSpan) -> &'a str {
    chunk
        .text
        .get(span.start as usize..span.end as usize)
        .unwrap_or("")
}

/// The outline, or one `Code` span over the whole text when the outline is
/// missing or does not partition the text (then only LOD 0, 1 and 5 differ).
fn spans(chunk: &Chunk) -> Vec<OutlineSpan> {
    let len = chunk.text.len() as u32;
    let valid = !chunk.outline.is_empty()
        && chunk.outline.first().is_some_and(|s| s.start == 0)
        && chunk.outline.last().is_some_and(|s| s.end == len)
        && chunk.outline.windows(2).all(|w| w[0].end == w[1].start)
        && chunk.outline.iter().all(|s| {
            chunk.text.is_char_boundary(s.start as usize)
                && chunk.text.is_char_boundary(s.end as usize)
        });
    if valid {
        chunk.outline.clone()
    } else {
        vec![OutlineSpan {
            kind: SpanKind::Code,
            start: 0,
            end: len,
        }]
    }
}

/// Drops lines that became whitespace-only, trailing spaces, and runs of
/// more than one blank line.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            // A line of only spaces was left behind by a removed span.
            if !line.is_empty() {
                continue;
            }
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(trimmed);
        out.push('\n');
    }
    if !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// The first sentence of `text` (up to `.`/`!`/`?` followed by whitespace, or the first line).
pub fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let line_end = text.find('\n').unwrap_or(text.len());
    let line = &text[..line_end];
    let mut prev_end = None;
    for (i, c) in line.char_indices() {
        if let Some(end) = prev_end
            && c.is_whitespace()
        {
            return &line[..end];
        }
        prev_end = matches!(c, '.' | '!' | '?').then_some(i + c.len_utf8());
    }
    line
}

/// Strips comment markers from a doc comment (`///`, `//!`, `/** */`, `#`, quotes).
fn doc_to_prose(doc: &str) -> String {
    doc.lines()
        .map(|l| {
            l.trim()
                .trim_start_matches(['/', '*', '!', '#', '"', '\''])
                .trim_end_matches(['*', '/', '"', '\''])
                .trim()
        })
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Keywords that introduce a definition's name.
const DEF_KEYWORDS: &[&str] = &[
    "fn",
    "def",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "func",
    "function",
    "impl",
    "const",
    "static",
    "mod",
    "module",
    "namespace",
    "record",
    "union",
    "object",
];

/// The defined name in a signature (`pub async fn foo<T>(` → `foo`).
fn defined_name(signature: &str) -> Option<String> {
    let words: Vec<&str> = signature
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .position(|w| DEF_KEYWORDS.contains(w))
        .and_then(|i| words.get(i + 1))
        .map(|w| w.to_string())
        .or_else(|| {
            // Java/C# methods: `public int size(` → the word before `(`.
            let head = signature.split('(').next()?;
            let name = head
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .rfind(|w| !w.is_empty())?;
            signature.contains('(').then(|| name.to_string())
        })
}

fn is_exported(signature: &str, name: &str, family: Family) -> bool {
    let s = signature.trim_start();
    match family {
        Family::Python => !name.starts_with('_'),
        _ => {
            s.starts_with("pub")
                || s.starts_with("export")
                || s.starts_with("public")
                || name.chars().next().is_some_and(char::is_uppercase)
        }
    }
}

/// The names a chunk defines: its symbol, then names in its signatures.
fn names(chunk: &Chunk, spans: &[OutlineSpan], exported_only: bool) -> Vec<String> {
    let fam = family(&chunk.language);
    let mut out: Vec<String> = Vec::new();
    if let Some(symbol) = &chunk.symbol {
        out.push(match &chunk.parent {
            Some(parent) => format!("{parent}::{symbol}"),
            None => symbol.clone(),
        });
    }
    for span in spans.iter().filter(|s| s.kind == SpanKind::Signature) {
        let sig = span_text(chunk, span);
        if let Some(name) = defined_name(sig)
            && (!exported_only || is_exported(sig, &name, fam))
            && !out
                .iter()
                .any(|n| n == &name || n.ends_with(&format!("::{name}")))
        {
            out.push(name);
        }
    }
    out
}

fn kind_word(kind: ChunkKind) -> &'static str {
    match kind {
        ChunkKind::Function => "fn",
        ChunkKind::Method => "method",
        ChunkKind::Class => "class",
        ChunkKind::Struct => "struct",
        ChunkKind::Enum => "enum",
        ChunkKind::Trait => "trait",
        ChunkKind::Interface => "interface",
        ChunkKind::Impl => "impl",
        ChunkKind::Module => "module",
        ChunkKind::Type => "type",
        ChunkKind::Constant => "const",
        ChunkKind::Block => "code",
        ChunkKind::Section => "section",
        ChunkKind::Window => "lines",
    }
}

/// The LOD 5 line: kind, name, the first sentence of its docs (or its
/// signature's first line), and exported names.
pub fn summary(chunk: &Chunk) -> String {
    let spans = spans(chunk);
    let fam = family(&chunk.language);
    let doc = spans
        .iter()
        .find(|s| s.kind == SpanKind::Doc)
        .map(|s| doc_to_prose(span_text(chunk, s)));
    let described = doc
        .as_deref()
        .map(first_sentence)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| {
            let sig = spans
                .iter()
                .find(|s| s.kind == SpanKind::Signature)
                .map(|s| span_text(chunk, s))?;
            Some(
                sig.lines()
                    .next()?
                    .trim()
                    .trim_end_matches('{')
                    .trim()
                    .to_string(),
            )
        })
        .or_else(|| {
            chunk
                .text
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_default();
    let mut line = String::from(comment_prefix(fam));
    if fam != Family::Markdown {
        line.push_str(kind_word(chunk.kind));
        if let Some(symbol) = &chunk.symbol {
            line.push(' ');
            line.push_str(symbol);
        }
        if !described.is_empty() {
            line.push_str(": ");
        }
    }
    line.push_str(&described);
    let exported = names(chunk, &spans, true);
    let others: Vec<&String> = exported
        .iter()
        .filter(|n| Some(*n) != chunk.symbol.as_ref() && !n.contains("::"))
        .collect();
    if !others.is_empty() && fam != Family::Markdown {
        line.push_str(" [");
        line.push_str(
            &others
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        line.push(']');
    }
    line.push('\n');
    line
}

/// Renders `chunk` at `lod` (clamped to [`MAX_LOD`]).
pub fn render(chunk: &Chunk, lod: u8, options: RenderOptions) -> String {
    let lod = lod.min(MAX_LOD);
    let fam = family(&chunk.language);
    if fam == Family::Markdown {
        return render_markdown(chunk, &spans(chunk), lod);
    }
    if lod == MAX_LOD {
        return summary(chunk);
    }
    let spans = spans(chunk);
    if lod == 0 && !options.skip_imports {
        return chunk.text.clone();
    }
    let mut out = String::with_capacity(chunk.text.len());
    if lod == 4 {
        for span in spans
            .iter()
            .filter(|s| s.kind == SpanKind::Import && !options.skip_imports)
        {
            out.push_str(span_text(chunk, span));
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        let names = names(chunk, &spans, false);
        if !names.is_empty() {
            out.push_str(comment_prefix(fam));
            out.push_str(kind_word(chunk.kind));
            out.push(' ');
            out.push_str(&names.join(", "));
            out.push('\n');
        }
        return tidy(&out);
    }
    let mut last_was_marker = false;
    for span in &spans {
        let text = span_text(chunk, span);
        let keep = match span.kind {
            SpanKind::Import => !options.skip_imports,
            SpanKind::Comment => lod == 0,
            SpanKind::Doc => lod <= 2,
            SpanKind::Signature | SpanKind::Code => true,
            SpanKind::Body => lod <= 1,
        };
        if keep {
            out.push_str(text);
            last_was_marker = false;
        } else if span.kind == SpanKind::Body && !last_was_marker {
            out.push_str(&body_marker(fam, text));
            last_was_marker = true;
        }
    }
    tidy(&out)
}

/// Appends the first sentence of `text` (with `…` if more followed);
/// whether there was one.
fn push_first_sentence(out: &mut String, text: &str) -> bool {
    let sentence = first_sentence(text);
    if sentence.is_empty() {
        return false;
    }
    out.push_str(sentence);
    if sentence.len() < text.trim().len() {
        out.push_str(" …");
    }
    out.push('\n');
    true
}

/// Markdown levels: headings (`Signature` spans) and paragraphs (`Doc`).
fn render_markdown(chunk: &Chunk, spans: &[OutlineSpan], lod: u8) -> String {
    let mut out = String::with_capacity(chunk.text.len());
    let mut heading_done = false;
    for span in spans {
        let text = span_text(chunk, span);
        match (span.kind, lod) {
            (SpanKind::Signature, 5) if heading_done => {}
            (SpanKind::Doc, 5) => {
                if push_first_sentence(&mut out, text) {
                    break;
                }
            }
            (SpanKind::Comment, 0) => out.push_str(text),
            (SpanKind::Comment, _) => {}
            (_, 0 | 1) => out.push_str(text),
            (SpanKind::Signature, _) => {
                heading_done = true;
                out.push_str(text.trim_end());
                out.push('\n');
            }
            (SpanKind::Code, 2) => {
                let fence = text.lines().next().unwrap_or("```").trim();
                if fence.starts_with("```") || fence.starts_with("~~~") {
                    out.push_str(&format!("{fence}\n…\n{}\n", &fence[..3]));
                }
            }
            (SpanKind::Code, _) => {}
            (_, 2 | 3) => {
                push_first_sentence(&mut out, text);
            }
            (_, _) => {}
        }
    }
    if out.is_empty() {
        return summary(chunk);
    }
    tidy(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    /// A chunk from text with `«kind|...»` markup giving the outline; text
    /// outside markup is `Code`.
    pub(crate) fn chunk_from(
        language: &str,
        kind: ChunkKind,
        symbol: Option<&str>,
        marked: &str,
    ) -> Chunk {
        let mut text = String::new();
        let mut outline = Vec::new();
        let mut rest = marked;
        let push = |text: &mut String, outline: &mut Vec<OutlineSpan>, kind, s: &str| {
            if s.is_empty() {
                return;
            }
            let start = text.len() as u32;
            text.push_str(s);
            outline.push(OutlineSpan {
                kind,
                start,
                end: text.len() as u32,
            });
        };
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
        Chunk {
            id: 1,
            path: "src/x".into(),
            language: language.into(),
            kind,
            symbol: symbol.map(str::to_string),
            parent: None,
            start_byte: 0,
            end_byte: text.len() as u32,
            start_line: 1,
            end_line: text.lines().count() as u32,
            role: Role::Code,
            tokens: 0,
            hash: String::new(),
            text,
            outline,
        }
    }

    fn check(chunk: &Chunk, expect: &str) {
        let mut got = String::new();
        for lod in 0..=MAX_LOD {
            got.push_str(&format!(
                "--- {lod}\n{}",
                render(chunk, lod, RenderOptions::default())
            ));
            if !got.ends_with('\n') {
                got.push('\n');
            }
        }
        assert_eq!(got.trim_end(), expect.trim(), "\n{got}");
    }

    const RUST: &str = "«imp|use std::fmt;\n»\n«doc|/// Packs items greedily. Never over budget.\n»«sig|pub fn pack(items: &[Item]) -> Pack »«body|{\n    // count first\n    let n = items.len();\n    todo(n)\n}»\n";

    #[test]
    fn rust_levels() {
        check(
            &chunk_from("rust", ChunkKind::Function, Some("pack"), RUST),
            "--- 0
use std::fmt;

/// Packs items greedily. Never over budget.
pub fn pack(items: &[Item]) -> Pack {
    // count first
    let n = items.len();
    todo(n)
}
--- 1
use std::fmt;

/// Packs items greedily. Never over budget.
pub fn pack(items: &[Item]) -> Pack {
    // count first
    let n = items.len();
    todo(n)
}
--- 2
use std::fmt;

/// Packs items greedily. Never over budget.
pub fn pack(items: &[Item]) -> Pack { /* … */ }
--- 3
use std::fmt;

pub fn pack(items: &[Item]) -> Pack { /* … */ }
--- 4
use std::fmt;
// fn pack
--- 5
// fn pack: Packs items greedily.",
        );
    }

    #[test]
    fn python_levels() {
        let py = "«sig|class Cache:\n    »«doc|\"\"\"An LRU cache.\"\"\"\n    »«sig|def get(self, key):\n        »«body|return self._d[key]\n»    «com|# private»\n    «sig|def _evict(self):\n        »«body|pass\n»";
        check(
            &chunk_from("python", ChunkKind::Class, Some("Cache"), py),
            "--- 0
class Cache:
    \"\"\"An LRU cache.\"\"\"
    def get(self, key):
        return self._d[key]
    # private
    def _evict(self):
        pass
--- 1
class Cache:
    \"\"\"An LRU cache.\"\"\"
    def get(self, key):
        return self._d[key]
    def _evict(self):
        pass
--- 2
class Cache:
    \"\"\"An LRU cache.\"\"\"
    def get(self, key):
        ...
    def _evict(self):
        ...
--- 3
class Cache:
    def get(self, key):
        ...
    def _evict(self):
        ...
--- 4
# class Cache, get, _evict
--- 5
# class Cache: An LRU cache. [get]",
        );
    }

    #[test]
    fn markdown_levels() {
        let md = "«sig|# Packing\n»\n«doc|The packer fills the budget. It degrades first.\n»\n«code|```rust\npack();\n```\n»\n«com|<!-- note -->\n»«sig|## Order\n»\n«doc|Pinned first.\n»";
        check(
            &chunk_from("markdown", ChunkKind::Section, Some("Packing"), md),
            "--- 0
# Packing

The packer fills the budget. It degrades first.

```rust
pack();
```

<!-- note -->
## Order

Pinned first.
--- 1
# Packing

The packer fills the budget. It degrades first.

```rust
pack();
```

## Order

Pinned first.
--- 2
# Packing
The packer fills the budget. …
```rust
…
```
## Order
Pinned first.
--- 3
# Packing
The packer fills the budget. …
## Order
Pinned first.
--- 4
# Packing
## Order
--- 5
# Packing
The packer fills the budget. …",
        );
    }

    #[test]
    fn broken_outline_falls_back_to_text() {
        let mut c = chunk_from(
            "rust",
            ChunkKind::Function,
            Some("f"),
            "«sig|fn f() »«body|{ 1 }»",
        );
        c.outline.pop();
        assert_eq!(render(&c, 2, RenderOptions::default()), "fn f() { 1 }");
    }

    #[test]
    fn skip_imports() {
        let c = chunk_from("rust", ChunkKind::Function, Some("pack"), RUST);
        assert!(!render(&c, 0, RenderOptions { skip_imports: true }).contains("use std"));
    }

    #[test]
    fn first_sentences() {
        assert_eq!(first_sentence("Hello there. More."), "Hello there.");
        assert_eq!(first_sentence("v1.2 is out! Yes"), "v1.2 is out!");
        assert_eq!(first_sentence("no stop\nsecond line"), "no stop");
    }
}
