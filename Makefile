# Two commands matter: `make demo` and `make test`. Everything installs itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint typecheck bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/evalhouse demo $(DEMO_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy engine warehouse

test: install lint typecheck
	$(BIN)/pytest

bench: install
	$(BIN)/python -m tests.bench

clean:
	rm -rf $(VENV) evalhouse-data .mypy_cache .ruff_cache
