#!/usr/bin/env python3
"""Paired comparison over several dev sets at once: per set, B minus A in
acc@5 and MRR (as paired.py), then the macro mean over sets with a paired
bootstrap that resamples each set's questions on its own (5,000 resamples):
its 95 % interval and the one-sided p-value that the mean did not rise
(the share of resamples at or below 0). The rule for turning the
re-ranker on by default reads this (EVAL.md, "The re-ranker").

usage: paired_sets.py --set DATASET.jsonl A.pred.jsonl B.pred.jsonl [--set ...]
                      [--k 5] [--resamples 5000] [--seed 1] [--json]
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired import load, rr  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--set', nargs=3, action='append', required=True,
                    metavar=('DATASET', 'A', 'B'))
    ap.add_argument('--k', type=int, default=5)
    ap.add_argument('--resamples', type=int, default=5000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    sets = []
    for dataset, pa, pb in a.set:
        examples = {}
        with open(dataset) as f:
            for line in f:
                if line.strip():
                    e = json.loads(line)
                    examples[e.get('instance_id') or e.get('id') or e['commit']] = e
        A, B = load(pa), load(pb)
        rows = []
        for i, e in examples.items():
            gold = set(e['gold_files'])
            # A missing or failed prediction counts as a miss (EVAL.md).
            ra = A.get(i, {}).get('ranked_files', [])
            rb = B.get(i, {}).get('ranked_files', [])
            acc = lambda r: 100.0 if gold <= set(r[:a.k]) else 0.0
            rows.append((acc(ra), acc(rb), 100 * rr(ra, gold), 100 * rr(rb, gold)))
        name = os.path.basename(dataset).rsplit('.', 1)[0]
        n = len(rows)
        sets.append({'set': name, 'n': n, 'rows': rows,
                     'acc_a': sum(r[0] for r in rows) / n, 'acc_b': sum(r[1] for r in rows) / n,
                     'mrr_a': sum(r[2] for r in rows) / n, 'mrr_b': sum(r[3] for r in rows) / n,
                     'won': sum(r[1] > r[0] for r in rows), 'lost': sum(r[1] < r[0] for r in rows)})
    rng = random.Random(a.seed)
    boots = []
    for _ in range(a.resamples):
        total = 0.0
        for s in sets:
            rows, n = s['rows'], s['n']
            total += sum(rows[j][1] - rows[j][0] for j in (rng.randrange(n) for _ in range(n))) / n
        boots.append(total / len(sets))
    boots.sort()
    mean = lambda k: sum(s[k] for s in sets) / len(sets)
    out = {
        'sets': [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in s.items() if k != 'rows'}
                 for s in sets],
        'mean': {'acc_a': round(mean('acc_a'), 2), 'acc_b': round(mean('acc_b'), 2),
                 'mrr_a': round(mean('mrr_a'), 2), 'mrr_b': round(mean('mrr_b'), 2),
                 'delta_acc_ci95': [round(boots[int(0.025 * len(boots))], 2),
                                    round(boots[int(0.975 * len(boots)) - 1], 2)],
                 'p_not_up': round(sum(b <= 0 for b in boots) / len(boots), 4)},
    }
    if a.json:
        print(json.dumps(out))
        return
    print(f"{'set':<28} {'n':>4} {'acc@5 A':>8} {'acc@5 B':>8} {'Δ':>6} {'won/lost':>9} {'MRR A':>7} {'MRR B':>7}")
    for s in out['sets']:
        print(f"{s['set']:<28} {s['n']:>4} {s['acc_a']:>8.1f} {s['acc_b']:>8.1f} "
              f"{s['acc_b'] - s['acc_a']:>+6.1f} {s['won']:>4}/{s['lost']:<4} {s['mrr_a']:>7.1f} {s['mrr_b']:>7.1f}")
    m = out['mean']
    print(f"{'mean':<28} {'':>4} {m['acc_a']:>8.1f} {m['acc_b']:>8.1f} {m['acc_b'] - m['acc_a']:>+6.1f} "
          f"{'':>9} {m['mrr_a']:>7.1f} {m['mrr_b']:>7.1f}")
    print(f"Δ mean acc@{a.k} 95% interval {m['delta_acc_ci95']}, p(not up) = {m['p_not_up']}")


if __name__ == '__main__':
    main()
