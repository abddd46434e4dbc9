"""Deliberately bad kernels end in a non-ok row with a clear reason in both ``verify`` and ``bench``.

Writes just outside an output (into its guard zone: no crash), a replayed answer, a mutated input and a
MemoryError, on a private copy of the vector_add spec, with the honest variant beside them staying ok.
Writes far out of bounds, aborts, segfaults, hangs and runaway memory: tests/unit/test_isolation.py and
tests/backends/test_isolation_backends.py.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import require_backend

import workbench
from workbench.catalog import get_kernel, get_variant, variant
from workbench.measure.case import GUARD, Case
from workbench.measure.cell import is_oom
from workbench.sweep.verification import BOUNDSCHECK_NOTE, verify

K = "_bad_add"


def _past_end(i, o):
    out = o["out"]
    np.add(i["a"], i["b"], out=out)
    np.lib.stride_tricks.as_strided(out, shape=(out.size + 1,), strides=out.strides)[out.size] = 1.0


def _before_start(i, o):
    out = o["out"]
    np.add(i["a"], i["b"], out=out)
    for k in range(1, 4):  # three elements before out[0]
        np.lib.stride_tricks.as_strided(out, shape=(k + 1,), strides=(-out.itemsize,))[k] = 2.0


def _replay():
    cached: dict[str, np.ndarray] = {}

    def run(i, o):
        if "out" not in cached:
            cached["out"] = i["a"] + i["b"]
        o["out"][...] = cached["out"]
    return run


def _mutates_input(i, o):
    np.add(i["a"], i["b"], out=o["out"])
    i["a"][0] += 1.0


def _oom(i, o):
    raise MemoryError("Unable to allocate 8.00 EiB for an array with shape (1152921504606846976,)")


#: variant -> (numpy run, status it must end in, words its message must contain)
BAD = {
    "past-end": (lambda: _past_end, "incorrect", "wrote 1 element past the end of `out`"),
    "before-start": (lambda: _before_start, "incorrect", "wrote 3 elements before the start of `out`"),
    "replay": (_replay, "incorrect", "max error"),
    "mutates-input": (lambda: _mutates_input, "incorrect", "modified its input `a`"),
    "oom": (lambda: _oom, "oom", "Unable to allocate"),
}


@functools.cache
def _numba_past_end(checked: bool):
    """A numba kernel writing ``out[n]`` (one past the end); compiled separately with and without
    boundscheck (a dispatcher keeps the code of its first compile)."""
    import numba

    @numba.njit
    def k(a, b, out):
        n = a.size
        for j in range(n):
            out[j] = a[j] + b[j]
        out[n] = 1.0
    return k


@pytest.fixture
def bad_kernels(temp_kernels):
    temp_kernels(K, like="vector_add")
    variant(K, "numpy", "numpy", library=True)(lambda ctx: lambda i, o: np.add(i["a"], i["b"], out=o["out"]))
    for name, (make, _, _) in BAD.items():
        variant(K, name, "numpy")(lambda ctx, make=make: make())

    def numba_build(ctx):
        from workbench.authoring.numba_support import numba_boundscheck

        kern = _numba_past_end(numba_boundscheck())
        return lambda i, o: kern(i["a"], i["b"], o["out"])
    variant(K, "numba-past-end", "numba", dtypes=("float32", "float64"))(numba_build)
    return K


def _verify_rows(**kw):
    return {r.variant: r for r in verify(kernels=K, **kw)}


def test_verify_fails_each_bad_kernel(bad_kernels):
    rows = _verify_rows(backends="numpy", seeds=(0, 1))
    assert rows["numpy"].status == "ok", rows["numpy"].message
    for name, (_, status, words) in BAD.items():
        assert rows[name].status == status, (name, rows[name])
        assert words in rows[name].message, (name, rows[name].message)


def test_bench_fails_each_bad_kernel(bad_kernels, tmp_path):
    """Also the replayed answer: the first input set is right, so only checking every rotated set catches it."""
    res = workbench.benchmark(kernel=K, backends=["numpy"], sizes=[4099], budget_s=0.05, rounds=2,
                              store=str(tmp_path / "s.sqlite"), progress=False)
    rows = {r["variant"]: r for r in res.df.to_dict("records")}
    assert rows["numpy"]["status"] == "ok", rows["numpy"]["message"]
    for name, (_, status, words) in BAD.items():
        assert rows[name]["status"] == status, (name, rows[name]["status"], rows[name]["message"])
        assert words in rows[name]["message"], (name, rows[name]["message"])
    assert "rotated input set" in rows["replay"]["message"]


def test_bench_replay_caught_with_one_round(bad_kernels, tmp_path):
    res = workbench.benchmark(kernel=K, variants=["numpy", "replay"], backends=["numpy"], sizes=[4099],
                              budget_s=0.03, rounds=1, store=str(tmp_path / "s.sqlite"), progress=False)
    status = dict(zip(res.df["variant"], res.df["status"], strict=True))
    assert status == {"numpy": "ok", "replay": "incorrect"}


def test_numba_write_past_end_caught_by_guard_and_by_boundscheck(bad_kernels, tmp_path):
    require_backend("numba")
    plain = _verify_rows(backends="numba", variants="numba-past-end", seeds=(0,))["numba-past-end"]
    assert plain.status == "incorrect" and "wrote 1 element past the end of `out`" in plain.message
    checked = _verify_rows(backends="numba", variants="numba-past-end", seeds=(0,), boundscheck=True)
    row = checked["numba-past-end"]
    assert row.status == "error" and "IndexError" in row.message and BOUNDSCHECK_NOTE in row.message, row
    res = workbench.benchmark(kernel=K, variants=["numba-past-end"], backends=["numba"], sizes=[4099],
                              budget_s=0.03, rounds=1, store=str(tmp_path / "s.sqlite"), progress=False)
    (r,) = res.df.to_dict("records")
    assert r["status"] == "incorrect" and "past the end of `out`" in r["message"]


def test_boundscheck_is_off_again_after_verify(bad_kernels):
    pytest.importorskip("numba")
    import numba

    before = numba.config.BOUNDSCHECK
    _verify_rows(backends="numpy", variants="numpy", seeds=(0,), boundscheck=True)
    assert numba.config.BOUNDSCHECK == before


def test_honest_numba_rows_say_boundscheck_on():
    require_backend("numba")
    (row,) = verify(kernels="vector_add", backends="numba", seeds=(0,), boundscheck=True)
    assert row.status == "ok" and row.message == BOUNDSCHECK_NOTE


def test_torch_outputs_have_guard_zones(bad_kernels):
    backend = require_backend("torch-cpu")

    def build(ctx):
        def run(i, o):
            out = o["out"]
            out.copy_(i["a"] + i["b"])
            out.as_strided((out.numel() + 2,), (1,))[out.numel():] = 1.0
        return run
    variant(K, "torch-past-end", "torch")(build)
    spec = get_kernel(K)
    case = Case(spec, get_variant(K, "torch-past-end"), backend, {"n": 1001}, "float32")
    assert case.outputs["out"].storage_offset() == GUARD and case.outputs["out"].is_contiguous()
    res = case.run_and_check()
    assert not res.passed and "wrote 2 elements past the end of `out`" in res.message


def test_opencl_outputs_sit_between_guard_zones_through_sub_buffers():
    """The portable runtime passes ``Array.data``, which pyopencl refuses for a sliced array, so an OpenCL
    output is a sub-buffer of a larger poisoned buffer (``Backend.window``): a write past its end lands in
    the guard zone, and the honest kernel still passes."""
    from workbench.backends import registry

    names = [n for n, b in registry.all_backends().items() if b.runtime == "opencl" and b.probe().available]
    if not names:
        pytest.skip("no OpenCL device here")
    import pyopencl.array as cla

    backend = registry.get(names[0])
    view = backend.from_numpy(np.zeros(3 * GUARD, np.float32))[GUARD:2 * GUARD]
    with pytest.raises(cla.ArrayHasOffsetError):
        view.data  # noqa: B018 - why a plain slice cannot be handed to set_args
    try:
        case = Case(get_kernel("vector_add"), get_variant("vector_add", "portable"), backend, {"n": 33}, "float32")
    except Exception as exc:  # noqa: BLE001 - only the guard decision matters here
        pytest.skip(f"cannot build the portable variant on {names[0]}: {exc}")
    assert case.guarded and case._guards and case.outputs["out"].data is not None
    assert case.run_and_check().passed and case.guard_violations() == []


class TestOom:
    def test_numpy_memory_error(self):
        with pytest.raises(MemoryError) as info:
            np.empty(2**60, dtype=np.uint8)
        assert is_oom(info.value)

    def test_torch_cpu_allocator(self):
        torch = pytest.importorskip("torch")
        with pytest.raises(Exception) as info:  # noqa: PT011 - torch raises RuntimeError or OutOfMemoryError
            torch.empty(2**60, dtype=torch.uint8)
        assert is_oom(info.value), repr(info.value)

    def test_runtime_texts(self):
        class OutOfMemoryError(RuntimeError):  # torch.cuda / cupy.cuda.memory spell it so
            pass

        assert is_oom(OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
        assert is_oom(RuntimeError("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: "
                                   "can't allocate memory: you tried to allocate 9223372036854775808 bytes."))
        assert is_oom(MemoryError("Out of memory allocating 8,589,934,592 bytes (allocated so far: 0 bytes)."))
        assert not is_oom(ValueError("out of memory"))

    def test_pyopencl_errors(self):
        cl = pytest.importorskip("pyopencl")
        assert is_oom(cl.MemoryError("clEnqueueNDRangeKernel failed: MEM_OBJECT_ALLOCATION_FAILURE"))
        assert is_oom(cl.RuntimeError("clEnqueueReadBuffer failed: OUT_OF_RESOURCES"))
        assert is_oom(cl.LogicError("clCreateBuffer failed: OUT_OF_HOST_MEMORY"))
        assert not is_oom(cl.LogicError("clSetKernelArg failed: INVALID_VALUE"))
