"""Every notebook executes headless at small sizes, with no error output and the figures it promises; the
notebooks are committed without outputs, match their build script, and assert what they claim.

This file executes the first of every two notebooks, test_notebooks_second_half.py the others; how they are
executed and checked, and why two files, is in notebook_run.py.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from notebook_run import NOTEBOOKS, REPO, check_notebook_runs, half  # noqa: E402 (after the importorskips)

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

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


@pytest.mark.parametrize("path", half(0), ids=[p.stem for p in half(0)])
def test_notebook_runs(path: Path, tmp_path: Path):
    """The first of every two notebooks (test_notebooks_second_half.py runs the others; notebook_run.py says why)."""
    check_notebook_runs(path, tmp_path)
