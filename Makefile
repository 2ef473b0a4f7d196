# toolc developer entry points. `make build` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TOOLC := $(VENV)/bin/toolc
STAMP := $(VENV)/.installed-stamp

.PHONY: install build test lint typecheck golden bench bench-quick clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## Compile the shipped definitions/ into build/ (atomic; a no-op when nothing changed).
build: install
	$(TOOLC) build definitions -o build

## Everything CI runs: lint, types, and the test suite (which also fails on a stale build/).
test: install
	$(VENV)/bin/ruff check compiler tests bench
	$(VENV)/bin/mypy compiler
	$(PY) -m pytest

## Regenerate the golden case directories under tests/cases/ after an intended change.
golden: install
	$(PY) -m tests.golden --update

bench: install
	$(PY) -m bench.run

bench-quick: install
	$(PY) -m bench.run --quick

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
