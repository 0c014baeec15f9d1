#!/usr/bin/env python3
"""Paired comparison of two `loupe eval` prediction files on one dataset:
per example, B minus A. Reciprocal rank of the first gold file in
`ranked_files` (MRR), acc@k as examples won / lost, all gold packed and
line recall at a budget; 95% intervals from a paired bootstrap.

usage: paired.py DATASET.jsonl A.pred.jsonl B.pred.jsonl [--budget 27000]
                 [--resamples 5000] [--seed 1] [--json]
"""
import argparse
import json
import random


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                p = json.loads(line)
                if not p.get('error'):
                    out[p['id']] = p
    return out


def rr(ranked, gold):
    for r, f in enumerate(ranked, 1):
        if f in gold:
            return 1.0 / r
    return 0.0


def line_recall(p, e, budget):
    spans = ((p.get('budgets') or {}).get(budget) or {}).get('packed_spans') or {}
    total = hit = 0
    for f, hunks in (e.get('gold_hunks_in_base') or {}).items():
        for a, b in hunks:
            for line in range(a, b + 1):
                total += 1
                hit += any(s <= line <= t for s, t in spans.get(f, []))
    return hit / total if total else 0.0


def packed_all(p, e, budget):
    files = set(((p.get('budgets') or {}).get(budget) or {}).get('packed_files') or [])
    return 1.0 if set(e['gold_files']) <= files else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('dataset')
    ap.add_argument('a')
    ap.add_argument('b')
    ap.add_argument('--budget', default='27000')
    ap.add_argument('--k', type=int, default=5)
    ap.add_argument('--resamples', type=int, default=5000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    examples = {}
    with open(a.dataset) as f:
        for line in f:
            e = json.loads(line)
            examples[e.get('instance_id') or e['commit']] = e
    A, B = load(a.a), load(a.b)
    ids = sorted(i for i in examples if i in A and i in B)
    rows = []
    for i in ids:
        e, pa, pb = examples[i], A[i], B[i]
        gold = set(e['gold_files'])
        acc = lambda p: 1.0 if gold <= set(p['ranked_files'][:a.k]) else 0.0
        rows.append({
            'mrr': rr(pb['ranked_files'], gold) - rr(pa['ranked_files'], gold),
            'acc': acc(pb) - acc(pa),
            'packed_all': packed_all(pb, e, a.budget) - packed_all(pa, e, a.budget),
            'line': line_recall(pb, e, a.budget) - line_recall(pa, e, a.budget),
        })
    rng = random.Random(a.seed)
    n = len(rows)
    result = {'n': n}
    for key in ('mrr', 'acc', 'packed_all', 'line'):
        vals = [r[key] for r in rows]
        mean = 100.0 * sum(vals) / n if n else 0.0
        boots = sorted(100.0 * sum(vals[rng.randrange(n)] for _ in range(n)) / n
                       for _ in range(a.resamples)) if n else [0.0]
        lo = boots[int(0.025 * len(boots))]
        hi = boots[min(int(0.975 * len(boots)), len(boots) - 1)]
        result[key] = {'delta': round(mean, 2), 'ci95': [round(lo, 2), round(hi, 2)]}
    result['acc_won'] = sum(1 for r in rows if r['acc'] > 0)
    result['acc_lost'] = sum(1 for r in rows if r['acc'] < 0)
    if a.json:
        print(json.dumps(result))
        return
    print(f"n {n}: Δ MRR {result['mrr']['delta']:+.1f} [{result['mrr']['ci95'][0]:+.1f}, "
          f"{result['mrr']['ci95'][1]:+.1f}]  Δ acc@{a.k} {result['acc']['delta']:+.1f} "
          f"(won {result['acc_won']} / lost {result['acc_lost']})  "
          f"Δ all-gold-packed@{a.budget} {result['packed_all']['delta']:+.1f}  "
          f"Δ line recall@{a.budget} {result['line']['delta']:+.1f} "
          f"[{result['line']['ci95'][0]:+.1f}, {result['line']['ci95'][1]:+.1f}]")


if __name__ == '__main__':
    main()
