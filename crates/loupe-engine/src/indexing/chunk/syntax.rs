//! Syntax-aware chunking for languages with a tree-sitter grammar: parse with
//! a size cap and a deadline, find definitions and references with the
//! language's queries, cut the file into symbol-aligned chunks, and tag each
//! chunk's outline.
//!
//! How a file is cut (the rules the snapshot tests pin down):
//! - Each top-level item that holds a definition becomes one chunk, together
//!   with the comments, attributes and decorators directly above it (no blank
//!   line between). Runs of other top-level items become one `Block` chunk.
//! - A container (class, impl, trait, interface, namespace, ...) larger than
//!   `max_chunk_bytes` is split: a header chunk (its signature, the opening
//!   delimiter and the items before the first member), one chunk per member
//!   (`parent` = the container), chunks of the container's kind and symbol for
//!   runs of non-member items between members, and the closing delimiter
//!   appended to the last member's chunk (or to a trailing run, if any).
//!   Members are functions and nested containers; constants, fields and type
//!   aliases inside a container stay with its header or runs.
//! - A `;` or comment on the line where a definition ends joins it.
//! - Include guards and `extern "C"` blocks are transparent: their children
//!   are chunked as top-level items.
//! - Any other chunk larger than `max_chunk_bytes` (a long function, a huge
//!   statement) is cut at statement boundaries (named nodes that start a
//!   line), then at line ends, into consecutive chunks with the same symbol.
//! - Small neighbours merge: consecutive chunks each under `min_chunk_bytes`,
//!   cut from the same scope (top level or one container's body) with the
//!   same parent and only whitespace between them, are merged greedily from
//!   the first while the result stays within `max_chunk_bytes`. A chunk at or
//!   over the minimum never absorbs or joins a small one, and neither do the
//!   parts of something split for size (statement pieces, container headers).
//!   The merged chunk has the pieces' kind if they share one, else `Block`.
//!   Its symbol is the first name in it: the chunk's label, and what lexical
//!   search, embeddings and the caller lookup see, which `None` would blank.
//!   Every piece's definitions stay in the defs (pointing at the merged
//!   chunk), so each name is still found by symbol lookup. Its outline is
//!   computed over the whole range like any chunk's, so it partitions the
//!   text including the whitespace between pieces.
//! - Chunks never overlap; together they hold every non-whitespace byte.
//!
//! Does not read files or fall back to line windows itself: on a parse
//! failure it returns the reason and the caller windows the file.

use super::outline::{self, Interval};
use super::text::{self, LineIndex, TINY_PIECE_BYTES, trim};
use super::{ChunkConfig, ChunkDraft, ParsedFile, RefKind, SymbolDef, SymbolRef};
use crate::indexing::lang::{self, LanguageConfig};
use loupe_assemble::{ChunkKind, SpanKind};
use std::collections::{HashMap, HashSet};
use std::time::Instant;
use tree_sitter::{
    Node, ParseOptions, ParseState, Parser, QueryCursor, QueryCursorOptions, QueryCursorState,
    StreamingIterator, Tree,
};

/// Names longer than this are not symbol names (minified code, huge string
/// imports); they are left out of defs and refs.
const MAX_NAME_BYTES: usize = 256;
/// How deep container splitting recurses (class in namespace in module ...);
/// deeper containers stay whole. Bounds recursion on adversarial input.
const MAX_CONTAINER_DEPTH: usize = 8;
/// How deep the statement splitter descends into oversized nodes looking for
/// cut points; below that it cuts at line ends. Bounds work on deep nesting.
const MAX_SPLIT_DEPTH: usize = 12;
/// A comment or attribute attaches to the next item when that item holds a
/// definition starting within this many lines of the item's start (room for
/// decorators, annotations and `template <...>` lines).
const ATTACH_WRAPPER_ROWS: u32 = 8;
/// Query match limit per cursor (tree-sitter's in-progress match cap); keeps
/// pathological inputs from blowing up memory.
const QUERY_MATCH_LIMIT: u32 = 1 << 14;

/// A definition found by the definitions query.
struct Def<'t> {
    node: Node<'t>,
    kind: ChunkKind,
    name: Option<String>,
    name_byte: usize,
    body: Option<Node<'t>>,
    doc: Option<(usize, usize)>,
    /// The owner named by `@parent` (Go receivers), overriding nesting.
    owner: Option<String>,
    /// Index of the innermost enclosing definition.
    parent: Option<usize>,
    /// Whether it sits inside a function body (a local definition).
    in_body: bool,
}

impl Def<'_> {
    fn start(&self) -> usize {
        self.node.start_byte()
    }
    fn end(&self) -> usize {
        self.node.end_byte()
    }
}

/// A chunk before line numbers and outline.
#[derive(Debug)]
struct Piece {
    start: usize,
    end: usize,
    kind: ChunkKind,
    symbol: Option<String>,
    parent: Option<String>,
    /// Whether the piece is a container member (closing delimiters may join it).
    member: bool,
    /// The container whose body the piece was cut from (`None`: top level).
    scope: Option<usize>,
    /// Whether the piece may merge with small neighbours: false for parts of
    /// something split for size (statement pieces, container headers) and
    /// for stray bytes.
    mergeable: bool,
}

/// How a run of non-definition items is labelled.
#[derive(Clone)]
struct RunLabel {
    kind: ChunkKind,
    symbol: Option<String>,
    parent: Option<String>,
}

/// Whether a kind's body is elided at higher levels of detail.
fn is_function_like(kind: ChunkKind) -> bool {
    matches!(kind, ChunkKind::Function | ChunkKind::Method)
}

/// Whether a kind holds members that may become chunks of their own.
fn is_container(kind: ChunkKind) -> bool {
    matches!(
        kind,
        ChunkKind::Class
            | ChunkKind::Struct
            | ChunkKind::Enum
            | ChunkKind::Trait
            | ChunkKind::Interface
            | ChunkKind::Impl
            | ChunkKind::Module
    )
}

/// All children of a node, named or not.
fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// A deadline `timeout` from now, or none if that overflows the clock.
fn deadline(timeout: std::time::Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// Parse `source`, giving up at the deadline.
fn parse(config: &LanguageConfig, source: &str, cfg: &ChunkConfig) -> Result<Tree, String> {
    let mut parser = Parser::new();
    parser
        .set_language(&config.language())
        .map_err(|e| format!("{} grammar is incompatible: {e}", config.name))?;
    let until = deadline(cfg.parse_timeout);
    let mut progress = |_: &ParseState| until.is_some_and(|d| Instant::now() >= d);
    let bytes = source.as_bytes();
    let mut read = |i: usize, _: tree_sitter::Point| bytes.get(i..).unwrap_or_default();
    parser
        .parse_with_options(
            &mut read,
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        )
        .ok_or_else(|| format!("{} after {:?}", super::TIMED_OUT, cfg.parse_timeout))
}

/// Chunk a file with its grammar, or say why not.
// Long: the chunker's steps in order (parse, definitions, scan, segment, merge, outline, references); each is a function, this wires their data.
pub(super) fn chunk(
    config: &'static LanguageConfig,
    source: &str,
    cfg: &ChunkConfig,
) -> Result<ParsedFile, String> {
    if source.len() > cfg.max_parse_bytes {
        return Err(format!(
            "{} bytes is over the parse limit of {} bytes",
            source.len(),
            cfg.max_parse_bytes
        ));
    }
    let queries = config.queries().map_err(str::to_owned)?;
    let tree = parse(config, source, cfg)?;
    let root = tree.root_node();
    let lines = LineIndex::new(source);
    let until = deadline(cfg.parse_timeout);
    let mut warnings = Vec::new();

    let (defs, loose_docs, ref_captures) =
        find_defs(config, queries, root, source, until, &mut warnings);
    let scan = scan(config, root);
    if let Some(err) = scan.first_error {
        warnings.push(format!(
            "syntax error at line {}; chunks near it may be coarse",
            err.start_position().row + 1
        ));
    }

    let ctx = Ctx {
        config,
        source,
        cfg,
        defs: &defs,
        lines: &lines,
    };
    let mut pieces = Vec::new();
    let top = RunLabel {
        kind: ChunkKind::Block,
        symbol: None,
        parent: None,
    };
    ctx.segment(&children(root), None, &top, None, 0, &mut pieces);
    let pieces = ctx.merge_small(ctx.normalize(pieces));

    // Outline intervals, then references (which may add import intervals).
    let mut intervals = ctx.def_intervals();
    intervals.extend(ctx.comment_intervals(&scan));
    intervals.extend(loose_docs.iter().map(|&(start, end)| Interval {
        start,
        end,
        kind: SpanKind::Doc,
    }));
    intervals.extend(scan.imports.iter().map(|n| Interval {
        start: n.start_byte(),
        end: n.end_byte(),
        kind: SpanKind::Import,
    }));
    let (refs, import_nodes) = find_refs(&ctx, &queries.both, &ref_captures, &pieces);
    intervals.extend(import_nodes);
    let intervals = outline::disjoint(intervals);

    let chunks = pieces
        .iter()
        .map(|p| {
            let (start_line, end_line) = lines.lines(p.start, p.end);
            ChunkDraft {
                kind: p.kind,
                symbol: p.symbol.clone(),
                parent: p.parent.clone(),
                start_byte: text::to_u32(p.start),
                end_byte: text::to_u32(p.end),
                start_line,
                end_line,
                outline: outline::for_chunk(source, &intervals, p.start, p.end, SpanKind::Code),
            }
        })
        .collect();

    let sym_defs = defs
        .iter()
        .filter_map(|d| {
            let name = d.name.clone()?;
            let chunk = piece_at(&pieces, d.name_byte)?;
            Some(SymbolDef {
                name,
                kind: d.kind,
                line: lines.line(d.name_byte),
                chunk,
            })
        })
        .collect();

    Ok(ParsedFile {
        language: config.name,
        chunks,
        defs: sym_defs,
        refs,
        warnings,
    })
}

/// One piece spanning a run of merged pieces: the shared kind, or `Block`
/// if kinds differ; the first piece's symbol that is set; the shared parent.
/// `None` for an empty run.
fn combine(run: Vec<Piece>) -> Option<Piece> {
    let first = run.first()?;
    let last = run.last()?;
    let kind = if run.iter().all(|p| p.kind == first.kind) {
        first.kind
    } else {
        ChunkKind::Block
    };
    let symbol = run.iter().find_map(|p| p.symbol.clone());
    Some(Piece {
        start: first.start,
        end: last.end,
        kind,
        symbol,
        parent: first.parent.clone(),
        member: first.member,
        scope: first.scope,
        mergeable: true,
    })
}

/// Index of the piece holding byte `b`.
fn piece_at(pieces: &[Piece], b: usize) -> Option<usize> {
    let i = pieces.partition_point(|p| p.end <= b);
    pieces.get(i).filter(|p| p.start <= b).map(|_| i)
}

/// Text of a node, if it is a usable name.
fn name_text(source: &str, node: Node<'_>) -> Option<String> {
    let text = source.get(node.start_byte()..node.end_byte())?.trim();
    (!text.is_empty() && text.len() <= MAX_NAME_BYTES).then(|| text.to_owned())
}

/// The references query's captures, (capture index, node), in match order.
type RefCaptures<'t> = Vec<(u32, Node<'t>)>;

/// Run both queries in one pass; resolve the definitions' nesting, kinds
/// and bodies. Also returns the ranges of `@doc` captures that belong to no
/// definition, and the references' captures for [`find_refs`] (which needs
/// the chunks, and so the definitions, first).
// Long: one pass over both queries' matches; nesting, kinds and bodies are resolved from the same stack as they come.
fn find_defs<'t>(
    config: &LanguageConfig,
    queries: &lang::CompiledQueries,
    root: Node<'t>,
    source: &str,
    until: Option<Instant>,
    warnings: &mut Vec<String>,
) -> (Vec<Def<'t>>, Vec<(usize, usize)>, RefCaptures<'t>) {
    let query = &queries.both;
    let names = query.capture_names();
    let mut ref_captures = Vec::new();
    let mut cursor = QueryCursor::new();
    cursor.set_match_limit(QUERY_MATCH_LIMIT);
    let mut expired = false;
    let mut progress = |_: &QueryCursorState| {
        expired = until.is_some_and(|d| Instant::now() >= d);
        expired
    };
    let options = QueryCursorOptions::new().progress_callback(&mut progress);
    let mut matches = cursor.matches_with_options(query, root, source.as_bytes(), options);
    // Node id → (pattern index, definition): the first pattern wins.
    let mut found: HashMap<usize, (usize, Def<'t>)> = HashMap::new();
    let mut loose_docs = Vec::new();
    while let Some(m) = matches.next() {
        if m.pattern_index >= queries.refs_from {
            ref_captures.extend(m.captures.iter().map(|c| (c.index, c.node)));
            continue;
        }
        let mut def_node = None;
        let mut kind = None;
        let (mut name, mut body, mut doc, mut owner) = (None, None, None, None);
        for cap in m.captures {
            let capture = names.get(cap.index as usize).copied().unwrap_or("");
            match capture {
                "name" => name = Some(cap.node),
                "body" => body = Some(cap.node),
                "doc" => doc = Some(cap.node),
                "parent" => owner = name_text(source, cap.node),
                other => {
                    if let Some(k) = other
                        .strip_prefix("definition.")
                        .and_then(lang::kind_from_capture)
                    {
                        def_node = Some(cap.node);
                        kind = Some(k);
                    }
                }
            }
        }
        let (Some(node), Some(kind)) = (def_node, kind) else {
            // A `@doc` outside any definition documents the file (a module
            // docstring).
            if let Some(d) = doc {
                loose_docs.push((d.start_byte(), d.end_byte()));
            }
            continue;
        };
        if found
            .get(&node.id())
            .is_some_and(|(p, _)| *p <= m.pattern_index)
        {
            continue;
        }
        let body = body.or_else(|| node.child_by_field_name("body"));
        let def = Def {
            node,
            kind,
            name: name.and_then(|n| name_text(source, n)),
            name_byte: name.map_or(node.start_byte(), |n| n.start_byte()),
            body,
            doc: doc.map(|d| (d.start_byte(), d.end_byte())),
            owner,
            parent: None,
            in_body: false,
        };
        found.insert(node.id(), (m.pattern_index, def));
    }
    drop(matches);
    if cursor.did_exceed_match_limit() || expired {
        warnings.push(format!("{} {}", config.name, super::CUT_SHORT));
    }
    let mut defs: Vec<Def<'t>> = found.into_values().map(|(_, d)| d).collect();
    defs.sort_by(|a, b| a.start().cmp(&b.start()).then(b.end().cmp(&a.end())));
    // Nesting with a stack of open definitions.
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..defs.len() {
        while let Some(&top) = stack.last() {
            if defs[top].end() > defs[i].start() && defs[i].end() <= defs[top].end() {
                break;
            }
            stack.pop();
        }
        if let Some(&p) = stack.last() {
            let parent_kind = defs[p].kind;
            let in_parent_body = is_function_like(parent_kind)
                && defs[p]
                    .body
                    .is_some_and(|b| b.start_byte() <= defs[i].start());
            defs[i].parent = Some(p);
            defs[i].in_body = defs[p].in_body || in_parent_body;
            if defs[i].kind == ChunkKind::Function
                && is_container(parent_kind)
                && parent_kind != ChunkKind::Module
            {
                defs[i].kind = ChunkKind::Method;
            }
        }
        stack.push(i);
    }
    (defs, loose_docs, ref_captures)
}

/// Comments, import statements and the first syntax error, from one walk,
/// with the siblings comment attachment looks at: tree-sitter's
/// `prev_sibling` and `next_sibling` each walk down from the root (about 4 %
/// of a first index's CPU when every comment asked), while the walk passes
/// them anyway.
struct Scan<'t> {
    comments: Vec<Node<'t>>,
    imports: Vec<Node<'t>>,
    first_error: Option<Node<'t>>,
    /// Node id of a comment → the sibling before it.
    before: HashMap<usize, Node<'t>>,
    /// Node id of a comment or an attachable item (attribute, decorator) →
    /// the sibling after it.
    after: HashMap<usize, Node<'t>>,
}

/// Walk the whole tree once, iteratively (deep nesting cannot overflow).
fn scan<'t>(config: &LanguageConfig, root: Node<'t>) -> Scan<'t> {
    let mut out = Scan {
        comments: Vec::new(),
        imports: Vec::new(),
        first_error: None,
        before: HashMap::new(),
        after: HashMap::new(),
    };
    let attachable = |kind: &str| config.is_comment(kind) || config.attach_kinds.contains(&kind);
    let mut cursor = root.walk();
    // The sibling visited last at each depth of the cursor.
    let mut last: Vec<Option<Node<'t>>> = vec![None];
    loop {
        let node = cursor.node();
        let kind = node.kind();
        let previous = last.last_mut().and_then(|slot| slot.replace(node));
        if let Some(p) = previous
            && attachable(p.kind())
        {
            out.after.insert(p.id(), node);
        }
        let mut descend = true;
        if config.is_comment(kind) {
            out.comments.push(node);
            if let Some(p) = previous {
                out.before.insert(node.id(), p);
            }
            descend = false;
        } else if config.import_kinds.contains(&kind) {
            out.imports.push(node);
            descend = false;
        }
        if out.first_error.is_none() && (node.is_error() || node.is_missing()) {
            out.first_error = Some(node);
        }
        if descend && cursor.goto_first_child() {
            last.push(None);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
            last.pop();
        }
    }
}

/// Resolve the references query's captures: deduplicated refs per chunk,
/// and intervals of import statements the query marks with `@import`.
fn find_refs(
    ctx: &Ctx<'_, '_>,
    query: &tree_sitter::Query,
    captures: &[(u32, Node<'_>)],
    pieces: &[Piece],
) -> (Vec<SymbolRef>, Vec<Interval>) {
    let def_names: HashSet<usize> = ctx.defs.iter().map(|d| d.name_byte).collect();
    let names = query.capture_names();
    let mut seen: HashSet<(usize, RefKind, String)> = HashSet::new();
    let mut refs = Vec::new();
    let mut imports = Vec::new();
    for &(index, node) in captures {
        let kind = match names.get(index as usize).copied() {
            Some("reference.call") => RefKind::Call,
            Some("reference.import") => RefKind::Import,
            Some("reference.type") => RefKind::Type,
            Some("import") => {
                imports.push(Interval {
                    start: node.start_byte(),
                    end: node.end_byte(),
                    kind: SpanKind::Import,
                });
                continue;
            }
            _ => continue,
        };
        if def_names.contains(&node.start_byte()) {
            continue;
        }
        let Some(mut name) = name_text(ctx.source, node) else {
            continue;
        };
        if kind == RefKind::Import {
            name = bare_import_name(&name);
            if name.is_empty() {
                continue;
            }
        }
        let Some(chunk) = piece_at(pieces, node.start_byte()) else {
            continue;
        };
        if seen.insert((chunk, kind, name.clone())) {
            let line = ctx.lines.line(node.start_byte());
            refs.push(SymbolRef {
                name,
                kind,
                line,
                chunk,
            });
        }
    }
    refs.sort_by(|a, b| a.chunk.cmp(&b.chunk).then(a.line.cmp(&b.line)));
    (refs, imports)
}

/// The bare name of an imported path: quotes and angle brackets stripped,
/// last path segment (`"net/http"` → `http`, `<stdio.h>` → `stdio.h`).
fn bare_import_name(raw: &str) -> String {
    let trimmed = raw.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '<' | '>'));
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_owned()
}

/// Everything the segmenter needs, borrowed.
struct Ctx<'a, 't> {
    config: &'static LanguageConfig,
    source: &'a str,
    cfg: &'a ChunkConfig,
    defs: &'a [Def<'t>],
    lines: &'a LineIndex,
}

impl<'t> Ctx<'_, 't> {
    /// The definition an item holds at this scope: the first definition
    /// inside the item whose enclosing definition is `scope`.
    fn bearer(&self, item: Node<'t>, scope: Option<usize>) -> Option<usize> {
        let (s, e) = (item.start_byte(), item.end_byte());
        let first = self.defs.partition_point(|d| d.start() < s);
        (first..self.defs.len())
            .take_while(|&i| self.defs[i].start() < e)
            .find(|&i| self.defs[i].end() <= e && self.defs[i].parent == scope)
    }

    /// Replace transparent items (include guards, `extern "C"` blocks) by
    /// their children, a bounded number of levels deep.
    fn flatten(&self, items: &[Node<'t>]) -> Vec<Node<'t>> {
        let mut out = Vec::with_capacity(items.len());
        let mut stack: Vec<(Node<'t>, usize)> = items.iter().rev().map(|&n| (n, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            if depth < MAX_CONTAINER_DEPTH && self.config.transparent_kinds.contains(&node.kind()) {
                stack.extend(children(node).into_iter().rev().map(|c| (c, depth + 1)));
            } else {
                out.push(node);
            }
        }
        out
    }

    /// The definition an item contributes as a chunk of its own in `scope`:
    /// at the top level any definition; inside a container only functions and
    /// nested containers (constants, fields and type aliases stay with the
    /// container's header).
    fn chunk_def(&self, item: Node<'t>, scope: Option<usize>) -> Option<usize> {
        self.bearer(item, scope).filter(|&d| {
            let kind = self.defs[d].kind;
            scope.is_none() || is_function_like(kind) || is_container(kind)
        })
    }

    /// 1-based line of the last non-whitespace byte of a node.
    fn last_row(&self, node: Node<'_>) -> u32 {
        let (s, e) = trim(self.source, node.start_byte(), node.end_byte());
        self.lines.line(e.saturating_sub(1).max(s))
    }

    /// Whether an item may attach to a definition after it.
    fn attachable(&self, node: Node<'_>) -> bool {
        self.config.is_comment(node.kind()) || self.config.attach_kinds.contains(&node.kind())
    }

    /// Cut the items of one scope (the root, or a container's body) into
    /// pieces. `scope` is the container's definition index; `run` labels
    /// non-member runs; `member_parent` is the parent of member chunks.
    fn segment(
        &self,
        items: &[Node<'t>],
        scope: Option<usize>,
        run: &RunLabel,
        member_parent: Option<&str>,
        depth: usize,
        out: &mut Vec<Piece>,
    ) {
        let items = self.flatten(items);
        let mut pending: Vec<Node<'t>> = Vec::new();
        // The last row of the last definition emitted, while nothing followed it.
        let mut def_end_row: Option<u32> = None;
        for item in items {
            let Some(d) = self.chunk_def(item, scope) else {
                // A `;` or comment on the line where a definition ends belongs to it.
                let same_line = def_end_row == Some(item.start_position().row as u32 + 1);
                if same_line
                    && (!item.is_named() || self.config.is_comment(item.kind()))
                    && let Some(last) = out.last_mut()
                {
                    last.end = last.end.max(item.end_byte());
                    def_end_row = Some(self.last_row(item));
                    continue;
                }
                def_end_row = None;
                pending.push(item);
                continue;
            };
            def_end_row = Some(self.last_row(item));
            // Pull directly preceding comments and attributes into the definition.
            let mut lead = item;
            while let Some(&last) = pending.last() {
                let adjacent = lead.start_position().row as u32 <= self.last_row(last);
                let trailing = pending.len() >= 2
                    && self.last_row(pending[pending.len() - 2])
                        == last.start_position().row as u32 + 1;
                if !self.attachable(last) || !adjacent || trailing {
                    break;
                }
                lead = last;
                pending.pop();
            }
            self.flush_run(&pending, run, scope, out);
            pending.clear();
            self.emit_def(
                d,
                (lead.start_byte(), item.end_byte()),
                member_parent,
                scope,
                depth,
                out,
            );
        }
        self.flush_run(&pending, run, scope, out);
    }

    /// One run of non-definition items in `scope` as one piece, or several if
    /// too big.
    fn flush_run(
        &self,
        items: &[Node<'t>],
        label: &RunLabel,
        scope: Option<usize>,
        out: &mut Vec<Piece>,
    ) {
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return;
        };
        let (start, end) = (first.start_byte(), last.end_byte());
        if text::is_blank(self.source, start, end) {
            return;
        }
        let mut cuts: Vec<usize> = items.iter().map(|n| n.start_byte()).collect();
        for &item in items {
            if item.end_byte() - item.start_byte() > self.cfg.max_chunk_bytes {
                self.collect_cuts(item, &mut cuts);
            }
        }
        let parts = self.pack(start, end, cuts);
        let whole = parts.len() == 1;
        for (s, e) in parts {
            out.push(Piece {
                start: s,
                end: e,
                kind: label.kind,
                symbol: label.symbol.clone(),
                parent: label.parent.clone(),
                member: false,
                scope,
                mergeable: whole,
            });
        }
    }

    /// The pieces of one definition spanning `start..end` (attached comments
    /// and wrappers included), cut from the body of `scope`; definitions
    /// inside a container are its members.
    fn emit_def(
        &self,
        d: usize,
        (start, end): (usize, usize),
        parent: Option<&str>,
        scope: Option<usize>,
        depth: usize,
        out: &mut Vec<Piece>,
    ) {
        let def = &self.defs[d];
        let parent = def.owner.clone().or_else(|| parent.map(str::to_owned));
        let piece = |s, e, mergeable| Piece {
            start: s,
            end: e,
            kind: def.kind,
            symbol: def.name.clone(),
            parent: parent.clone(),
            member: scope.is_some(),
            scope,
            mergeable,
        };
        if end - start <= self.cfg.max_chunk_bytes {
            out.push(piece(start, end, true));
            return;
        }
        if is_container(def.kind)
            && depth < MAX_CONTAINER_DEPTH
            && let Some(body) = def.body
        {
            {
                let items = children(body);
                if items.iter().any(|&n| self.chunk_def(n, Some(d)).is_some()) {
                    let label = RunLabel {
                        kind: def.kind,
                        symbol: def.name.clone(),
                        parent,
                    };
                    let first = out.len();
                    self.segment(&items, Some(d), &label, def.name.as_deref(), depth + 1, out);
                    self.close_container(first, start, end, &label, out);
                    return;
                }
            }
        }
        let mut cuts = Vec::new();
        self.collect_cuts(def.body.unwrap_or(def.node), &mut cuts);
        for (s, e) in self.pack(start, end, cuts) {
            out.push(piece(s, e, false));
        }
    }

    /// After a container's members were segmented into `out[first..]`: put
    /// the header (`start` up to the first piece) and the tail (after the last
    /// piece up to `end`) somewhere, so no byte is lost; a closing delimiter
    /// left alone joins the last member.
    fn close_container(
        &self,
        first: usize,
        start: usize,
        end: usize,
        label: &RunLabel,
        out: &mut Vec<Piece>,
    ) {
        let header_piece = |s, e| Piece {
            start: s,
            end: e,
            kind: label.kind,
            symbol: label.symbol.clone(),
            parent: label.parent.clone(),
            member: false,
            scope: None,
            mergeable: false,
        };
        match out.get_mut(first) {
            Some(p) if !p.member => {
                p.start = start;
                p.mergeable = false;
            }
            Some(p) => {
                let header_end = p.start;
                out.insert(first, header_piece(start, header_end));
            }
            None => {
                out.push(header_piece(start, end));
                return;
            }
        }
        if let Some(last) = out.last_mut() {
            last.end = last.end.max(end);
        }
        let n = out.len();
        if n >= first + 2 {
            let (ts, te) = trim(self.source, out[n - 1].start, out[n - 1].end);
            if !out[n - 1].member && out[n - 2].member && te - ts <= TINY_PIECE_BYTES {
                out[n - 2].end = out[n - 1].end;
                out.pop();
            }
        }
    }

    /// Cut candidates inside an oversized node: the starts of named children
    /// that begin a line, descending into children that are still too big.
    fn collect_cuts(&self, node: Node<'t>, cuts: &mut Vec<usize>) {
        let max = self.cfg.max_chunk_bytes;
        let mut stack = vec![(node, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            for child in children(n) {
                let s = child.start_byte();
                if child.is_named() && text::starts_line(self.source, s) {
                    cuts.push(s);
                }
                if child.end_byte() - s > max && depth < MAX_SPLIT_DEPTH {
                    stack.push((child, depth + 1));
                }
            }
        }
    }

    /// Cut `start..end` at candidate offsets (see [`text::pack`]).
    fn pack(&self, start: usize, end: usize, cuts: Vec<usize>) -> Vec<(usize, usize)> {
        text::pack(self.source, start, end, cuts, self.cfg.max_chunk_bytes)
    }

    /// Trim pieces, make them disjoint, put any non-whitespace byte left
    /// between them into a `Block`, and start each at its line's indent.
    fn normalize(&self, mut pieces: Vec<Piece>) -> Vec<Piece> {
        pieces.sort_by_key(|p| p.start);
        let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
        let mut prev_end = 0;
        let block = |s, e| Piece {
            start: s,
            end: e,
            kind: ChunkKind::Block,
            symbol: None,
            parent: None,
            member: false,
            scope: None,
            mergeable: false,
        };
        for mut p in pieces {
            p.start = p.start.max(prev_end);
            let (s, e) = trim(self.source, p.start, p.end);
            if s >= e {
                continue;
            }
            let (gs, ge) = trim(self.source, prev_end, s);
            if gs < ge {
                out.push(block(gs, ge));
            }
            p.start = s;
            p.end = e;
            prev_end = e;
            out.push(p);
        }
        let (gs, ge) = trim(self.source, prev_end, self.source.len());
        if gs < ge {
            out.push(block(gs, ge));
        }
        let mut floor = 0;
        for p in &mut out {
            p.start = text::extend_to_line_start(self.source, p.start, floor);
            floor = p.end;
        }
        out
    }

    /// Merge runs of consecutive small pieces (see the module docs). Runs on
    /// normalized pieces, before outlines, defs and refs are computed, so
    /// those point at the merged pieces without re-mapping.
    fn merge_small(&self, pieces: Vec<Piece>) -> Vec<Piece> {
        let (min, max) = (self.cfg.min_chunk_bytes, self.cfg.max_chunk_bytes);
        let small = |p: &Piece| p.mergeable && p.end - p.start < min;
        let mut out = Vec::with_capacity(pieces.len());
        let mut run: Vec<Piece> = Vec::new();
        for p in pieces {
            let joins = small(&p)
                && run.first().is_some_and(|first| {
                    first.scope == p.scope && first.parent == p.parent && p.end - first.start <= max
                })
                && run
                    .last()
                    .is_some_and(|last| text::is_blank(self.source, last.end, p.start));
            if !joins {
                out.extend(combine(std::mem::take(&mut run)));
            }
            if small(&p) {
                run.push(p);
            } else {
                out.push(p);
            }
        }
        out.extend(combine(run));
        out
    }

    /// Signature, body and docstring intervals of every definition that is
    /// not local to a function body.
    fn def_intervals(&self) -> Vec<Interval> {
        let mut out = Vec::new();
        for def in self.defs.iter().filter(|d| !d.in_body) {
            let (start, end) = (def.start(), def.end());
            let Some(body) = def
                .body
                .filter(|b| b.start_byte() > start && b.end_byte() <= end)
            else {
                out.push(Interval {
                    start,
                    end,
                    kind: SpanKind::Signature,
                });
                continue;
            };
            out.push(Interval {
                start,
                end: body.start_byte(),
                kind: SpanKind::Signature,
            });
            let mut body_start = body.start_byte();
            if let Some((ds, de)) = def.doc.filter(|&(ds, de)| ds >= body_start && de <= end) {
                out.push(Interval {
                    start: ds,
                    end: de,
                    kind: SpanKind::Doc,
                });
                body_start = trim(self.source, de, body.end_byte()).0;
            }
            if is_function_like(def.kind) && body_start < body.end_byte() {
                out.push(Interval {
                    start: body_start,
                    end: body.end_byte(),
                    kind: SpanKind::Body,
                });
            }
        }
        out
    }

    /// Comment intervals: `Doc` for doc comments attached to a definition and
    /// for inner doc comments (`//!`), `Comment` for the rest.
    fn comment_intervals(&self, scan: &Scan<'t>) -> Vec<Interval> {
        let comments = &scan.comments;
        // Node id → attached? Filled back to front so runs of comments reuse
        // the answer of the comment after them.
        let mut attached: HashMap<usize, bool> = HashMap::new();
        let mut out = Vec::with_capacity(comments.len());
        for &c in comments.iter().rev() {
            let is_attached = self.attached_to_def(c, scan, &attached);
            attached.insert(c.id(), is_attached);
            let text = self.source.get(c.start_byte()..c.end_byte()).unwrap_or("");
            let doc = self.config.is_inner_doc_comment(text)
                || is_attached && self.config.is_doc_comment(text);
            let kind = if doc {
                SpanKind::Doc
            } else {
                SpanKind::Comment
            };
            out.push(Interval {
                start: c.start_byte(),
                end: c.end_byte(),
                kind,
            });
        }
        out
    }

    /// Whether a comment sits directly above a definition (through other
    /// comments and attributes, with no blank line and not trailing code).
    fn attached_to_def(
        &self,
        comment: Node<'t>,
        scan: &Scan<'t>,
        memo: &HashMap<usize, bool>,
    ) -> bool {
        if let Some(&prev) = scan.before.get(&comment.id())
            && self.last_row(prev) == comment.start_position().row as u32 + 1
        {
            return false;
        }
        let mut cur = comment;
        loop {
            let Some(&next) = scan.after.get(&cur.id()) else {
                return false;
            };
            if next.start_position().row as u32 + 1 > self.last_row(cur) + 1 {
                return false;
            }
            if self.config.is_comment(next.kind())
                && let Some(&known) = memo.get(&next.id())
            {
                return known;
            }
            if self.attachable(next) {
                cur = next;
                continue;
            }
            let (s, e) = (next.start_byte(), next.end_byte());
            let row = next.start_position().row;
            let first = self.defs.partition_point(|d| d.start() < s);
            return self.defs[first..]
                .iter()
                .take_while(|d| d.start() < e)
                .any(|d| {
                    d.end() <= e
                        && d.node.start_position().row - row <= ATTACH_WRAPPER_ROWS as usize
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node of `tree` under `root`, in walk order.
    fn all_nodes<'t>(root: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let mut cursor = root.walk();
        loop {
            out.push(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return out;
                }
            }
        }
    }

    /// The siblings the walk records for comment attachment are the ones
    /// tree-sitter's `prev_sibling` / `next_sibling` give, in every
    /// language of the polyglot fixture (comments at the top, in bodies,
    /// runs of them, attributes, decorators and annotations).
    #[test]
    fn the_walk_records_the_siblings_tree_sitter_gives() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/polyglot");
        let files = [
            "src/inventory.rs",
            "src/Greeter.cs",
            "src/Library.java",
            "src/scheduler.py",
            "web/router.js",
            "web/cart.ts",
            "web/Badge.tsx",
            "cmd/server.go",
            "lib/ring.c",
            "lib/matrix.cpp",
            "lib/account.rb",
            "lib/ring.h",
        ];
        let (mut comments, mut attachables) = (0, 0);
        for rel in files {
            let source = std::fs::read_to_string(root.join(rel)).expect("fixture");
            let config = lang::for_path(rel).expect("a language");
            let tree = parse(config, &source, &ChunkConfig::default()).expect("parsed");
            let found = scan(config, tree.root_node());
            let id = |n: Option<Node<'_>>| n.map(|n| n.id());
            for c in &found.comments {
                assert_eq!(
                    id(found.before.get(&c.id()).copied()),
                    id(c.prev_sibling()),
                    "{rel}: before {c:?}"
                );
                assert_eq!(
                    id(found.after.get(&c.id()).copied()),
                    id(c.next_sibling()),
                    "{rel}: after {c:?}"
                );
                comments += 1;
            }
            for n in all_nodes(tree.root_node()) {
                if config.attach_kinds.contains(&n.kind()) {
                    assert_eq!(
                        id(found.after.get(&n.id()).copied()),
                        id(n.next_sibling()),
                        "{rel}: after {n:?}"
                    );
                    attachables += 1;
                }
            }
        }
        assert!(
            comments >= 40 && attachables >= 3,
            "{comments} comments, {attachables} attributes"
        );
    }
}
