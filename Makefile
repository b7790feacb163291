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

FUZZ_TIME     ?= 10s

.PHONY: run test test-newest tools tools-newest generate vet bench fuzz

run: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) run . $(ARGS)

test: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) test $(TEST_FLAGS) ./...

# The Codex integration tests on the newest Codex (the pinned one stays the
# default everywhere else).
test-newest: tools-newest
	CODEX_BIN=$(CODEX_NEWEST_LOCAL) $(GO) test $(TEST_FLAGS) $(CODEX_PACKAGES)

bench: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) test -run '^$$' -bench . -benchmem ./...

# Each fuzz target for FUZZ_TIME (go test -fuzz takes one target at a time).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_TIME) ./rest/
	$(GO) test -run '^$$' -fuzz '^FuzzTitle$$' -fuzztime $(FUZZ_TIME) ./fork/
	$(GO) test -run '^$$' -fuzz '^FuzzReadLine$$' -fuzztime $(FUZZ_TIME) ./codex/
	$(GO) test -run '^$$' -fuzz '^FuzzConnReader$$' -fuzztime $(FUZZ_TIME) ./codex/

tools: $(CODEX_LOCAL)

$(CODEX_LOCAL):
	npm install --prefix .tools/codex --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_VERSION)

tools-newest: $(CODEX_NEWEST_LOCAL)

$(CODEX_NEWEST_LOCAL):
	npm install --prefix .tools/codex-$(CODEX_NEWEST_VERSION) --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_NEWEST_VERSION)

generate:
	$(GO) generate ./...

vet:
	$(GO) vet ./...
