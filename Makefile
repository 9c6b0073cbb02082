# CodeLotse MCP context. `make run` and `make test` are the two commands a
# new machine needs, `make check` the loop between edits; see README.md.
# `make` alone (or `make help`) lists the targets: every `## name: text`
# line below is one line of that list.
GO       ?= go
BIN      ?= bin/codelotse
TAGS     ?=
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
COVERAGE_MIN := 90
# The Go modules of the repository: the service and the nested ones that
# depend on it (a change of the service's go.mod may need a tidy there).
MODULES  := . deploy loadtest scalebench adapters/secrets/benchcompare

.PHONY: help build run stop demo image screenshots test test-all check fmt vet archlint bigfiles test-unit conformance interop test-go test-signedoff test-deploy cover-domain bench-smoke lint lint-openapi generate check-generate schema-corpus bench loadtest soak fuzz mutants scalebench clean
.DEFAULT_GOAL := help

## help: this list.
help:
	@echo "make TARGET, one of:"
	@sed -n 's/^## \([a-z-]*\): /\1\t/p' $(firstword $(MAKEFILE_LIST)) | awk -F '\t' '{ printf "  %-15s %s\n", $$1, $$2 }'

## build: the binary bin/codelotse (TAGS=signedoff for a signed-off build).
build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/codelotse

## run: the service on a local PostgreSQL, no configuration needed.
run: build
	./.ci/localdb exec ./$(BIN) serve

## stop: stop the private PostgreSQL that make run or make test started under .data/.
# Its data stays; the next `make run` starts it again.
stop:
	./.ci/localdb stop

## image: the container image as an OCI image archive, without a Docker engine.
# A static binary (CGO_ENABLED=0), non-root, no shell.
IMAGE_ARCH        ?= $(shell $(GO) env GOARCH)
IMAGE_SOURCE      ?= https://github.com/codelotse/codelotse
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE             ?= bin/codelotse-$(VERSION)-$(IMAGE_ARCH).oci.tar
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS) -s -w' -o bin/image/codelotse ./cmd/codelotse
	cd deploy && $(GO) run ./cmd/mkimage -binary ../bin/image/codelotse -arch $(IMAGE_ARCH) \
		-version $(VERSION) -revision $$(git rev-parse HEAD 2>/dev/null) -source $(IMAGE_SOURCE) \
		-created $(SOURCE_DATE_EPOCH) -o ../$(IMAGE)

## demo: a review that uses an MCP server end to end (docs/walkthrough.md, "The demo").
demo:
	./.ci/demo

## test: set up, then lint and every test in both builds, on a fresh database.
# The setup (.ci/testdeps, .ci/localdb): Chromium (installed with apt-get
# when missing and running as root, else one line naming the command),
# `npm ci` of every npm pin whose node_modules is missing or older than
# its lock file, a PostgreSQL found or started as `make run` finds it
# (QUAVON_TEST_DATABASE_URL when set is used as is), and a fresh database
# for the run, dropped after it. Then test-all.
test:
	@./.ci/testdeps
	@./.ci/localdb test $(MAKE) --no-print-directory test-all

## test-all: make test without its setup: lint, test-go, test-signedoff, test-deploy, cover-domain, bench-smoke.
# Every test (PostgreSQL integration tests included) in both builds, the
# Helm chart's render test and the image test (the nested module
# deploy/), the domain's coverage floor, and every benchmark once.
test-all: lint test-go test-signedoff test-deploy cover-domain bench-smoke

## check: the loop between edits: fmt, vet, archlint, check-generate and test-unit.
# Needs no PostgreSQL, Node.js or Chromium; docs/development.md ("The loop
# between edits") gives its time. The five run side by side (wire's type-check
# fills the core the longest test package leaves idle), each one's output
# printed whole when it ends.
check:
	@$(MAKE) --no-print-directory -j 5 --output-sync=target fmt vet archlint check-generate test-unit bigfiles

## bigfiles: fail when a tracked file outside testdata/ is over 1 MB (build outputs belong in no commit).
bigfiles:
	@big=$$(git ls-files -z | grep -zv '/testdata/' | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk '$$1 > 1000000 { print }'); \
		if [ -n "$$big" ]; then echo "tracked files over 1 MB (build outputs or unshrunk images?):"; echo "$$big"; exit 1; fi

## fmt: fail when gofmt would change a Go file.
fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '/testdata/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## vet: go vet in the default and the signedoff build.
vet:
	$(GO) vet ./...
	$(GO) vet -tags signedoff ./...

## archlint: the import rules of ARCHITECTURE.md (cmd/archlint).
archlint:
	$(GO) run ./cmd/archlint .

## test-unit: every test that needs no service: no PostgreSQL, Node.js, Chromium or network.
# A package's tests need a service when they import, directly or not,
# adapters/postgres/pgtest (PostgreSQL), internal/npmtest (Node.js and the
# npm registry) or chromedp (Chromium); every other package runs here,
# without -race (make test runs them all with it). The variables point
# PostgreSQL and Chromium nowhere, so a test that needs them anyway fails
# here instead of using a developer's. TESTFLAGS=-count=1 reruns tests
# whose results go test has cached.
SERVICE_TESTS := /adapters/postgres/pgtest$$|/internal/npmtest$$|/chromedp/chromedp$$
TESTFLAGS ?=
test-unit:
	@pkgs=$$($(GO) list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... | awk -v svc='$(SERVICE_TESTS)' \
		'$$1 ~ /\.test$$/ { for (i = 2; i <= NF; i++) if ($$i ~ svc) next; sub(/\.test$$/, "", $$1); print $$1 }') && \
	QUAVON_TEST_DATABASE_URL=postgres://make-check@127.0.0.1:1/none QUAVON_DATABASE_URL=postgres://make-check@127.0.0.1:1/none \
	CHROMIUM=/make-check-needs-no-chromium $(GO) test $(TESTFLAGS) $$pkgs

## test-go: every test of the module with -race (part of make test-all).
test-go:
	$(GO) test -race -count=1 ./...

## conformance: the MCP conformance suite's client scenarios, every scenario logged.
# Against the connector; part of test-go; docs/conformance.md.
conformance:
	$(GO) test -race -count=1 -v -run '^TestConformance' ./adapters/mcpclient/

## interop: the interop matrix, every cell logged (docs/interop.md).
# MCP servers on the official SDKs (TypeScript SDK 1.x and 2.x, go-sdk)
# discovered, allowlisted and called in reviews through the binary; part
# of test-signedoff.
interop:
	$(GO) test -race -count=1 -tags signedoff -v -run '^TestInterop' ./cmd/codelotse/

## test-signedoff: the packages whose behaviour depends on the sign-off, again in the signedoff build.
# The signedoff build flips MCP_CONTEXT_SIGNED_OFF.
test-signedoff:
	$(GO) test -race -count=1 -tags signedoff ./domain/gate/... ./app/... ./cmd/...

## test-deploy: the tests of deploy/: the Helm chart's render test and the image test.
# deploy/ is a module of its own, so Helm's and go-containerregistry's
# dependencies never reach the service's go.mod.
test-deploy:
	cd deploy && $(GO) test -count=1 ./...

## cover-domain: fail when the tests cover less than COVERAGE_MIN % of domain/.
cover-domain:
	@$(GO) test -count=1 -coverprofile=coverage-domain.out ./domain/... >/dev/null
	@$(GO) tool cover -func=coverage-domain.out | awk -v min=$(COVERAGE_MIN) '/^total:/ { sub("%","",$$3); printf "domain coverage: %s%% (floor %s%%)\n", $$3, min; if ($$3+0 < min) exit 1 }'

## lint: check-generate, fmt, vet (deploy/ too), archlint, tidy go.mod files, lint-openapi.
lint: check-generate fmt vet archlint bigfiles
	cd deploy && $(GO) vet ./...
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "$$m/go.mod is not tidy: run go mod tidy there"; exit 1; }; done
	@$(MAKE) --no-print-directory lint-openapi

## lint-openapi: Redocly's recommended rules (warnings are errors) on openapi.yaml.
# The CLI is pinned in tools/openapi-lint (npm ci on first use).
OPENAPI_LINT := tools/openapi-lint
lint-openapi:
	@test -x $(OPENAPI_LINT)/node_modules/.bin/redocly || npm ci --prefix $(OPENAPI_LINT) --no-audit --no-fund --ignore-scripts --loglevel=error
	@out=$$(NO_UPDATE_NOTIFIER=1 REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		npx --prefix $(OPENAPI_LINT) --no-install redocly lint --format=summary --config $(OPENAPI_LINT)/redocly.yaml openapi.yaml 2>&1); \
		rc=$$?; printf '%s\n' "$$out" | grep -v '[║╔╚]' | grep -v '^[[:space:]]*$$'; exit $$rc

## generate: regenerate cmd/codelotse/wire_gen.go and docs/sign-off.md's tables (tools/mutants).
generate:
	$(GO) tool wire gen ./cmd/codelotse
	$(GO) run ./tools/mutants -doc docs/sign-off.md

## schema-corpus: regenerate the schema corpus in domain/tool/testdata/schemas.
# With the pinned generators: zod 3 and zod 4 (npm, tools/schemacorpus; npm ci
# on first use) and jsonschema-go (go.mod); pydantic2.json is hand-written.
# The test in tools/schemacorpus fails when the committed files are stale.
SCHEMA_CORPUS := tools/schemacorpus
schema-corpus:
	@test -f $(SCHEMA_CORPUS)/node_modules/zod4/package.json || npm ci --prefix $(SCHEMA_CORPUS) --no-audit --no-fund --ignore-scripts --loglevel=error
	node $(SCHEMA_CORPUS)/gen.mjs domain/tool/testdata/schemas
	$(GO) run ./$(SCHEMA_CORPUS)/gojsonschema domain/tool/testdata/schemas

## check-generate: fail when the committed wire_gen.go is stale or wire cannot generate it.
# `wire diff` prints the difference and exits 1 when stale, 2 on an error;
# it writes no file.
check-generate:
	@$(GO) tool wire diff ./cmd/codelotse || \
		{ echo "cmd/codelotse/wire_gen.go is stale or wire cannot generate it: run make generate and commit it"; exit 1; }

## screenshots: the main pages of the web interface as PNG in docs/ui/ (Chromium, PostgreSQL).
# At 1280 and 390 px, taken by the browser tests.
screenshots:
	CODELOTSE_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(GO) test -count=1 -tags signedoff \
		-run '^TestBrowser(Walkthrough|ReapprovesOneChangedTool|PolicyWarnsAndTheReviewSaysWhy|EmptySaveAsksFirst|FormsSpeakTheAdminsLanguage)$$' ./cmd/codelotse

## bench-smoke: every benchmark once, and go vet of the load test's modules.
# The gitleaks comparison, a module of its own, included, so that none can
# rot unnoticed.
bench-smoke:
	$(GO) test -run='^$$' -bench=. -benchtime=1x ./...
	cd adapters/secrets/benchcompare && $(GO) test -run='^$$' -bench=. -benchtime=1x .
	cd loadtest && $(GO) vet ./...
	cd scalebench && $(GO) vet ./...

## bench: every benchmark, with allocations.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## loadtest: the API's GET routes at 500 and 1,000 requests per second (docs/BENCHMARKS.md).
# Against the real binary on a fresh database. LOADTEST_FLAGS passes
# options, e.g. -duration 20s -rounds 3.
loadtest:
	cd loadtest && $(GO) run . -repo .. $(LOADTEST_FLAGS)

## scalebench: the data of a large installation (docs/BENCHMARKS.md, "Data scale").
# Issue 22: GET routes against an empty database, the hourly retention
# run, a retention backlog. Needs PostgreSQL and a few GiB of disk;
# SCALEBENCH_FLAGS='-calls 10000000' for the issue's size.
scalebench:
	cd scalebench && $(GO) run . -repo .. $(SCALEBENCH_FLAGS)

## soak: waves of 100 concurrent reviews through `codelotse worker` (docs/BENCHMARKS.md).
# River, PostgreSQL, five loopback MCP servers, the scripted model; prints
# the worker's goroutines and heap and River's throughput.
soak:
	cd loadtest && $(GO) run . -soak -repo .. $(SOAK_FLAGS)

## mutants: the catalogue of control mutants, each run against the tests that must catch it.
# tools/mutants/catalogue.json, applied one at a time through go test
# -overlay; killed/survived/equivalent per threat-analysis row, written to
# tools/mutants/results.json and rendered into docs/sign-off.md (survivors
# included: commit both). Not part of make test, which fails when the
# catalogue has a mutant the results lack. About 20 minutes for the 403
# mutants of 2026-12-02 on a 2-core machine.
mutants:
	@$(GO) run ./tools/mutants; rc=$$?; $(GO) run ./tools/mutants -doc docs/sign-off.md && exit $$rc

## fuzz: a short run (FUZZTIME) of every fuzz target (make test runs their seed corpora).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; done

## clean: remove bin/ and the coverage files.
clean:
	rm -rf bin coverage-*.out
