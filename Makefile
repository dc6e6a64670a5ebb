# One-command set-up: every target installs what it needs into .venv first.
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run ui test test-slow lint bench

$(BIN)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

install: $(BIN)/.installed

## Ingest data/sample/ into data/ingest.duckdb through the Dagster asset graph and print a summary.
run: install
	$(BIN)/ingest run

## Open the Dagster UI on http://127.0.0.1:3000 (same instance and store as `make run`).
ui: install
	mkdir -p .dagster_home && cp dagster.yaml .dagster_home/dagster.yaml  # kept in step with the repo
	DAGSTER_HOME=$(CURDIR)/.dagster_home $(BIN)/dagster dev -h 127.0.0.1 -p 3000  # location "ingest" ([tool.dagster])

## The default test suite (a few minutes).
test: install
	$(BIN)/pytest

## The slow tests: whole-corpus sweeps, kill trials.
test-slow: install
	$(BIN)/pytest -m slow

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/bench_chunking.py
