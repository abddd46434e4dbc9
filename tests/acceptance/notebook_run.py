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

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p for p in (REPO / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 240
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: Small-size overrides; each notebook gets those its parameters cell defines.
SMALL = {"SMALL": True, "BUDGET_S": 0.03, "MEASURE_PEAKS": False}


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
           "MPLBACKEND": "module://matplotlib_inline.backend_inline", "MPLCONFIGDIR": str(workdir / "mpl")}
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
