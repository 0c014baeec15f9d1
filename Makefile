# Loupe — one entry point for building, running, testing and benchmarking.
#
#   make run    build and start Loupe (for now the CLI: index + status of PROJECT)
#   make test   install what is missing, then run every check and test
#   make bench  indexing benchmark on a `cargo vendor` corpus (not part of test)
#
# Everything installs from Debian's packages and crates.io only.

SHELL := /bin/bash
CARGO ?= cargo
PROJECT ?= .
export CARGO_TERM_COLOR ?= never

APT_PACKAGES := build-essential pkg-config git
STAMP_DIR := target/.stamps

.PHONY: run test deps lint unit bench fmt clippy

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

run: deps
	$(CARGO) build --release -p loupe-cli
	./target/release/loupe index "$(PROJECT)"
	./target/release/loupe status "$(PROJECT)"

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

lint: fmt clippy

unit:
	$(CARGO) test --workspace

test: deps lint unit

bench: deps
	@command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	scripts/bench-index.sh
