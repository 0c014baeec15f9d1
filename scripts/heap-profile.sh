#!/usr/bin/env bash
# What the idle engine's heap holds, by allocation site (issue 13): a
# jemalloc heap profile of examples/first_prompt.rs (open PROJECT on
# DATA_DIR, index it, ask, idle 15 s) taken as it exits with everything
# still held. An empty DATA_DIR profiles a first index; one that holds
# PROJECT's index, a reopen. Run both and compare.
#
# Usage: scripts/heap-profile.sh PROJECT DATA_DIR [OUT_PREFIX]
# Prints the first_prompt JSON line, then the live heap grouped by the
# innermost frames of Loupe or the libraries it calls. Leaves
# OUT_PREFIX.*.heap (jemalloc's dump) and OUT_PREFIX.collapsed.
#
# The build has jemalloc's profiler compiled in (`--features
# loupe-engine/heap-profile`), so it rebuilds jemalloc and the engine, and
# the next ordinary build rebuilds them back. `jeprof` is the script in
# the tikv-jemalloc-sys crate's sources, its two placeholders filled in.
set -euo pipefail
cd "$(dirname "$0")/.."
project=${1:?usage: scripts/heap-profile.sh PROJECT DATA_DIR [OUT_PREFIX]}
data=${2:?usage: scripts/heap-profile.sh PROJECT DATA_DIR [OUT_PREFIX]}
out=${3:-$(mktemp -d /tmp/loupe-heap.XXXXXX)/heap}
question=${QUESTION:-how does serde_json parse a floating point number?}

FEATURES=loupe-engine/heap-profile scripts/release-build.sh --example first_prompt >&2
bin=./target/release/examples/first_prompt
sys=$(cargo metadata --format-version 1 | python3 -c '
import json, sys
meta = json.load(sys.stdin)
print(next(p["manifest_path"] for p in meta["packages"] if p["name"] == "tikv-jemalloc-sys"))')
jeprof=$(dirname "$out")/jeprof
sed 's/@jemalloc_version@/5.3.0/; s/@JEMALLOC_PREFIX@//' \
  "$(dirname "$sys")/jemalloc/bin/jeprof.in" > "$jeprof"
chmod +x "$jeprof"

rm -f "$out".*.heap
MALLOC_CONF="prof:true,prof_final:true,lg_prof_sample:17,prof_prefix:$out" \
  "$bin" "$project" "$data" code "$question"
dump=$(ls "$out".*.heap)
"$jeprof" --collapsed --inuse_space "$bin" "$dump" 2>/dev/null > "$out.collapsed"
python3 - "$out.collapsed" <<'EOF'
import collections, re, sys
ours = ('loupe', 'tantivy', 'sqlx', 'sqlite3', 'tree_sitter', 'regex', 'rayon')
sites, total = collections.Counter(), 0.0
for line in open(sys.argv[1]):
    stack, _, size = line.rstrip().rpartition(' ')
    frames = [re.sub(r'<[0-9a-f]{16}>', '', f) for f in stack.split(';')]
    named = [f for f in frames if any(o in f for o in ours)]
    sites[' <- '.join(reversed(named[-3:])) if named else frames[-1]] += float(size)
    total += float(size)
print(f'live heap {total / 1e6:.1f} MB; largest sites (MB):')
for site, size in sites.most_common(20):
    print(f'{size / 1e6:8.1f}  {site[:200]}')
EOF
