#!/usr/bin/env bash
# The one release build every make target and script uses (make run, cli,
# package, train, bench-*, scripts/*.sh): the CLI and the app in one cargo
# invocation over one feature set, so a dependency compiled for one is
# never compiled again for another. Extra arguments are cargo's (e.g.
# `--example first_prompt`, with -p loupe-engine already selected) and
# FEATURES adds features (e.g. FEATURES=loupe-engine/minilm for the MiniLM
# embedders; such a build then differs, by design).
set -euo pipefail
cd "$(dirname "$0")/.."
features=loupe-app/custom-protocol${FEATURES:+,$FEATURES}
# Debian's jemalloc, as the Makefile sets it (so a script run on its own
# does not rebuild the allocator and everything above it).
export JEMALLOC_OVERRIDE=${JEMALLOC_OVERRIDE-/usr/lib/$(gcc -print-multiarch)/libjemalloc_pic.a}
# The app serves ui/dist from the binary (custom-protocol): it must exist.
[ -f ui/dist/index.html ] || make --no-print-directory ui-dist >&2
exec "${CARGO:-cargo}" build --release -p loupe-cli -p loupe-app -p loupe-engine \
  --features "$features" --bins "$@"
