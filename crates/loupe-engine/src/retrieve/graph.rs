//! The graph signal: one hop from the best hits so far, to what they
//! reference and to what references them (their callers).

use super::{Gathered, interim_score};
use crate::project::Project;
use crate::{Result, RetrieveQuery};
use loupe_assemble::ChunkId;
use std::collections::{HashMap, HashSet};

/// Chunks that reference a hit's symbol, kept per symbol (callers).
const CALLERS_PER_SYMBOL: u32 = 5;
/// Defined names per graph seed whose callers are looked up.
const CALLER_NAMES_PER_SEED: usize = 8;

impl Project {
    /// Marks the best `limits.graph_seeds` candidates gathered so far as
    /// seeds (distance 0), and what they reference or what references them
    /// as distance 1.
    pub(super) async fn gather_graph(&self, query: &RetrieveQuery, g: &mut Gathered) -> Result<()> {
        let limits = &query.limits;
        let mut seeds: Vec<(ChunkId, f32)> = g
            .signals
            .iter()
            .map(|(id, s)| (*id, interim_score(s)))
            .collect();
        seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let seed_ids: Vec<ChunkId> = seeds.iter().take(limits.graph_seeds).map(|x| x.0).collect();
        for s in &seed_ids {
            g.get(*s).graph_distance = Some(0);
        }
        let referenced: Vec<String> = self
            .catalog
            .refs_from(&seed_ids)
            .await?
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        let mut neighbours: HashSet<ChunkId> = self
            .definitions(&referenced, limits.per_symbol)
            .await?
            .by_name
            .into_values()
            .flatten()
            .collect();
        // Callers of what the seeds define (a seed may be a merged run of
        // small definitions): the first few names of each, in source order,
        // so one huge run cannot flood the graph.
        let mut per_seed: HashMap<ChunkId, usize> = HashMap::new();
        let mut seed_names: Vec<String> = Vec::new();
        for (id, name) in self.catalog.defined_names(&seed_ids).await? {
            let n = per_seed.entry(id).or_default();
            *n += 1;
            let lower = name.to_lowercase();
            if *n <= CALLER_NAMES_PER_SEED && !seed_names.contains(&lower) {
                seed_names.push(lower);
            }
        }
        for (_, id) in self
            .catalog
            .referrers(&seed_names, CALLERS_PER_SYMBOL)
            .await?
        {
            neighbours.insert(id);
        }
        for id in neighbours {
            let s = g.get(id);
            if s.graph_distance.is_none() {
                s.graph_distance = Some(1);
            }
        }
        Ok(())
    }
}
