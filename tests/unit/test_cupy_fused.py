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


def _require_nvrtc() -> None:
    from workbench.portable.compile_check import nvrtc_version

    if nvrtc_version() is None:
        pytest.skip("NVRTC is not loadable here (pip install cupy-cuda13x nvidia-cuda-nvrtc)")


def _nvrtc(tmp_path, name: str, source: str) -> subprocess.CompletedProcess:
    """``source`` compiled by the harness's command line (``python -m workbench.portable.cupy_nvrtc``)."""
    from workbench.portable import cupy_nvrtc

    _require_nvrtc()
    src = tmp_path / f"{name}.cu"
    src.write_text(source)
    return subprocess.run([sys.executable, "-m", cupy_nvrtc.__name__, "compute_80", str(src),
                           str(tmp_path / f"{name}.ptx")], capture_output=True, text=True, timeout=120, check=False)


#: Compiles each (source, PTX) pair of argv[1] (a JSON list) with the harness's ``main``, in one process; prints
#: each one's exit status and NVRTC log as a JSON list.
_COMPILE_EACH = """
import contextlib, io, json, sys
from workbench.portable.cupy_nvrtc import main
done = []
for src, ptx in json.loads(sys.argv[1]):
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        status = main(["compute_80", src, ptx])
    done.append([status, log.getvalue()])
print(json.dumps(done))
"""


def _nvrtc_each(tmp_path, sources: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Each of ``sources`` compiled by the harness (:func:`workbench.portable.cupy_nvrtc.main`), all in one
    subprocess (a process per snippet spent most of its time starting Python and CuPy's binding): name ->
    (exit status, NVRTC log). The command line itself is checked by the broken-snippet test."""
    import json

    _require_nvrtc()
    pairs = []
    for name, source in sources.items():
        (tmp_path / f"{name}.cu").write_text(source)
        pairs.append([str(tmp_path / f"{name}.cu"), str(tmp_path / f"{name}.ptx")])
    done = subprocess.run([sys.executable, "-c", _COMPILE_EACH, json.dumps(pairs)], capture_output=True, text=True,
                          timeout=120 * len(pairs), check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: (status, log) for name, (status, log) in zip(sources, json.loads(done.stdout), strict=True)}


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
    done = _nvrtc_each(tmp_path, {f"{name}_{ctype}": source for name, source in units.items()})
    for name, source in units.items():
        status, log = done[f"{name}_{ctype}"]
        assert status == 0, f"{name} ({ctype}):\n{log}\n{source}"
        assert (tmp_path / f"{name}_{ctype}.ptx").stat().st_size > 0, name


def test_the_harness_fails_a_snippet_that_does_not_compile(tmp_path):
    done = _nvrtc(tmp_path, "broken", cupy_fused.elementwise_source("out = (T)no_such_function(x);", "float"))
    assert done.returncode != 0 and "no_such_function" in done.stdout
