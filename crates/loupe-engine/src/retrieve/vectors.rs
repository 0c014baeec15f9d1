//! The vector signal: the question's nearest chunks by embedding, when an
//! embedder is configured and the index has vectors.

use super::Gathered;
use crate::project::{Project, Snapshot};
use crate::{Result, RetrieveQuery};
use loupe_assemble::ChunkId;

impl Project {
    /// The question's vector neighbours. An embedder that fails on the
    /// question costs the vectors, not the question: the failure is
    /// returned for the caller to report, and the other signals answer.
    pub(super) fn gather_vectors(
        &self,
        query: &RetrieveQuery,
        snapshot: &Snapshot,
        g: &mut Gathered,
    ) -> Option<String> {
        let limits = &query.limits;
        let mut vectors_failed = None;
        if let Some(embedder) = self.cfg.embedder.clone()
            && !query.text.trim().is_empty()
        {
            let live = &snapshot.live;
            let searched = tokio::task::block_in_place(|| -> Result<Vec<(ChunkId, f32)>> {
                let guard = self.vectors.read().unwrap_or_else(|e| e.into_inner());
                let Some(index) = guard.as_ref() else {
                    return Ok(Vec::new());
                };
                if index.points() == 0 {
                    return Ok(Vec::new());
                }
                let mut text = query.text.clone();
                text.truncate(text.floor_char_boundary(4096));
                let q = embedder.embed(&[text])?;
                let Some(q) = q.first() else {
                    return Ok(Vec::new());
                };
                Ok(index.search(q, limits.vector, &|id| live.contains(&id)))
            });
            let found = match searched {
                Ok(found) => found,
                Err(err) => {
                    tracing::warn!(%err, "the question could not be embedded: answering without vectors");
                    vectors_failed = Some(err.to_string());
                    Vec::new()
                }
            };
            for (rank, (id, sim)) in found.into_iter().enumerate() {
                let s = g.get(id);
                s.vector = Some(sim);
                s.vector_rank = Some(rank as u32 + 1);
            }
        }
        vectors_failed
    }
}
