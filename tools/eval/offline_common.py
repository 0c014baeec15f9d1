"""What the offline checks of a re-ranking (`feedback_offline.py`,
`coverage_offline.py`) share: reading files at a commit from a bare
mirror, their common arguments, and the file-level scores."""

import argparse
import json
import subprocess


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


def parser(doc):
    """The arguments every offline check takes."""
    ap = argparse.ArgumentParser(description=doc.split('\n\n')[0])
    ap.add_argument('--dumps', required=True, help='folder of SET.features.jsonl')
    ap.add_argument('--sets', required=True, help='comma-separated set names')
    ap.add_argument('--data', required=True, help='folder of SET.jsonl')
    ap.add_argument('--mirrors', required=True)
    ap.add_argument('--betas', default='0.05,0.1,0.2,0.3,0.5')
    return ap


def scores(ranked):
    """acc@1, acc@5 (every gold file within the top k) and MRR, in
    percent, of `(files in ranked order, gold files)` pairs."""
    a1 = a5 = rr = n = 0
    for order, gold in ranked:
        n += 1
        ranks = [order.index(g) + 1 for g in gold if g in order]
        a1 += len(ranks) == len(gold) and max(ranks) <= 1
        a5 += len(ranks) == len(gold) and max(ranks) <= 5
        rr += 1 / min(ranks) if ranks else 0
    n = n or 1
    return 100 * a1 / n, 100 * a5 / n, 100 * rr / n


def dumped(dump, dataset, mirrors, top):
    """Per question of a `--features` dump: its dataset entry, a reader
    of its repository's mirror, its best `top` files by their best chunk's
    formula score (in that order), each file's best score and its best
    chunk's row. Questions with no candidate are left out."""
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
        files = sorted(best, key=lambda p: -best[p])[:top]
        if files:
            yield ex, blobs[repo], files, best, best_row
