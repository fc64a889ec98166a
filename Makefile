# The two commands a fresh machine needs: `make test` and `make demo`.
# torch is pinned here (a CPU wheel this machine has on disk); the package itself asks for torch>=2.3.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench install clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[train,dev,render]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2 -q tests

demo: $(STAMP)
	$(PY) -m training.demo

bench: $(STAMP)
	$(PY) -m domino_envs.bench

clean:
	rm -rf $(VENV) .pytest_cache
