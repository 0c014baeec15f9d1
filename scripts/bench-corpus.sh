# Sourced by the benchmark scripts: the real corpus they all run on, a
# `cargo vendor --locked` of this workspace's own dependency tree (it exists
# on any machine that can build Loupe, and needs no network once the
# dependencies are in ~/.cargo).
#
# bench_corpus DIR  vendors into DIR unless it is already there (a failed
#                   vendor leaves nothing behind) and prints DIR's absolute path.
bench_corpus() {
  local dir=$1
  if [ ! -d "$dir" ]; then
    rm -rf "$dir.partial"
    cargo vendor --locked "$dir.partial" >/dev/null 2>&1 || return 1
    mv "$dir.partial" "$dir" || return 1
  fi
  readlink -f "$dir"
}
