# The two commands: `make demo` (set up + run the main job on the demo workspace) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_WS ?= build/demo-workspace
# Extras installed into the venv. CI adds `llama` (a real local model server for integration tests),
# `browser` (Playwright, driving the system's Chromium for the review pages' browser tests) and `milvus`
# (the milvus search engine with Milvus Lite).
EXTRAS ?= dev
# llama.cpp's default build uses AMX kernels that crash with SIGILL on some CPUs; build without them.
LLAMA_CMAKE_ARGS := -DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'

.PHONY: demo test install bench screenshots clean

$(VENV)/.installed-$(EXTRAS): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	if [[ ",$(EXTRAS)," == *",llama,"* ]]; then \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q --no-cache-dir -e '.[$(EXTRAS)]'; \
	else $(PY) -m pip install -q -e '.[$(EXTRAS)]'; fi
	touch $@

install: $(VENV)/.installed-$(EXTRAS)

demo: install
	$(VENV)/bin/skillrag demo --dir $(DEMO_WS)

# The type checker first (mypy, strict on the core packages; config in pyproject.toml), then the tests.
test: install
	$(PY) -m mypy
	$(PY) -m pytest -q || { rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc; }

# Benchmarks read ../shared/data/tau2-banking and write benchmarks/results/; the README's tables follow.
bench: install
	$(PY) benchmarks/retrieval.py
	if $(PY) -c "import pymilvus, milvus_lite" 2>/dev/null; then $(PY) benchmarks/engines.py; \
	else echo "benchmarks/engines.py skipped: it needs the milvus extra (make bench EXTRAS=dev,milvus)"; fi
	$(PY) benchmarks/navigation.py --variants
	$(PY) benchmarks/eval_tau2.py --variants
	$(PY) benchmarks/tracing_overhead.py
	$(PY) benchmarks/update_readme.py

# The review pages' screenshots in docs/ (needs `chromium`, e.g. `apt-get install chromium`).
screenshots:
	$(MAKE) install EXTRAS=dev,browser
	SKILLRAG_REQUIRE_BROWSER=1 SKILLRAG_REVIEW_SCREENSHOTS=docs $(PY) -m pytest -q -p no:cacheprovider tests/service/test_review_browser.py

clean:
	rm -rf build .pytest_cache
