#!/usr/bin/env python3
"""Offline check of pseudo-relevance feedback for a change's second file
(EVAL.md, "What was tried" → Offline leads, `d6f050f`): would searching
again with the top file's words lift the other gold files?

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

import collections
import math
import re

from offline_common import dumped, parser, scores

IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]{3,}')
TOP_FILES = 60


def questions(dump, dataset, mirrors):
    for ex, blobs, files, best, best_row in dumped(dump, dataset, mirrors, TOP_FILES):
        texts = {p: blobs.text(ex['base_commit'], p) for p in files}
        idents = {p: set(IDENT.findall(texts[p])) for p in files}
        df = collections.Counter(t for p in files for t in idents[p])
        top = best_row[files[0]]
        lines = texts[files[0]].split('\n')[top['start_line'] - 1:top['end_line']]
        words = {t for t in IDENT.findall('\n'.join(lines)) if df[t] <= len(files) / 2}
        feedback = {p: sum(math.log(1 + len(files) / df[t]) for t in words & idents[p])
                    for p in files[1:]}
        yield set(ex['gold_files']), files, best, feedback


def metrics(qs, beta):
    def ranked():
        for gold, files, best, feedback in qs:
            top = max(feedback.values(), default=0) or 1
            rest = sorted(files[1:], key=lambda p: -(best[p] + beta * feedback[p] / top))
            yield files[:1] + rest, gold
    return scores(ranked())


def main():
    ap = parser(__doc__)
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
