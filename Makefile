# localqa: `make run` to try it, `make test` to prove it. See README.md.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

# Tests use PostgreSQL and Redis (real ones); these defaults match a local install.
TEST_DATABASE_URL ?= $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/localqa)
TEST_REDIS_URL ?= $(or $(REDIS_URL),redis://127.0.0.1:6379/0)
# The embedded default's test databases are files in this folder (test_localqa*.sqlite3, removed after the run).
TEST_SQLITE_URL ?= sqlite:///$(CURDIR)/localqa.sqlite3
# Test processes side by side (pytest-xdist); each has its own test database, files and Redis key space.
# Three on this 2-core machine: the tests wait on servers, workers and browsers they start, and a third process
# fills that wait. Measured alone on a quiet machine (2026-12-04): the embedded default 438 s with two, 392 s with
# three; PostgreSQL 295 s with two (beside `make lint`), 276 s with three. (Earlier, with heavier browser walks,
# three had been slower.) The two engines one after the other, not side by side: run at once, with three processes
# each, CI took 923 s against 801 s (2026-12-04, same machine and day): the two cores were already mostly busy.
TEST_PROCESSES ?= 3

.PHONY: run install install-dev compile migrate demo worker test test-sqlite test-postgres test-fast lint format check bench bench-server bench-all clean

# What the app needs (requirements.lock) for `make run`; the test and lint tools (requirements-dev.lock) on top.
# pip byte-compiles one file at a time (245 s for both locks here); installing with --no-compile (41 s) and then
# compiling on every core (34 s) gives the same .pyc files. They must be there: where PYTHONDONTWRITEBYTECODE is
# set, as on CI, every process (each Celery worker and server the tests start) would compile what it imports.
$(STAMP): requirements.lock pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is needed ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile -r requirements.lock
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null
	touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.lock
	$(BIN)/pip install --quiet --no-compile -r requirements-dev.lock
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null
	touch $(DEV_STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

# The project's own modules compiled too, before a test run, for the same reason: each server, worker and test
# process the tests start imports them (measured on the worker and several-server tests, PostgreSQL, three
# processes: 70.5 s without, 65.7-65.8 s with, two runs each). Python checks each .pyc against its source, so an
# edited module is compiled again, never read stale.
compile: $(DEV_STAMP)
	$(BIN)/python -m compileall -q -j 0 -x '/\.venv/' . >/dev/null

## Embedded default: SQLite in the project folder, tasks in-process, DEBUG on.
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_setup
	$(BIN)/python manage.py runserver 127.0.0.1:8000

worker: $(STAMP)
	$(BIN)/celery -A config worker --loglevel=INFO --concurrency=2

## The whole suite on both engines: the embedded default (SQLite, what `make run` uses) and PostgreSQL.
test: test-sqlite test-postgres

test-sqlite: $(DEV_STAMP) compile
	DATABASE_URL=$(TEST_SQLITE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist worksteal $(PYTEST_ARGS)

# The test database commits without waiting for its WAL to reach the disk (synchronous_commit=off, for every
# connection: this process, servers and workers it starts): a crash could lose the last commits of a test
# database, nothing else changes, and the PostgreSQL run takes a fifth less time.
test-postgres: $(DEV_STAMP) compile
	PGOPTIONS="-c synchronous_commit=off" DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist worksteal $(PYTEST_ARGS)

test-fast: $(DEV_STAMP) compile
	PGOPTIONS="-c synchronous_commit=off" DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist worksteal -m "not browser and not worker" $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DATABASE_URL=sqlite:///:memory: $(BIN)/mypy .
	DATABASE_URL=sqlite:///:memory: $(BIN)/python manage.py makemigrations --check --dry-run
	DATABASE_URL=sqlite:///:memory: $(BIN)/python manage.py check

format: $(DEV_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## The load benchmark (bench/load.py): its own database localqa_bench, Redis db 11, gunicorn on :8100.
bench: $(DEV_STAMP)
	$(BIN)/python bench/load.py

bench-server: $(DEV_STAMP)
	$(BIN)/python bench/load.py --serve

## Every other benchmark script, one after the other, on the test database.
bench-all: $(DEV_STAMP)
	for script in $$(ls bench/*.py | grep -v -e load.py -e explain.py -e page_weight.py); do DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) staticfiles localqa.sqlite3
