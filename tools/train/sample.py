#!/usr/bin/env python3
"""Pick the mined examples whose candidates Loupe's retrieval will score
for ranker training, and split them into shards that run side by side.

Feature rows cost an index update per example (`loupe eval` walks each
repository's examples in commit order on one incrementally updated
index), so per repository this takes the newest N examples: neighbouring
commits differ by a few files, which keeps each update small, and many
repositories with a few examples each teach more than a few with many.
Deterministic: no randomness, the same mined files give the same shards.

usage: sample.py --data MINED_DIR --repos tools/train/repos.tsv --per-repo 12
                 --shards 2 --out DIR      (writes DIR/shard-K.jsonl)
"""
import argparse
import json
import os
import sys

from mine import read_mined, read_repos_tsv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True)
    ap.add_argument('--repos', required=True)
    ap.add_argument('--per-repo', type=int, default=12)
    ap.add_argument('--shards', type=int, default=2)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    repos = read_repos_tsv(a.repos)
    os.makedirs(a.out, exist_ok=True)
    shards = [[] for _ in range(a.shards)]
    taken = 0
    for n, r in enumerate(sorted(repos, key=lambda r: r['repo'])):
        rows = read_mined(a.data, r['repo'])
        if rows is None:
            print(f"{r['repo']}: not mined, skipped", file=sys.stderr)
            continue
        # Mined files are oldest first: the newest N.
        pick = rows[-a.per_repo:]
        shards[n % a.shards].extend(pick)
        taken += len(pick)
    for k, rows in enumerate(shards):
        with open(os.path.join(a.out, f'shard-{k}.jsonl'), 'w') as f:
            for row in rows:
                f.write(json.dumps(row) + '\n')
    print(f'{taken} examples from {len(repos)} repositories in {a.shards} shards',
          file=sys.stderr)


if __name__ == '__main__':
    main()
