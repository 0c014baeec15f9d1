#!/usr/bin/env python3
"""Offline check of term coverage for a change's second file (EVAL.md,
"What was tried" → Offline leads, `efaab6b`): would raising the files
that hold the question's words the files above them lack lift the other
gold files?

Reads `loupe eval --features` dumps and their datasets. Per question,
files are ranked by their best chunk's `formula` score (the top 60 kept).
The question's words are its identifier parts (split at `_` and case
changes, lowercased, 3 characters or more, common English words left
out); a file holds a word if its text at the base commit, split the same
way, does. Words held by more than half of the 60 files are left out.
Files are then picked greedily: the top file first, then at each step the
file with the largest best score / the top file's + beta x (idf of the
question's words it holds that no file picked so far holds) / (idf of all
the question's words). acc@1, acc@5 (every gold file within the top k)
and MRR are printed per set and beta, next to beta 0.

  python3 tools/eval/coverage_offline.py --dumps V --sets BurntSushi+ripgrep_150,... \
      --data ../shared/eval/dev --mirrors /work/.mirror
"""

import collections
import math
import re

from offline_common import dumped, parser, scores

TOP_FILES = 60
RUN = re.compile(r'[A-Za-z][A-Za-z0-9_]*')
PART = re.compile(r'[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+')
STOP = set('''the and for with that this from are was were not but you your have has had
when what which where why how who does did done into onto than then them they their there
these those some any all can could should would will may might must shall been being its
our out about after before over under more most less only also just like such very use
used using get set add fix fixed fixes issue bug error errors make made new old one two
its it's see way work works working instead because while still even should doesn't don't
can't isn't wasn't'''.split())


def words(text):
    out = set()
    for run in RUN.findall(text):
        for seg in run.split('_'):
            for p in PART.findall(seg):
                p = p.lower()
                if len(p) >= 3 and p not in STOP and not p.isdigit():
                    out.add(p)
    return out


def questions(dump, dataset, mirrors):
    for ex, blobs, files, best, _ in dumped(dump, dataset, mirrors, TOP_FILES):
        q = words(ex['query'])
        held = {p: words(p + '\n' + blobs.text(ex['base_commit'], p)) & q for p in files}
        df = collections.Counter(t for p in files for t in held[p])
        idf = {t: math.log(1 + len(files) / df[t]) for t in q if 0 < df[t] <= len(files) / 2}
        yield set(ex['gold_files']), files, best, held, idf


def rerank(files, best, held, idf, beta, depth=10):
    top = best[files[0]] or 1
    total = sum(idf.values()) or 1
    order, rest = files[:1], files[1:]
    covered = set(held[files[0]])
    while rest and len(order) < depth:
        def score(p):
            gain = sum(idf.get(t, 0) for t in held[p] - covered)
            return best[p] / top + beta * gain / total
        pick = max(rest, key=lambda p: (score(p), -files.index(p)))
        order.append(pick)
        rest.remove(pick)
        covered |= held[pick]
    return order + rest


def metrics(qs, beta):
    return scores((rerank(files, best, held, idf, beta) if beta else files, gold)
                  for gold, files, best, held, idf in qs)


def main():
    ap = parser(__doc__)
    a = ap.parse_args()
    betas = [float(b) for b in a.betas.split(',')]
    means = collections.defaultdict(list)
    for name in a.sets.split(','):
        qs = list(questions(f'{a.dumps}/{name}.features.jsonl', f'{a.data}/{name}.jsonl', a.mirrors))
        base = metrics(qs, 0)
        print(f'{name} (n {len(qs)}): acc@1 {base[0]:.1f} acc@5 {base[1]:.1f} MRR {base[2]:.1f}')
        for beta in betas:
            m = metrics(qs, beta)
            means[beta].append((m[1] - base[1], m[2] - base[2]))
            print(f'  beta {beta}: acc@5 {m[1] - base[1]:+.1f}  MRR {m[2] - base[2]:+.1f}')
    for beta in betas:
        d = means[beta]
        print(f'mean beta {beta}: acc@5 {sum(x for x, _ in d) / len(d):+.2f}  '
              f'MRR {sum(y for _, y in d) / len(d):+.2f}')


if __name__ == '__main__':
    main()
