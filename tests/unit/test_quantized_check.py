"""The quantized GEMMs' own check (error against the dot products' absolute mass) runs on the spec's structural
checks first: after tolerances that check nothing were refused (inf passes any output), that structural step had
asked for an inf tolerance and every gemm_int8 / gemm_fp8 cell of the quick suite ended in an error."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.catalog import get_kernel
from workbench.catalog.check import check
from workbench.measure.case import make_host_inputs, reference_outputs


@pytest.mark.parametrize("name", ["gemm_int8", "gemm_fp8"])
def test_the_reference_passes_and_a_wrong_or_nan_output_fails(name):
    spec = get_kernel(name)
    params = {"m": 3, "n": 17, "k": 33}
    for dtype in ("float32", "float64"):
        inputs = make_host_inputs(spec, params, dtype, 0)
        ref = reference_outputs(spec, inputs, params)
        good = {"out": ref["out"].astype(dtype)}
        assert check(spec, good, ref, dtype, inputs, params).passed, dtype
        wrong = {"out": (ref["out"] * 1.5).astype(dtype)}
        assert not check(spec, wrong, ref, dtype, inputs, params).passed
        nan = good["out"].copy()
        nan[1, 2] = np.nan
        result = check(spec, {"out": nan}, ref, dtype, inputs, params)
        assert not result.passed and ("non-finite" in result.message or "nan" in result.message.lower())
