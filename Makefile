# CodeLotse MCP context. `make run` and `make test` are the two commands a
# new machine needs; see README.md.
GO       ?= go
BIN      ?= bin/codelotse
TAGS     ?=
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
COVERAGE_MIN := 90

.PHONY: all build run demo test test-go test-signedoff cover-domain bench-smoke lint generate check-generate bench loadtest soak fuzz clean

all: build

build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/codelotse

## run: the service on a local PostgreSQL, no configuration needed.
run: build
	./.ci/localdb exec ./$(BIN) serve

## demo: a review that uses an MCP server end to end (see README).
demo:
	./.ci/demo

## test: lint, every test (PostgreSQL integration tests included) in both
## builds, the domain's coverage floor, and every benchmark once.
test: lint test-go test-signedoff cover-domain bench-smoke

test-go:
	$(GO) test -race -count=1 ./...

# The signedoff build flips MCP_CONTEXT_SIGNED_OFF; the packages whose
# behaviour depends on it run again in that build.
test-signedoff:
	$(GO) test -race -count=1 -tags signedoff ./domain/gate/... ./cmd/...

cover-domain:
	@$(GO) test -count=1 -coverprofile=coverage-domain.out ./domain/... >/dev/null
	@$(GO) tool cover -func=coverage-domain.out | awk -v min=$(COVERAGE_MIN) '/^total:/ { sub("%","",$$3); printf "domain coverage: %s%% (floor %s%%)\n", $$3, min; if ($$3+0 < min) exit 1 }'

lint: check-generate
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '/testdata/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags signedoff ./...
	$(GO) run ./cmd/archlint .

## generate: regenerate wire_gen.go.
generate:
	$(GO) tool wire gen ./cmd/codelotse

## check-generate: fail when the committed wire_gen.go is stale or wire
## cannot generate it.
check-generate:
	@bak=$$(mktemp); cp cmd/codelotse/wire_gen.go $$bak; \
	if ! out=$$($(GO) tool wire gen ./cmd/codelotse 2>&1); then \
		cp $$bak cmd/codelotse/wire_gen.go; rm -f $$bak; echo "$$out"; echo "wire gen failed"; exit 1; fi; \
	if ! cmp -s cmd/codelotse/wire_gen.go $$bak; then \
		cp $$bak cmd/codelotse/wire_gen.go; rm -f $$bak; \
		echo "cmd/codelotse/wire_gen.go is stale: run make generate and commit it"; exit 1; fi; \
	rm -f $$bak

# bench-smoke runs every benchmark once (the gitleaks comparison, a
# module of its own, included) and vets the load test's module, so that
# none can rot unnoticed.
bench-smoke:
	$(GO) test -run='^$$' -bench=. -benchtime=1x ./...
	cd adapters/secrets/benchcompare && $(GO) test -run='^$$' -bench=. -benchtime=1x .
	cd loadtest && $(GO) vet ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## loadtest: the API's GET routes at 500 and 1,000 requests per second
## against the real binary on a fresh database (docs/BENCHMARKS.md).
## LOADTEST_FLAGS passes options, e.g. -duration 20s -rounds 3.
loadtest:
	cd loadtest && $(GO) run . -repo .. $(LOADTEST_FLAGS)

## soak: waves of 100 concurrent reviews through `codelotse worker` (River,
## PostgreSQL, five loopback MCP servers, the scripted model); prints the
## worker's goroutines and heap and River's throughput (docs/BENCHMARKS.md).
soak:
	cd loadtest && $(GO) run . -soak -repo .. $(SOAK_FLAGS)

## fuzz: a short run of every fuzz target (make test runs their seed corpora).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; done

clean:
	rm -rf bin coverage-*.out
