# The two commands a fresh machine needs: `make test` and `make demo`.
# The openspiel extra (open-spiel 2.0.2, ~22 s to install into a fresh venv here) is part of the
# install, so its tests (tests/fronts/test_openspiel.py, tests/exploit/test_exact.py) run in CI.
# torch is pinned here (a CPU wheel this machine has on disk); the package itself asks for torch>=2.3.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-rllib demo bench install clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[train,dev,render,openspiel,web,llm,mcp]"
	touch $(STAMP)

install: $(STAMP)

# Ray RLlib (the `rllib` extra, which brings Ray: also the `--address` cluster tests) gets its own venv: ray 2.60 pins gymnasium==1.2.2, and `make test`
# (CI) keeps testing the gymnasium a plain install resolves to. CI does not run this target.
RLLIB_VENV := .venv-rllib
RLLIB_PY := $(RLLIB_VENV)/bin/python
RLLIB_STAMP := $(RLLIB_VENV)/.installed

$(RLLIB_STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_PY) -m pip install -q --upgrade pip
	$(RLLIB_PY) -m pip install -q "torch==2.13.0"
	$(RLLIB_PY) -m pip install -q -e ".[train,dev,rllib]"
	touch $(RLLIB_STAMP)

test-rllib: $(RLLIB_STAMP)
	@$(RLLIB_PY) -c "import ray; print('ray', ray.__version__, 'in $(RLLIB_VENV)')"
	$(RLLIB_PY) -m pytest -q tests/learners/test_rllib.py tests/training/test_ray_cluster.py

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 --dist loadgroup -q tests  # loadgroup: the modules of tests/conftest.py ONE_WORKER each run in one worker

demo: $(STAMP)
	$(PY) -m domino_training.tools.demo

bench: $(STAMP)
	$(PY) -m pip install -q -e ".[bench]"  # the peers the headline compares against
	$(PY) -m domino_training.tools.envspeed

clean:
	rm -rf $(VENV) $(RLLIB_VENV) .pytest_cache
