//! The lexical signals: BM25 over chunks, and over whole files (each
//! file's best chunk carries the file's rank).

use super::Retrieval;
use crate::stores::lexical::FileHit;
use crate::{Error, Result};

impl Retrieval<'_> {
    /// BM25 hits for `terms` (the question's, analysed like the index),
    /// chunks and whole files; returns the file hits, which the history
    /// signal maps onto chunks.
    pub(super) fn gather_bm25(&mut self, terms: &[(String, f32)]) -> Result<Vec<FileHit>> {
        let limits = &self.query.limits;
        let lexical = self.lexical;
        // Chunks and whole files are scored on both cores: each takes a few
        // milliseconds on a large index, most of a cold question's retrieval.
        let (hits, files) = tokio::task::block_in_place(|| -> Result<_> {
            std::thread::scope(|scope| {
                let files = scope.spawn(|| lexical.search_files(terms, limits.files));
                let hits = lexical.search(terms, limits.bm25)?;
                let files = files
                    .join()
                    .map_err(|_| Error::Task("whole-file search panicked".into()))??;
                Ok((hits, files))
            })
        })?;
        for (rank, (id, score)) in hits.into_iter().enumerate() {
            let s = self.g.get(id);
            s.bm25 = Some(score);
            s.bm25_rank = Some(rank as u32 + 1);
        }
        // The best files as wholes: each one's best chunk joins the
        // candidates carrying the file's rank. Only that chunk: boosting
        // every chunk of a long file let one file crowd a small budget.
        for (rank, hit) in files.iter().enumerate() {
            self.g.get(hit.best_chunk).file_rank = Some(rank as u32 + 1);
        }
        Ok(files)
    }
}
