//! Pack: choose which items go into the prompt and at which level of detail,
//! under a budget, and say why for every one.
//!
//! Three phases keep the admitted set monotone in the budget:
//!
//! 1. **Select.** In priority order (pinned first, then by score), every
//!    item is admitted at its smallest rendering while it fits; the first
//!    item that does not fit closes the selection. With a budget this
//!    admits a prefix of the order, so more budget never removes an item.
//! 2. **Upgrade.** In the same order, each admitted item is raised toward
//!    its wanted level (full for pinned items, the score band otherwise),
//!    taking the most detailed level whose extra cost fits. An item whose
//!    upgrade does not fit keeps its smaller rendering and packing goes on,
//!    so smaller items further down still get their detail ("continue past
//!    an item that does not fit"). Items are degraded before anything is
//!    dropped.
//! 3. **Fill.** Budget still left goes to more detail than the band asked
//!    for, again in priority order. Score bands decide who gets detail
//!    first, not a ceiling: with room to spare a prompt should show code,
//!    not signatures (`loupe eval`: line recall +7 to +23 points at 27k–50k
//!    against bands as a ceiling).
//!
//! Duplicates (same text, or a range inside an earlier item of the same
//! file) are removed before packing; overlapping or adjacent ranges that
//! both made it in are merged by [`merge`] for rendering.
//!
//! This module does not render or count: the caller passes a cost function
//! (exact sizes of rendered blocks) and keeps any cache.
//!
//! *Invariants:* the sum of admitted costs never exceeds the budget; pinned
//! items are dropped only when pinned items alone overflow (then reported
//! precisely); the same input gives the same output.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::compress::MAX_LOD;
use crate::model::{Candidate, Chunk, OutlineSpan};
use crate::report::DropReason;

/// One item to pack, in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackItem {
    /// Pinned by the user.
    pub pinned: bool,
    /// The level it should have with room to spare.
    pub wanted: u8,
}

/// The outcome for one item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packed {
    /// In, at this level.
    In(u8),
    /// Out, for this reason.
    Out(DropReason),
}

/// What the pinned items would have needed when they did not all fit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedOverflow {
    /// Size of all pinned items at full detail.
    pub needed_full: u32,
    /// Size of all pinned items at their smallest.
    pub needed_smallest: u32,
    /// What the budget had room for.
    pub available: u32,
}

/// The packer's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackResult {
    /// One outcome per item, in input order.
    pub items: Vec<Packed>,
    /// Sum of the admitted items' costs.
    pub used: u32,
    /// Set when pinned items did not all fit at full detail.
    pub pinned_overflow: Option<PinnedOverflow>,
}

/// The level pack admits an item at first.
fn smallest(item: &PackItem) -> u8 {
    MAX_LOD.max(item.wanted)
}

/// Packs `items` into `available` with `cost(index, lod)` giving the exact
/// size of item `index` rendered at `lod`.
// Long: packing's three phases share the chosen levels and the budget left.
pub fn pack(
    items: &[PackItem],
    available: u32,
    mut cost: impl FnMut(usize, u8) -> u32,
) -> PackResult {
    let mut out: Vec<Packed> = Vec::with_capacity(items.len());
    let mut used: u64 = 0;
    let budget = u64::from(available);

    // Phase 1: admit a prefix at the smallest renderings.
    let mut closed: Option<usize> = None;
    for (i, item) in items.iter().enumerate() {
        if closed.is_some() {
            out.push(Packed::Out(DropReason::OverBudget { needed: 0 }));
            continue;
        }
        let lod = smallest(item);
        let size = u64::from(cost(i, lod));
        if used + size <= budget {
            used += size;
            out.push(Packed::In(lod));
        } else {
            closed = Some(i);
            out.push(Packed::Out(DropReason::OverBudget {
                needed: size as u32,
            }));
        }
    }

    // Phase 2: upgrade in priority order toward the wanted level, most
    // detailed level that fits. Phase 3: budget left after every band is met
    // goes to more detail, again in priority order — the bands say who gets
    // detail first, not how much.
    for fill in [false, true] {
        for (i, item) in items.iter().enumerate() {
            let Packed::In(current) = out[i] else {
                continue;
            };
            let floor = if fill { 0 } else { item.wanted };
            let current_size = u64::from(cost(i, current));
            for lod in floor..current {
                let size = u64::from(cost(i, lod));
                if used - current_size + size <= budget {
                    used = used - current_size + size;
                    out[i] = Packed::In(lod);
                    break;
                }
            }
        }
    }

    // Precise reasons for what closed the selection, and the pinned account.
    let pinned: Vec<usize> = (0..items.len()).filter(|&i| items[i].pinned).collect();
    let pinned_short = pinned
        .iter()
        .any(|&i| out[i] != Packed::In(items[i].wanted));
    let mut pinned_overflow = None;
    if pinned_short {
        let needed_full: u64 = pinned.iter().map(|&i| u64::from(cost(i, 0))).sum();
        let needed_smallest: u64 = pinned
            .iter()
            .map(|&i| u64::from(cost(i, smallest(&items[i]))))
            .sum();
        let over_smallest = needed_smallest.saturating_sub(budget) as u32;
        pinned_overflow = Some(PinnedOverflow {
            needed_full: needed_full as u32,
            needed_smallest: needed_smallest as u32,
            available,
        });
        for &i in &pinned {
            if let Packed::Out(reason) = &mut out[i] {
                *reason = DropReason::PinnedOverBudget {
                    over_by: over_smallest,
                };
            }
        }
    }
    if let Some(first) = closed {
        for i in first + 1..items.len() {
            if let Packed::Out(DropReason::OverBudget { needed }) = &mut out[i] {
                *needed = cost(i, smallest(&items[i]));
            }
        }
    }
    PackResult {
        items: out,
        used: used as u32,
        pinned_overflow,
    }
}

/// Removes duplicates from `ordered` (candidate indices in priority order):
/// a candidate whose text hash equals an earlier one's, or whose byte range
/// lies inside an earlier kept candidate of the same file.
pub fn dedupe(
    ordered: &[usize],
    candidates: &[Candidate],
) -> (Vec<usize>, Vec<(usize, DropReason)>) {
    let mut kept = Vec::with_capacity(ordered.len());
    let mut dropped = Vec::new();
    let mut by_hash: HashMap<&str, usize> = HashMap::new();
    let mut by_path: HashMap<&str, Vec<usize>> = HashMap::new();
    for &i in ordered {
        let chunk = &candidates[i].chunk;
        let same_text = (!chunk.hash.is_empty())
            .then(|| by_hash.get(chunk.hash.as_str()).copied())
            .flatten();
        let inside = by_path.get(chunk.path.as_str()).and_then(|ids| {
            ids.iter().copied().find(|&j| {
                let outer = &candidates[j].chunk;
                outer.start_byte <= chunk.start_byte && chunk.end_byte <= outer.end_byte
            })
        });
        match same_text.or(inside) {
            Some(j) => dropped.push((
                i,
                DropReason::Duplicate {
                    of: candidates[j].chunk.id,
                },
            )),
            None => {
                if !chunk.hash.is_empty() {
                    by_hash.insert(chunk.hash.as_str(), i);
                }
                by_path.entry(chunk.path.as_str()).or_default().push(i);
                kept.push(i);
            }
        }
    }
    (kept, dropped)
}

/// A group of included items rendered as one block: their ranges overlap or
/// touch, they come from one file and share a level of detail.
#[derive(Clone, Debug, PartialEq)]
pub struct MergedBlock {
    /// Candidate indices in the group, first is the highest ranked.
    pub members: Vec<usize>,
    /// The union chunk (text and outline spliced, overlap kept once).
    pub chunk: Chunk,
}

/// Splices two chunks of one file whose byte ranges overlap or touch
/// (`b.start_byte <= a.end_byte`, `a.start_byte <= b.start_byte`).
fn splice(a: &Chunk, b: &Chunk) -> Option<Chunk> {
    if a.path != b.path || b.start_byte > a.end_byte || b.start_byte < a.start_byte {
        return None;
    }
    if b.end_byte <= a.end_byte {
        return Some(a.clone());
    }
    let skip = (a.end_byte - b.start_byte) as usize;
    let tail = b.text.get(skip..)?;
    let mut merged = a.clone();
    let offset = a.text.len() as u32;
    merged.text.push_str(tail);
    for span in &b.outline {
        let start = span.start.max(skip as u32);
        if span.end > start {
            merged.outline.push(OutlineSpan {
                kind: span.kind,
                start: start - skip as u32 + offset,
                end: span.end - skip as u32 + offset,
            });
        }
    }
    merged.end_byte = b.end_byte;
    merged.end_line = b.end_line.max(a.end_line);
    if merged.symbol != b.symbol {
        merged.symbol = None;
    }
    merged.tokens = 0;
    merged.hash = String::new();
    Some(merged)
}

/// Groups `included` (candidate index, level) into blocks: items of one file
/// at one level whose ranges overlap or touch become one block. Blocks keep
/// the order of their highest-ranked member.
pub fn merge(included: &[(usize, u8)], candidates: &[Candidate]) -> Vec<(MergedBlock, u8)> {
    let mut groups: Vec<(Vec<usize>, u8)> = Vec::new();
    let mut placed = vec![false; included.len()];
    for a in 0..included.len() {
        if placed[a] {
            continue;
        }
        placed[a] = true;
        let (ia, lod) = included[a];
        let mut members = vec![ia];
        // Grow the group until no other member touches it.
        let mut grew = true;
        while grew {
            grew = false;
            for b in 0..included.len() {
                let (ib, lod_b) = included[b];
                if placed[b] || lod_b != lod {
                    continue;
                }
                let cb = &candidates[ib].chunk;
                let touches = members.iter().any(|&m| {
                    let cm = &candidates[m].chunk;
                    cm.path == cb.path
                        && cb.start_byte <= cm.end_byte
                        && cm.start_byte <= cb.end_byte
                });
                if touches {
                    placed[b] = true;
                    members.push(ib);
                    grew = true;
                }
            }
        }
        groups.push((members, lod));
    }
    groups
        .into_iter()
        .map(|(members, lod)| {
            let mut sorted = members.clone();
            sorted.sort_by_key(|&i| (candidates[i].chunk.start_byte, candidates[i].chunk.end_byte));
            let mut chunk = candidates[sorted[0]].chunk.clone();
            for &i in &sorted[1..] {
                if let Some(next) = splice(&chunk, &candidates[i].chunk) {
                    chunk = next;
                }
            }
            (MergedBlock { members, chunk }, lod)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items as `(pinned, wanted, [cost at lod 0..=5])`.
    fn check(items: &[(bool, u8, [u32; 6])], available: u32, expect: &str) {
        let pack_items: Vec<PackItem> = items
            .iter()
            .map(|(p, w, _)| PackItem {
                pinned: *p,
                wanted: *w,
            })
            .collect();
        let r = pack(&pack_items, available, |i, lod| items[i].2[lod as usize]);
        let mut got: Vec<String> = r
            .items
            .iter()
            .map(|p| match p {
                Packed::In(lod) => format!("lod{lod}"),
                Packed::Out(reason) => format!("{reason:?}"),
            })
            .collect();
        got.push(format!("used {}", r.used));
        if let Some(o) = r.pinned_overflow {
            got.push(format!(
                "pinned full {} smallest {} avail {}",
                o.needed_full, o.needed_smallest, o.available
            ));
        }
        assert_eq!(got.join(" | "), expect);
    }

    const BIG: [u32; 6] = [500, 400, 200, 120, 40, 10];
    const SMALL: [u32; 6] = [60, 50, 30, 20, 12, 8];

    #[test]
    fn everything_fits_at_full_detail_when_there_is_room() {
        // The second item's band asks for level 2; the room left fills it.
        check(
            &[(false, 0, BIG), (false, 2, SMALL)],
            1000,
            "lod0 | lod0 | used 560",
        );
    }

    #[test]
    fn bands_are_met_before_anything_gets_extra_detail() {
        // The first item wants level 2: the second item's full detail (its
        // band) comes before the first item's extra detail.
        check(
            &[(false, 2, BIG), (false, 0, BIG)],
            700,
            "lod2 | lod0 | used 700",
        );
        // With more room the first item fills up too.
        check(
            &[(false, 2, BIG), (false, 0, BIG)],
            900,
            "lod1 | lod0 | used 900",
        );
    }

    #[test]
    fn degrades_before_dropping_and_continues_past() {
        // The big item cannot have full detail; the small one after it still can.
        check(
            &[(false, 0, BIG), (false, 0, SMALL)],
            300,
            "lod2 | lod0 | used 260",
        );
    }

    #[test]
    fn selection_closes_at_first_misfit() {
        check(
            &[(false, 0, BIG), (false, 0, SMALL), (false, 0, SMALL)],
            20,
            "lod5 | lod5 | OverBudget { needed: 8 } | used 18",
        );
    }

    #[test]
    fn pinned_overflow_is_reported() {
        check(
            &[(true, 0, BIG), (true, 0, BIG), (false, 0, SMALL)],
            15,
            "lod5 | PinnedOverBudget { over_by: 5 } | OverBudget { needed: 8 } | used 10 | pinned full 1000 smallest 20 avail 15",
        );
        // Pinned degrades when it cannot be full; the auto item upgrades into what is left.
        check(
            &[(true, 0, BIG), (false, 0, SMALL)],
            450,
            "lod1 | lod1 | used 450 | pinned full 500 smallest 10 avail 450",
        );
    }
}
