#!/usr/bin/env python3
"""Build a held-out evaluation set from the mined validation repositories:
questions from repositories that neither trained model (ranker, code
vectors) nor the hand-set formula's tuning has seen, for `loupe eval`.

The dev sets cannot judge the learned ranker against the formula fairly:
the formula's weights were chosen on them. The validation repositories of
`tools/train/repos.tsv` are unseen by everything. This takes, per
validation repository, the newest N mined examples whose question came
from a pull-request title and description (a merge or squash body:
closer to what users paste than a commit subject), leaving out the examples the feature sample
took (`sample.py` takes the newest of any source; those chose the
trainer's settings). Deterministic: no randomness.

usage: heldout.py --data MINED_DIR --repos tools/train/repos.tsv
                  --sample SAMPLE_DIR --per-repo 10 --out heldout.jsonl
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'train'))
from mine import read_mined, read_repos_tsv  # noqa: E402  (the miner's own readers)

PR_SOURCES = ('pr_merge', 'squash')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True, help='folder of mined datasets (JSONL)')
    ap.add_argument('--repos', required=True)
    ap.add_argument('--sample', required=True, help='folder of sample.py shards (left out)')
    ap.add_argument('--per-repo', type=int, default=10)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    sampled = set()
    for path in glob.glob(os.path.join(a.sample, 'shard-*.jsonl')):
        with open(path) as f:
            sampled.update(json.loads(l)['commit'] for l in f if l.strip())
    if not sampled:
        sys.exit(f'no sample shards in {a.sample}')
    repos = read_repos_tsv(a.repos)
    out, used = [], 0
    for r in sorted(repos, key=lambda r: r['repo']):
        if r['split'] != 'valid':
            continue
        rows = read_mined(a.data, r['repo'])
        if rows is None:
            print(f"{r['repo']}: not mined, skipped", file=sys.stderr)
            continue
        # Mined files are oldest first: the newest N, kept in commit order.
        pick = [e for e in rows
                if e.get('source') in PR_SOURCES and e['commit'] not in sampled][-a.per_repo:]
        out.extend(pick)
        used += bool(pick)
    with open(a.out, 'w') as f:
        for e in out:
            f.write(json.dumps(e) + '\n')
    print(f'{len(out)} questions from {used} validation repositories', file=sys.stderr)


if __name__ == '__main__':
    main()
