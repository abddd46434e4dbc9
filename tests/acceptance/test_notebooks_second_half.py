"""The second of every two notebooks executes headless at small sizes (test_notebooks.py runs the first; the
reason for two files, and the checks, are in notebook_run.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from notebook_run import check_notebook_runs, half  # noqa: E402 (after the importorskips)

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


@pytest.mark.parametrize("path", half(1), ids=[p.stem for p in half(1)])
def test_notebook_runs(path: Path, tmp_path: Path):
    check_notebook_runs(path, tmp_path)
