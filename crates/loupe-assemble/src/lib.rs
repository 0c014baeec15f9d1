//! Pure context assembly for Loupe: from retrieved [`Candidate`]s and the
//! user's [`Knobs`] to the exact prompt an LLM will see, with every decision
//! in a report.
//!
//! The pipeline follows the module names: [`classify`] → [`rank`] →
//! [`compress`] → [`pack`] → [`render`] → [`fit`] → [`guard`], with
//! [`tokens`] and [`models`] for exact sizes, tied together by
//! [`assemble()`].
//!
//! *Architecture invariant:* this crate does no I/O and knows no store. The
//! same input gives the same output, byte for byte.
//!
//! ```
//! use loupe_assemble::{assemble, AssembleRequest, Budget, Candidate, Chunk, ChunkKind, Knobs,
//!     OutlineSpan, Role, Signals, SpanKind};
//!
//! fn chunk(id: i64, path: &str, sig: &str, body: &str) -> Chunk {
//!     let text = format!("{sig}{body}");
//!     let outline = vec![
//!         OutlineSpan { kind: SpanKind::Signature, start: 0, end: sig.len() as u32 },
//!         OutlineSpan { kind: SpanKind::Body, start: sig.len() as u32, end: text.len() as u32 },
//!     ];
//!     Chunk {
//!         id, path: path.into(), language: "rust".into(), kind: ChunkKind::Function,
//!         symbol: None, parent: None, start_byte: 0, end_byte: text.len() as u32,
//!         start_line: 1, end_line: 3, role: Role::Code, tokens: 0, hash: format!("h{id}"),
//!         text, outline,
//!     }
//! }
//!
//! let candidates = vec![
//!     Candidate {
//!         chunk: chunk(1, "src/pack.rs", "pub fn pack(items: &[Item]) ", "{\n    greedy(items)\n}\n"),
//!         signals: Signals { bm25_rank: Some(1), vector_rank: Some(1), ..Default::default() },
//!     },
//!     Candidate {
//!         chunk: chunk(2, "src/render.rs", "pub fn render(p: &Pack) ", "{\n    xml(p)\n}\n"),
//!         signals: Signals { pinned: true, ..Default::default() },
//!     },
//! ];
//! let request = AssembleRequest {
//!     question: "How does packing work?".into(),
//!     knobs: Knobs { budget: Some(Budget::Tokens(2_000)), ..Knobs::default() },
//!     ..Default::default()
//! };
//! let assembly = assemble(&candidates, &request);
//! assert!(assembly.prompt.contains("source=\"@src/pack.rs:1-3\""));
//! assert!(assembly.report.used <= assembly.report.usable);
//! // The pinned item comes first and scores 1.0.
//! assert!(assembly.prompt.find("render.rs") < assembly.prompt.find("pack.rs"));
//! assert_eq!(assembly.items[1].score.score, 1.0);
//! ```

pub mod assemble;
pub mod classify;
pub mod compress;
pub mod error;
pub mod fit;
pub mod guard;
pub mod knobs;
pub mod learned;
pub mod memo;
pub mod model;
pub mod models;
pub mod pack;
pub mod rank;
pub mod render;
pub mod report;
pub mod tokens;

pub use assemble::{
    AssembleRequest, Assembly, Budget, ItemRow, Knobs, KnobsPatch, Leading, Report, Room,
    SizeCache, assemble, assemble_with, leading_files, ranked_files, room, warm_up,
};
pub use error::{Error, Result};
pub use model::{
    Candidate, Chunk, ChunkId, ChunkKind, Outline, OutlineSpan, Role, Signals, SpanKind,
};
