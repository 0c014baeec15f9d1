#!/usr/bin/env python3
"""Time one command of two Loupe binaries side by side (BENCHMARKS.md).

    scripts/ab-command.py OLD NEW [--runs N] -- ARGS...

Runs `OLD ARGS` and `NEW ARGS` alternately, swapping which goes first
each round (this machine favours whichever runs second), and prints the
median wall and CPU (user + system, from getrusage) time of each and
their ratio. The environment is passed on (set LOUPE_DATA_DIR). A run
that exits non-zero stops the comparison.
"""
import argparse
import resource
import statistics
import subprocess
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=12)
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    wall = {"old": [], "new": []}
    cpu = {"old": [], "new": []}
    for i in range(a.runs):
        for k in ("old", "new") if i % 2 == 0 else ("new", "old"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = subprocess.run([getattr(a, k), *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                sys.stderr.write(f"{k} exited {p.returncode}:\n{p.stderr.decode(errors='replace')}")
                return 1
            wall[k].append(dt)
            cpu[k].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    for k in ("old", "new"):
        print(f"{k}: wall median {statistics.median(wall[k]):.3f} s "
              f"(min {min(wall[k]):.3f}), cpu median {statistics.median(cpu[k]):.3f} s")
    print(f"new/old: wall {statistics.median(wall['new']) / statistics.median(wall['old']):.2f}, "
          f"cpu {statistics.median(cpu['new']) / statistics.median(cpu['old']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
