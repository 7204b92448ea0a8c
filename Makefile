# mcpx: `make run` and `make test` are the two commands; see README.md.

GO    ?= go
GOFMT ?= $(shell $(GO) env GOROOT)/bin/gofmt

.PHONY: schemas generate build test vet fmt fmt-check fresh no-binaries bench bench-gateway bench-ab run conformance everything fuzz load

# Fetch the pinned JSON Schemas (from ../shared/spec or $$MCPX_SCHEMA_MIRROR
# when present, else the pinned URLs) and check their sha256.
schemas:
	$(GO) run ./schemas/fetch

generate: schemas
	$(GO) generate ./...

build:
	$(GO) build -o bin/ ./cmd/...

# The reference server the gateway tests front (runtime/gatewaytest,
# TestEverything), from npm, into .tools/everything; skipped without npm
# (the test then skips too, except in CI, where it fails).
EVERYTHING_VERSION ?= 2026.8.31
everything:
	@if [ -f .tools/everything/node_modules/@modelcontextprotocol/server-everything/package.json ]; then :; \
	elif command -v npm >/dev/null 2>&1; then \
		npm install --prefix .tools/everything --no-audit --no-fund @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION); \
	else echo "everything: npm not found; TestEverything will be skipped"; fi

# Every test: no binary tracked, vet, formatting, unit tests under the race
# detector, the tests that count allocations without it (the race detector
# makes sync.Pool drop items, so they are built only with `!race`), a
# bounded fuzzing run, then generated/ must be current.
test: schemas everything
	@./scripts/no-binaries
	$(GO) vet ./...
	@$(MAKE) --no-print-directory fmt-check
	$(GO) test -race ./...
	$(GO) test -run '^TestMetricsAllocations$$' ./bench/
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory fresh

# The HTTP request path fuzzed (headers and body together) for FUZZTIME;
# `go test` alone runs only its seeds. A failing input is written to
# runtime/transport/streamhttp/testdata/fuzz/FuzzPost: commit it with the fix.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzPost$$' -fuzztime $(FUZZTIME) ./runtime/transport/streamhttp/

vet:
	$(GO) vet ./...

# Go files git would track (ignored and testdata files left alone).
GOFILES = git ls-files -z --cached --others --exclude-standard -- '*.go' ':!:**/testdata/**'

fmt:
	@$(GOFILES) | xargs -0r $(GOFMT) -l -w

fmt-check:
	@out=$$($(GOFILES) | xargs -0r $(GOFMT) -l) || exit 1; \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files are not formatted (run \`make fmt\`):"; echo "$$out"; exit 1; \
	fi

# Git must track no executable binary (a build output committed by mistake).
no-binaries:
	@./scripts/no-binaries

# Regenerating must not change generated/ or add files to it.
fresh:
	$(GO) generate ./...
	@git diff --exit-code --stat -- generated/ || { \
		echo "generated/ is stale: run \`make generate\` and commit the result"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- generated/); \
	if [ -n "$$untracked" ]; then \
		echo "generated/ has untracked files:"; echo "$$untracked"; \
		echo "run \`make generate\` and commit the result"; exit 1; \
	fi

# The official MCP conformance suite against `mcpx serve --config` fronting
# the fixture, at every revision of the generated tables the suite knows
# (conformance/revisions; `conformance/run.sh --plan` shows which and why),
# checked against conformance/expected-failures-<rev>.yml. The first run installs Node.js 22
# and the suite with npm into .tools/conformance (see conformance/run.sh).
conformance:
	GO="$(GO)" bash conformance/run.sh

bench:
	@pkgs=$$($(GO) list ./generated/... ./runtime/... ./bench/ 2>/dev/null); \
	if [ -z "$$pkgs" ]; then echo "bench: no packages under generated/ or runtime/ yet"; \
	else $(GO) test -run='^$$' -bench=. -benchmem $$pkgs; fi

# The load run (bench/load_test.go, BENCHMARKS.md "Load and leaks"):
# LOAD_CLIENTS clients of the five revisions against `mcpx serve` in front
# of mcpx-fixture (HTTP) and the Go SDK's server (stdio) for LOAD_DURATION,
# a tenth of them closing connections mid-call; every reply checked, then
# goroutines and open files back to the baseline. `make test` runs it short.
LOAD_CLIENTS  ?= 1000
LOAD_DURATION ?= 60s
LOAD_IDLEWAIT ?= 100s
load:
	$(GO) test -count=1 -timeout 30m -run '^TestLoad$$' -v ./bench/ \
		-args -load.clients=$(LOAD_CLIENTS) -load.duration=$(LOAD_DURATION) -load.idlewait=$(LOAD_IDLEWAIT)

# Issue 17's targets table (BENCHMARKS.md, "Issue 17"): BENCH_RUNS runs of
# the gateway benchmarks it reads (procs at c=32, oneproc at c=1, 64 kB
# echoed through processes, a 1 MB result and the small call in memory),
# raw output in BENCH_OUT, then the table, each ratio within its run;
# BENCH_TIME is each benchmark's -test.benchtime (longer runs swing less).
BENCH_RUNS ?= 5
BENCH_TIME ?= 1s
BENCH_OUT  ?= /tmp/mcpx-bench-gateway.txt
bench-gateway:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) test -c -o "$$dir/bench.test" ./bench/ && \
	$(GO) build -o "$$dir/gwtable" ./bench/gwtable && \
	cd bench && for i in $$(seq $(BENCH_RUNS)); do \
		echo "=== run $$i ($$(cut -d' ' -f1-3 /proc/loadavg) load)"; \
		"$$dir/bench.test" -test.run='^$$' -test.bench='^BenchmarkGateway$$/procs/./c32/' -test.benchtime=$(BENCH_TIME) || exit 1; \
		"$$dir/bench.test" -test.run='^$$' -test.bench='^BenchmarkGateway$$/oneproc/./c1/' -test.benchtime=$(BENCH_TIME) || exit 1; \
		"$$dir/bench.test" -test.run='^$$' -test.bench='^BenchmarkGateway(Large|Result|Work|WorkLarge)$$' -test.benchmem -test.benchtime=$(BENCH_TIME) || exit 1; \
	done > $(BENCH_OUT) && "$$dir/gwtable" < $(BENCH_OUT)

# An A/B of two commits on this machine (scripts/bench-ab): each side's
# gateway benchmarks built in its own worktree, run in alternated pairs,
# issue 17's figures side by side. BASE is a commit; NEW a commit or "."
# (the working tree); AB_PAIRS, AB_BENCH, AB_TIME, AB_OUT as the script says.
BASE ?= HEAD~1
NEW  ?= HEAD
bench-ab:
	scripts/bench-ab $(BASE) $(NEW)

# mcpx on its built-in demo namespace: Streamable HTTP at
# http://127.0.0.1:7777/mcp until Ctrl-C.
run:
	$(GO) run ./cmd/mcpx serve
