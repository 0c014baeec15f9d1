#!/usr/bin/env python3
"""How far can the ranker's inputs go? (EVAL.md, "The in-sample bound".)

Reads `loupe eval --features` dumps of dev sets and prints, per set and
as the mean over sets, acc@5 (every gold file within the top 5 files):

- *candidates*: every gold file is among the question's candidates and
  there are at most 5: what a perfect re-ranking of them would reach;
- *formula*: files by their best chunk's hand-set score, as dumped (ties
  in dump order, so a little off the scorer's own number);
- *fit on these questions*: a linear scorer over per-file features (the
  maximum over the file's chunks of each of the learned ranker's inputs,
  of the role x intent x path multiplier, of the formula's score and of
  log tokens, plus the file's chunk count), trained with a pairwise
  logistic loss (each gold file against the 30 non-gold files the formula
  ranks highest) on the very questions it is scored on, full batch, Adam,
  zero start (deterministic), and the best of every 10th epoch kept. It is
  not a model to ship: it is an optimistic bound on what any weighting of
  these inputs can do on these sets.

  python3 tools/eval/insample_bound.py --dumps V --data ../shared/eval/dev \\
      --sets BurntSushi+ripgrep_150,pallets+flask_150,...
"""

import argparse
import json

import numpy as np

NEGATIVES = 30


def load(dump, dataset):
    gold = {}
    for line in open(dataset):
        d = json.loads(line)
        gold[d.get('commit') or d.get('instance_id')] = set(d['gold_files'])
    out = []
    for line in open(dump):
        row = json.loads(line)
        g = gold[row['id']]
        files = {}
        for r in row['rows']:
            x = r['x'] + [r['mult'], r['formula'], float(np.log1p(r['tokens']))]
            files.setdefault(r['path'], []).append(x)
        names = list(files)
        feats = (np.array([np.concatenate([np.max(files[p], axis=0), [len(files[p])]]) for p in names])
                 if names else None)
        out.append((g, names, feats))
    return out


def acc5(qs, score):
    ok = 0
    for g, names, feats in qs:
        if not names:
            continue
        s = score(feats)
        order = [names[i] for i in np.argsort(-s, kind='stable')]
        ranks = [order.index(x) + 1 for x in g if x in names]
        ok += len(ranks) == len(g) and max(ranks) <= 5
    return 100 * ok / len(qs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--dumps', required=True, help='folder of SET.features.jsonl')
    ap.add_argument('--data', required=True, help='folder of SET.jsonl')
    ap.add_argument('--sets', required=True, help='comma-separated set names')
    ap.add_argument('--epochs', type=int, default=150)
    a = ap.parse_args()
    sets = {s: load(f'{a.dumps}/{s}.features.jsonl', f'{a.data}/{s}.jsonl') for s in a.sets.split(',')}
    every = np.vstack([f for qs in sets.values() for _, _, f in qs if f is not None])
    mu, sd = every.mean(0), every.std(0) + 1e-9
    formula_col = every.shape[1] - 3

    def z(f):
        return np.hstack([(f - mu) / sd, np.ones((len(f), 1))])

    pairs = []
    for qs in sets.values():
        for g, names, f in qs:
            if f is None:
                continue
            gi = [i for i, n in enumerate(names) if n in g]
            ni = sorted((i for i, n in enumerate(names) if n not in g), key=lambda i: -f[i, formula_col])
            if gi and ni:
                pairs.append((z(f[gi]), z(f[ni[:NEGATIVES]])))
    dim = pairs[0][0].shape[1]
    w, m, v = np.zeros(dim), np.zeros(dim), np.zeros(dim)

    def mean_acc(score):
        per = {s: acc5(qs, score) for s, qs in sets.items()}
        return sum(per.values()) / len(per), per

    best = (-1.0, None, 0)
    for epoch in range(1, a.epochs + 1):
        grad = np.zeros(dim)
        for fg, fn in pairs:
            diff = (fg @ w)[:, None] - (fn @ w)[None, :]
            coef = -1 / (1 + np.exp(np.clip(diff, -30, 30))) / diff.size
            grad += fg.T @ coef.sum(1) - fn.T @ coef.sum(0)
        grad = grad / len(pairs) + 1e-5 * w
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w = w - 0.02 * (m / (1 - 0.9 ** epoch)) / (np.sqrt(v / (1 - 0.999 ** epoch)) + 1e-8)
        if epoch % 10 == 0:
            mean, per = mean_acc(lambda f: z(f) @ w)
            if mean > best[0]:
                best = (mean, per, epoch)

    cand = {s: 100 * sum(bool(n) and g <= set(n) and len(g) <= 5 for g, n, _ in qs) / len(qs)
            for s, qs in sets.items()}
    form = {s: acc5(qs, lambda f: f[:, formula_col]) for s, qs in sets.items()}
    print(f'{"acc@5":28s} {"candidates":>10s} {"formula":>8s} {"fit":>8s}')
    for s in sets:
        print(f'{s:28s} {cand[s]:10.1f} {form[s]:8.1f} {best[1][s]:8.1f}')
    mean = lambda d: sum(d.values()) / len(d)  # noqa: E731
    print(f'{"mean":28s} {mean(cand):10.1f} {mean(form):8.1f} {best[0]:8.1f}  (fit: epoch {best[2]})')


if __name__ == '__main__':
    main()
