#!/usr/bin/env python3
"""Check that the trainer's derivation of the per-file features
(train_ranker.add_file_features, used on dumps written before those features
existed) gives what Rust computes (crates/loupe-assemble/src/learned.rs).

usage: check_features.py FEATURES.jsonl   (a dump that has every feature)
Exit 1 on any difference beyond float rounding.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_ranker as T  # noqa: E402


def main():
    bad = checked = 0
    with open(sys.argv[1]) as f:
        for line in f:
            l = json.loads(line)
            names = l['features']
            keep = [i for i, n in enumerate(names) if n not in T.FILE_FEATURES]
            X = np.array([r['x'] for r in l['rows']], dtype=np.float64)
            paths = [r['path'] for r in l['rows']]
            derived_names, derived = T.add_file_features([names[i] for i in keep], X[:, keep], paths)
            order = [derived_names.index(n) for n in names]
            diff = np.abs(derived[:, order] - X).max() if len(X) else 0.0
            checked += 1
            if diff > 1e-5:
                bad += 1
                print(f"{l['id']}: differs by {diff}", file=sys.stderr)
    print(f'{checked} questions checked, {bad} differ')
    sys.exit(1 if bad or not checked else 0)


if __name__ == '__main__':
    main()
