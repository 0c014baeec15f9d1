#!/usr/bin/env python3
"""Build (doc comment -> code) pairs for the code-vector trainer.

Issue 12 names a second source of pairs besides commit messages: a
function's documentation and its body. For each repository of the training
split (never a validation one), source files of the recorded head commit
(repos.tsv) are sampled, cut into Loupe's own chunks by
`examples/code_corpus.rs`, and every chunk with a doc comment right before
or at its start (`///`, `/** */`, `//`, `#` blocks; a Python docstring
after the `def`/`class` line) gives one pair: question = the comment's
first paragraph, positive = the chunk without the comment (its path and
code, as indexing embeds them), hard negative = another chunk of the same
file.

Writes pairs.py's format (repo, split, ex, q, pos, neg), so train_vectors.py
reads the two files concatenated. Nothing written here is committed
(TRAINING.md). Deterministic given the mirrors and --seed.
"""

import argparse
import hashlib
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pairs import Blobs, Corpus, write_pairs  # noqa: E402

SOURCE = {'.rs', '.py', '.ts', '.tsx', '.js', '.jsx', '.go', '.java', '.c', '.h',
          '.cc', '.cpp', '.hpp', '.cs', '.rb'}
SKIP = re.compile(r'(^|/)(tests?|testing|spec|vendor|third_party|examples?|benches|fixtures?|node_modules)(/|$)'
                  r'|_test\.|\.test\.|\.spec\.|test_[^/]*$|\.min\.js$', re.I)
LINE_COMMENT = re.compile(r'^\s*(///?!?|#(?![!\[])|--)\s?(.*)$')
BLOCK_START = re.compile(r'^\s*/\*\*?\s?(.*)$')
BLOCK_MID = re.compile(r'^\s*\*(?!/)\s?(.*)$')
DOCSTRING = re.compile(r'^\s*[rRbBuU]?("""|\'\'\')(.*)$')
MAX_BYTES = 1024  # embed_text_of's cut (MAX_EMBED_TEXT_BYTES)
MIN_DOC_WORDS = 4
MIN_BODY_LINES = 3


def first_paragraph(lines):
    out = []
    for t in lines:
        t = t.strip()
        if not t:
            if out:
                break
            continue
        if t.startswith(('@', ':param', ':return', 'Args:', 'Returns:', '# ')) and out:
            break
        out.append(t)
    return ' '.join(out)


def leading_comment(lines, start):
    """(doc text, first body line) of a comment block starting at `start`."""
    i, doc = start, []
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and BLOCK_START.match(lines[i]) and not lines[i].strip().startswith('/*!'):
        first = BLOCK_START.match(lines[i]).group(1)
        j = i
        body = [first.split('*/')[0]]
        while '*/' not in lines[j] and j + 1 < len(lines):
            j += 1
            m = BLOCK_MID.match(lines[j])
            body.append((m.group(1) if m else lines[j]).split('*/')[0])
        return first_paragraph(body), j + 1
    while i < len(lines):
        m = LINE_COMMENT.match(lines[i])
        if not m:
            break
        doc.append(m.group(2))
        i += 1
    return first_paragraph(doc), i


def docstring(lines, start, end):
    """A Python docstring right after the def/class line in [start, end)."""
    for k in range(start, min(end, start + 4)):
        if re.match(r'^\s*(async\s+)?(def|class)\s', lines[k]):
            j = k
            while j < end and not lines[j].rstrip().endswith(':'):
                j += 1
            j += 1
            if j >= end:
                return None
            m = DOCSTRING.match(lines[j])
            if not m:
                return None
            quote, rest = m.group(1), m.group(2)
            doc, d = [], j
            if quote in rest:
                doc.append(rest.split(quote)[0])
            else:
                doc.append(rest)
                while d + 1 < end:
                    d += 1
                    if quote in lines[d]:
                        doc.append(lines[d].split(quote)[0])
                        break
                    doc.append(lines[d])
            return first_paragraph(doc), j, d + 1
    return None


def chunk_pairs(path, text, chunks):
    """(doc, body text) per documented chunk."""
    lines = text.split('\n')
    out = []
    for c in chunks:
        s, e = c[0] - 1, c[1]
        if path.endswith('.py'):
            got = docstring(lines, s, e)
            if not got:
                continue
            doc, a, b = got
            body = lines[s:a] + lines[b:e]
        else:
            # The comment may sit inside the chunk (attached by the chunker)
            # or end right above it.
            doc, at = leading_comment(lines, s)
            if doc and at < e:
                body = lines[at:e]
            else:
                k = s
                while k > 0 and (LINE_COMMENT.match(lines[k - 1]) or BLOCK_MID.match(lines[k - 1])
                                 or lines[k - 1].strip().endswith('*/')):
                    k -= 1
                if k == s:
                    continue
                doc, _ = leading_comment(lines, k)
                body = lines[s:e]
        if not doc or len([ln for ln in body if ln.strip()]) < MIN_BODY_LINES:
            continue
        out.append((doc, '\n'.join(body)))
    return out


def repo_pairs(job):
    repo, head, mirrors, exe, seed, files_per_repo, per_repo = job
    rng = random.Random(f'{seed}:doc:{repo}')
    git_dir = os.path.join(mirrors, repo.replace('/', '+'), 'repo')
    try:
        names = subprocess.run(['git', '--git-dir', git_dir, 'ls-tree', '-r', '--name-only', head],
                               capture_output=True, check=True).stdout.decode('utf-8', 'replace').split('\n')
    except subprocess.CalledProcessError:
        return repo, []
    names = sorted(n for n in names if os.path.splitext(n)[1] in SOURCE and not SKIP.search(n))
    rng.shuffle(names)
    blobs = Blobs(git_dir)
    corpus = Corpus(exe)
    out = []
    try:
        for path in names[:files_per_repo]:
            text = blobs.text(f'{head}:{path}')
            if not text:
                continue
            chunks = corpus.ask({'path': path, 'text': text}).get('chunks', [])
            for doc, body in chunk_pairs(path, text, chunks):
                q = corpus.ask({'q': doc}).get('w', '')
                if len(q.split()) < MIN_DOC_WORDS:
                    continue
                embedded = (path + '\n' + body).encode()[:MAX_BYTES].decode('utf-8', 'ignore')
                pos = corpus.ask({'q': embedded}).get('w', '')
                others = [c[2] for c in chunks if c[2] and c[2] != pos]
                ex = hashlib.sha1(f'{repo}:{path}:{doc}'.encode()).hexdigest()[:12]
                out.append({'repo': repo, 'split': 'train', 'ex': 'doc:' + ex, 'q': q, 'pos': pos,
                            'neg': [rng.choice(others)] if others else []})
    finally:
        corpus.close()
        blobs.close()
    rng.shuffle(out)
    return repo, out[:per_repo]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--repos', required=True, help='tools/train/repos.tsv')
    ap.add_argument('--mirrors', required=True)
    ap.add_argument('--corpus-exe', default='target/release/examples/code_corpus')
    ap.add_argument('--files-per-repo', type=int, default=300)
    ap.add_argument('--per-repo', type=int, default=500)
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()

    jobs = []
    with open(a.repos) as f:
        next(f)
        for line in f:
            cols = line.rstrip('\n').split('\t')
            if len(cols) >= 4 and cols[2] == 'train':
                jobs.append((cols[0], cols[3], a.mirrors, a.corpus_exe, a.seed,
                             a.files_per_repo, a.per_repo))
    jobs.sort()
    write_pairs(repo_pairs, jobs, a.jobs, a.out, 'doc pairs')

if __name__ == '__main__':
    main()
