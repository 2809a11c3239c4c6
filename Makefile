# The two commands: `make up` runs Axiom locally, `make test` runs the test suite.
# Both create .venv on first use and reinstall only when pyproject.toml changes.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.axiom-installed

.PHONY: up test test-fast lint install

up: $(STAMP)
	$(BIN)/python -m axiom up

test: $(STAMP)
	$(BIN)/python -m pytest -q

# Everything but the slow tests (soak, real worker processes, the launcher).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_architecture.py

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch first, pinned: pip takes the CPU build that lies on local disk. Left to
# sentence-transformers, a bare `torch` requirement would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install torch==2.13.0
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@
