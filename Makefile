# Two commands matter: `make demo` and `make test`. Everything installs itself.
# While editing, `make check` is the fast loop: lint and the tests not marked slow or browser.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: install bytecode demo test check lint typecheck bench train-verifier clean

# The demo needs only what evalhouse runs on; tests add the dev tools (pytest, playwright,
# Ray, ...), which a first `make demo` need not wait for.
$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Every evalhouse process (a run, an ingest, a dashboard server, an SQL child) imports ~300
# of the project's modules. Where PYTHONDONTWRITEBYTECODE is set (this project's machines
# have it) Python never caches them and each process compiled them all from source again:
# ~0.2 s of CPU each, hundreds of times in `make test`. Compiled here once (what changed).
# pytest too caches its assertion-rewritten test modules only where bytecode may be
# written: 9 s of CPU to collect the suite without, 3.6 s with, in each of its processes.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest
bytecode: $(RUN_STAMP)
	@$(BIN)/python -m compileall -q -j 0 -x 'tests/data/' engine warehouse ingest dashboard evalhouse tests

demo: $(RUN_STAMP) bytecode
	$(BIN)/evalhouse demo $(DEMO_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy engine warehouse ingest dashboard evalhouse

# The full gate: every test, the 25 slowest named at the end. The browser tests run beside
# the others, in a process of their own whose output follows theirs: they spend most of
# their time waiting for a server and a browser, which is when the other workers use the
# cores (no browser test times a page). worksteal: the slowest tests go first
# (tests/conftest.py) and an idle worker takes tests from a busy one's queue, so no worker
# ends the run alone on a long test. Lint and mypy run beside the tests too (a cold mypy
# cache is about 45 s on one core: mypy is single-threaded): their output follows the tests' and a
# failure of either fails `make test` all the same.
# One test worker more than the cores: a worker waits about half its time on what its tests
# started (run processes, servers, browsers, Ray), and the extra one uses the cores then.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
BROWSER_LOG := test-artifacts/browser-tests.log
CHECKS_LOG := test-artifacts/lint-typecheck.log
test: install bytecode
	@mkdir -p test-artifacts
	@$(MAKE) --no-print-directory -k lint typecheck > $(CHECKS_LOG) 2>&1 & checks=$$!; \
	$(PYTEST) -m browser > $(BROWSER_LOG) 2>&1 & browser=$$!; \
	status=0; \
	$(PYTEST) -n $(TEST_WORKERS) --dist worksteal -m "not browser" --durations=25 || status=$$?; \
	wait $$browser || status=1; \
	echo "--- the browser tests ($(BROWSER_LOG))"; cat $(BROWSER_LOG); \
	wait $$checks || status=1; \
	echo "--- lint and typecheck ($(CHECKS_LOG))"; cat $(CHECKS_LOG); \
	exit $$status

# The fast loop: lint and the tests not marked slow or browser, on every core.
check: install lint bytecode
	$(PYTEST) -n auto --dist worksteal -m "not slow and not browser"

bench: install
	$(BIN)/python -m tests.bench

# The claim verifier's training run (docs/verifier.md): its own venv with the CPU torch wheel,
# never part of demo or test. Run it again after an interruption: it resumes.
TRAIN_VENV := .venv-train
$(TRAIN_VENV)/.installed: pyproject.toml
	test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(TRAIN_VENV)/bin/python -m pip install --quiet -e '.[train]'
	touch $@

train-verifier: $(TRAIN_VENV)/.installed
	$(TRAIN_VENV)/bin/python -m training.verifier.train $(TRAIN_ARGS)

clean:
	rm -rf $(VENV) evalhouse-data .mypy_cache .ruff_cache
