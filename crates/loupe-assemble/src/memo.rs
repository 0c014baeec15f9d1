//! A bounded memo for per-thread caches of pure functions.

use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::hash::Hash;

/// Two generations of entries: lookups promote old entries, and when the
/// young generation is full the old one is dropped and the young one ages.
/// Entries used since the last turnover survive it, so a small memo keeps
/// the frequent keys (a code base's common identifiers) instead of starting
/// over; memory stays under twice `capacity` entries.
#[derive(Debug)]
pub struct Memo<K, V> {
    capacity: usize,
    young: FxHashMap<K, V>,
    old: FxHashMap<K, V>,
}

impl<K: Hash + Eq, V> Memo<K, V> {
    /// A memo that ages after `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            young: FxHashMap::default(),
            old: FxHashMap::default(),
        }
    }

    /// The value for `key`, computed by `make` (from the owned key `own`
    /// makes) if neither generation has it.
    pub fn get_or_insert_with<Q>(
        &mut self,
        key: &Q,
        own: impl FnOnce(&Q) -> K,
        make: impl FnOnce() -> V,
    ) -> &V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if !self.young.contains_key(key) {
            let (owned, value) = match self.old.remove_entry(key) {
                Some(entry) => entry,
                None => (own(key), make()),
            };
            if self.young.len() >= self.capacity {
                self.old = std::mem::take(&mut self.young);
            }
            self.young.insert(owned, value);
        }
        // Present: found above or just inserted.
        &self.young[key]
    }

    /// Entries held, both generations.
    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_is_used_and_stays_bounded() {
        let mut memo: Memo<String, usize> = Memo::new(3);
        let made = std::cell::Cell::new(0);
        let get = |memo: &mut Memo<String, usize>, k: &str| {
            *memo.get_or_insert_with(k, str::to_owned, || {
                made.set(made.get() + 1);
                k.len()
            })
        };
        assert_eq!(get(&mut memo, "a"), 1);
        assert_eq!(get(&mut memo, "bb"), 2);
        assert_eq!(get(&mut memo, "ccc"), 3);
        // Full: "dddd" ages the first three.
        assert_eq!(get(&mut memo, "dddd"), 4);
        // "a" is promoted from the old generation, not recomputed.
        assert_eq!(get(&mut memo, "a"), 1);
        assert!(memo.len() <= 6);
        // Two more turnovers drop what was not used ("bb", "ccc").
        for k in ["e", "f", "g", "h", "i", "j", "k"] {
            get(&mut memo, k);
        }
        get(&mut memo, "bb");
        assert_eq!(made.get(), 12);
        assert!(memo.len() <= 6);
    }
}
