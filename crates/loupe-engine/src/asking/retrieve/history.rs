//! The history signal: files changed by the past commits whose messages
//! are most like the question.

use super::Retrieval;
use crate::Result;
use crate::stores::lexical::FileHit;
use loupe_assemble::ChunkId;
use std::collections::HashMap;

impl Retrieval<'_> {
    /// Ranks files by the commits most like `terms`; the file's best chunk
    /// under whole-file BM25 (`files`) carries the rank, or its first chunk
    /// when the question's words are not in it at all.
    pub(super) async fn gather_history(
        &mut self,
        terms: &[(String, f32)],
        files: &[FileHit],
    ) -> Result<()> {
        let limits = &self.query.limits;
        if let Some(history) = &self.snapshot.history {
            let ranked = history.files(terms, limits.history)?;
            let best: HashMap<u64, ChunkId> = files.iter().map(|h| (h.key, h.best_chunk)).collect();
            let mut missing = Vec::new();
            for (rank, (path, _)) in ranked.iter().enumerate() {
                match best.get(&crate::stores::lexical::file_key(path)) {
                    Some(&id) => self.g.get(id).history_rank = Some(rank as u32 + 1),
                    None => missing.push(path.clone()),
                }
            }
            if !missing.is_empty() {
                let mut first: HashMap<String, ChunkId> = HashMap::new();
                for (path, id) in self.catalog.chunk_ids_of_paths(&missing).await? {
                    first.entry(path).or_insert(id);
                }
                for (rank, (path, _)) in ranked.iter().enumerate() {
                    if let Some(&id) = first.get(path) {
                        self.g.get(id).history_rank = Some(rank as u32 + 1);
                    }
                }
            }
        }
        Ok(())
    }
}
