# tuttid: `make run` starts the server, `make test` runs every test.
# Both install the pinned Codex app-server into .tools/ first (npm).

CODEX_VERSION := 0.169.0
CODEX_LOCAL   := $(CURDIR)/.tools/codex/node_modules/.bin/codex
CODEX_BIN     ?= $(CODEX_LOCAL)
GO            ?= go
TEST_FLAGS    ?= -count=1 -timeout 30m

UI_DIR        := web/ui
CHROMIUM_BIN  ?= /usr/bin/chromium

.PHONY: run test tools generate vet bench gui

run: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) run . $(ARGS)

test: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) test $(TEST_FLAGS) ./...
	@test -x "$(CHROMIUM_BIN)" || { echo; \
	  echo "!!! THE BROWSER TESTS DID NOT RUN: no Chromium at $(CHROMIUM_BIN)."; \
	  echo "!!! Install it (Debian: apt-get install -y chromium) or set CHROMIUM_BIN, then run make test again."; }

bench: tools
	CODEX_BIN=$(CODEX_BIN) $(GO) test -run '^$$' -bench . -benchmem ./...

tools: $(CODEX_LOCAL)

$(CODEX_LOCAL):
	npm install --prefix .tools/codex --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_VERSION)

# gui rebuilds the web GUI (web/ui, Vite + TypeScript) into web/dist, which
# is committed and embedded: `make run` and `go build` need no Node. The
# typed operations (web/ui/src/gql) are regenerated from graph/*.graphqls.
gui:
	cd $(UI_DIR) && npm ci --no-audit --no-fund --loglevel=error && npm run codegen && npm test && npm run build

generate:
	$(GO) generate ./...

vet:
	$(GO) vet ./...
