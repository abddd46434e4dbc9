# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# A CPU build of torch; an unpinned torch pulls a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0
RUNTIME_EXTRAS := numba,opencl,cuda,compile,vulkan,triton,tune,cluster
LAB_PORT ?= 8888
# Empty: `make lab` draws one token in its recipe's shell, so the URL printed and the server agree (a
# `$(shell ...)` here is recursively expanded: each use would draw a new token). The server gets it in
# $JUPYTER_TOKEN, never on its command line (which any local user can read with `ps`), and
# port_retries=0 makes it stop on a taken port instead of moving to one the printed URL does not name.
LAB_TOKEN ?=

CORE_VENV ?= .venv-core

.PHONY: demo test test-full test-core lint lab info clean system-deps system-deps-test

# Installs go through uv where it installs (several times faster than pip: parallel downloads, no bytecode
# compiled up front; the same packages), through pip otherwise. torch goes through pip, which reads this
# machine's pip configuration (a local CPU build of torch) that uv does not; --no-compile leaves its
# bytecode to the first import, as uv does. $(call install,PYTHON,ARGS) installs ARGS into PYTHON's venv.
UV := $(VENV)/bin/uv
install = if [ -x $(UV) ]; then $(UV) pip install --quiet --python $(1) $(2); \
	else $(1) -m pip install --quiet $(2); fi
# (In variables: a comma written in a $(call) argument would split it.)
DEMO_REQS := -e ".[$(RUNTIME_EXTRAS),notebook,history]"
TEST_REQS := -e ".[$(RUNTIME_EXTRAS),notebook,history,dev]"
CORE_REQS := -e . "pytest>=8.0" "pytest-timeout>=2.3"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet uv || $(PIP) install --quiet --upgrade pip

$(VENV)/.installed-demo: pyproject.toml | $(PY)
	$(PIP) install --quiet --no-compile "$(TORCH_SPEC)"
	$(call install,$(PY),$(DEMO_REQS))
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PIP) install --quiet --no-compile "$(TORCH_SPEC)"
	$(call install,$(PY),$(TEST_REQS))
	touch $@ $(VENV)/.installed-demo

system-deps:
	@bash scripts/system-deps.sh demo

system-deps-test:
	@bash scripts/system-deps.sh test

demo: system-deps $(VENV)/.installed-demo
	$(VENV)/bin/workbench info
	$(VENV)/bin/workbench verify --suite quick
	$(VENV)/bin/workbench bench --suite quick --store reports/results.sqlite \
		--report reports/quick.html --json reports/quick.json
	@echo ""
	@echo "Report: reports/quick.html (open it in a browser). Every row: reports/results.sqlite."
	@echo "Next steps:"
	@echo "  make lab       JupyterLab with the tutorials; start with notebooks/01_quickstart.ipynb, then"
	@echo "                 04_gemm_naive_tiled_library.ipynb and 05_memory_bound_fusion.ipynb"
	@echo "  make demo      a second time, then compare the runs (ids: $(VENV)/bin/workbench runs --store reports/results.sqlite):"
	@echo "                 $(VENV)/bin/workbench compare RUN_A RUN_B --store reports/results.sqlite"
	@echo "  $(VENV)/bin/workbench bench --list-suites    the larger suites: standard, llm, full"
	@echo "  $(VENV)/bin/workbench verify                 every variant on every backend (the demo verified what it measured)"

# Every tier: lint, the unit tier in a venv with only the core dependencies, and all tiers with every extra.
# Three jobs at once: the installs (mostly network and disk) side by side, then each tier as soon as its own
# venv is ready, so the full suite starts beside the core tier instead of after it (which left a core idle
# for minutes: the core tier is one process). Every tier runs even after another fails (-k), and make still
# exits non-zero. The core tier's lines start with "core| " (written whole, so other output cannot split them).
test:
	@$(MAKE) --no-print-directory -k -j3 test-core test-full lint

# The full suite in TEST_WORKERS pytest-xdist processes (0: in pytest's own), a test file per worker at a time
# (--dist loadfile: a module's fixtures, e.g. one quick-suite run shared by its tests, still run once). Files
# are handed out longest first (tests/conftest.py orders them by tests/file_durations.json; xdist's own
# reorder by test count is off), so no long file starts last and runs alone.
TEST_WORKERS ?= 2
test-full: system-deps-test $(VENV)/.installed-test
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder tests

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .

# The unit tier must pass without any optional runtime (no numba, torch, cupy, pyopencl, triton, wgpu).
# After $(PY): that venv's uv installs this one too.
$(CORE_VENV)/.installed: pyproject.toml | $(PY)
	$(PYTHON) -m venv $(CORE_VENV)
	$(call install,$(CORE_VENV)/bin/python,$(CORE_REQS))
	touch $@

test-core: SHELL := /bin/bash
test-core: .SHELLFLAGS := -o pipefail -c
test-core: $(CORE_VENV)/.installed
	$(CORE_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/unit 2>&1 | sed -u 's/^/core| /'

lab: $(VENV)/.installed-demo
	@token='$(LAB_TOKEN)'; \
	if [ -z "$$token" ]; then token=$$($(PY) -c "import secrets; print(secrets.token_hex(16))") || exit 1; fi; \
	echo "JupyterLab: http://127.0.0.1:$(LAB_PORT)/lab?token=$$token"; \
	JUPYTER_TOKEN="$$token" exec $(VENV)/bin/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) \
		--ServerApp.port_retries=0 --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root,)

info: $(VENV)/.installed-demo
	$(VENV)/bin/workbench info

clean:
	rm -rf $(VENV) $(CORE_VENV) reports build dist *.egg-info
