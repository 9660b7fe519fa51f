# kz build, test and benchmark targets. `make test` is what CI runs.
GO       ?= go
BIN      ?= bin/kz
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
GOLANGCI := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

.PHONY: build run test bench bench-process bench-stream bench-forks lint fuzz e2e clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

run: build
	./$(BIN) $(ARGS)

# The whole suite, with the race detector. CI runs exactly this. The real
# agent CLIs the integration tests drive are installed first (pinned, into
# ~/.cache/kz; a no-op once there). Each install is its own assignment, so
# that a script that fails stops make test with its name: inside a
# variable prefix of the go command its exit status would be lost, and the
# tests would run (and skip) without the CLI.
test:
	$(GO) vet ./...
	@claude="$$(sh runtimes/claudecode/install-cli.sh)" || { echo "make test: the pinned Claude Code CLI could not be installed (runtimes/claudecode/install-cli.sh failed, see above)" >&2; exit 1; }; \
	codex="$$(sh runtimes/codex/install-cli.sh $$HOME/.cache/kz/codex)" || { echo "make test: the pinned Codex CLI could not be installed (runtimes/codex/install-cli.sh failed, see above)" >&2; exit 1; }; \
	gemini="$$(sh runtimes/acp/install-gemini.sh $$HOME/.cache/kz/gemini-cli)" || { echo "make test: the pinned Gemini CLI could not be installed (runtimes/acp/install-gemini.sh failed, see above)" >&2; exit 1; }; \
	echo "KZ_CLAUDE_BIN=$$claude KZ_CODEX_BIN=$$codex KZ_GEMINI_BIN=$$gemini $(GO) test -race -count=1 -timeout 20m ./..."; \
	KZ_CLAUDE_BIN="$$claude" KZ_CODEX_BIN="$$codex" KZ_GEMINI_BIN="$$gemini" \
	$(GO) test -race -count=1 -timeout 20m ./...

# Speed and memory targets live in Go benchmarks, never in timed tests.
# The BenchmarkProcess* ones time the release binary (built as by build).
bench: build
	KZ_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./...

# Whole-process timings only: kz version, the scripted hello kz -p and the
# TUI's first frame on a pty, each as the median of 50 runs, how late
# streamed words reach the screen (BenchmarkProcessTextLag) and how soon
# kz's own loop shows the model's first words in a repository of 10,000
# files (BenchmarkProcessFirstToken); then
# claude -p and codex exec alone (its native binary, and the Node launcher
# npm puts on PATH) against kz -p driving them, interleaved, on a text turn
# and a turn with one shell call, 10 rounds each
# (BenchmarkCLIOverhead says what each figure includes). The pinned CLIs
# are installed first, as for test. The stream and PgUp benchmarks
# (BenchmarkProcessStream, BenchmarkProcessPageUp) are bench-stream's: at
# 50 runs they would take hours.
bench-process: build
	KZ_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench '^BenchmarkProcess[^SP]' -benchtime 50x -timeout 60m ./internal/cli/
	@claude="$$(sh runtimes/claudecode/install-cli.sh)" || exit 1; \
	codex="$$(sh runtimes/codex/install-cli.sh $$HOME/.cache/kz/codex)" || exit 1; \
	KZ_CLAUDE_BIN="$$claude" KZ_CODEX_BIN="$$codex" KZ_CODEX_LAUNCHER="$$HOME/.cache/kz/codex/node_modules/.bin/codex" KZ_BIN=$(CURDIR)/$(BIN) \
	$(GO) test -run '^$$' -bench '^BenchmarkCLIOverhead' -benchtime 10x -timeout 60m ./internal/cli/

# The TUI under load, as whole processes on a pty (terminal diffing
# included): a 200 KB markdown answer streamed in 20,000 deltas 1 ms apart
# against the same answer as one message (CPU seconds and peak RSS from
# kz's rusage), and PgUp through a resumed 1,000-turn session (latency to
# the screen settling, peak RSS). 10 runs each; see
# internal/cli/process_stream_bench_test.go for how each figure is taken.
bench-stream: build
	KZ_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench '^BenchmarkProcess(Stream|PageUp)$$' -benchtime 10x -timeout 60m ./internal/cli/

# What each fork in third_party/ saves at start: kz version and the first
# frame, built with every fork and without each, the builds run in turn for
# 20 rounds (third_party/forks_bench_test.go). The first run downloads the
# upstream modules.
bench-forks:
	KZ_BENCH_FORKS=1 $(GO) test -run '^$$' -bench '^BenchmarkForks' -benchtime 20x -timeout 60m ./third_party/

# Short fuzz runs of every proposal parser, the one unified-diff reader
# (internal/diff), the shell analyser and the gate: parsing and judging
# must never panic. A fixed count (not a duration) avoids the fuzzer's
# end-of-time race.
FUZZ_RUNS ?= 150000x
fuzz:
	for t in FuzzParseSearchReplace FuzzParseEnvelope FuzzParseUnified FuzzParseWholeFile FuzzParseAuto FuzzValidate; do \
		$(GO) test -run '^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZ_RUNS) -timeout 5m ./patch/ || exit 1; \
	done
	$(GO) test -run '^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZ_RUNS) -timeout 5m ./internal/diff/
	$(GO) test -run '^$$' -fuzz='^FuzzAnalyze$$' -fuzztime=$(FUZZ_RUNS) -timeout 5m ./tools/shell/
	$(GO) test -run '^$$' -fuzz='^FuzzGate$$' -fuzztime=100000x -timeout 5m ./tools/permission/

lint:
	$(GO) vet ./...
	$(GO) run $(GOLANGCI) run ./...

# The tmux tests; the per-runtime scenario drives the real CLIs, installed
# first as for test.
e2e: build
	KZ_CLAUDE_BIN="$$(sh runtimes/claudecode/install-cli.sh)" \
	KZ_CODEX_BIN="$$(sh runtimes/codex/install-cli.sh $$HOME/.cache/kz/codex)" \
	KZ_GEMINI_BIN="$$(sh runtimes/acp/install-gemini.sh $$HOME/.cache/kz/gemini-cli)" \
	KZ_E2E=1 KZ_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 20m -run E2E ./tui/...

clean:
	rm -rf bin
