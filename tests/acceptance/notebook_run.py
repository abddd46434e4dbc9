"""Execute a notebook headless with small-size parameters and check it: the shared part of test_notebooks.py
and test_notebooks_second_half.py.

WHY two files: executing every notebook is the suite's longest file (300-460 s); pytest-xdist hands out whole
files (--dist loadfile), so one file of them all ran on one worker while the other worker ran out of work.
Each file executes every other notebook of the sorted list (:func:`half`), so every notebook runs exactly
once, and a new one lands in a file with nothing to keep up by hand.

Parameters are injected papermill-style: a cell tagged ``injected-parameters``
goes right after the one tagged ``parameters`` and overrides only the names
that cell defines. Kernels run in a temporary folder, so stores and reports
land there; executed notebooks are kept in the test's folder and copied to
``$WORKBENCH_TEST_OUTPUT`` (a temporary folder unless set) for inspection.
"""

from __future__ import annotations

import ast
import os
import shutil
import time
from pathlib import Path

import nbclient
import nbformat

from workbench.measure.host_settle import SETTLE_ENV

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p for p in (REPO / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 240
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: Small-size overrides; each notebook gets those its parameters cell defines.
SMALL = {"SMALL": True, "BUDGET_S": 0.03, "MEASURE_PEAKS": False}
#: The kernel's CPU cells time without first waiting for the host to run at its best speed, and a round the host
#: slowed is not timed again (workbench/measure/host_settle.py). WHY: beside the other tiers of `make test` a core
#: is never at its best, so every round's wait ran to its cap (a quarter second of a busy core, longer than the
#: SMALL round it precedes) and bought nothing. Measured alone at load 6-9 (CPU s with -> without): 06 29.5 -> 22.9
#: and 25.0 -> 23.1, 01 30.2 -> 26.2; 03 and 04 side by side showed no difference beyond the load's noise.
#: The rows still carry how slow the host ran; the wait and the retry are tested in tests/unit/test_host_settle.py
#: and run in every other bench the suite starts.
HOST_SETTLE_OFF = {SETTLE_ENV: "0"}
#: An IPython startup file each kernel runs: after every cell, and before it starts a process, the kernel's thread
#: gets back the cores the kernel started on. WHY: as in tests/conftest.py's ``unpin``, importing torch pinned the
#: kernel to core 0 (workbench's OpenMP binding), and with it every process the kernel started, so the two
#: notebooks `make test` runs side by side ran their kernels on one core. Workbench's workers bind as anywhere.
KERNEL_UNPIN = """
import os, sys

_cpus = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


def _unpin(*_args):
    if _cpus and os.sched_getaffinity(0) != _cpus:
        try:
            os.sched_setaffinity(0, _cpus)
        except OSError:
            pass


sys.addaudithook(lambda event, _: _unpin() if event in ("subprocess.Popen", "os.posix_spawn", "os.fork") else None)
get_ipython().events.register("post_run_cell", _unpin)
"""


def kernel_profile(workdir: Path) -> Path:
    """An IPython folder for one notebook's kernel (``$IPYTHONDIR``), holding :data:`KERNEL_UNPIN`."""
    startup = workdir / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-unpin.py").write_text(KERNEL_UNPIN)
    return workdir / ".ipython"


def parameter_names(cell) -> set[str]:
    tree = ast.parse(cell.source)
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name)}


def inject_parameters(nb, values: dict) -> dict:
    """Insert an ``injected-parameters`` cell after the ``parameters`` cell; returns what was injected."""
    idx = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    names = parameter_names(nb.cells[idx])
    chosen = {k: v for k, v in values.items() if k in names}
    source = "# Injected by tests/test_notebooks.py\n" + "".join(f"{k} = {v!r}\n" for k, v in chosen.items())
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(idx + 1, cell)
    return chosen


def execute(path: Path, workdir: Path, values: dict):
    nb = nbformat.read(path, as_version=4)
    inject_parameters(nb, values)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", store_widget_state=True,
                                     allow_errors=True, resources={"metadata": {"path": str(workdir)}})
    env = {**os.environ, "WORKBENCH_STORE": str(workdir / "workbench-results.sqlite"),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline", "MPLCONFIGDIR": str(workdir / "mpl"),
           "IPYTHONDIR": str(kernel_profile(workdir)), **HOST_SETTLE_OFF}
    t0 = time.monotonic()
    client.execute(env=env)  # passed on to the kernel manager: the kernel sees this environment
    return nb, time.monotonic() - t0


def outputs_of(cell) -> list:
    return cell.get("outputs", []) if cell.cell_type == "code" else []


def keep(nb, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    nbformat.write(nb, out)
    if os.environ.get("WORKBENCH_TEST_OUTPUT"):  # a temporary folder unless set (tests/conftest.py)
        dest = Path(os.environ["WORKBENCH_TEST_OUTPUT"]) / "notebooks"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, dest / name)


def half(which: int) -> list[Path]:
    """Every other notebook of :data:`NOTEBOOKS`, from the first (``which`` 0) or the second (1)."""
    return NOTEBOOKS[which::2]


def check_notebook_runs(path: Path, tmp_path: Path) -> None:
    """Execute ``path`` at the small sizes; no error output, a PNG in every cell tagged ``figure``, and the
    dashboard rendered as its widget."""
    nb, seconds = execute(path, tmp_path, SMALL)
    keep(nb, tmp_path, path.name)
    errors = [(i, o) for i, c in enumerate(nb.cells) for o in outputs_of(c) if o.output_type == "error"]
    assert not errors, "\n".join(f"cell {i}: {o.ename}: {o.evalue}\n" + "\n".join(o.traceback[-3:])
                                 for i, o in errors)
    for i, cell in enumerate(nb.cells):
        if "figure" in cell.metadata.get("tags", []):
            mimes = {m for o in outputs_of(cell) for m in o.get("data", {})}
            assert "image/png" in mimes, f"cell {i} of {path.name} should draw a figure; got {sorted(mimes)}"
    if path.stem == "dashboard":
        mimes = [m for c in nb.cells for o in outputs_of(c) for m in o.get("data", {})]
        assert WIDGET_MIME in mimes, "the dashboard did not render as a widget"
        state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        classes = {cls for m in state.get("state", {}).values() for cls in m.get("state", {}).get("_dom_classes", [])}
        assert {"wb-dashboard", "wb-run", "wb-cancel", "wb-kernel", "wb-plot", "wb-table"} <= classes
        assert any(c.startswith("wb-backend-") for c in classes)
    print(f"{path.name}: {seconds:.1f} s")
