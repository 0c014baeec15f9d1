#!/usr/bin/env bash
# Time to a first prompt on a fresh data dir (issue 13), side by side in
# one run: the engine path the app takes (examples/first_prompt.rs: open,
# index, ask at the ready report, or from a scan as soon as a first index
# of 2,000 files or more starts parsing, ask again when the vectors
# landed), the
# same with vectors off, and the one-shot CLI (`loupe query`, default
# `--wait lexical`, and `--wait all`). Medians of RUNS (3) runs each.
#
# Corpora: this repository; tokio when its mirror is here (../.mirror, see
# ../shared/eval/README.md); the `cargo vendor` corpus of `make bench` with
# VENDOR=1 (minutes per run).
# Usage: scripts/bench-first-prompt.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d /tmp/loupe-first.XXXXXX)}
runs=${RUNS:-3}
. scripts/bench-corpus.sh
scripts/release-build.sh >&2
scripts/release-build.sh --example first_prompt >&2
example=./target/release/examples/first_prompt
loupe=./target/release/loupe
question="how does the scheduler pick the next task to run?"

corpora=("$PWD")
mirror=../.mirror/tokio-rs+tokio/repo
if [ -d "$mirror" ]; then
  [ -d "$work/tokio" ] || git clone -q "$mirror" "$work/tokio"
  corpora+=("$work/tokio")
fi
if [ "${VENDOR:-0}" = 1 ]; then corpora+=("$(bench_corpus "$work/vendor")"); fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%F)"
echo "commit: $(git rev-parse --short HEAD); medians of $runs runs; fresh data dir each run"
for corpus in "${corpora[@]}"; do
  for i in $(seq "$runs"); do
    for embedder in code none; do
      rm -rf "$work/data"
      /usr/bin/time -f '%M' -o "$work/rss" "$example" "$corpus" "$work/data" "$embedder" "$question" > "$work/one.json"
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["embedder"]=sys.argv[2]; r["rss_kb"]=int(open(sys.argv[3]).read().split()[-1]); print(json.dumps(r))' \
        "$work/one.json" "$embedder" "$work/rss" >> "$work/engine.jsonl"
    done
    for wait in lexical all; do
      rm -rf "$work/data"
      start=$(date +%s%N)
      "$loupe" --data-dir "$work/data" query --wait "$wait" "$corpus" "$question" > /dev/null 2> "$work/cli.err"
      end=$(date +%s%N)
      echo "{\"cli_wait\":\"$wait\",\"wall_ns\":$((end - start))}" >> "$work/cli.jsonl"
    done
  done
  python3 - "$corpus" "$work/engine.jsonl" "$work/cli.jsonl" <<'PY'
import json, statistics, sys
corpus = sys.argv[1]
med = lambda xs: statistics.median(xs)
engine = [json.loads(l) for l in open(sys.argv[2])]
cli = [json.loads(l) for l in open(sys.argv[3])]
code = [r for r in engine if r["embedder"] == "code"]
none = [r for r in engine if r["embedder"] == "none"]
print(f"\n{corpus}: {code[0]['files']} files, {code[0]['chunks']} chunks")
print(f"  engine (the app's path), vectors on: open {med([r['open_ms'] for r in code]):.0f} ms, "
      f"ready {med([r['ready_ms'] for r in code]):.0f} ms, first prompt {med([r['first_prompt_ms'] for r in code]):.0f} ms "
      f"(from the {code[0]['first_prompt_from']}; partial: {code[0]['first_prompt_partial']}), "
      f"prompt from the index {med([r['index_prompt_ms'] for r in code]):.0f} ms, "
      f"every signal {med([r['complete_ms'] for r in code]):.0f} ms, "
      f"peak RSS {med([r['rss_kb'] for r in code]) / 1024:.0f} MiB, "
      f"resident after the last answer {med([r['rss_after_kb'] for r in code]) / 1024:.0f} MiB")
print(f"  engine, vectors off: first prompt {med([r['first_prompt_ms'] for r in none]):.0f} ms, "
      f"complete {med([r['complete_ms'] for r in none]):.0f} ms")
ratio = med([a["complete_ms"] / b["complete_ms"] for a, b in zip(code, none)])
print(f"  full index with vectors / without (paired per run): {ratio:.2f}x")
for wait in ("lexical", "all"):
    walls = [r["wall_ns"] / 1e9 for r in cli if r["cli_wait"] == wait]
    print(f"  loupe query --wait {wait} (fresh): {med(walls):.2f} s wall")
PY
  rm -f "$work/engine.jsonl" "$work/cli.jsonl"
done
rm -rf "$work/data"
