# tuttid: `make run` starts the server, `make test` runs every test.
# Both install the pinned Codex app-server into .tools/ first (npm).

CODEX_VERSION := 0.169.0
CODEX_LOCAL   := $(CURDIR)/.tools/codex/node_modules/.bin/codex
CODEX_BIN     ?= $(CODEX_LOCAL)
# The newest published Codex: CI runs the packages that talk to Codex on it
# too (make test-newest), so a protocol change shows before tuttid moves.
CODEX_NEWEST_VERSION := 0.171.0
CODEX_NEWEST_LOCAL   := $(CURDIR)/.tools/codex-$(CODEX_NEWEST_VERSION)/node_modules/.bin/codex
CODEX_PACKAGES       := ./codex/... ./server/
GO            ?= go
TEST_FLAGS    ?= -count=1 -timeout 30m
# go test through tools/testreport: each package as it starts and ends, the
# packages still running every minute, failed tests' output, a summary line.
GO_TEST       := $(GO) run ./tools/testreport

# A count, not a duration: go1.26's fuzz coordinator can fail a duration run
# with a bare "context deadline exceeded" when a starved worker misses the
# deadline (golang/go#75804, fixed in go1.27); a count has no deadline.
FUZZ_TIME     ?= 30000x
UI_DIR        := web/ui
CHROMIUM_BIN  ?= /usr/bin/chromium

.PHONY: run test test-postgres test-newest tools tools-newest generate vet bench fuzz gui

run: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) run . $(ARGS)

test: tools
	CODEX_BIN=$(CODEX_BIN) $(GO_TEST) $(TEST_FLAGS) ./...
	@test -x "$(CHROMIUM_BIN)" || { echo; \
	  echo "!!! THE BROWSER TESTS DID NOT RUN: no Chromium at $(CHROMIUM_BIN)."; \
	  echo "!!! Install it (Debian: apt-get install -y chromium) or set CHROMIUM_BIN, then run make test again."; }

# The packages whose SQL differs by backend, and graph (through storetest),
# again with every test database on PostgreSQL (TUTTID_TEST_DB=postgres: a
# throwaway cluster per test binary, store/pgtest, or the server
# TUTTID_TEST_POSTGRES names). The
# skipped tests inject faults with SQLite's own machinery (RAISE triggers,
# PRAGMA, BEGIN IMMEDIATE) until they use storetest.FailWrites and
# storetest.WriteLockFree; TestReconcileReadsOnlyWhatWasInProgress's
# counterpart is TestPostgresReconcileUsesPartialIndexes;
# TestReconcileSettlesUnfinishedEntries compares a nanosecond time it wrote
# with the one read back (PostgreSQL keeps microseconds).
PG_PACKAGES := ./store/... ./session/ ./sessionread/ ./fork/ ./lineage/ ./graph/ ./instance/ ./forward/ ./server/
PG_SKIP     := ^(TestReconcileReadsOnlyWhatWasInProgress|TestIngestRetriesFailedWrite|TestIngestFailsTurnWhenWritesKeepFailing|TestForkWritesWhileTheProviderSends|TestForkJournalWriteFailsBeforeProvider|TestForkJournalRecordsEachEnding|TestForkPublishesNothingOnFailure|TestForkPersistenceFailureRollsBackAndLogsOrphan|TestReconcileSettlesUnfinishedEntries|TestTurnThatLostAnEventIsReadAgainAtItsEnd|TestSendStartedButNotStoredAnswersTheTurn|TestRefusedSendReleasesTheSessionWhenTheDiskIsBack)$$
test-postgres: tools
	CODEX_BIN=$(CODEX_BIN) TUTTID_TEST_DB=postgres $(GO_TEST) $(TEST_FLAGS) -skip '$(PG_SKIP)' $(PG_PACKAGES)

# The Codex integration tests on the newest Codex (the pinned one stays the
# default everywhere else).
test-newest: tools-newest
	CODEX_BIN=$(CODEX_NEWEST_LOCAL) $(GO_TEST) $(TEST_FLAGS) $(CODEX_PACKAGES)

# BENCH_TIME=1x runs each benchmark once (CI does, so none can rot).
BENCH_TIME ?= 5x
bench: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCH_TIME) ./...

# Each fuzz target for FUZZ_TIME (go test -fuzz takes one target at a time).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_TIME) ./rest/
	$(GO) test -run '^$$' -fuzz '^FuzzTitle$$' -fuzztime $(FUZZ_TIME) ./fork/
	$(GO) test -run '^$$' -fuzz '^FuzzReadLine$$' -fuzztime $(FUZZ_TIME) ./jsonrpc/
	$(GO) test -run '^$$' -fuzz '^FuzzConnReader$$' -fuzztime $(FUZZ_TIME) ./jsonrpc/
	$(GO) test -run '^$$' -fuzz '^FuzzUnquote$$' -fuzztime $(FUZZ_TIME) ./codex/

tools: $(CODEX_LOCAL)

$(CODEX_LOCAL):
	npm install --prefix .tools/codex --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_VERSION)

tools-newest: $(CODEX_NEWEST_LOCAL)

$(CODEX_NEWEST_LOCAL):
	npm install --prefix .tools/codex-$(CODEX_NEWEST_VERSION) --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_NEWEST_VERSION)

# gui rebuilds the web GUI (web/ui, Vite + TypeScript) into web/dist, which
# is committed and embedded: `make run` and `go build` need no Node. The
# typed operations (web/ui/src/gql) are regenerated from graph/*.graphqls.
gui:
	cd $(UI_DIR) && npm ci --no-audit --no-fund --loglevel=error && npm run codegen && npm test && npm run build

generate:
	$(GO) generate ./...

vet:
	$(GO) vet ./...
