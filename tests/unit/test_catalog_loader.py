"""User catalog folders load by path; a broken file is reported and does not hide the rest."""

import textwrap

import pytest
from conftest import DOUBLE_SPEC

import workbench
from workbench.catalog import loader, unregister_kernel

NAMES = ("wb_double_ok", "wb_double_broken", "wb_double_fine")


@pytest.fixture(autouse=True)
def _clean_registry():
    yield
    for name in NAMES:
        unregister_kernel(name)
    loader.load_errors.clear()

SPEC = DOUBLE_SPEC

VARIANT = """
import numpy as np
from workbench.catalog import variant

@variant("{name}", "numpy", "numpy", library=True)
def build(ctx):
    def run(inp, out):
        np.multiply(inp["x"], 2, out=out["out"])
    return run
"""


def _kernel(root, name, extra=None):
    d = root / name
    d.mkdir()
    (d / "spec.py").write_text(textwrap.dedent(SPEC.format(name=name)))
    (d / "cpu.py").write_text(textwrap.dedent(VARIANT.format(name=name)))
    for fname, text in (extra or {}).items():
        (d / fname).write_text(text)


def test_user_catalog_loads_and_verifies(tmp_path):
    _kernel(tmp_path, "wb_double_ok")
    assert loader.load_catalog(tmp_path) == ["wb_double_ok"]
    rows = workbench.verify(kernels=["wb_double_ok"], backends=["numpy"])
    assert rows and all(r.status == "ok" for r in rows)


def test_broken_file_is_reported_and_others_still_load(tmp_path):
    _kernel(tmp_path, "wb_double_broken", {"zz_broken.py": "raise RuntimeError('typo in my kernel')\n"})
    _kernel(tmp_path, "wb_double_fine")
    loaded = loader.load_catalog(tmp_path)
    assert {"wb_double_broken", "wb_double_fine"} <= set(loaded)
    assert "typo in my kernel" in loader.load_errors["wb_double_broken/zz_broken.py"]
    assert "numpy" in workbench.variants("wb_double_broken")  # files before the broken one registered
    assert "numpy" in workbench.variants("wb_double_fine")
