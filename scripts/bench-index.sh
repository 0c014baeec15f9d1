#!/usr/bin/env bash
# Indexing benchmark on real code that exists on any fresh machine: a
# `cargo vendor` of this workspace's own dependency tree.
#
# Prints, for the release `loupe` binary: cold lexical-ready throughput
# (files/s, MB/s, chunks/s), the parse share of it, peak RSS, a no-change
# re-index, a one-file change, and embedding throughput of the bundled model
# on a slice of the corpus. Usage: scripts/bench-index.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d /tmp/loupe-bench.XXXXXX)}
data="$work/data"
loupe=./target/release/loupe
. scripts/bench-corpus.sh

scripts/release-build.sh >&2
corpus=$(bench_corpus "$work/vendor")
rm -rf "$data"

bytes=$(du -sb "$corpus" | cut -f1)
echo "corpus: $corpus ($(find "$corpus" -type f | wc -l) files, $((bytes / 1048576)) MiB on disk)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"

/usr/bin/time -f '%e %M' -o "$work/time.txt" \
  "$loupe" --data-dir "$data" --embedder none index --json "$corpus" > "$work/cold.json"
read -r wall rss < "$work/time.txt"
python3 - "$work/cold.json" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); wall = float(sys.argv[2]); rss = int(sys.argv[3])
t = r["times"]; secs = lambda d: d["secs"] + d["nanos"] / 1e9
parse = secs(t["parse"]); walk = secs(t["walk"])
catalog = secs(t["catalog"]); lexical = secs(t["lexical"]); commit = catalog + lexical
files = r["files_changed"]; chunks = r["chunks_added"]
print(f"cold lexical-ready: {wall:.1f} s wall; walk {walk:.1f} s, parse {parse:.1f} s, "
      f"catalog {catalog:.1f} s, lexical {lexical:.1f} s")
print(f"  {files} files, {chunks} chunks: {files / wall:.0f} files/s, {chunks / wall:.0f} chunks/s")
print(f"  pipeline / parse time: {(walk + parse + commit) / parse:.2f}x")
print(f"  peak RSS: {rss / 1024:.0f} MiB")
PY

start=$(date +%s.%N)
"$loupe" --data-dir "$data" --embedder none index "$corpus" > /dev/null 2>&1
echo "no-change re-index: $(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')") s (process start to exit)"

victim=$(find "$corpus" -name lib.rs -print -quit)
echo "// loupe bench edit $(date +%s%N)" >> "$victim"
start=$(date +%s.%N)
"$loupe" --data-dir "$data" --embedder none index "$corpus" > /dev/null 2>&1
echo "one-file change re-index: $(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')") s (process start to exit)"

# Question → assembly, knob change, and one-file change → searchable, in
# process, on the index just built (vectors off).
LOUPE_BENCH_CORPUS="$corpus" LOUPE_BENCH_DATA="$data" \
  cargo bench -p loupe-engine --bench query 2>/dev/null | grep -v '^$'

# Embedding throughput on a slice: the bundled model is the slow stage.
slice="$work/slice"
rm -rf "$slice" && mkdir -p "$slice"
for c in serde indexmap regex-syntax; do
  d=$(find "$corpus" -maxdepth 1 -name "$c*" -print -quit); [ -n "$d" ] && cp -r "$d" "$slice/"
done
"$loupe" --data-dir "$work/slice-data" --embedder bundled index --json "$slice" > "$work/embed.json" 2>/dev/null
python3 - "$work/embed.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); t = r["times"]
e = t["embed"]["secs"] + t["embed"]["nanos"] / 1e9
n = r["chunks_embedded"]
print(f"embedding (bundled MiniLM-L3, both cores): {n} chunks in {e:.1f} s = {n / max(e, 1e-9):.0f} chunks/s")
PY

# Where the time goes before any store: parse only vs chunker vs counting.
LOUPE_BENCH_CORPUS="$corpus" cargo bench -p loupe-engine --bench parse 2>/dev/null | grep -v '^$'
