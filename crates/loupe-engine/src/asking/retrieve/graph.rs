//! The graph signal: one hop from the best hits so far, to what they
//! reference and to what references them (their callers).

use super::{Definitions, Retrieval, interim_score};
use crate::Result;
use loupe_assemble::ChunkId;
use std::collections::{HashMap, HashSet};

/// Chunks that reference a hit's symbol, kept per symbol (callers).
const CALLERS_PER_SYMBOL: u32 = 5;
/// Defined names per graph seed whose callers are looked up.
const CALLER_NAMES_PER_SEED: usize = 8;

impl Retrieval<'_> {
    /// Takes the best `limits.graph_seeds` candidates gathered so far as
    /// seeds, and marks what they reference or what references them as
    /// distance 1 and the seeds with such a neighbour as distance 0. A seed
    /// with none (a changelog section, a README heading nobody's code names)
    /// is no symbol-graph hit and gets no graph relevance.
    pub(super) async fn gather_graph(&mut self) -> Result<()> {
        let limits = &self.query.limits;
        let mut seeds: Vec<(ChunkId, f32)> = self
            .g
            .signals
            .iter()
            .map(|(id, s)| (*id, interim_score(s)))
            .collect();
        seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let seed_ids: Vec<ChunkId> = seeds.iter().take(limits.graph_seeds).map(|x| x.0).collect();
        let refs = self.catalog.refs_from(&seed_ids).await?;
        let referenced: Vec<String> = refs.iter().map(|(_, name)| name.clone()).collect();
        let defined = Definitions::of(self.catalog, &referenced, limits.per_symbol)
            .await?
            .by_name;
        let mut linked: HashSet<ChunkId> = HashSet::new();
        let mut neighbours: HashSet<ChunkId> = HashSet::new();
        for (seed, name) in &refs {
            for &id in defined.get(name).into_iter().flatten() {
                if id != *seed {
                    linked.insert(*seed);
                    neighbours.insert(id);
                }
            }
        }
        // Callers of what the seeds define (a seed may be a merged run of
        // small definitions): the first few names of each, in source order,
        // so one huge run cannot flood the graph.
        let mut per_seed: HashMap<ChunkId, usize> = HashMap::new();
        let mut seeds_of: HashMap<String, Vec<ChunkId>> = HashMap::new();
        for (id, name) in self.catalog.defined_names(&seed_ids).await? {
            let n = per_seed.entry(id).or_default();
            *n += 1;
            if *n <= CALLER_NAMES_PER_SEED {
                let by = seeds_of.entry(name.to_lowercase()).or_default();
                if !by.contains(&id) {
                    by.push(id);
                }
            }
        }
        let seed_names: Vec<String> = seeds_of.keys().cloned().collect();
        for (name, id) in self
            .catalog
            .referrers(&seed_names, CALLERS_PER_SYMBOL)
            .await?
        {
            let defining = seeds_of.get(&name).map(Vec::as_slice).unwrap_or_default();
            if defining.iter().any(|seed| *seed != id) {
                linked.extend(defining.iter().filter(|seed| **seed != id));
                neighbours.insert(id);
            }
        }
        for id in &seed_ids {
            if linked.contains(id) {
                self.g.get(*id).graph_distance = Some(0);
            }
        }
        for id in neighbours {
            let s = self.g.get(id);
            if s.graph_distance.is_none() {
                s.graph_distance = Some(1);
            }
        }
        Ok(())
    }
}
