#!/usr/bin/env python3
"""Fit how the re-ranker's logits join the ranking, on the validation
repositories only, and write the blend into the model file.

The engine (`signals/reader.rs`, `Blend`) gives each of the first `files`
files of the ranking `weight * exp((logit - best) / temperature)` more
relevance on its best chunk, then ranks as before: a chunk's score is its
relevance (capped at 1) times its multipliers, capped at 0.9, ties broken
by the uncapped strength; a file ranks by its best chunk. This script
replays that from the feature rows `loupe eval --features` wrote (each
row's formula score and multiplier) with the logits train_reranker.py
wrote for the validation questions, and picks the blend with the best
acc@5 (then the fewest files, which cost latency; then MRR) over a grid.
The grid and the metric are fixed here, not tuned to any evaluation set.

Latency bounds the grid: a blend may read at most `--max-read-tokens`
word pieces per question (files x the model's window). The default,
2,560, is the largest read the reader bench measured well inside the
issue's 1 s p95 bar on 2 cores (10 x 256: p95 509 ms; 20 x 256: 908 ms,
too close to the bar on a busy machine; BENCHMARKS.md, "The re-ranker").
"""

import argparse
import itertools
import json
import math
import os
import sys

from safetensors.numpy import load_file, save_file
from safetensors import safe_open

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rerank_data import file_metrics as metrics, load_jsonl  # noqa: E402

WEIGHTS = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0]
TEMPERATURES = [0.5, 1.0, 2.0, 4.0]
FILES = [5, 10, 20, 30]


def file_order(rows, gains):
    """Files by best chunk: (score, strength) as the engine orders them."""
    best = {}
    for r in rows:
        mult = r['mult'] if r['mult'] > 0 else 0.0
        rel = r['formula'] / mult if mult > 0 else 0.0
        # On every chunk: the same file order as on the best one alone.
        g = gains.get(r['path'], 0.0)
        new_rel = min(rel + g, max(rel, 1.0))
        key = (min(new_rel * mult, 0.9), (rel + g) * mult)
        if r['path'] not in best or key > best[r['path']]:
            best[r['path']] = key
    return sorted(best, key=lambda p: (-best[p][0], -best[p][1], p))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--valid', required=True, help='reranker-valid.jsonl (train_reranker.py)')
    ap.add_argument('--features', nargs='+', required=True)
    ap.add_argument('--gold', nargs='+', required=True, help='the sample shards (gold files)')
    ap.add_argument('--model', required=True, help='the model file: its blend is rewritten')
    ap.add_argument('--report', required=True)
    ap.add_argument('--max-read-tokens', type=int, default=2560,
                    help='files x window a blend may read per question (latency)')
    a = ap.parse_args()

    with safe_open(a.model, 'np') as f:
        window = int(f.metadata()['window'])
    files_grid = [k for k in FILES if k * window <= a.max_read_tokens]
    if not files_grid:
        sys.exit(f'no files count reads within {a.max_read_tokens} word pieces at window {window}')

    valid = {q['id']: q for q in load_jsonl(a.valid)}
    gold = {}
    for path in a.gold:
        for ex in load_jsonl(path):
            gold[ex.get('id') or ex['commit']] = set(ex['gold_files'])
    rows = {}
    for path in a.features:
        for feat in load_jsonl(path):
            if feat['id'] in valid:
                rows[feat['id']] = feat['rows']
    ids = sorted(i for i in valid if i in rows and i in gold)
    if not ids:
        sys.exit('no validation question has feature rows')
    golds = [gold[i] for i in ids]
    base_orders = [file_order(rows[i], {}) for i in ids]
    # The replay should give the order the eval gave.
    agree = sum(o[:5] == [f['path'] for f in sorted(valid[i]['files'], key=lambda f: f['loupe_rank'])][:5]
                for o, i in zip(base_orders, ids)) / len(ids)
    baseline = metrics(base_orders, golds)
    table = []
    for files, weight, temp in itertools.product(files_grid, WEIGHTS, TEMPERATURES):
        orders = []
        for i in ids:
            read = sorted(valid[i]['files'], key=lambda f: f['loupe_rank'])[:files]
            if not read:
                orders.append(file_order(rows[i], {}))
                continue
            top = max(f['logit'] for f in read)
            gains = {f['path']: weight * math.exp((f['logit'] - top) / temp) for f in read}
            orders.append(file_order(rows[i], gains))
        m = metrics(orders, golds)
        table.append({'files': files, 'weight': weight, 'temperature': temp, **m})
    # Fewer files read cost less (the re-ranker's latency grows with
    # them): among equal acc@5 the smaller K wins, then MRR.
    table.sort(key=lambda r: (-r['acc@5'], r['files'], -r['mrr']))
    best = table[0]
    blend = {'weight': best['weight'], 'temperature': best['temperature'], 'files': best['files']}
    report = {'questions': len(ids), 'repos': len({valid[i]['repo'] for i in ids}),
              'window': window, 'max_read_tokens': a.max_read_tokens,
              'replay_agrees_top5': round(100 * agree, 1), 'baseline': baseline,
              'blend': blend, 'best': best, 'top': table[:15],
              'by_files': {k: next(r for r in table if r['files'] == k) for k in files_grid}}
    json.dump(report, open(a.report, 'w'), indent=2)
    print(json.dumps({k: report[k] for k in ('questions', 'replay_agrees_top5', 'baseline', 'best')}),
          file=sys.stderr)

    with safe_open(a.model, 'np') as f:
        meta = dict(f.metadata())
    tensors = load_file(a.model)
    meta['blend'] = json.dumps(blend, sort_keys=True)
    prov = json.loads(meta.get('provenance', '{}'))
    prov['blend_fit'] = {'on': 'validation repositories (repos.tsv split = valid)',
                         'baseline': baseline, 'best': best}
    meta['provenance'] = json.dumps(prov, sort_keys=True)
    tmp = a.model + '.tmp'
    save_file(tensors, tmp, metadata=meta)
    os.replace(tmp, a.model)
    os.chmod(a.model, 0o644)


if __name__ == '__main__':
    main()
