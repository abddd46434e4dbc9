"""A kernel that segfaults, defined in a notebook cell, ends as a ``crashed`` row; the notebook's kernel
lives on and runs the next cell."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = [pytest.mark.notebook]

REPO = Path(__file__).resolve().parents[2]

CELLS = [
    """\
import ctypes, dataclasses, os
import numpy as np
import workbench
from workbench.catalog import get_kernel, register_kernel, variant
register_kernel(dataclasses.replace(get_kernel("vector_add"), name="nb_crash_add"))

@variant("nb_crash_add", "good", "numpy")
def good(ctx):
    return lambda i, o: np.add(i["a"], i["b"], out=o["out"])

@variant("nb_crash_add", "segv", "numpy")
def segv(ctx):
    def run(i, o):
        ctypes.string_at(0)  # a segfault, as a wild pointer in a C extension would cause
    return run
""",
    """\
res = workbench.benchmark("nb_crash_add", sizes=[1000], budget_s=0.03, rounds=1, progress=False)
statuses = dict(zip(res.df["variant"], res.df["status"]))
messages = dict(zip(res.df["variant"], res.df["message"]))
""",
    """\
assert statuses == {"good": "ok", "segv": "crashed"}, statuses
assert "SIGSEGV" in messages["segv"], messages["segv"]
print("KERNEL-PID", os.getpid(), "ALIVE")
""",
]


def test_a_segfaulting_notebook_kernel_does_not_kill_the_notebook(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(tmp_path)}})
    env = {**os.environ, "WORKBENCH_STORE": str(tmp_path / "s.sqlite"), "WORKBENCH_AUTO_PEAKS": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    client.execute(env=env)
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    assert "ALIVE" in out
