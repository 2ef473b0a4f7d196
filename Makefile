# toolc developer entry points. `make build` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TOOLC := $(VENV)/bin/toolc
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.test-installed-stamp
MCP_STAMP := $(VENV)/.mcp-installed-stamp
DOCS_STAMP := $(VENV)/.docs-installed-stamp
INTEGRATIONS_STAMP := $(VENV)/.integrations-installed-stamp
# The package directory `compiler/` is installed as `toolc`; setuptools' editable install warns
# about same-named folders in the working directory, which this layout does not have.
# pytest-xdist workers for `make test` (the CI machine has 2 cores); TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
PIP := PYTHONWARNINGS=ignore $(PY) -m pip install -q

.PHONY: install install-test build test test-ship lint typecheck golden bench bench-quick bench-huge conformance conformance-setup docs dist clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

## What building needs: toolc and its runtime dependencies.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) -e .
	touch $(STAMP)

## What testing adds: pytest, hypothesis, mypy and the provider SDKs the bundle tests use.
$(TEST_STAMP): pyproject.toml $(STAMP)
	$(PIP) -e '.[test]'
	touch $(TEST_STAMP)

## What serve-mcp adds: the MCP SDK (the `mcp` extra).
$(MCP_STAMP): pyproject.toml $(STAMP)
	$(PIP) -e '.[mcp]'
	touch $(MCP_STAMP)

## What the framework integrations add: pydantic-ai, the OpenAI Agents SDK, LangChain (extras).
$(INTEGRATIONS_STAMP): pyproject.toml $(STAMP)
	$(PIP) -e '.[pydantic-ai,openai-agents,langchain]'
	touch $(INTEGRATIONS_STAMP)

## What the docs site adds: mkdocs and mkdocs-material (the `docs` extra).
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(PIP) -e '.[docs]'
	touch $(DOCS_STAMP)

install: $(STAMP)

install-test: $(TEST_STAMP)

## Compile the shipped definitions/ into build/ (atomic; a no-op when nothing changed).
build: install
	$(TOOLC) build definitions -o build

## Everything CI runs: lint, types, and the test suite (which also fails on a stale build/).
test: install-test
	$(VENV)/bin/ruff check compiler tests bench conformance examples
	$(VENV)/bin/ruff format --check compiler/runtime examples
	$(VENV)/bin/mypy compiler
	MYPYPATH=build $(VENV)/bin/mypy --strict examples
	$(PY) -m pytest -n $(TEST_WORKERS)

## Tests against real services from Debian packages (pytest -m ship; .ci/run runs it after
## `make test`): .ci/setup-ship installs them as root (CI=true: missing ones fail; elsewhere
## they skip, saying why). The OCI registry tests: tests/test_ship_registry.py.
test-ship: install-test
	bash .ci/setup-ship
	$(PY) -m pytest -m ship -rs -n $(TEST_WORKERS)

## Regenerate the golden case directories under tests/cases/ after an intended change.
golden: install-test
	$(PY) -m tests.golden --update

## Speed and memory of the compiler and runtime (the framework integrations' overhead too), then
## a serve-mcp load test on loopback HTTP.
bench: install $(MCP_STAMP) $(INTEGRATIONS_STAMP)
	$(PY) -m bench.run
	$(PY) -m bench.mcp_load

bench-quick: install
	$(PY) -m bench.run --quick

## Opt-in: a million groups over 100 channel accounts (two clean compiles, byte-identical), and
## the 100,000-group baselines (compile, import, diff, incremental rebuild) in the same run.
## Budget on the 2-core machine: about 15 minutes wall when it is otherwise idle, about 4.5 GiB
## of disk in a temporary directory (removed at the end); bench/README.md.
bench-huge: install
	$(PY) -m bench.huge

## Compare toolc with OpenClaw's own published code (needs node and npm; not part of `test`).
## Both releases are installed from the npm registry into the cache: 2026.3.2 runs on the system
## Node (20), 2026.9.6 on Node 24 (itself an npm package, conformance/node.sh). The --routing
## runs route 2,000 random messages each (250 configs x 8) with the releases' resolveAgentRoute
## and compare the route and the routed run's tools (2026.9: runtime and CLI).
SEED ?= 1
conformance: install-test conformance-setup
	$(PY) -m conformance --seed $(SEED)
	$(PY) -m conformance --openclaw 2026.9 --seed $(SEED)
	$(PY) -m conformance --openclaw 2026.9 --routing --seed $(SEED) --examples 250 --contexts 8
	$(PY) -m conformance --openclaw 2026.3 --routing --seed $(SEED) --examples 250 --contexts 8
	$(PY) -m conformance.roundtrip
	$(PY) -m conformance.migrate_check --seed $(SEED)
	$(PY) -m conformance.timing

conformance-setup:
	bash conformance/node.sh >/dev/null
	OPENCLAW_VERSION=2026.3.2 bash conformance/fetch.sh >/dev/null
	OPENCLAW_VERSION=2026.9.6 bash conformance/fetch.sh >/dev/null

## The documentation site (docs/, mkdocs.yml) into site/; --strict: a broken link fails.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

## An sdist and a wheel in dist/ (what `pip install dist/toolc-*.whl` installs).
dist: install-test
	rm -rf dist
	$(PY) -m build --outdir dist .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache site dist
