#!/usr/bin/env bash
# Loupe side by side with Repomix, code2prompt and yek (issue 5) on the same
# real corpus as `make bench`: a `cargo vendor` of this workspace's
# dependency tree. Not part of `make test` or CI: it installs the peers.
#
# Peers come from package registries only, pinned, into target/peers/ (never
# globally, never into the repo tree): Repomix from npm, code2prompt and yek
# with `cargo install --locked`. A peer that cannot be installed is recorded
# and skipped. Every tool writes to a file (no clipboard) and runs without a
# network (`unshare -n` where the kernel allows it).
#
# Measured, RUNS times each, tools interleaved (the order rotates every
# round) so machine load falls on all alike; medians reported:
#   - time from nothing to a prompt. Loupe: cold `loupe index` into an empty
#     data dir + the first `loupe query`, vectors off (`--embedder none`,
#     lexical-ready). Also Loupe's first prompt on a folder it never
#     indexed: `loupe query --wait scan` into an empty data dir (a scan of
#     the files, issue 13). Peers: one pack run each (Repomix plain and
#     `--compress`, code2prompt, yek);
#     Also Loupe's full index with every signal (`loupe index`, the default
#     embedder, into an empty data dir: issue 13);
#   - the size of each output in o200k_base tokens, all counted by one
#     program (scripts/count-tokens, tiktoken-rs as in Loupe);
#   - then Loupe on the warm index: repeated `loupe query` (process start to
#     exit), the in-process query benchmark (question → assembly, knob
#     change) and the assembly benchmark.
# The 1-minute load average is logged with every measurement.
#
# Usage: scripts/bench-peers.sh [WORKDIR]   (default /tmp/loupe-peers)
#   RUNS=3          repetitions per tool
#   CORPUS=DIR      run on DIR instead of the vendor corpus (e.g. a subset)
#   QUESTION=...    the question Loupe is asked
#   SKIP_WARM=1     skip the warm-index measurements and cargo benches
#   TOOL_TIMEOUT=s  give up on one run after s seconds (default 3600)
#   SUMMARY_ONLY=1  only print the summary of what WORKDIR already holds
#   TOOLS="..."     only these (of loupe loupe_full loupe_scan repomix repomix_compress
#                   code2prompt yek), e.g. a quick round of two
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-corpus.sh

work=$(mkdir -p "${1:-/tmp/loupe-peers}" && readlink -f "${1:-/tmp/loupe-peers}")
runs=${RUNS:-3}
question=${QUESTION:-how does serde_json parse a floating point number?}
tool_timeout=${TOOL_TIMEOUT:-3600}
peers=$(mkdir -p target/peers && readlink -f target/peers)
REPOMIX_VERSION=1.18.1
CODE2PROMPT_VERSION=4.3.0
YEK_VERSION=0.25.5

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

if [ -z "${SUMMARY_ONLY:-}" ]; then

# --- Loupe, copied so a concurrent build of the shared target/ cannot swap
# the binary mid-run.
scripts/release-build.sh >&2
mkdir -p "$work/bin" "$work/out" "$work/logs"
cp target/release/loupe "$work/bin/loupe"
loupe="$work/bin/loupe"
rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates Cargo.lock Cargo.toml ||
  echo " + uncommitted changes in $(git diff --name-only HEAD -- crates Cargo.lock Cargo.toml | wc -l) files")"

# --- The token counter.
CARGO_TARGET_DIR="$peers/build" cargo build --release --locked \
  --manifest-path scripts/count-tokens/Cargo.toml >&2
count="$peers/build/release/count-tokens"

# --- The peers, pinned.
declare -A installed=()
install_log="$work/logs/install.log"
: > "$install_log"
repomix="$peers/repomix/node_modules/.bin/repomix"
if [ "$("$repomix" --version 2>/dev/null)" = "$REPOMIX_VERSION" ] ||
  npm install --prefix "$peers/repomix" --no-audit --no-fund "repomix@$REPOMIX_VERSION" >> "$install_log" 2>&1; then
  installed[repomix]=$("$repomix" --version)
else
  log "repomix: npm install failed (see $install_log); skipped"
fi
for spec in "code2prompt $CODE2PROMPT_VERSION" "yek $YEK_VERSION"; do
  read -r crate version <<< "$spec"
  bin="$peers/bin/$crate"
  if "$bin" --version 2>/dev/null | grep -qF "$version" ||
    cargo install --locked --root "$peers" "$crate" --version "$version" >> "$install_log" 2>&1; then
    installed[$crate]=$("$bin" --version | head -1)
  else
    log "$crate: cargo install failed (see $install_log); skipped"
  fi
done

# --- The corpus, read once so every tool starts on a warm page cache.
corpus=${CORPUS:-$(bench_corpus "$work/vendor")}
corpus=$(readlink -f "$corpus")
find "$corpus" -type f -print0 | xargs -0 cat > /dev/null

net=()
unshare -n true 2> /dev/null && net=(unshare -n)

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
  echo "loupe: $rev (release), --embedder none (loupe-full: the default embedder)"
  for t in "${!installed[@]}"; do echo "$t: ${installed[$t]}"; done
  echo "corpus: $corpus ($(find "$corpus" -type f | wc -l) files, $(($(du -sb "$corpus" | cut -f1) / 1048576)) MiB on disk)"
  echo "question: $question"
  echo "runs: $runs, interleaved; network: ${net[*]:-not isolated}"
} | tee "$work/meta.txt" >&2

# measure NAME ROUND STDOUT CMD...: one timed run, a row in runs.tsv
# (name, round, wall s, user s, sys s, peak RSS KiB, load before, load after, exit).
runs_tsv="$work/runs.tsv"
[ -s "$runs_tsv" ] || printf 'name\tround\twall\tuser\tsys\trss_kib\tload_before\tload_after\texit\n' > "$runs_tsv"
measure() {
  local name=$1 round=$2 stdout=$3 status=0 load
  shift 3
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" \
    timeout "$tool_timeout" "${net[@]}" "$@" > "$stdout" 2> "$work/logs/$name.$round.err" || status=$?
  read -r wall user sys rss < <(tail -1 "$work/time.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$wall" "$user" "$sys" "$rss" \
    "$load" "$(cut -d' ' -f1 /proc/loadavg)" "$status" >> "$runs_tsv"
  log "$name round $round: ${wall}s (load $load, exit $status)"
}

run_loupe() {
  rm -rf "$work/data"
  measure loupe-index "$1" "$work/out/loupe-index.json" \
    "$loupe" --data-dir "$work/data" --embedder none index --json "$corpus"
  measure loupe-query "$1" "$work/out/loupe.xml" \
    "$loupe" --data-dir "$work/data" --embedder none query "$corpus" "$question"
}
run_loupe_full() {
  # The full index, every signal (lexical, symbols and graph, history,
  # vectors from the default embedder), cold: issue 13's "full index".
  rm -rf "$work/data-full"
  measure loupe-full "$1" "$work/out/loupe-full.json" \
    "$loupe" --data-dir "$work/data-full" index --json "$corpus"
}
run_loupe_scan() {
  rm -rf "$work/data-scan"
  measure loupe-scan "$1" "$work/out/loupe-scan.xml" \
    "$loupe" --data-dir "$work/data-scan" --embedder none query --wait scan "$corpus" "$question"
}
run_repomix() {
  measure repomix "$1" "$work/logs/repomix.$1.out" "$repomix" --quiet --style xml \
    --output "$work/out/repomix.xml" "$corpus"
}
run_repomix_compress() {
  measure repomix-compress "$1" "$work/logs/repomix-compress.$1.out" "$repomix" --quiet --style xml --compress \
    --output "$work/out/repomix-compress.xml" "$corpus"
}
run_code2prompt() {
  measure code2prompt "$1" "$work/logs/code2prompt.$1.out" "$peers/bin/code2prompt" --quiet \
    --output-file "$work/out/code2prompt.md" "$corpus"
}
run_yek() {
  # yek writes to stdout when stdout is not a terminal.
  measure yek "$1" "$work/out/yek.txt" "$peers/bin/yek" "$corpus"
}

tools=(loupe loupe_full loupe_scan)
[ -n "${installed[repomix]:-}" ] && tools+=(repomix repomix_compress)
[ -n "${installed[code2prompt]:-}" ] && tools+=(code2prompt)
[ -n "${installed[yek]:-}" ] && tools+=(yek)
if [ -n "${TOOLS:-}" ]; then
  wanted=()
  for t in "${tools[@]}"; do [[ " $TOOLS " == *" $t "* ]] && wanted+=("$t"); done
  tools=("${wanted[@]}")
fi
n=${#tools[@]}
for ((round = 1; round <= runs; round++)); do
  for ((i = 0; i < n; i++)); do
    tool=${tools[$(((i + round - 1) % n))]}
    "run_$tool" "$round"
    # Bytes per run: the outputs must not change between rounds.
    for f in "$work"/out/*; do echo -e "$round\t$(stat -c %s "$f")\t$(basename "$f")"; done >> "$work/bytes.tsv"
  done
done

"$count" "$work"/out/loupe.xml "$work"/out/loupe-scan.xml "$work"/out/repomix*.xml "$work"/out/code2prompt.md \
  "$work"/out/yek.txt 2> /dev/null > "$work/tokens.txt" || true

# --- Loupe on the warm index left by the last round.
if [ -z "${SKIP_WARM:-}" ]; then
  load=$(cut -d' ' -f1 /proc/loadavg)
  hyperfine --style basic --warmup 1 --runs 10 --export-json "$work/warm-query.json" \
    "${net[*]} $loupe --data-dir $work/data --embedder none query $corpus '$question' > /dev/null" >&2
  echo "load before warm queries: $load, after: $(cut -d' ' -f1 /proc/loadavg)" > "$work/warm-load.txt"
  { echo "load before: $(cut -d' ' -f1 /proc/loadavg)"
    LOUPE_BENCH_CORPUS="$corpus" LOUPE_BENCH_DATA="$work/data" \
      cargo bench -p loupe-engine --bench query 2> /dev/null | grep -v '^$'
    echo "load after: $(cut -d' ' -f1 /proc/loadavg)"; } > "$work/query-bench.txt"
  { echo "load before: $(cut -d' ' -f1 /proc/loadavg)"
    cargo bench -p loupe-assemble 2> /dev/null | grep -Ev '^$|^running |^test '
    echo "load after: $(cut -d' ' -f1 /proc/loadavg)"; } > "$work/assemble-bench.txt"
fi

fi

python3 - "$work" <<'PY'
import json, os, statistics, sys
work = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open(f"{work}/runs.tsv")][1:]
by = {}
for name, rnd, wall, user, sys_, rss, lb, la, status in rows:
    by.setdefault(name, []).append((float(wall), int(rss), float(lb), int(status), int(rnd)))
# Loupe's time to a prompt is index + query of the same round.
if "loupe-index" in by and "loupe-query" in by:
    q = {r[4]: r for r in by["loupe-query"]}
    by["loupe"] = [(i[0] + q[i[4]][0], max(i[1], q[i[4]][1]), i[2], i[3] or q[i[4]][3], i[4])
                   for i in by["loupe-index"] if i[4] in q]
tokens = {}
if os.path.exists(f"{work}/tokens.txt"):
    for line in open(f"{work}/tokens.txt"):
        t, b, path = line.split(maxsplit=2)
        tokens[os.path.basename(path.strip()).split(".")[0]] = (int(t), int(b))
med = lambda xs: statistics.median(xs)
print(open(f"{work}/meta.txt").read().rstrip())
print()
print("| tool | runs | time to a prompt, median (all runs) | peak RSS | load during | output tokens (o200k) | output bytes | failures |")
print("|---|---|---|---|---|---|---|---|")
order = ["loupe", "loupe-index", "loupe-query", "loupe-full", "loupe-scan", "repomix", "repomix-compress", "code2prompt", "yek"]
for name in order:
    if name not in by:
        continue
    rs = by[name]; ok = [r for r in rs if r[3] == 0]
    walls = ", ".join(f"{r[0]:.1f}" for r in rs)
    t = med([r[0] for r in ok]) if ok else float("nan")
    tok = tokens.get(name, (None, None))
    print(f"| {name} | {len(rs)} | {t:.2f} s ({walls}) | {max(r[1] for r in rs) / 1024:.0f} MiB "
          f"| {min(r[2] for r in rs):.1f}–{max(r[2] for r in rs):.1f} "
          f"| {tok[0] if tok[0] is not None else '—'} | {tok[1] if tok[1] is not None else '—'} "
          f"| {len(rs) - len(ok)} |")
print()
scan = [r[0] for r in by.get("loupe-scan", []) if r[3] == 0]
peer = [r[0] for r in by.get("code2prompt", []) if r[3] == 0]
if scan and peer:
    ratio = med(scan) / med(peer)
    print(f"Loupe first prompt from a scan (--wait scan) / code2prompt: time {ratio:.3f}x")
    print(f"  target (issue 13): <= 0.5 x code2prompt: {'met' if ratio <= 0.5 else 'not met'}")
full = [r[0] for r in by.get("loupe-full", []) if r[3] == 0]
if full and peer:
    ratio = med(full) / med(peer)
    print(f"Loupe full index, every signal / code2prompt: time {ratio:.2f}x")
    print(f"  target (issue 13): <= 1 x code2prompt: {'met' if ratio <= 1 else 'not met'}")
if "loupe" in by:
    lt = med([r[0] for r in by["loupe"] if r[3] == 0] or [float("nan")])
    ltok = tokens.get("loupe", (None,))[0]
    for peer in ["repomix", "repomix-compress", "code2prompt", "yek"]:
        ok = [r[0] for r in by.get(peer, []) if r[3] == 0]
        if not ok:
            continue
        pt = med(ok); ptok = tokens.get(peer, (None,))[0]
        tr = f"{ltok / ptok:.2e} (1/{ptok / ltok:,.0f})" if ltok and ptok else "—"
        print(f"Loupe / {peer}: time {lt / pt:.2f}x, tokens {tr}")
        target = {"repomix-compress": 0.5, "code2prompt": 1.0}.get(peer)
        if target is not None:
            verdict = "met" if lt / pt <= target else "not met"
            print(f"  target (issue 5): Loupe time to a prompt <= {target} x {peer}: {verdict}")
    try:
        rep = json.load(open(f"{work}/out/loupe-index.json"))
        print(f"Loupe index: {rep['files_changed']} files, {rep['chunks_added']} chunks; "
              f"bundled embedder at 94 chunks/s (BENCHMARKS.md, idle) would add "
              f"~{rep['chunks_added'] / 94:.0f} s ({rep['chunks_added'] / 94 / 60:.0f} min)")
    except Exception as e:
        print(f"(no index report: {e})")
if os.path.exists(f"{work}/warm-query.json"):
    r = json.load(open(f"{work}/warm-query.json"))["results"][0]
    print(f"warm `loupe query` (process start to exit, 10 runs): median {r['median']:.3f} s, "
          f"min {r['min']:.3f}, max {r['max']:.3f}; " + open(f"{work}/warm-load.txt").read().strip())
PY
