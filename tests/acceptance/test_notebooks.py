"""Every notebook executes headless at small sizes, with no error output and the figures it promises.

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
import subprocess
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

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


def test_notebooks_are_committed_without_outputs():
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path.name}: stored outputs"


def test_notebooks_match_their_build_script(tmp_path: Path):
    """The committed notebooks are what ``notebooks/_build.py`` writes from ``notebooks/_nb_*.py``: an edit to
    one without the other would test (and ship) a tutorial nobody can regenerate."""
    built = subprocess.run([sys.executable, str(REPO / "notebooks" / "_build.py"), "--out", str(tmp_path)],
                           capture_output=True, text=True, check=True)
    fresh_paths = sorted(tmp_path.glob("*.ipynb"))
    assert len(fresh_paths) == len(built.stdout.split()), built.stdout
    for fresh in fresh_paths:
        committed = REPO / "notebooks" / fresh.name
        assert committed.exists(), f"{fresh.name} is built but not committed"
        assert fresh.read_text() == committed.read_text(), \
            f"{fresh.name} differs from what notebooks/_build.py writes: run `python notebooks/_build.py`"
    sources = {p.stem.removeprefix("_nb_") for p in (REPO / "notebooks").glob("_nb_*.py")}
    assert sources == {p.stem for p in NOTEBOOKS}, "every notebook has exactly one _nb_<stem>.py source"


#: Tutorials whose text draws conclusions from their own measurements, and must assert them.
CLAIMING = ("04_", "05_", "06_", "07_", "08_", "09_", "10_", "11_")


def code_of(cell) -> str:
    """A code cell's Python, as IPython runs it (``x = %wb_timeit ...`` becomes a call, ``%%`` cells too)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell.source)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name.startswith(CLAIMING)],
                         ids=[p.stem for p in NOTEBOOKS if p.name.startswith(CLAIMING)])
def test_tutorial_asserts_its_claims(path: Path):
    """A tutorial that phrases its conclusions from the measurement asserts them, so that a sentence and the
    numbers it rests on cannot part without the notebook test failing; and it states no fixed outcome the
    measurement could contradict."""
    nb = nbformat.read(path, as_version=4)
    asserts = [node for c in nb.cells if c.cell_type == "code"
               for node in ast.walk(ast.parse(code_of(c))) if isinstance(node, ast.Assert)]
    assert asserts, f"{path.name}: no assert on what it claims"
    text = " ".join(c.source for c in nb.cells).lower()
    for claim in ("should run up to twice as fast", "each point sits under", "fused beats unfused"):
        assert claim not in text, f"{path.name}: fixed claim {claim!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path):
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
