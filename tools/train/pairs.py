#!/usr/bin/env python3
"""Build (question -> changed chunk) pairs for the code-vector trainer.

For each mined example (mine.py) of the newest --per-repo per repository, the
gold files are read at the example's parent commit from the bare mirror and
cut into Loupe's own chunks by `examples/code_corpus.rs` (the same chunker and
the same code words indexing uses). Per gold file, the chunk that overlaps
the changed lines most is a positive; hard negatives are a chunk of the same
file that the change did not touch and a chunk of a sibling source file (same
folder, same extension) at the same commit.

Writes one JSON line per pair: repo, split, example id, question words,
positive words, negative words. Nothing written here is committed
(TRAINING.md). Deterministic given the mined data and --seed.
"""

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

MAX_BLOB = 1 << 20
MAX_GOLD = 3


class Blobs:
    """`git cat-file --batch` over one mirror: blobs and trees by `rev:path`."""

    def __init__(self, git_dir):
        self.p = subprocess.Popen(['git', '--git-dir', git_dir, 'cat-file', '--batch'],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def get(self, spec):
        self.p.stdin.write(spec.encode() + b'\n')
        self.p.stdin.flush()
        header = self.p.stdout.readline().split()
        if len(header) != 3:
            return None, None
        kind, size = header[1].decode(), int(header[2])
        data = self.p.stdout.read(size)
        self.p.stdout.read(1)
        return kind, data

    def text(self, spec):
        kind, data = self.get(spec)
        if kind != 'blob' or len(data) > MAX_BLOB or b'\0' in data[:8000]:
            return None
        try:
            return data.decode('utf-8')
        except UnicodeDecodeError:
            return None

    def siblings(self, rev, path):
        """Files beside `path` with its extension (tree entries are `mode name\\0sha20`)."""
        folder, _, name = path.rpartition('/')
        ext = os.path.splitext(name)[1]
        kind, data = self.get(f'{rev}:{folder}' if folder else f'{rev}^{{tree}}')
        if kind != 'tree':
            return []
        out, i = [], 0
        while i < len(data):
            sp = data.index(b' ', i)
            nul = data.index(b'\0', sp)
            mode, entry = data[i:sp], data[sp + 1:nul].decode('utf-8', 'replace')
            i = nul + 21
            if mode.startswith(b'100') and entry != name and entry.endswith(ext):
                out.append(f'{folder}/{entry}' if folder else entry)
        return out

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Corpus:
    """The code_corpus example: chunks and words, one request per line."""

    def __init__(self, exe):
        self.p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, req):
        self.p.stdin.write(json.dumps(req).encode() + b'\n')
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def overlap(chunk, hunks):
    s, e = chunk[0], chunk[1]
    return sum(max(0, min(e, b) - max(s, a) + 1) for a, b in hunks)


def repo_pairs(job):
    repo, split, examples, mirrors, exe, seed = job
    rng = random.Random(f'{seed}:{repo}')
    blobs = Blobs(os.path.join(mirrors, repo.replace('/', '+'), 'repo'))
    corpus = Corpus(exe)
    out = []
    try:
        for ex in examples:
            q = corpus.ask({'q': ex['query']}).get('w', '')
            if len(q.split()) < 2:
                continue
            ex_id = hashlib.sha1(f"{repo}:{ex['commit']}:{ex['source']}".encode()).hexdigest()[:12]
            base = ex['base_commit']
            hunks_by_file = ex.get('gold_hunks_in_base') or {}
            gold = [f for f in ex['gold_files'] if hunks_by_file.get(f)][:MAX_GOLD]
            for path in gold:
                text = blobs.text(f'{base}:{path}')
                if not text:
                    continue
                chunks = corpus.ask({'path': path, 'text': text}).get('chunks', [])
                scored = [(overlap(c, hunks_by_file[path]), c) for c in chunks]
                best = max(scored, key=lambda t: t[0], default=(0, None))
                if best[0] == 0 or not best[1][2]:
                    continue
                negs = [c[2] for o, c in scored if o == 0 and c[2]]
                neg = [rng.choice(negs)] if negs else []
                sib = blobs.siblings(base, path)
                rng.shuffle(sib)
                for other in sib[:2]:
                    t = blobs.text(f'{base}:{other}')
                    if not t:
                        continue
                    cs = [c[2] for c in corpus.ask({'path': other, 'text': t}).get('chunks', []) if c[2]]
                    if cs:
                        neg.append(rng.choice(cs))
                        break
                out.append({'repo': repo, 'split': split, 'ex': ex_id, 'q': q,
                            'pos': best[1][2], 'neg': neg})
    finally:
        corpus.close()
        blobs.close()
    return repo, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True, help='mined/ folder from mine.py')
    ap.add_argument('--repos', required=True, help='tools/train/repos.tsv')
    ap.add_argument('--mirrors', required=True)
    ap.add_argument('--corpus-exe', default='target/release/examples/code_corpus')
    ap.add_argument('--per-repo', type=int, default=800)
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()

    splits = {}
    with open(a.repos) as f:
        next(f)
        for line in f:
            cols = line.rstrip('\n').split('\t')
            if len(cols) >= 3:
                splits[cols[0]] = cols[2]
    jobs = []
    for repo, split in sorted(splits.items()):
        path = os.path.join(a.data, repo.replace('/', '+') + '.jsonl')
        if not os.path.exists(path):
            continue
        with open(path) as f:
            exs = [json.loads(l) for l in f if l.strip()]
        exs.sort(key=lambda e: (e.get('date') or '', e['commit']), reverse=True)
        jobs.append((repo, split, exs[:a.per_repo], a.mirrors, a.corpus_exe, a.seed))

    write_pairs(repo_pairs, jobs, a.jobs, a.out, 'pairs')


def write_pairs(worker, jobs, processes, path, what):
    """Run `worker` (job -> (repo, pairs)) over `jobs` on `processes`
    processes; write every pair, repositories in name order, to `path`
    (through a temporary file, so a killed run leaves no half file)."""
    n, results = 0, {}
    tmp = path + '.tmp'
    with ProcessPoolExecutor(processes) as pool:
        for k, (repo, pairs) in enumerate(pool.map(worker, jobs)):
            results[repo] = pairs
            n += len(pairs)
            print(f'[{k + 1}/{len(jobs)}] {repo}: {len(pairs)} {what} ({n} in all)', file=sys.stderr, flush=True)
    with open(tmp, 'w') as out:
        for repo in sorted(results):
            for p in results[repo]:
                out.write(json.dumps(p) + '\n')
    os.replace(tmp, path)
    print(f'{n} {what} -> {path}', file=sys.stderr)


if __name__ == '__main__':
    main()
