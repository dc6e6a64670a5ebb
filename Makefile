# One-command set-up: every target installs what it needs into .venv first.
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run ui test test-slow lint bench lake-run lake-ui lake-stop

# uv resolves and installs the same releases as pip in a fraction of the time; where uv cannot be
# had, pip does the install. uv, unlike pip, writes no bytecode unless asked: without it every
# process (each `ingest` command, code server, test worker) compiles Dagster, SQLAlchemy and
# alembic from source on import, and CI sets PYTHONDONTWRITEBYTECODE, so nothing is ever cached.
# The project's own packages (an editable install: no installer compiles them) are compiled too;
# Python checks each .pyc against its source, so an edited module is read from source again.
$(BIN)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q uv && $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e '.[test]' \
		|| $(BIN)/pip install -q -e '.[test]'
	$(BIN)/python -m compileall -q chunking ingest_assets
	touch $@

install: $(BIN)/.installed

## Ingest data/sample/ into data/ingest.duckdb through the Dagster asset graph and print a summary.
run: install
	$(BIN)/ingest run

## Open the Dagster UI on http://127.0.0.1:3000 over the store of `make run`, on its instance
## (.dagster_home); `ingest ui --db FILE` opens another store's.
ui: install
	$(BIN)/ingest ui

## The scale-out configuration (docs/scale-out.md) in one command: start a private Postgres
## (./.postgres, a free loopback port), then ingest data/sample into a DuckLake store on it, with
## Dagster's instance on the same server (dagster.postgres.yaml).
LAKE_HOME := $(CURDIR)/.dagster_home_lake
LAKE_ENV = eval "$$(scripts/local_postgres.sh start)" && mkdir -p $(LAKE_HOME) \
	&& cp dagster.postgres.yaml $(LAKE_HOME)/dagster.yaml && export DAGSTER_HOME=$(LAKE_HOME)
lake-run: install
	$(LAKE_ENV) && $(BIN)/ingest run

## The Dagster UI on http://127.0.0.1:3000 over the lake and the Postgres instance.
lake-ui: install
	$(LAKE_ENV) && $(BIN)/dagster dev -h 127.0.0.1 -p 3000

## Stop the private Postgres of lake-run / lake-ui (its data stays in ./.postgres).
lake-stop:
	scripts/local_postgres.sh stop

## The default test suite (a few minutes).
test: install
	$(BIN)/pytest

## The slow tests (whole-corpus sweeps, kill trials, a real dagster dev) and the property tests
## at their full example budgets (tests/example_budget.py). Four workers: the daemon tests mostly
## wait, and the others use the cores meanwhile (as .ci/run does).
test-slow: install
	$(BIN)/pytest -m "slow or hypothesis" --hypothesis-profile full -n 4

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install
	$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e '.[bench]' || $(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/bench_chunking.py
