# CodeLotse MCP context. `make run` and `make test` are the two commands a
# new machine needs; see README.md.
GO       ?= go
BIN      ?= bin/codelotse
TAGS     ?=
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
COVERAGE_MIN := 90
# The Go modules of the repository: the service and the nested ones that
# depend on it (a change of the service's go.mod may need a tidy there).
MODULES  := . deploy loadtest scalebench adapters/secrets/benchcompare

.PHONY: all build run stop demo image screenshots test conformance interop test-go test-signedoff test-deploy cover-domain bench-smoke lint lint-openapi generate check-generate schema-corpus bench loadtest soak fuzz mutants scalebench clean

all: build

build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/codelotse

## run: the service on a local PostgreSQL, no configuration needed.
run: build
	./.ci/localdb exec ./$(BIN) serve

## stop: stop the private PostgreSQL that `make run` started under .data/
## (its data stays; the next `make run` starts it again).
stop:
	./.ci/localdb stop

## image: the container image as an OCI image archive, without a Docker
## engine: a static binary (CGO_ENABLED=0), non-root, no shell.
IMAGE_ARCH        ?= $(shell $(GO) env GOARCH)
IMAGE_SOURCE      ?= https://github.com/codelotse/codelotse
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE             ?= bin/codelotse-$(VERSION)-$(IMAGE_ARCH).oci.tar
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS) -s -w' -o bin/image/codelotse ./cmd/codelotse
	cd deploy && $(GO) run ./cmd/mkimage -binary ../bin/image/codelotse -arch $(IMAGE_ARCH) \
		-version $(VERSION) -revision $$(git rev-parse HEAD 2>/dev/null) -source $(IMAGE_SOURCE) \
		-created $(SOURCE_DATE_EPOCH) -o ../$(IMAGE)

## demo: a review that uses an MCP server end to end (see README).
demo:
	./.ci/demo

## test: lint, every test (PostgreSQL integration tests included) in both
## builds, the Helm chart's render test and the image test (the nested
## module deploy/), the domain's coverage floor, and every benchmark once.
test: lint test-go test-signedoff test-deploy cover-domain bench-smoke

test-go:
	$(GO) test -race -count=1 ./...

## conformance: the MCP conformance suite's client scenarios against the
## connector, every scenario logged (part of test-go; docs/conformance.md).
conformance:
	$(GO) test -race -count=1 -v -run '^TestConformance' ./adapters/mcpclient/

## interop: the interop matrix: MCP servers on the official SDKs (TypeScript
## SDK 1.x and 2.x, go-sdk) discovered, allowlisted and called in reviews
## through the binary, every cell logged (part of test-signedoff; docs/interop.md).
interop:
	$(GO) test -race -count=1 -tags signedoff -v -run '^TestInterop' ./cmd/codelotse/

# The signedoff build flips MCP_CONTEXT_SIGNED_OFF; the packages whose
# behaviour depends on it run again in that build.
test-signedoff:
	$(GO) test -race -count=1 -tags signedoff ./domain/gate/... ./app/... ./cmd/...

# deploy/ is a module of its own, so Helm's and go-containerregistry's
# dependencies never reach the service's go.mod.
test-deploy:
	cd deploy && $(GO) test -count=1 ./...

cover-domain:
	@$(GO) test -count=1 -coverprofile=coverage-domain.out ./domain/... >/dev/null
	@$(GO) tool cover -func=coverage-domain.out | awk -v min=$(COVERAGE_MIN) '/^total:/ { sub("%","",$$3); printf "domain coverage: %s%% (floor %s%%)\n", $$3, min; if ($$3+0 < min) exit 1 }'

lint: check-generate
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '/testdata/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags signedoff ./...
	cd deploy && $(GO) vet ./...
	$(GO) run ./cmd/archlint .
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "$$m/go.mod is not tidy: run go mod tidy there"; exit 1; }; done
	@$(MAKE) --no-print-directory lint-openapi

## lint-openapi: Redocly's recommended rules (warnings are errors) on
## openapi.yaml, with the CLI pinned in tools/openapi-lint (npm ci on first use).
OPENAPI_LINT := tools/openapi-lint
lint-openapi:
	@test -x $(OPENAPI_LINT)/node_modules/.bin/redocly || npm ci --prefix $(OPENAPI_LINT) --no-audit --no-fund --ignore-scripts --loglevel=error
	@out=$$(NO_UPDATE_NOTIFIER=1 REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		npx --prefix $(OPENAPI_LINT) --no-install redocly lint --format=summary --config $(OPENAPI_LINT)/redocly.yaml openapi.yaml 2>&1); \
		rc=$$?; printf '%s\n' "$$out" | grep -v '[║╔╚]' | grep -v '^[[:space:]]*$$'; exit $$rc

## generate: regenerate wire_gen.go and docs/sign-off.md's tables (tools/mutants).
generate:
	$(GO) tool wire gen ./cmd/codelotse
	$(GO) run ./tools/mutants -doc docs/sign-off.md

## schema-corpus: regenerate the schema corpus in domain/tool/testdata/schemas
## with the pinned generators: zod 3 and zod 4 (npm, tools/schemacorpus; npm ci
## on first use) and jsonschema-go (go.mod); pydantic2.json is hand-written.
## The test in tools/schemacorpus fails when the committed files are stale.
SCHEMA_CORPUS := tools/schemacorpus
schema-corpus:
	@test -f $(SCHEMA_CORPUS)/node_modules/zod4/package.json || npm ci --prefix $(SCHEMA_CORPUS) --no-audit --no-fund --ignore-scripts --loglevel=error
	node $(SCHEMA_CORPUS)/gen.mjs domain/tool/testdata/schemas
	$(GO) run ./$(SCHEMA_CORPUS)/gojsonschema domain/tool/testdata/schemas

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

## screenshots: the main pages of the web interface as PNG in docs/ui/,
## at 1280 and 390 px, taken by the browser tests (needs Chromium and PostgreSQL).
screenshots:
	CODELOTSE_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(GO) test -count=1 -tags signedoff \
		-run '^TestBrowser(Walkthrough|ReapprovesOneChangedTool|PolicyWarnsAndTheReviewSaysWhy|EmptySaveAsksFirst|FormsSpeakTheAdminsLanguage)$$' ./cmd/codelotse

# bench-smoke runs every benchmark once (the gitleaks comparison, a
# module of its own, included) and vets the load test's module, so that
# none can rot unnoticed.
bench-smoke:
	$(GO) test -run='^$$' -bench=. -benchtime=1x ./...
	cd adapters/secrets/benchcompare && $(GO) test -run='^$$' -bench=. -benchtime=1x .
	cd loadtest && $(GO) vet ./...
	cd scalebench && $(GO) vet ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## loadtest: the API's GET routes at 500 and 1,000 requests per second
## against the real binary on a fresh database (docs/BENCHMARKS.md).
## LOADTEST_FLAGS passes options, e.g. -duration 20s -rounds 3.
loadtest:
	cd loadtest && $(GO) run . -repo .. $(LOADTEST_FLAGS)

## scalebench: the data of a large installation (issue 22): GET routes
## against an empty database, the hourly retention run, a retention
## backlog (docs/BENCHMARKS.md, "Data scale"). Needs PostgreSQL and a few
## GiB of disk; SCALEBENCH_FLAGS='-calls 10000000' for the issue's size.
scalebench:
	cd scalebench && $(GO) run . -repo .. $(SCALEBENCH_FLAGS)

## soak: waves of 100 concurrent reviews through `codelotse worker` (River,
## PostgreSQL, five loopback MCP servers, the scripted model); prints the
## worker's goroutines and heap and River's throughput (docs/BENCHMARKS.md).
soak:
	cd loadtest && $(GO) run . -soak -repo .. $(SOAK_FLAGS)

## mutants: the catalogue of control mutants (tools/mutants/catalogue.json)
## applied one at a time through go test -overlay, each run against the
## tests that must catch it; killed/survived/equivalent per threat-analysis
## row (docs/sign-off.md). Not part of make test (its catalogue check is);
## 8 minutes for the 243 mutants on an idle 2-core machine (docs/sign-off.md).
mutants:
	$(GO) run ./tools/mutants

## fuzz: a short run of every fuzz target (make test runs their seed corpora).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; done

clean:
	rm -rf bin coverage-*.out
