//! What indexing derives from one file's bytes, without its path: the
//! chunks' spans, kinds, symbols and outlines, their token counts, the
//! file's definitions and references, and the warnings. It is the unit the
//! shared store keeps ([`crate::stores::shared`]): derived once by
//! [`derive`], it is turned back into a file's chunks by
//! [`Derived::chunks`] on any machine that holds the same bytes, at any
//! path with the same [`deriver`].
//!
//! Everything here is a function of (bytes, deriver): the path enters only
//! through the language it picks, which is part of the deriver, and
//! through what is recomputed locally (each chunk's path, role, text and
//! text hash).

use crate::indexing::chunk::{self, ChunkConfig, ChunkDraft, SymbolDef, SymbolRef};
use crate::indexing::role;
use loupe_assemble::Chunk;
use serde::{Deserialize, Serialize};

/// The layout of [`Derived`] as the store keeps it ([`Derived::to_row`]);
/// bump on any change.
const FORMAT: u32 = 1;
/// The largest row [`Derived::from_row`] inflates: a file over the walk's
/// 1 MiB cap is not indexed, and its parse is a few times its size.
const MAX_ROW_BYTES: usize = 64 << 20;

/// A file's parse, path-free.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Chunks in file order.
    pub chunks: Vec<ChunkDraft>,
    /// Each chunk's token count (o200k), in the same order.
    pub tokens: Vec<u32>,
    /// Definitions (`chunk` indexes `chunks`).
    pub defs: Vec<SymbolDef>,
    /// References (`chunk` indexes `chunks`).
    pub refs: Vec<SymbolRef>,
    /// Problems that degraded the parse.
    pub warnings: Vec<String>,
}

/// What every deriver of this build starts with (the layout and the
/// chunking code's fingerprint): what `loupe shared gc` keeps.
pub fn deriver_prefix() -> String {
    format!("parse/{FORMAT}/{}/", env!("LOUPE_DERIVER_FINGERPRINT"))
}

/// Who derives a file at `rel_path` with `cfg`: the layout, the chunking
/// code (the build's fingerprint, `build.rs`), the language the path picks
/// and the settings that change the result. The parse timeout is not in
/// it: a parse that ran out of time is never shared ([`Derived::shareable`]).
pub fn deriver(rel_path: &str, cfg: &ChunkConfig) -> String {
    format!(
        "{}{}/{}-{}-{}-{}-{}",
        deriver_prefix(),
        chunk::language_of(rel_path),
        cfg.max_chunk_bytes,
        cfg.min_chunk_bytes,
        cfg.window_lines,
        cfg.window_overlap,
        cfg.max_parse_bytes,
    )
}

/// Chunk `text` (the file at `rel_path`) and count each chunk's tokens.
pub fn derive(rel_path: &str, text: &str, cfg: &ChunkConfig) -> Derived {
    let parsed = chunk::chunk_file(rel_path, text, cfg);
    let tokens = parsed
        .chunks
        .iter()
        .map(|d| {
            let piece = text
                .get(d.start_byte as usize..d.end_byte as usize)
                .unwrap_or("");
            u32::try_from(loupe_assemble::tokens::count(
                loupe_assemble::tokens::Encoding::O200kBase,
                piece,
            ))
            .unwrap_or(u32::MAX)
        })
        .collect();
    Derived {
        chunks: parsed.chunks,
        tokens,
        defs: parsed.defs,
        refs: parsed.refs,
        warnings: parsed.warnings,
    }
}

impl Derived {
    /// The row the shared store keeps: JSON, zstd-compressed (a sixth of
    /// its size on the vendor corpus: outlines repeat their span names).
    pub fn to_row(&self) -> Option<Vec<u8>> {
        let json = serde_json::to_vec(self).ok()?;
        zstd::bulk::compress(&json, 3).ok()
    }

    /// A row back, or `None` when it does not decode (a damaged or
    /// foreign row: the caller derives the file itself).
    pub fn from_row(row: &[u8]) -> Option<Self> {
        let json = zstd::bulk::decompress(row, MAX_ROW_BYTES).ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// Whether another machine would derive the same: not when a deadline
    /// (the machine's speed) or a panic shaped the parse. A syntax error or
    /// a file over the parse limit is the bytes' doing: shared.
    pub fn shareable(&self) -> bool {
        !self.warnings.iter().any(|w| {
            [chunk::TIMED_OUT, chunk::CUT_SHORT, chunk::INTERNAL_ERROR]
                .iter()
                .any(|clocked| w.contains(clocked))
        })
    }

    /// Why this parse cannot be the parse of `text`, if it cannot: a span
    /// outside the text or off a character boundary, spans out of order,
    /// a count per chunk missing, a symbol pointing at no chunk.
    pub fn mismatch(&self, text: &str) -> Option<String> {
        if self.tokens.len() != self.chunks.len() {
            return Some(format!(
                "{} token counts for {} chunks",
                self.tokens.len(),
                self.chunks.len()
            ));
        }
        let lines = text.lines().count().max(1) as u32 + 1;
        for (i, c) in self.chunks.iter().enumerate() {
            let (start, end) = (c.start_byte as usize, c.end_byte as usize);
            if start > end || text.get(start..end).is_none() {
                return Some(format!(
                    "chunk {i}: bytes {start}..{end} are not in the text"
                ));
            }
            if c.start_line == 0 || c.start_line > c.end_line || c.end_line > lines {
                return Some(format!(
                    "chunk {i}: lines {}..{} are not in the text",
                    c.start_line, c.end_line
                ));
            }
            let mut at = 0;
            for span in &c.outline {
                if span.start as usize != at || span.end < span.start {
                    return Some(format!("chunk {i}: its outline does not cover it"));
                }
                at = span.end as usize;
            }
            if !c.outline.is_empty() && at != end - start {
                return Some(format!("chunk {i}: its outline does not cover it"));
            }
        }
        let n = self.chunks.len();
        if self.defs.iter().any(|d| d.chunk >= n) || self.refs.iter().any(|r| r.chunk >= n) {
            return Some("a symbol points at no chunk".into());
        }
        None
    }

    /// The chunks of the file at `rel_path` whose text is `text` (ids 0,
    /// assigned on insert). Call [`Derived::mismatch`] first on a parse
    /// that came from elsewhere: a span outside `text` is dropped here.
    pub fn chunks(&self, rel_path: &str, text: &str) -> Vec<Chunk> {
        let language = chunk::language_of(rel_path);
        let file_role = role::role_for_path(rel_path);
        self.chunks
            .iter()
            .zip(&self.tokens)
            .filter_map(|(d, tokens)| {
                let piece = text.get(d.start_byte as usize..d.end_byte as usize)?;
                Some(Chunk {
                    id: 0,
                    path: rel_path.to_owned(),
                    language: language.to_owned(),
                    kind: d.kind,
                    symbol: d.symbol.clone(),
                    parent: d.parent.clone(),
                    start_byte: d.start_byte,
                    end_byte: d.end_byte,
                    start_line: d.start_line,
                    end_line: d.end_line,
                    role: role::role_for_chunk(
                        file_role,
                        language,
                        d.kind,
                        d.symbol.as_deref(),
                        d.parent.as_deref(),
                    ),
                    text: piece.to_owned(),
                    outline: d.outline.clone(),
                    hash: blake3::hash(piece.as_bytes()).to_hex().to_string(),
                    tokens: *tokens,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub struct Point {\n    x: i32,\n}\n";

    #[test]
    fn a_parse_survives_the_round_trip_through_its_bytes() {
        let cfg = ChunkConfig::default();
        let derived = derive("src/lib.rs", SOURCE, &cfg);
        assert!(!derived.chunks.is_empty());
        let row = derived.to_row().unwrap();
        let back = Derived::from_row(&row).unwrap();
        assert_eq!(back, derived);
        assert_eq!(Derived::from_row(&row[..row.len() - 1]), None);
        assert_eq!(Derived::from_row(b"{}"), None);
        assert_eq!(back.mismatch(SOURCE), None);
        // The same bytes at another path give the same chunks but for the path.
        let here = derived.chunks("src/lib.rs", SOURCE);
        let there = back.chunks("vendor/copy/lib.rs", SOURCE);
        assert_eq!(here.len(), there.len());
        for (a, b) in here.iter().zip(&there) {
            assert_eq!((&a.text, &a.hash, a.tokens), (&b.text, &b.hash, b.tokens));
            assert_eq!(b.path, "vendor/copy/lib.rs");
        }
    }

    #[test]
    fn a_parse_shaped_by_a_deadline_is_kept_to_this_machine() {
        let cfg = ChunkConfig::default();
        let broken = "pub fn add(a: i32 -> i32 {\n    a +\n}\n";
        let derived = derive("src/lib.rs", broken, &cfg);
        assert!(!derived.warnings.is_empty(), "a syntax error warns");
        assert!(derived.shareable(), "{:?}", derived.warnings);
        let timed_out = ChunkConfig {
            parse_timeout: std::time::Duration::ZERO,
            ..cfg
        };
        let derived = derive("src/lib.rs", SOURCE, &timed_out);
        assert!(!derived.shareable(), "{:?}", derived.warnings);
    }

    #[test]
    fn the_deriver_names_the_language_and_the_settings() {
        let cfg = ChunkConfig::default();
        assert_eq!(deriver("a/x.rs", &cfg), deriver("b/y.rs", &cfg));
        assert_ne!(deriver("x.rs", &cfg), deriver("x.py", &cfg));
        let smaller = ChunkConfig {
            max_chunk_bytes: 1_000,
            ..cfg.clone()
        };
        assert_ne!(deriver("x.rs", &cfg), deriver("x.rs", &smaller));
    }

    #[test]
    fn a_parse_of_other_bytes_is_told_apart() {
        let cfg = ChunkConfig::default();
        let derived = derive("src/lib.rs", SOURCE, &cfg);
        assert!(derived.mismatch(&SOURCE[..20]).is_some());
        let mut short = derived.clone();
        short.tokens.pop();
        assert!(short.mismatch(SOURCE).is_some());
        let mut lost = derived.clone();
        if let Some(d) = lost.defs.first_mut() {
            d.chunk = 99;
        }
        assert!(lost.mismatch(SOURCE).is_some());
    }
}
