//! Property tests of the packer's promises (issue 3): never over budget;
//! pinned items dropped only when pinned items alone overflow (and then
//! reported); deterministic; more budget never removes an included item.

use std::collections::HashSet;

use loupe_assemble::pack::{PackItem, Packed, pack};
use loupe_assemble::report::ItemStatus;
use loupe_assemble::{AssembleRequest, Budget, Candidate, ChunkKind, Knobs, Signals, assemble};
use proptest::prelude::*;

use crate::support::chunk;

/// Costs per level, non-increasing from LOD 0 to 5 like real renderings.
fn costs() -> impl Strategy<Value = [u32; 6]> {
    prop::array::uniform6(1u32..200).prop_map(|mut c| {
        c.sort_unstable_by(|a, b| b.cmp(a));
        c
    })
}

/// Items in the order the packer is promised: pinned first.
fn items() -> impl Strategy<Value = Vec<(bool, u8, [u32; 6])>> {
    prop::collection::vec((prop::bool::weighted(0.2), 0u8..=5, costs()), 0..12).prop_map(|mut v| {
        v.sort_by_key(|(pinned, _, _)| !pinned);
        v
    })
}

fn run(items: &[(bool, u8, [u32; 6])], budget: u32) -> (Vec<Packed>, u32, bool) {
    let pack_items: Vec<PackItem> = items
        .iter()
        .map(|(p, w, _)| PackItem {
            pinned: *p,
            wanted: if *p { 0 } else { *w },
        })
        .collect();
    let r = pack(&pack_items, budget, |i, lod| items[i].2[lod as usize]);
    (r.items, r.used, r.pinned_overflow.is_some())
}

proptest! {
    #[test]
    fn pack_never_exceeds_budget(items in items(), budget in 0u32..1500) {
        let (out, used, _) = run(&items, budget);
        let sum: u32 = out.iter().enumerate().filter_map(|(i, p)| match p { Packed::In(l) => Some(items[i].2[*l as usize]), _ => None }).sum();
        prop_assert_eq!(sum, used);
        prop_assert!(used <= budget);
    }

    #[test]
    fn pack_drops_pinned_only_when_pinned_overflow(items in items(), budget in 0u32..1500) {
        let (out, _, overflow) = run(&items, budget);
        let pinned_smallest: u32 = items.iter().filter(|i| i.0).map(|i| i.2[5]).sum();
        for (i, p) in out.iter().enumerate() {
            if items[i].0 && matches!(p, Packed::Out(_)) {
                prop_assert!(overflow);
                prop_assert!(pinned_smallest > budget);
            }
        }
    }

    #[test]
    fn pack_more_budget_never_removes(items in items(), budget in 0u32..1500, extra in 0u32..500) {
        let (small, _, _) = run(&items, budget);
        let (large, _, _) = run(&items, budget + extra);
        for (a, b) in small.iter().zip(&large) {
            if matches!(a, Packed::In(_)) {
                prop_assert!(matches!(b, Packed::In(_)));
            }
        }
    }
}

/// Small random candidates, some pinned.
fn candidates() -> impl Strategy<Value = Vec<Candidate>> {
    prop::collection::vec((1usize..40, prop::bool::weighted(0.15), 1u32..50, prop::option::of(1u32..50)), 1..8).prop_map(|specs| {
        specs
            .into_iter()
            .enumerate()
            .map(|(n, (lines, pinned, bm25, vector))| {
                let body: String = (0..lines).map(|l| format!("    let v{l} = step({l}, \"item {n}\");\n")).collect();
                let marked = format!("«doc|/// Item {n} does step {n}.\n»«sig|pub fn item_{n}() »«body|{{\n{body}}}»\n");
                let chunk = chunk(n as i64 + 1, &format!("src/m{}.rs", n % 3), "rust", ChunkKind::Function, Some(&format!("item_{n}")), 1 + n as u32 * 100, &marked);
                Candidate { chunk, signals: Signals { bm25_rank: Some(bm25), vector_rank: vector, pinned, ..Default::default() } }
            })
            .collect()
    })
}

fn request(budget: Budget) -> AssembleRequest {
    AssembleRequest {
        question: "how does item stepping work?".into(),
        knobs: Knobs {
            budget: Some(budget),
            answer_reserve: 0,
            ..Knobs::default()
        },
        ..Default::default()
    }
}

fn included(a: &loupe_assemble::Assembly) -> HashSet<i64> {
    a.items
        .iter()
        .filter(|r| r.status.is_in())
        .map(|r| r.id)
        .collect()
}

fn budget_of(tokens: bool, n: u32) -> Budget {
    if tokens {
        Budget::Tokens(n)
    } else {
        Budget::Chars(n * 4)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn assembly_never_over_budget(cands in candidates(), budget in 100u32..3000, tokens in any::<bool>()) {
        let a = assemble(&cands, &request(budget_of(tokens, budget)));
        if a.report.used > a.report.usable {
            // Only possible when the fixed parts alone overflow: then nothing is included.
            prop_assert!(included(&a).is_empty(), "{:?}", a.report);
        }
    }

    #[test]
    fn assembly_sections_add_up_to_the_total(cands in candidates(), budget in 100u32..3000, tokens in any::<bool>()) {
        let a = assemble(&cands, &request(budget_of(tokens, budget)));
        let sum: u32 = a.report.sections.iter().map(|s| s.size).sum();
        prop_assert_eq!(sum, a.report.used, "{:?}", a.report.sections);
    }

    #[test]
    fn assembly_pinned_kept_unless_reported(cands in candidates(), budget in 100u32..3000, tokens in any::<bool>()) {
        let a = assemble(&cands, &request(budget_of(tokens, budget)));
        for row in &a.items {
            if row.score.pinned && !row.status.is_in() {
                prop_assert!(a.report.pinned_overflow.is_some());
                prop_assert!(matches!(row.status, ItemStatus::Dropped(_)));
            }
        }
    }

    #[test]
    fn assembly_is_deterministic(cands in candidates(), budget in 100u32..3000) {
        let r = request(Budget::Tokens(budget));
        prop_assert_eq!(assemble(&cands, &r), assemble(&cands, &r));
    }

    #[test]
    fn assembly_more_budget_never_removes(cands in candidates(), budget in 100u32..3000, extra in 0u32..2000, tokens in any::<bool>()) {
        let small = included(&assemble(&cands, &request(budget_of(tokens, budget))));
        let large = included(&assemble(&cands, &request(budget_of(tokens, budget + extra))));
        prop_assert!(small.is_subset(&large), "{small:?} ⊄ {large:?}");
    }
}
