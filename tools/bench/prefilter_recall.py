#!/usr/bin/env python3
"""How much of the exact vector top-k a cheaper first pass keeps.

Loupe searches its int8 vector rows exactly (`vectors.rs`): every question
reads every row, 116 MB on the vendor corpus, 13.5 ms of a 31 ms warm
retrieval (BENCHMARKS.md, "Questions and assembly"; what this script
found: "Changes to embedding and vectors"). A first pass over a smaller
copy of the rows, then the exact score of its best R, would read less and
could leave the int8 rows on disk. This measures, on a real index's rows,
what share of the exact top-k such a first pass keeps:

- `sign`: one bit per coordinate (raw, or centred on the mean vector),
  ranked by Hamming distance;
- `int4`: four bits per coordinate, the row's own scale;
- `int4, exact`: the share of rows an int4 pass with an error bound
  would still have to score from their int8 rows to stay exact.

Questions are made from the rows themselves (the sum of three random rows
plus noise, normalised): no question text is embedded here, so treat the
numbers as indicative of real questions, not equal to them.

    python3 tools/bench/prefilter_recall.py DATA_DIR/projects/ID/vectors

Needs numpy. Nothing is written.
"""
import json
import sys

import numpy as np

K = 50
QUESTIONS = 60


def main(vectors_dir: str) -> None:
    manifest = json.load(open(f"{vectors_dir}/manifest.json"))
    if len(manifest["files"]) != 1:
        sys.exit("the index has a delta file: index again so its rows are in one file")
    dim = manifest["dim"]
    raw = np.fromfile(f"{vectors_dir}/chunks.i8", dtype=np.uint8).reshape(-1, 12 + dim)
    scale = raw[:, 8:12].copy().view(np.float32)[:, 0]
    rows = raw[:, 12:].view(np.int8).astype(np.float32)
    x = rows * scale[:, None]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    print(f"{len(x)} rows of {dim} coordinates")

    rng = np.random.default_rng(0)
    qs = []
    for _ in range(QUESTIONS):
        v = x[rng.choice(len(x), 3)].sum(0) + 0.5 * rng.standard_normal(dim) / np.sqrt(dim)
        qs.append(v / np.linalg.norm(v))
    exact = [set(np.argsort(-(x @ q))[:K]) for q in qs]

    def kept(first_pass, r: int):
        share = []
        for q, want in zip(qs, exact):
            cand = np.argpartition(first_pass(q), r)[:r]
            got = cand[np.argsort(-(x[cand] @ q))[:K]]
            share.append(len(want & set(got)) / K)
        return np.mean(share), np.min(share)

    popcount = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1)
    for name, centre in (("sign", np.zeros(dim)), ("sign, centred", x.mean(0))):
        codes = np.packbits((x - centre) > 0, axis=1)

        def hamming(q, codes=codes, centre=centre):
            qc = np.packbits((q - centre) > 0)
            return popcount[codes ^ qc].sum(1)

        for r in (250, 500, 1000, 2000):
            mean, worst = kept(hamming, r)
            print(f"{name:<14} best {r:>5} rescored: top-{K} kept {mean:.3f} (worst question {worst:.2f})")

    r4 = np.clip(np.round(rows / 16), -8, 7)
    x4 = r4 * scale[:, None]
    for r in (100, 250, 500):
        mean, worst = kept(lambda q: -(x4 @ q), r)
        print(f"{'int4':<14} best {r:>5} rescored: top-{K} kept {mean:.3f} (worst question {worst:.2f})")

    # Exact from int4: a row's int8 score is 16 * (its int4 score) plus the
    # residual's, which Cauchy-Schwarz bounds by |q| * |residual|. Every
    # row whose bound reaches the k-th best exact score of the int4 top k
    # must be scored from its int8 row; the rest cannot enter the top k.
    residual = np.linalg.norm(rows - 16 * r4, axis=1)
    shares = []
    for q in qs:
        q8 = np.round(q / np.abs(q).max() * 127)
        exact = (rows @ q8) * scale
        approx = 16 * (r4 @ q8) * scale
        bound = approx + np.linalg.norm(q8) * residual * scale
        threshold = np.sort(exact[np.argpartition(-approx, K)[:K]])[0]
        shares.append((bound >= threshold).mean())
    print(f"{'int4, exact':<14} rows to score from int8: median {np.median(shares):.4f}, most {np.max(shares):.4f}")


if __name__ == "__main__":
    main(sys.argv[1])
