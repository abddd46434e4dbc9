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

# Bytecode is written as modules are first imported, whatever the calling shell says: with
# PYTHONDONTWRITEBYTECODE=1 (set on some sandboxes and CI runners) every process compiled every module it
# imported from source again (installs here compile no bytecode up front), `import torch` alone 2.9 s against
# 1.6 s, the workbench's own modules 1.7 s more, in each sweep worker, notebook kernel and test process.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-full test-core test-unit-extras FORCE lint lab info clean system-deps system-deps-test

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
CORE_REQS := -e . "pytest>=8.0" "pytest-timeout>=2.3" "pytest-xdist>=3.6"

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

# Every tier: lint; the unit tier in a venv with only the core dependencies, then in .venv the unit tests that
# run could not (test-unit-extras); every other tier in .venv. Each unit test runs at least once, and twice only
# where a second run checks more (it skipped for want of a runtime, or is marked `extras`). Three jobs at once:
# the installs (mostly network and disk) side by side, then each tier as soon as its own venv is ready, so the
# full suite starts beside the core tier instead of after it. Every tier runs
# even after another fails (-k), and make still exits non-zero. The unit tiers' lines start with "core| " and
# "unit+| " (written whole, so other output cannot split them). The tiers share one private ceilings cache
# (tests/conftest.py gives each pytest run its own otherwise): test-unit-extras and test-full run in one
# environment, so the automatic ceilings probe (10-25 s of busy cores under load) runs once for both.
# One ceilings cache for every tier (each probes the CPU once, not once per tier), removed at the end.
test:
	@if [ -z "$$WORKBENCH_CEILINGS_CACHE" ]; then made=$$(mktemp -d -t wb-ceilings-XXXXXX) || exit 1; \
		trap 'rm -rf "$$made"' EXIT; export WORKBENCH_CEILINGS_CACHE="$$made/ceilings.json"; fi; \
	$(MAKE) --no-print-directory -k -j3 test-core test-unit-extras test-full lint \
		'FULL_TESTS=--ignore=tests/unit tests'

# The full suite in TEST_WORKERS pytest-xdist processes (0: in pytest's own), a test file per worker at a time
# (--dist loadfile: a module's fixtures, e.g. one quick-suite run shared by its tests, still run once). Files
# are handed out longest first (tests/conftest.py orders them by tests/file_durations.json; xdist's own
# reorder by test count is off), so no long file starts last and runs alone.
# FULL_TESTS: what it runs (`make test` leaves tests/unit to test-core and test-unit-extras).
TEST_WORKERS ?= 2
FULL_TESTS ?= tests
test-full: system-deps-test $(VENV)/.installed-test
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(FULL_TESTS)

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .

# The unit tier must pass without any optional runtime (no numba, torch, cupy, pyopencl, triton, wgpu).
# After $(PY): that venv's uv installs this one too.
$(CORE_VENV)/.installed: pyproject.toml | $(PY)
	$(PYTHON) -m venv $(CORE_VENV)
	$(call install,$(CORE_VENV)/bin/python,$(CORE_REQS))
	touch $@

# The unit tiers run in UNIT_WORKERS pytest-xdist processes each, files handed out longest first as in test-full.
# WHY: each is one chain (test-unit-extras starts when test-core has ended): in one process each, the two took
# 275-315 s + 309-334 s of a fresh-clone CI run, a floor under `make test` however fast the full tier got.
# xdist's controller sees every report, so --ran-out and --skip-ran-in work as in one process.
UNIT_WORKERS ?= 2
UNIT_XDIST := $(if $(filter 0,$(UNIT_WORKERS)),,-n $(UNIT_WORKERS) --dist loadfile --no-loadscope-reorder)

# CORE_RAN lists the unit tests that ran there (not skipped; tests/conftest.py's --ran-out). Its rule succeeds
# even where a test failed, keeping pytest's status in CORE_STATUS for test-core to exit with: under make -k a
# failed target's dependents would not run, and test-unit-extras must run all the same.
CORE_RAN := $(CORE_VENV)/unit-ran.txt
CORE_STATUS := $(CORE_VENV)/unit-status
$(CORE_RAN): SHELL := /bin/bash
$(CORE_RAN): FORCE $(CORE_VENV)/.installed
	@rm -f $@ $(CORE_STATUS)
	$(CORE_VENV)/bin/python -m pytest -q -p no:cacheprovider $(UNIT_XDIST) --ran-out $@ tests/unit 2>&1 \
		| sed -u 's/^/core| /'; \
		echo $${PIPESTATUS[0]} > $(CORE_STATUS)

test-core: $(CORE_RAN)
	@exit $$(cat $(CORE_STATUS))

# The unit tests the core tier did not run, in .venv with every extra: those that skipped there for want of a
# runtime, node ids it never saw (parametrised over what is installed) and those marked `extras`. Where the
# core run left no list (it crashed), every unit test runs here.
test-unit-extras: SHELL := /bin/bash
test-unit-extras: .SHELLFLAGS := -o pipefail -c
test-unit-extras: $(CORE_RAN) system-deps-test $(VENV)/.installed-test
	$(PY) -m pytest -q -p no:cacheprovider $(UNIT_XDIST) --skip-ran-in $(CORE_RAN) tests/unit 2>&1 \
		| sed -u 's/^/unit+| /'

FORCE:

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
