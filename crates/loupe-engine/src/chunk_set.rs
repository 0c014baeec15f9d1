//! The set of an open project's live chunk ids, one bit a chunk.
//!
//! Every question asks it whether a vector's or a hit's chunk is still
//! live, and an open project holds one for its whole life. Chunk ids are
//! SQLite row ids, dense from 1 and growing as files change, so a bit per
//! id up to the largest is the compact form: 54 KB for the vendor corpus's
//! 432,140 chunks, where a `HashSet` took 4.7 MB, and a lookup is a load
//! and a mask instead of a hash and a probe. An id that would stretch the
//! bits far past the set's size (negative, or over 32 × its size and
//! 2^20: a damaged or very old catalog) is kept in an ordered set beside
//! them, so no id can make the bits large.

use fixedbitset::FixedBitSet;
use loupe_assemble::ChunkId;
use std::collections::BTreeSet;

/// Ids below this always go to the bits (128 KB of them at most).
const MIN_BITS: usize = 1 << 20;

/// A set of chunk ids (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct ChunkSet {
    bits: FixedBitSet,
    /// The ids the bits do not hold.
    others: BTreeSet<ChunkId>,
    /// Ids in `bits`.
    in_bits: usize,
}

impl ChunkSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ids in the set.
    pub fn len(&self) -> usize {
        self.in_bits + self.others.len()
    }

    /// Whether the set holds no id.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: ChunkId) -> bool {
        match usize::try_from(id) {
            Ok(bit) if self.bits.contains(bit) => true,
            _ => !self.others.is_empty() && self.others.contains(&id),
        }
    }

    /// Add `id`; whether it was not there.
    pub fn insert(&mut self, id: ChunkId) -> bool {
        self.insert_expecting(id, 0)
    }

    /// Add `id` when `more` ids will follow it (they widen the range the
    /// bits may cover).
    fn insert_expecting(&mut self, id: ChunkId, more: usize) -> bool {
        if self.contains(id) {
            return false;
        }
        let limit = MIN_BITS.max((self.len() + more + 1).saturating_mul(32));
        match usize::try_from(id) {
            Ok(bit) if bit < limit => {
                self.bits.grow_and_insert(bit);
                self.in_bits += 1;
            }
            _ => {
                self.others.insert(id);
            }
        }
        true
    }

    /// Take `id` out; whether it was there.
    pub fn remove(&mut self, id: ChunkId) -> bool {
        match usize::try_from(id) {
            Ok(bit) if self.bits.contains(bit) => {
                self.bits.remove(bit);
                self.in_bits -= 1;
                true
            }
            _ => self.others.remove(&id),
        }
    }

    /// Every id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = ChunkId> + '_ {
        self.bits
            .ones()
            .filter_map(|bit| ChunkId::try_from(bit).ok())
            .chain(self.others.iter().copied())
    }
}

impl Extend<ChunkId> for ChunkSet {
    fn extend<I: IntoIterator<Item = ChunkId>>(&mut self, ids: I) {
        let ids = ids.into_iter();
        let mut more = ids.size_hint().0;
        for id in ids {
            more = more.saturating_sub(1);
            self.insert_expecting(id, more);
        }
    }
}

impl FromIterator<ChunkId> for ChunkSet {
    fn from_iter<I: IntoIterator<Item = ChunkId>>(ids: I) -> Self {
        let mut set = Self::new();
        set.extend(ids);
        set
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
                    // Mostly dense ids, some far out, some negative.
                    0 => (x >> 3) as i64,
                    1 => -((x % 1000) as i64),
                    2 => (MIN_BITS as i64) + (x % 5000) as i64,
                    _ => (x % 3000) as i64,
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
    }

    #[test]
    fn far_ids_do_not_grow_the_bits() {
        let mut set: ChunkSet = (1..=100).chain([i64::MAX - 1, 1 << 40]).collect();
        assert_eq!(set.len(), 102);
        assert!(set.bits.len() <= 128);
        assert!(set.contains(1 << 40) && set.contains(i64::MAX - 1));
        assert!(!set.contains(101) && !set.contains(-1));
        // An id once far stays findable when later ids reach past it.
        set.extend(200..(MIN_BITS as i64 * 2));
        assert!(set.contains(1 << 40) && set.contains(150 + 50));
        assert!(set.remove(1 << 40) && !set.contains(1 << 40));
    }

    #[test]
    fn a_catalogs_ids_fit_in_a_bit_each() {
        let set: ChunkSet = (1..=432_140).collect();
        assert_eq!(set.len(), 432_140);
        assert!(set.others.is_empty());
        assert!(set.bits.len() < 432_141 + 64);
    }
}
