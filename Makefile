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

.PHONY: demo test test-core lint lab info clean system-deps system-deps-test

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-demo: pyproject.toml | $(PY)
	$(PIP) install --quiet "$(TORCH_SPEC)"
	$(PIP) install --quiet -e ".[$(RUNTIME_EXTRAS),notebook]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PIP) install --quiet "$(TORCH_SPEC)"
	$(PIP) install --quiet -e ".[$(RUNTIME_EXTRAS),notebook,dev]"
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

# Every tier: lint, the unit tier in a venv with only the core dependencies, then all tiers with every extra.
test: system-deps-test $(VENV)/.installed-test lint test-core
	$(PY) -m pytest tests

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .

# The unit tier must pass without any optional runtime (no numba, torch, cupy, pyopencl, triton, wgpu).
$(CORE_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CORE_VENV)/bin/python -m pip install --quiet -e . "pytest>=8.0" "pytest-timeout>=2.3"
	touch $@

test-core: $(CORE_VENV)/.installed
	$(CORE_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/unit

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
