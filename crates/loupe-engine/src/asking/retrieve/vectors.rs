//! The vector signal: the question's nearest chunks by embedding, when an
//! embedder is configured and the index has vectors.
//!
//! The search runs on a blocking thread while the other signals are
//! gathered, none of which needs its answer: the scan of every int8 row
//! and BM25's postings share the two cores, and the catalog's lookups
//! wait on SQLite meanwhile, so the steps overlap instead of adding up
//! (BENCHMARKS.md, "Questions and assembly").

use super::{Gathered, Retrieval};
use crate::{Error, Result};
use loupe_assemble::ChunkId;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// The question's nearest chunks, best first, with their similarity.
type Neighbours = Vec<(ChunkId, f32)>;

/// A vector search under way, started by [`Retrieval::start_vectors`].
pub(super) struct VectorSearch(Option<JoinHandle<Result<Neighbours>>>);

impl Retrieval<'_> {
    /// Start the question's vector search, if there is an embedder and a
    /// question to embed. Nothing is lost if the caller drops the result:
    /// the search ends on its own (a scan takes milliseconds).
    pub(super) fn start_vectors(&self) -> VectorSearch {
        let (query, snapshot) = (self.query, self.snapshot);
        let Some(embedder) = self.embedder.cloned() else {
            return VectorSearch(None);
        };
        if query.text.trim().is_empty() {
            return VectorSearch(None);
        }
        let vectors = Arc::clone(self.vectors);
        let live = Arc::clone(&snapshot.live);
        let mut text = query.text.clone();
        text.truncate(text.floor_char_boundary(4096));
        let k = query.limits.vector;
        VectorSearch(Some(tokio::task::spawn_blocking(move || {
            let guard = vectors.read().unwrap_or_else(|e| e.into_inner());
            let Some(index) = guard.as_ref().filter(|index| index.points() > 0) else {
                return Ok(Vec::new());
            };
            let q = embedder.embed(&[text])?;
            let Some(q) = q.first() else {
                return Ok(Vec::new());
            };
            index.search(q, k, &|id| live.contains(id))
        })))
    }
}

impl VectorSearch {
    /// Wait for the search and add its neighbours to `g`. An embedder that
    /// fails on the question, or rows that cannot be read, cost the
    /// vectors, not the question: the failure is returned for the caller
    /// to report, and the other signals answer.
    pub(super) async fn finish(self, g: &mut Gathered) -> Option<String> {
        let handle = self.0?;
        let searched = handle
            .await
            .unwrap_or_else(|e| Err(Error::Task(format!("the vector search: {e}"))));
        match searched {
            Ok(found) => {
                for (rank, (id, sim)) in found.into_iter().enumerate() {
                    let s = g.get(id);
                    s.vector = Some(sim);
                    s.vector_rank = Some(rank as u32 + 1);
                }
                None
            }
            Err(err) => {
                tracing::warn!(%err, "the vector search failed: answering without vectors");
                Some(err.to_string())
            }
        }
    }
}
