//! The set of an open project's live chunk ids.
//!
//! Every question asks it whether a vector's or a hit's chunk is still
//! live, and an open project holds one for its whole life. Chunk ids are
//! content ids (`catalog::content_id`: 52 bits of a hash, spread over the
//! whole range), so a hash set is the compact form: 4.7 MB for the vendor
//! corpus's 432,140 chunks. (A bit set, on the belief that ids were dense
//! row ids, kept them all in its overflow set: BENCHMARKS.md, "Changes to
//! embedding and vectors", `d46bb44`, and "Changes to memory", `c6c91c1`.)

use loupe_assemble::ChunkId;
use rustc_hash::FxHashSet;

/// A set of chunk ids (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct ChunkSet {
    ids: FxHashSet<ChunkId>,
}

impl ChunkSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ids in the set.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the set holds no id.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: ChunkId) -> bool {
        self.ids.contains(&id)
    }

    /// Add `id`; whether it was not there.
    pub fn insert(&mut self, id: ChunkId) -> bool {
        self.ids.insert(id)
    }

    /// Take `id` out; whether it was there.
    pub fn remove(&mut self, id: ChunkId) -> bool {
        self.ids.remove(&id)
    }

    /// Every id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = ChunkId> + '_ {
        self.ids.iter().copied()
    }
}

impl Extend<ChunkId> for ChunkSet {
    fn extend<I: IntoIterator<Item = ChunkId>>(&mut self, ids: I) {
        self.ids.extend(ids);
    }
}

impl FromIterator<ChunkId> for ChunkSet {
    fn from_iter<I: IntoIterator<Item = ChunkId>>(ids: I) -> Self {
        Self {
            ids: ids.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A small deterministic generator (xorshift), so the test needs no
    /// random crate and fails the same way every time.
    fn ids(seed: u64, n: usize) -> Vec<ChunkId> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match i % 10 {
                    // Mostly content ids (52 bits), some small, some negative.
                    0 => -((x % 1000) as i64),
                    1 | 2 => (x % 3000) as i64,
                    _ => (x % 4096) as i64 * (1 << 40),
                }
            })
            .collect()
    }

    #[test]
    fn behaves_as_a_hash_set() {
        let mut set = ChunkSet::new();
        let mut model = HashSet::new();
        let adds = ids(7, 4000);
        let removes = ids(11, 4000);
        for (a, r) in adds.iter().zip(&removes) {
            assert_eq!(set.insert(*a), model.insert(*a), "insert {a}");
            assert_eq!(set.remove(*r), model.remove(r), "remove {r}");
            assert_eq!(set.len(), model.len());
        }
        for id in adds
            .iter()
            .chain(&removes)
            .chain(&[0, 1, i64::MAX, i64::MIN])
        {
            assert_eq!(set.contains(*id), model.contains(id), "contains {id}");
        }
        let mut listed: Vec<ChunkId> = set.iter().collect();
        listed.sort_unstable();
        let mut expected: Vec<ChunkId> = model.into_iter().collect();
        expected.sort_unstable();
        assert_eq!(listed, expected);
        let rebuilt: ChunkSet = expected.iter().copied().collect();
        assert_eq!(rebuilt.len(), expected.len());
        assert!(expected.iter().all(|id| rebuilt.contains(*id)));
    }
}
