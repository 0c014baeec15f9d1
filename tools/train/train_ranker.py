#!/usr/bin/env python3
"""Train Loupe's learned ranker: non-negative weights over the ranking
features, fitted with a listwise loss on candidates that Loupe's own
retrieval produced for mined (commit message -> changed code) examples.

Input: feature rows written by `loupe eval --features` (one JSON line per
example: id, repo, rows of path / lines / tokens / mult / formula / x), and
the mined datasets they came from (gold files and hunks, joined by id).
Output: the model file Rust loads (`crates/loupe-assemble/assets/ranker.json`
format) and a report of offline file-ranking metrics on the validation
repositories for the hand-set formula, this linear model and, for
comparison only, LightGBM's LambdaMART on the same features.

Labels: a file is relevant if the fix changed it; a chunk if its lines
overlap a changed hunk (PARTIAL marks another chunk of a gold file for
LambdaMART's graded labels).

Model: relevance = w . x with w >= 0 (so each feature's share of a score is
a non-negative part the app can draw); final = mult * relevance, where mult
is the role x intent x path weight that Rust applies the same way. Loss, per
question: softmax cross-entropy over files (a file's score is a smooth
maximum of its chunks', as the metric ranks a file by its best chunk;
target uniform over gold files) plus half a softmax cross-entropy over
chunks (target: the chunks touching changed lines), fitted with Adam from
the hand formula's weights, projected onto w >= 0. Then a scale and a power
(score = raw^power, a monotone map; raw = relevance x role, intent and path
weights) give the scores the formula's distribution over the top of the
list (the level-of-detail bands and k read absolute scores); no ordering
changes.

Deterministic given --seed (the order of minibatches is the only
randomness; numpy's default_rng). Standard library + numpy; lightgbm only
for the comparison (skipped when it is not installed).

usage: train_ranker.py --features F.jsonl [F2.jsonl ...] --data MINED_DIR
                       --repos tools/train/repos.tsv --out ranker.json
                       [--report report.json] [--seed 7] [--epochs 40]
"""
import argparse
import glob
import json
import math
import os
import sys
import time

import numpy as np

from mine import read_repos_tsv

PARTIAL = 0.3  # label of a gold file's chunk that touches no changed line


def load_gold(data_dir, wanted):
    """id -> (gold files, hunks) for the ids in `wanted`."""
    gold = {}
    for path in sorted(glob.glob(os.path.join(data_dir, '*.jsonl'))):
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                eid = e.get('instance_id') or e.get('commit')
                if eid in wanted:
                    gold[eid] = (set(e['gold_files']), e.get('gold_hunks_in_base') or {})
    return gold


def label(row, files, hunks):
    path, s, e = row['path'], row['start_line'], row['end_line']
    if path not in files:
        return 0.0
    for a, b in hunks.get(path, []):
        if a <= e and b >= s:
            return 1.0
    return PARTIAL


class Query:
    __slots__ = ('id', 'repo', 'X', 'mult', 'formula', 'y', 'paths', 'gold',
                 'order', 'starts', 'file_of', 'tf', 'tc')

    def __init__(self, qid, repo, X, mult, formula, y, paths, gold):
        self.id, self.repo, self.X, self.mult = qid, repo, X, mult
        self.formula, self.y, self.paths, self.gold = formula, y, paths, gold
        # Chunks grouped by file: `order` sorts them by file, `starts` marks
        # each file's first position, `file_of` maps a chunk to its file.
        files, self.file_of = np.unique(np.array(paths), return_inverse=True)
        self.order = np.argsort(self.file_of, kind='stable')
        self.starts = np.flatnonzero(np.r_[True, np.diff(self.file_of[self.order]) != 0])
        tf = np.array([1.0 if f in gold else 0.0 for f in files])
        self.tf = tf / tf.sum() if tf.sum() > 0 else tf
        tc = (y >= 1.0).astype(np.float64)
        self.tc = tc / tc.sum() if tc.sum() > 0 else tc


# Features a dump written before they existed lacks, and how each follows
# from the rows of its question exactly as `QueryStats::of` and `features`
# compute it in crates/loupe-assemble/src/learned.rs (a test compares the two
# on fresh dumps: tools/train/check_features.py).
FILE_FEATURES = ('file_chunks', 'file_bm25_max', 'file_bm25_hits')


def add_file_features(names, X, paths):
    if all(n in names for n in FILE_FEATURES):
        return names, X
    i_rrf, i_rel = names.index('bm25_rrf'), names.index('bm25_rel_score')
    chunks, hits, best = {}, {}, {}
    for p, row in zip(paths, X):
        chunks[p] = chunks.get(p, 0) + 1
        hits[p] = hits.get(p, 0) + (1 if row[i_rrf] > 0 else 0)
        best[p] = max(best.get(p, 0.0), float(row[i_rel]))
    extra = np.array([[min(chunks[p], 8) / 8.0, best[p], min(hits[p], 5) / 5.0] for p in paths],
                     dtype=np.float64)
    return list(names) + list(FILE_FEATURES), np.column_stack([X, extra])


def load(feature_files, data_dir):
    lines = []
    for path in feature_files:
        with open(path) as f:
            for line in f:
                if line.strip():
                    lines.append(json.loads(line))
    ids = {l['id'] for l in lines}
    gold = load_gold(data_dir, ids)
    names, queries, seen = None, [], set()
    for l in lines:
        if l['id'] in seen or l['id'] not in gold or not l['rows']:
            continue
        seen.add(l['id'])
        rows = l['rows']
        line_names, X = add_file_features(
            l['features'], np.array([r['x'] for r in rows], dtype=np.float64),
            [r['path'] for r in rows])
        if names is None:
            names = line_names
        elif line_names != names:
            sys.exit(f"{l['id']}: rows name other features than the first line")
        files, hunks = gold[l['id']]
        queries.append(Query(
            l['id'], l['repo'], X,
            np.array([r['mult'] for r in rows], dtype=np.float64),
            np.array([r['formula'] for r in rows], dtype=np.float64),
            np.array([label(r, files, hunks) for r in rows], dtype=np.float64),
            [r['path'] for r in rows], files))
    return names or [], queries


# Chunk depths at which `file_metrics` asks whether every gold file has a
# chunk: the packer admits items in score order, so a gold file whose best
# chunk ranks below what a budget holds is not in the prompt however well
# its file ranks (about 40 items fit 13k tokens in detail, 135 fit 27k).
CHUNK_DEPTHS = (40, 135)


def file_metrics(queries, scores):
    """acc@1/5/10 (all gold files in the top k files) and MRR (first gold
    file), files ranked by their best chunk: the scorer's definitions. Also
    the breadth a budget sees: the share of questions with every gold file
    among the top CHUNK_DEPTHS chunks (`gold_in@N`), and the median number
    of distinct files there (`files_in@N`)."""
    acc = {1: 0, 5: 0, 10: 0}
    deep = {d: 0 for d in CHUNK_DEPTHS}
    spread = {d: [] for d in CHUNK_DEPTHS}
    rr = 0.0
    for q, s in zip(queries, scores):
        order = np.argsort(-s, kind='stable')
        files = []
        for i in order:
            if q.paths[i] not in files:
                files.append(q.paths[i])
        for k in acc:
            if q.gold <= set(files[:k]):
                acc[k] += 1
        for r, f in enumerate(files, 1):
            if f in q.gold:
                rr += 1.0 / r
                break
        for d in CHUNK_DEPTHS:
            top = {q.paths[i] for i in order[:d]}
            deep[d] += q.gold <= top
            spread[d].append(len(top))
    n = max(len(queries), 1)
    out = {f'acc@{k}': 100.0 * v / n for k, v in acc.items()}
    out['mrr'] = 100.0 * rr / n
    for d in CHUNK_DEPTHS:
        out[f'gold_in@{d}'] = 100.0 * deep[d] / n
        out[f'files_in@{d}'] = float(np.median(spread[d])) if spread[d] else 0.0
    out['n'] = len(queries)
    return out


# Scores enter the softmax as BETA x score: the hand formula's scores lie in
# 0..1, and at temperature 1 a softmax over hundreds of candidates is nearly
# flat. The final scale is set by `calibrate` anyway.
BETA = 10.0
# Sharpness of the smooth maximum that pools a file's chunks (the metric
# ranks a file by its best chunk).
GAMMA = 4.0
# Weight of the chunk-level loss (which chunk of a gold file shows the
# changed lines: line recall) next to the file-level one (acc@k, MRR).
CHUNK_LOSS = 0.5
# Weight of the breadth loss: each gold file's pooled score in a softmax
# over every chunk. Without it the model lifts every chunk of a strong
# file alike and a budget fills with few files (EVAL.md, "What was tried"
# → Packing, `1138f91`, and → Learned ranker, `cce6fe1`, `dabb091`); on
# the validation repositories 1, 3, 6, 10, 20, 40 gave gold files among
# the top 135 chunks 89.3, 90.0, 91.0, 91.3, 91.7, 91.7 and MRR 69.5 to
# 70.8, flat from 10 (TRAINING.md).
BREADTH = 10.0


def softmax(z):
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


def listnet_grad(w, q, breadth=0.0):
    """Loss and gradient for one question: softmax cross-entropy over files
    (each file's score a smooth maximum of its chunks' scores, target
    uniform over the gold files) plus CHUNK_LOSS x softmax cross-entropy
    over chunks (target uniform over the chunks that touch changed lines),
    plus `breadth` x the gold files' pooled scores in a softmax over all
    chunks (what decides whether a budget reaches them)."""
    s = BETA * q.mult * (q.X @ w)
    ss = s[q.order]
    sizes = np.diff(np.r_[q.starts, len(ss)])  # chunks per file, in `order`
    seg_max = np.maximum.reduceat(ss, q.starts)
    shift = ss - np.repeat(seg_max, sizes)
    e = np.exp(GAMMA * shift)
    seg_sum = np.add.reduceat(e, q.starts)
    F = seg_max + np.log(seg_sum) / GAMMA
    pf = softmax(F)
    loss = -(q.tf * np.log(pf + 1e-12)).sum()
    within = e / np.repeat(seg_sum, sizes)
    g = np.empty_like(s)
    g[q.order] = np.repeat(pf - q.tf, sizes) * within
    pc = softmax(s) if breadth > 0 or q.tc.sum() > 0 else None
    if breadth > 0:
        # Each gold file's pooled score against every chunk, not every
        # file: a file whose chunks all score high costs once per chunk,
        # as it does in a budget (the packer admits chunks in score order).
        target = np.empty_like(s)
        target[q.order] = np.repeat(q.tf, sizes) * within
        lse = s.max() + np.log(np.exp(s - s.max()).sum())
        loss += breadth * (lse - (q.tf * F).sum())
        g += breadth * (pc - target)
    if q.tc.sum() > 0:
        loss += CHUNK_LOSS * -(q.tc * np.log(pc + 1e-12)).sum()
        g += CHUNK_LOSS * (pc - q.tc)
    g *= BETA * q.mult
    return loss, q.X.T @ g


# The hand formula's weights in feature order: the starting point.
FORMULA = {'bm25_rrf': 0.4, 'vector_rrf': 0.2, 'symbol_hits': 0.2, 'symbol_exact': 0.1,
           'graph_seed': 0.15, 'graph_hop': 0.15, 'path_hits': 0.05, 'file_decay': 0.3,
           'history_decay': 0.5}


def train_linear(queries, names, seed, epochs, lr, l2, batch, breadth=0.0, without=()):
    rng = np.random.default_rng(seed)
    usable = [q for q in queries if q.tf.sum() > 0]
    n_features = len(names)
    # Features held at weight 0 (ablations): projected like w >= 0.
    free = np.array([0.0 if n in without else 1.0 for n in names])
    w = np.array([FORMULA.get(n, 0.0) for n in names]) * free
    m = np.zeros(n_features)
    v = np.zeros(n_features)
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(usable))
        total = 0.0
        for start in range(0, len(order), batch):
            grad = np.zeros(n_features)
            for i in order[start:start + batch]:
                loss, g = listnet_grad(w, usable[i], breadth)
                total += loss
                grad += g
            grad = grad / len(order[start:start + batch]) + l2 * w
            step += 1
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad * grad
            mh = m / (1 - 0.9 ** step)
            vh = v / (1 - 0.999 ** step)
            w = np.maximum(w - lr * mh / (np.sqrt(vh) + 1e-8), 0.0) * free
        if epoch % 10 == 0 or epoch == epochs - 1:
            print(f'  epoch {epoch}: loss {total / max(len(usable), 1):.4f}', file=sys.stderr)
    return w


# Ranks whose scores the calibration matches to the formula's: the level of
# detail bands and k read absolute scores along the whole top of the list,
# not only at its head.
CALIBRATION_RANKS = (1, 2, 3, 5, 10, 20, 40)


def calibrate(w, queries):
    """Scale c and power p such that (c * raw)^p has the formula's
    score distribution at CALIBRATION_RANKS (medians over the questions,
    least squares in log space). A learned model whose scores fall off more
    slowly than the formula's would otherwise give many more items high
    levels of detail and pack fewer files. Both maps are monotone in the
    final score, so no ordering changes (Rust: `LinearModel::shape`)."""
    def kth(scores, k):
        return [np.sort(s)[::-1][k - 1] for s in scores if len(s) >= k]
    target = np.log([max(np.median(kth([q.formula for q in queries], k)), 1e-6)
                     for k in CALIBRATION_RANKS])
    rel = [q.X @ w for q in queries]
    best = (float('inf'), 1.0, 1.0)
    for p in np.arange(0.5, 3.0001, 0.05):
        got = np.log([max(np.median(kth([(q.mult * r) ** p for q, r in zip(queries, rel)], k)),
                          1e-9) for k in CALIBRATION_RANKS])
        # With p fixed, log c * p is the mean gap (least squares).
        shift = (target - got).mean()
        err = ((target - got - shift) ** 2).sum()
        if err < best[0]:
            best = (err, float(np.exp(shift / p)), float(p))
    _, c, p = best
    return w * c, p


def lambdamart(train, valid, seed):
    try:
        import lightgbm as lgb
    except ImportError:
        return None
    def stack(qs):
        X = np.vstack([np.column_stack([q.X, q.mult]) for q in qs])
        y = np.concatenate([np.round(q.y * 2).astype(int) for q in qs])  # 0, 1 (partial), 2
        return X, y, [len(q.y) for q in qs]
    Xt, yt, gt = stack([q for q in train if q.y.sum() > 0])
    params = dict(objective='lambdarank', learning_rate=0.05, num_leaves=31,
                  min_data_in_leaf=50, bagging_fraction=0.8, bagging_freq=1, seed=seed,
                  deterministic=True, force_row_wise=True, num_threads=2, verbose=-1)
    model = lgb.train(params, lgb.Dataset(Xt, yt, group=gt), num_boost_round=300)
    return [model.predict(np.column_stack([q.X, q.mult])) for q in valid]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--features', nargs='+', required=True)
    ap.add_argument('--data', required=True, help='folder of mined datasets (JSONL)')
    ap.add_argument('--repos', required=True, help='repos.tsv with the train/valid split')
    ap.add_argument('--out', required=True)
    ap.add_argument('--report')
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--epochs', type=int, default=40)
    ap.add_argument('--lr', type=float, default=0.01)
    ap.add_argument('--l2', type=float, default=1e-4)
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--breadth', type=float, default=BREADTH,
                    help='weight of the breadth loss (gold files against every chunk)')
    ap.add_argument('--without', nargs='*', default=[],
                    help='features held at weight 0 (ablations)')
    a = ap.parse_args()
    t0 = time.time()
    split = {row['repo']: row['split'] for row in read_repos_tsv(a.repos)}
    names, queries = load(a.features, a.data)
    if set(a.without) - set(names):
        sys.exit(f'--without names no feature of the dumps: {sorted(set(a.without) - set(names))}')
    unknown = sorted({q.repo for q in queries if q.repo not in split})
    if unknown:
        sys.exit(f'repositories missing from {a.repos}: {unknown}')
    train = [q for q in queries if split[q.repo] == 'train']
    valid = [q for q in queries if split[q.repo] == 'valid']
    print(f'{len(train)} train questions ({len({q.repo for q in train})} repos), '
          f'{len(valid)} validation ({len({q.repo for q in valid})} repos)', file=sys.stderr)
    if not train or not valid:
        sys.exit('need questions in both splits')
    w = train_linear(train, names, a.seed, a.epochs, a.lr, a.l2, a.batch, a.breadth,
                     a.without)
    w, power = calibrate(w, train)
    score = lambda q: (q.mult * (q.X @ w)) ** power
    report = {
        'formula': file_metrics(valid, [q.formula for q in valid]),
        'linear': file_metrics(valid, [score(q) for q in valid]),
        'train_linear': file_metrics(train, [score(q) for q in train]),
        'train_formula': file_metrics(train, [q.formula for q in train]),
    }
    lm = lambdamart(train, valid, a.seed)
    if lm is not None:
        report['lambdamart'] = file_metrics(valid, lm)
    for k, v in report.items():
        print(f'  {k:14s} ' + '  '.join(f'{m} {x:.1f}' for m, x in v.items() if m != 'n')
              + f'  (n {v["n"]})', file=sys.stderr)
    model = {
        'features': names,
        'weights': [round(float(x), 6) for x in w],
        'power': round(power, 3),
        'provenance': {
            'trainer': 'tools/train/train_ranker.py',
            'loss': f'softmax cross-entropy over files (smooth max of chunks, gamma {GAMMA}) + {CHUNK_LOSS} x over chunks + {a.breadth} x breadth (gold files against every chunk), beta {BETA}, w >= 0, Adam from the formula',
            'labels': f'hunk overlap 1, other chunk of a gold file {PARTIAL}, else 0',
            'seed': a.seed, 'breadth': a.breadth, 'without': a.without, 'epochs': a.epochs, 'lr': a.lr, 'l2': a.l2, 'batch': a.batch,
            'train_questions': len(train), 'train_repos': len({q.repo for q in train}),
            'valid_questions': len(valid), 'valid_repos': len({q.repo for q in valid}),
            'valid': report,
        },
    }
    with open(a.out, 'w') as f:
        json.dump(model, f, indent=1)
        f.write('\n')
    if a.report:
        with open(a.report, 'w') as f:
            json.dump(report, f, indent=1)
    print(f'wrote {a.out} in {time.time() - t0:.0f} s (power {power:.2f})', file=sys.stderr)
    for n, x in zip(names, w):
        print(f'  {n:20s} {x:.4f}', file=sys.stderr)


if __name__ == '__main__':
    main()
