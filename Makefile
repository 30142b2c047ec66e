# Two entry points for a new user: `make demo` and `make test`.
# Each creates .venv and installs the project (with its test extra) when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test lint rnn cnn sharded bench-train

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/demo.py

rnn: $(STAMP)
	$(VENV)/bin/python examples/rnn.py --check

cnn: $(STAMP)
	$(VENV)/bin/python examples/cnn.py --check

sharded: $(STAMP)
	$(VENV)/bin/python examples/sharded_mlp.py --check
	$(VENV)/bin/python examples/sharded_mlp.py --check --processes 2

bench-train: $(STAMP)
	$(VENV)/bin/python bench/train.py

# pytest runs as lit does (lit-tests/lit.cfg.py): glibc fills freed memory and keeps no per-thread
# cache, so a pass that reads an op it erased crashes on every run, not once in twenty (docs/passes.md,
# "Rewriting safely"). Measured on tests/passes and tests/backends files: 5% more time (52 s -> 54 s).
MALLOC_GUARD := MALLOC_PERTURB_=165 GLIBC_TUNABLES=$${GLIBC_TUNABLES:+$$GLIBC_TUNABLES:}glibc.malloc.tcache_count=0

# --durations: the slowest tests are named in every run's log, so that CI's time can be kept short.
test: $(STAMP)
	$(MALLOC_GUARD) $(VENV)/bin/python -m pytest -n auto --durations=40 tests
	$(VENV)/bin/lit -v lit-tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .
