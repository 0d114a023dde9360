# Two commands on a fresh machine: `make demo` and `make test`. Each creates .venv when missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/vamos demo

test: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .
	$(BIN)/python scripts/typecheck.py
	$(BIN)/python -m pytest -n 2 --dist loadgroup

bench: $(STAMP)
	for b in clone tools grade env agents speech; do $(BIN)/python benchmarks/$$b.py || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
