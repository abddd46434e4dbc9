"""The worked example of kernels/README.md: a new row-wise operation on every runtime in <= 80 lines of Python.

The folder is a user's catalog (loaded by path, as WORKBENCH_CATALOG would); every variant must verify
on every backend available here, so the example cannot rot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.catalog import kernels, load_catalog, unregister_kernel, variants
from workbench.sweep.verification import verify

FOLDER = Path(__file__).resolve().parent / "example_catalog" / "l2norm"


@pytest.fixture(scope="module")
def l2norm():
    load_catalog(FOLDER.parent)
    assert "l2norm" in kernels()
    yield "l2norm"
    unregister_kernel("l2norm")


def test_a_new_rowwise_operation_takes_at_most_80_lines():
    lines = sum(len(p.read_text().splitlines()) for p in FOLDER.glob("*.py"))
    assert lines <= 80, f"{lines} lines of Python in {FOLDER.name}/"


def test_it_has_a_variant_for_every_runtime(l2norm):
    have = {(v.name, rt) for v in variants(l2norm).values() for rt in v.runtimes}
    assert {("numpy", "numpy"), ("numba", "numba"), ("torch", "torch"), ("torch-compile", "torch"),
            ("cupy", "cupy"), ("portable", "opencl"), ("portable", "cupy")} <= have


def test_every_variant_verifies_on_every_available_backend(l2norm):
    rows = verify(kernels=l2norm)
    ran = [r for r in rows if r.status != "unsupported"]
    assert {r.backend for r in ran} >= {"numpy"}
    print({(r.variant, r.backend): r.status for r in rows})
    bad = [(r.variant, r.backend, r.status, r.message) for r in ran if not r.passed]
    assert not bad, bad
