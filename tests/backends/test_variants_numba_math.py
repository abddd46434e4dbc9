"""The vectorizable numba math (exp, erf) is accurate, and the kernels built on it really vectorize."""

from __future__ import annotations

import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from workbench.authoring import numba_math as nm  # noqa: E402

ELEMENTWISE = nm.ELEMENTWISE_FASTMATH


def _apply(fn, x):
    @numba.njit(fastmath=ELEMENTWISE)
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])

    out = np.empty_like(x)
    loop(x, out)
    return out


def test_exp32_relative_error():
    x = np.linspace(-87, 88, 400001).astype(np.float32)
    ref = np.exp(x.astype(np.float64))
    assert np.max(np.abs(_apply(nm.exp32, x) - ref) / ref) < 2e-7


def test_exp64_relative_error_and_range():
    x = np.concatenate([np.linspace(-700, 709, 400001), [-745.0, 709.7, 0.0, -1e-300]])
    ref = np.exp(x)
    out = _apply(nm.exp64, x)
    nz = ref > 1e-300
    assert np.max(np.abs(out[nz] - ref[nz]) / ref[nz]) < 1e-15
    assert np.all(np.isfinite(out))
    assert _apply(nm.exp64, np.array([-1000.0, 1000.0]))[0] == pytest.approx(np.exp(-745.0), rel=1.0, abs=1e-320)


def test_erf32_absolute_error():
    from scipy.special import erf

    x = np.linspace(-7, 7, 400001).astype(np.float32)
    assert np.max(np.abs(_apply(nm.erf32, x) - erf(x.astype(np.float64)))) < 5e-7


def test_numba_dtype_guard():
    with pytest.raises(ValueError, match="float32 and float64"):
        nm.numpy_dtype("float16")


def test_gelu_kernel_vectorizes_without_libm_calls():
    """The point of numba_math: the float32 gelu loop is packed SIMD with no per-element exp/tanh call."""
    from workbench.catalog import get_variant
    from workbench.catalog.spec import BuildContext

    get_variant("gelu_tanh", "numba").build(BuildContext(backend=None, params={"n": 8}, dtype="float32"))
    import sys

    numba_variants = sys.modules["workbench_catalog.gelu_tanh.numba_variants"]  # catalog modules are loaded by path
    kernel = numba_variants.gelu("float32")
    # A fresh compile of the same function with the same options: numba cannot inspect code loaded from its disk cache.
    import numpy as np
    from numba import njit

    fresh = njit(**{k: v for k, v in kernel.targetoptions.items() if k != "nopython"})(kernel.py_func)
    fresh(np.zeros(1, np.float32), np.zeros(1, np.float32))
    asm = "\n".join(fresh.inspect_asm().values())
    assert re.search(r"\bv(fmadd|mul|add)\w*ps\s+%[yz]mm", asm), "no packed float32 arithmetic"
    # numba reaches libm through an absolute address: `movabsq $tanhf, %reg` then `callq *%reg`.
    assert not re.search(r"\$(tanhf?|expf?)\b", asm), "libm call left in the loop"


def test_fmax_reduction_is_exact_and_vectorized():
    @numba.njit(fastmath=True)
    def rowmax(x):
        m = x[0]
        for j in range(1, x.shape[0]):
            m = nm.fmax(m, x[j])
        return m

    for dtype in (np.float32, np.float64):
        x = np.random.default_rng(1).standard_normal(10007).astype(dtype)
        assert rowmax(x) == x.max()
    asm = "\n".join(rowmax.inspect_asm().values())
    assert re.search(r"vmaxp[sd]", asm), "maxnum reduction did not vectorize"
