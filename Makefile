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

test: $(STAMP)
	$(VENV)/bin/python -m pytest -n auto tests
	$(VENV)/bin/lit -v lit-tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .
