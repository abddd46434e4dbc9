"""Issue 37, point 10: CuPy's library variants are CuPy's idiomatic best (one ElementwiseKernel for gelu_tanh and
rope, ReductionKernels and an ElementwiseKernel for softmax and rmsnorm), the chains kept as ``cupy-unfused``, and
the quick suite measures the fused ones. Without a GPU the snippets are compiled by NVRTC in the harness of
:mod:`workbench.catalog.cupy_fused` (float and double; CuPy's float16 type and the kernels' results need a GPU:
``verify --backends cupy`` checks them there, tests/unit/test_cupy_variants.py requires it; the snippets' formulas
run on the host in tests/unit/test_cupy_fused_host.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.catalog import cupy_fused, kernels, variants

FUSED = ("gelu_tanh", "softmax", "rmsnorm", "rope")


@pytest.mark.parametrize("kernel", FUSED)
def test_the_library_variant_is_fused_and_the_chain_is_named_unfused(kernel):
    kernels()
    fused, chain = variants(kernel)["cupy"], variants(kernel)["cupy-unfused"]
    assert fused.library and fused.mode == "eager" and fused.runtimes == ("cupy",)
    assert "Kernel" in fused.description and "launch" in fused.description
    assert chain.library and chain.runtimes == ("cupy",)
    assert fused.build.__module__ == chain.build.__module__ == f"workbench_catalog.{kernel}.cupy_variants"


@pytest.mark.parametrize("kernel", FUSED)
def test_the_quick_suite_measures_the_fused_variant(kernel):
    from workbench.sweep.suites import quick_variants

    class _Cupy:
        runtime = "cupy"

    kernels()
    assert [v.name for v in quick_variants(kernel, _Cupy())] == ["cupy"]


def _nvrtc(tmp_path, name: str, source: str) -> subprocess.CompletedProcess:
    from workbench.portable import cupy_nvrtc
    from workbench.portable.compile_check import nvrtc_version

    if nvrtc_version() is None:
        pytest.skip("NVRTC is not loadable here (pip install cupy-cuda13x nvidia-cuda-nvrtc)")
    src = tmp_path / f"{name}.cu"
    src.write_text(source)
    return subprocess.run([sys.executable, "-m", cupy_nvrtc.__name__, "compute_80", str(src),
                           str(tmp_path / f"{name}.ptx")], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("ctype", ["float", "double"])
def test_the_fused_snippets_compile_with_nvrtc(tmp_path, ctype):
    f = cupy_fused
    acc = ctype  # the row sums are in the compute type
    units = {"gelu_tanh": f.elementwise_source(f.GELU_TANH, ctype),
             "row_max": f.reduction_source(f.ROW_MAX, ctype),
             "row_exp_sum": f.reduction_source(f.ROW_EXP_SUM, ctype, ("x", "m"), out_type=acc),
             "softmax_scale": f.elementwise_source(f.SOFTMAX_SCALE, ctype, ("x", "m"), ("s",)),
             "row_mean_square": f.reduction_source(f.ROW_MEAN_SQUARE, ctype, out_type=acc),
             "rmsnorm_scale": f.elementwise_source(f.RMSNORM_SCALE, ctype, ("x", "w"), ("ms", "eps")),
             "rope_half": f.elementwise_source(f.ROPE_HALF, ctype, (), raw_params=("x", "c", "s"),
                                               int_params=("heads", "half"))}
    for name, source in units.items():
        done = _nvrtc(tmp_path, f"{name}_{ctype}", source)
        assert done.returncode == 0, f"{name} ({ctype}):\n{done.stdout}\n{done.stderr}\n{source}"


def test_the_harness_fails_a_snippet_that_does_not_compile(tmp_path):
    done = _nvrtc(tmp_path, "broken", cupy_fused.elementwise_source("out = (T)no_such_function(x);", "float"))
    assert done.returncode != 0 and "no_such_function" in done.stdout
