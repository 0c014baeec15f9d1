#!/usr/bin/env python3
"""Offline check of pseudo-relevance feedback for a change's second file
(EVAL.md, session 31): would searching again with the top file's words
lift the other gold files?

Reads `loupe eval --features` dumps and their datasets. Per question,
files are ranked by their best chunk's `formula` score; the identifiers
(4 characters or more) of the top file's best chunk, read at the base
commit from the bare mirror, score every other file of the top 60 by the
idf (over those files) of the identifiers it shares (identifiers in more
than half of them are left out). Files are re-ranked by best score +
beta x that score (divided by the question's largest), the top file kept
first, and acc@1/acc@5 (every gold file within the top k) and MRR are
printed per set and beta, next to beta 0.

  python3 tools/eval/feedback_offline.py --dumps V --sets BurntSushi+ripgrep_150,... \
      --data ../shared/eval/dev --mirrors /work/.mirror
"""

import argparse
import collections
import json
import math
import re
import subprocess

IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]{3,}')
TOP_FILES = 60


class Blobs:
    """`git cat-file --batch` over one mirror."""

    def __init__(self, git_dir):
        self.p = subprocess.Popen(['git', '--git-dir', git_dir, 'cat-file', '--batch'],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def text(self, commit, path):
        self.p.stdin.write(f'{commit}:{path}\n'.encode())
        self.p.stdin.flush()
        head = self.p.stdout.readline().split()
        if len(head) < 3 or head[1] == b'missing':
            return ''
        data = self.p.stdout.read(int(head[2]))
        self.p.stdout.read(1)
        return data.decode('utf-8', 'replace')


def questions(dump, dataset, mirrors):
    gold = {}
    for line in open(dataset):
        d = json.loads(line)
        gold[d.get('commit') or d.get('instance_id')] = d
    blobs = {}
    for line in open(dump):
        row = json.loads(line)
        ex = gold[row['id']]
        repo = ex['repo']
        if repo not in blobs:
            blobs[repo] = Blobs(f'{mirrors}/{repo.replace("/", "+")}/repo')
        best, best_row = {}, {}
        for r in row['rows']:
            if r['formula'] > best.get(r['path'], -1):
                best[r['path']], best_row[r['path']] = r['formula'], r
        files = sorted(best, key=lambda p: -best[p])[:TOP_FILES]
        if not files:
            continue
        texts = {p: blobs[repo].text(ex['base_commit'], p) for p in files}
        idents = {p: set(IDENT.findall(texts[p])) for p in files}
        df = collections.Counter(t for p in files for t in idents[p])
        top = best_row[files[0]]
        lines = texts[files[0]].split('\n')[top['start_line'] - 1:top['end_line']]
        words = {t for t in IDENT.findall('\n'.join(lines)) if df[t] <= len(files) / 2}
        feedback = {p: sum(math.log(1 + len(files) / df[t]) for t in words & idents[p])
                    for p in files[1:]}
        yield set(ex['gold_files']), files, best, feedback


def metrics(qs, beta):
    a1 = a5 = rr = 0
    for gold, files, best, feedback in qs:
        top = max(feedback.values(), default=0) or 1
        rest = sorted(files[1:], key=lambda p: -(best[p] + beta * feedback[p] / top))
        order = files[:1] + rest
        ranks = [order.index(g) + 1 for g in gold if g in order]
        a1 += len(ranks) == len(gold) and max(ranks) <= 1
        a5 += len(ranks) == len(gold) and max(ranks) <= 5
        rr += 1 / min(ranks) if ranks else 0
    n = len(qs) or 1
    return 100 * a1 / n, 100 * a5 / n, 100 * rr / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--dumps', required=True, help='folder of SET.features.jsonl')
    ap.add_argument('--sets', required=True, help='comma-separated set names')
    ap.add_argument('--data', required=True, help='folder of SET.jsonl')
    ap.add_argument('--mirrors', required=True)
    ap.add_argument('--betas', default='0.05,0.1,0.2,0.3,0.5')
    a = ap.parse_args()
    for name in a.sets.split(','):
        qs = list(questions(f'{a.dumps}/{name}.features.jsonl', f'{a.data}/{name}.jsonl', a.mirrors))
        base = metrics(qs, 0)
        print(f'{name} (n {len(qs)}): acc@1 {base[0]:.1f} acc@5 {base[1]:.1f} MRR {base[2]:.1f}')
        for beta in map(float, a.betas.split(',')):
            m = metrics(qs, beta)
            print(f'  beta {beta}: acc@5 {m[1] - base[1]:+.1f}  MRR {m[2] - base[2]:+.1f}')


if __name__ == '__main__':
    main()
