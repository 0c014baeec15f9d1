#!/usr/bin/env bash
# The team's shared store on the vendor corpus (BENCHMARKS.md, "The shared
# store"): a throwaway PostgreSQL cluster on loopback (Debian's server, as
# the tests use it), then, RUNS times each, side by side:
#   cold   a full index (code vectors on), fresh data dir, no store;
#   push   the same with an empty store: what pushing costs the first member;
#   pull   a second checkout at another path, fresh data dir, warm store.
#   mcp    an agent's sandbox: `loupe mcp` on a fresh data dir until its
#          first `context` call is answered with every signal ready, without
#          the store and with it warm (tools/bench/mcp_first_context.py).
# Prints each run's wall time, stage times and what came from the store,
# then the medians, the pull/cold ratios and the store's size.
# Usage: scripts/bench-shared.sh [WORKDIR] (RUNS=3 by default).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d /tmp/loupe-bench-shared.XXXXXX)}
runs=${RUNS:-3}
loupe=$PWD/target/release/loupe
. scripts/bench-corpus.sh

scripts/release-build.sh >&2
corpus=$(bench_corpus "$work/vendor")
# The second checkout: the same files at another path.
other="$work/other-checkout"
[ -d "$other" ] || cp -r "$corpus" "$other"

# The server: the newest installed, run as `postgres` when we are root.
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
pgdir="$work/pg"
rm -rf "$pgdir" && mkdir -p "$pgdir"
[ "$(id -u)" = 0 ] && chown postgres "$pgdir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$pgdir" && "${as_pg[@]}" "$bin/initdb" -D "$pgdir/data" -A trust -U loupe --no-sync >/dev/null)
(cd "$pgdir" && "${as_pg[@]}" "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
  -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" start >/dev/null)
stop_pg() { (cd "$pgdir" && "${as_pg[@]}" "$bin/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1) || true; }
trap stop_pg EXIT
psql() { "$bin/psql" -h 127.0.0.1 -p "$port" -U loupe -At "$@"; }

echo "corpus: $corpus ($(find "$corpus" -type f | wc -l) files)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "server: $("$bin/postgres" --version), loopback"

# run NAME FOLDER [LOUPE ARGS...]: one index in a fresh data dir; prints a line.
run() {
  local name=$1 folder=$2; shift 2
  local data="$work/data-$name"
  rm -rf "$data"
  local start end
  start=$(date +%s.%N)
  "$loupe" --data-dir "$data" --no-history "$@" index --json "$folder" > "$work/$name.json"
  end=$(date +%s.%N)
  python3 - "$work/$name.json" "$name" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); name = sys.argv[2]
wall = float(sys.argv[4]) - float(sys.argv[3])
t = r["times"]; secs = lambda d: d["secs"] + d["nanos"] / 1e9
stages = ", ".join(f"{k} {secs(t[k]):.1f}" for k in ["walk", "parse", "catalog", "lexical", "embed", "vectors"])
s = r.get("shared") or {}
shared = (f"; pulled {s.get('files_pulled', 0)} files {s.get('vectors_pulled', 0)} vectors, "
          f"pushed {s.get('files_pushed', 0)} files {s.get('vectors_pushed', 0)} vectors"
          f"{', FAULT ' + s['fault'] if s.get('fault') else ''}") if s else ""
print(f"{name:5} {wall:6.1f} s  ({stages}){shared}", flush=True)
with open(sys.argv[1] + ".wall", "w") as f:
    f.write(f"{wall}\n")
PY
  cat "$work/$name.json.wall" >> "$work/$name.walls"
}

rm -f "$work"/*.walls "$work"/mcp-*.jsonl
for i in $(seq "$runs"); do
  echo "-- round $i"
  run cold "$corpus"
  psql -d postgres -c "DROP DATABASE IF EXISTS team" -c "CREATE DATABASE team" >/dev/null
  url="postgres://loupe@127.0.0.1:$port/team"
  run push "$corpus" --shared "$url"
  run pull "$other" --shared "$url"
done

# An agent's sandbox: `loupe mcp` on a fresh data dir, its first `context`
# call once every signal is ready; without the store, then with it warm.
question="how does the index writer commit a segment?"
for i in $(seq "$runs"); do
  for side in cold pull; do
    rm -rf "$work/data-mcp"
    args=(); folder=$corpus
    [ "$side" = pull ] && args=(--shared "$url") && folder=$other
    python3 tools/bench/mcp_first_context.py "$loupe" "$folder" "$work/data-mcp" "$question" "${args[@]}" \
      | tee -a "$work/mcp-$side.jsonl" | sed "s/^/mcp-$side /"
  done
done

python3 - "$work" <<'PY'
import json, statistics, sys
w = sys.argv[1]
med = {n: statistics.median(float(x) for x in open(f"{w}/{n}.walls")) for n in ["cold", "push", "pull"]}
print(f"medians: cold {med['cold']:.1f} s, push {med['push']:.1f} s ({med['push'] / med['cold']:.2f}x), "
      f"pull {med['pull']:.1f} s ({med['pull'] / med['cold']:.2f}x of cold)")
mcp = {s: statistics.median(json.loads(l)["answered_s"] for l in open(f"{w}/mcp-{s}.jsonl")) for s in ["cold", "pull"]}
print(f"mcp first context, every signal ready: cold {mcp['cold']:.1f} s, warm store {mcp['pull']:.1f} s "
      f"({mcp['pull'] / mcp['cold']:.2f}x)")
PY
echo "store: $(psql -d team -c "SELECT pg_size_pretty(pg_database_size('team'))") on disk; rows:"
psql -d team -c "SELECT 'parses', count(*), pg_size_pretty(sum(octet_length(payload))) FROM loupe_parses UNION ALL SELECT 'vectors', count(*), pg_size_pretty(sum(octet_length(vector))) FROM loupe_vectors"
