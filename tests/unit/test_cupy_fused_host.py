"""Issue 37, point 10: the fused CuPy variants' snippets *run* here, on the host. A stand-in ``cupy`` module
(:class:`HostCupy`) takes the ``ElementwiseKernel`` / ``ReductionKernel`` definitions the catalog's builders make,
compiles each snippet with the host's C++ compiler inside a loop that follows CuPy's conventions (an elementwise
body once per output element ``i``, broadcast inputs, raw arrays indexed flat, scalars by their declared type; a
reduction's map, reduce and post-map over the last axis, ``_in_ind`` / ``_out_ind`` sized as CuPy sizes them), and
checks every argument against the declared parameter list (count, dtype: CuPy would reject or cast what this
refuses). ``make_fused(HostCupy)`` then runs on the spec's verify sizes and must pass ``check()`` against the
spec's float64 reference, so a wrong formula, a wrong pairing or a wrong call fails here.

What it does not check: CUDA's compilation (tests/unit/test_cupy_fused.py compiles the same snippets with NVRTC),
CuPy's float16 type (the host has none: float32 and float64 only), launch shapes, and speed. Results on a GPU are
``verify --backends cupy``'s (tests/unit/test_cupy_variants.py requires them where a device is)."""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from workbench.catalog import cupy_fused, get_kernel, kernels
from workbench.core.dtypes import host_dtype
from workbench.measure.case import POISON, check, make_host_inputs, output_dtype, reference_outputs

CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler (g++) to run the snippets")

#: What CUDA gives a snippet that the host's C++ lacks (rsqrt, max, __int_as_float) and CuPy's CIndexer.
PRELUDE = """#include <cmath>
#include <cstring>
using std::tanh; using std::exp; using std::sqrt;
static inline float rsqrt(float v) { return 1.0f / std::sqrt(v); }
static inline double rsqrt(double v) { return 1.0 / std::sqrt(v); }
template <class U> static inline U max(U a, U b) { return a < b ? b : a; }
static inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, sizeof f); return f; }
struct wb_indexer { long long n; long long size() const { return n; } };
"""
C_TYPE = {"float32": "float", "float64": "double", "int32": "int"}
CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "int": ctypes.c_int}
_PARAM = re.compile(r"(raw\s+)?(\w+)\s+(\w+)")
_BUILT: dict[str, ctypes.CDLL] = {}
_BUILD_DIR = Path(tempfile.mkdtemp(prefix="wb-cupy-host-"))
atexit.register(shutil.rmtree, _BUILD_DIR, True)  # the built libraries are this process's only


def _params(text: str) -> list[tuple[bool, str, str]]:
    """CuPy's parameter list ``"raw T x, int32 n"`` as (raw, type, name)."""
    found = [_PARAM.fullmatch(p.strip()) for p in text.split(",")]
    assert all(found), f"unparsed parameter list {text!r}"
    return [(bool(m[1]), m[2], m[3]) for m in found if m]


def _library(source: str) -> ctypes.CDLL:
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    if key not in _BUILT:
        src, lib = _BUILD_DIR / f"{key}.cpp", _BUILD_DIR / f"{key}.so"
        src.write_text(source)
        done = subprocess.run([CXX, "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, f"host compile failed:\n{done.stderr}\n{source}"
        _BUILT[key] = ctypes.CDLL(str(lib))
    return _BUILT[key]


def _element_type(params: list[tuple[bool, str, str]], args: tuple) -> str:
    """The C type of ``T``: the dtype of the arrays declared ``T`` (all alike, as CuPy requires)."""
    found = {a.dtype.name for (_, t, _), a in zip(params, args, strict=True) if t == "T" and isinstance(a, np.ndarray)}
    assert len(found) == 1, f"arrays of type T disagree: {found}"
    return C_TYPE[found.pop()]


def _declared(ptype: str, ttype: str) -> str:
    return ttype if ptype == "T" else C_TYPE[ptype]


class HostCupy:
    """A ``cupy`` stand-in whose kernels run their snippets on the host; ``calls`` counts launches."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def ElementwiseKernel(self, in_params, out_params, operation, name, preamble=""):  # noqa: N802 (CuPy's name)
        return _Elementwise(self, _params(in_params) + _params(out_params), operation, name, preamble)

    def ReductionKernel(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,  # noqa: N802
                        name="reduce_kernel", reduce_type=None, preamble=""):
        return _Reduction(self, _params(in_params), _params(out_params), (map_expr, reduce_expr, post_map_expr,
                                                                          identity), name, reduce_type, preamble)


class _Elementwise:
    def __init__(self, owner, params, operation, name, preamble):
        self.owner, self.params, self.operation, self.name, self.preamble = owner, params, operation, name, preamble

    def __call__(self, *args):
        self.owner.calls.append(self.name)
        assert len(args) == len(self.params), f"{self.name}: {len(args)} arguments for {self.params}"
        ttype = _element_type(self.params, args)
        out_shape = args[-1].shape
        decls, loads, values = [], [], []
        for (raw, ptype, pname), arg in zip(self.params, args, strict=True):
            ctype = _declared(ptype, ttype)
            if not isinstance(arg, np.ndarray):
                decls.append(f"{ctype} {pname}")
                values.append(CTYPES[ctype](arg))
                continue
            assert C_TYPE[arg.dtype.name] == ctype, f"{self.name}: {pname} is {arg.dtype}, declared {ptype}"
            if raw:
                arr = np.ascontiguousarray(arg)
                decls.append(f"{ctype}* {pname}")
            else:
                arr = arg if arg is args[-1] else np.ascontiguousarray(np.broadcast_to(arg, out_shape))
                decls.append(f"{ctype}* {pname}_")
                loads.append(f"{ctype}& {pname} = {pname}_[i];")
            values.append(arr.ctypes.data_as(ctypes.c_void_p))
        assert args[-1].flags.c_contiguous
        source = (f"typedef {ttype} T;\n{PRELUDE}{self.preamble}\n"
                  f'extern "C" void wb_run({", ".join(decls)}, long long n) {{\n'
                  f"for (long long i = 0; i < n; ++i) {{\n{' '.join(loads)}\n{{\n{self.operation}\n}}\n}}\n}}\n")
        _library(source).wb_run(*values, ctypes.c_longlong(int(np.prod(out_shape))))


class _Reduction:
    def __init__(self, owner, ins, outs, parts, name, reduce_type, preamble):
        self.owner, self.ins, self.outs, self.parts, self.name = owner, ins, outs, parts, name
        self.reduce_type, self.preamble = reduce_type, preamble

    def __call__(self, *args, axis, keepdims=False):
        self.owner.calls.append(self.name)
        assert len(args) == len(self.ins) and len(self.outs) == 1, f"{self.name}: {args} for {self.ins}"
        x = args[0]
        assert x.ndim == 2 and axis in (1, -1), "the stand-in reduces the last axis of rows"
        ttype = _element_type(self.ins, args)
        (_, otype, oname), = self.outs
        out_c = _declared(otype, ttype)
        y = np.empty((x.shape[0], 1) if keepdims else (x.shape[0],), dtype={"float": np.float32,
                                                                             "double": np.float64}[out_c])
        decls, loads, values = [], [], []
        for (raw, ptype, pname), arg in zip(self.ins, args, strict=True):
            ctype = _declared(ptype, ttype)
            assert not raw and C_TYPE[arg.dtype.name] == ctype, f"{self.name}: {pname} is {arg.dtype}"
            decls.append(f"const {ctype}* {pname}_")
            loads.append(f"const {ctype} {pname} = {pname}_[i];")
            values.append(np.ascontiguousarray(np.broadcast_to(arg, x.shape)).ctypes.data_as(ctypes.c_void_p))
        mapped, reduce, post, identity = self.parts
        source = (f"typedef {ttype} T;\n{PRELUDE}{self.preamble}\ntypedef {self.reduce_type or ttype} _type_reduce;\n"
                  f'extern "C" void wb_run({", ".join(decls)}, {out_c}* {oname}_, long long rows, long long cols) {{\n'
                  "const wb_indexer _in_ind = {rows * cols}, _out_ind = {rows};\n"
                  f"for (long long r = 0; r < rows; ++r) {{\n_type_reduce a = _type_reduce({identity});\n"
                  f"for (long long i = r * cols; i < (r + 1) * cols; ++i) {{ {' '.join(loads)}\n"
                  f"const _type_reduce b = static_cast<_type_reduce>({mapped}); a = ({reduce}); }}\n"
                  f"{out_c}& {oname} = {oname}_[r]; {post};\n}}\n}}\n")
        _library(source).wb_run(*values, y.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(x.shape[0]),
                                ctypes.c_longlong(x.shape[1]))
        return y


def _fused_run(kernel: str, host: HostCupy):
    import importlib

    kernels()  # registers workbench_catalog.<kernel>.*
    return importlib.import_module(f"workbench_catalog.{kernel}.cupy_variants").make_fused(host)


def _failures(kernel: str, dtype: str) -> tuple[list[str], HostCupy]:
    """make_fused(HostCupy) on every verify size and two seeds: what fails ``check()``."""
    spec, host = get_kernel(kernel), HostCupy()
    run, bad = _fused_run(kernel, host), []
    for params in spec.sizes["verify"]:
        for seed in (0, 1):
            inputs = make_host_inputs(spec, params, dtype, seed)
            ref = reference_outputs(spec, inputs, params)
            outs = {name: np.full(shape, POISON, dtype=host_dtype(output_dtype(spec, name, dtype)))
                    for name, shape in spec.output_shapes(params).items()}
            run({k: v.copy() for k, v in inputs.items()}, outs)
            res = check(spec, outs, ref, dtype, inputs, params)
            if not res.passed:
                bad.append(f"{params} seed {seed}: {res.message or res.max_error}")
    return bad, host


#: Launches one call makes (the descriptions' "two launches", "three launches").
LAUNCHES = {"gelu_tanh": 1, "softmax": 3, "rmsnorm": 2, "rope": 2}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", sorted(LAUNCHES))
def test_the_fused_snippets_compute_the_spec_reference_on_the_host(kernel, dtype):
    bad, host = _failures(kernel, dtype)
    assert not bad, f"{kernel} {dtype}: " + "; ".join(bad)
    assert len(host.calls) == LAUNCHES[kernel] * len(get_kernel(kernel).sizes["verify"]) * 2


#: A plausible slip in each new snippet: rsqrt written sqrt, the second half's rotation sign flipped, the mean
#: taken as a sum, the rope pair read at the wrong partner.
WRONG = [("rmsnorm", "RMSNORM_SCALE", "out = (T)((A)x * sqrt(ms + eps) * (A)w);"),
         ("rmsnorm", "ROW_MEAN_SQUARE", ("(A)x * (A)x", "a + b", "y = (A)a", "0")),
         ("rope", "ROPE_HALF", cupy_fused.ROPE_HALF.replace("b * cv + a * sv", "b * cv - a * sv")),
         ("rope", "ROPE_HALF", cupy_fused.ROPE_HALF.replace("x[row + p + half]", "x[row + p + 1]"))]


@pytest.mark.parametrize(("kernel", "name", "wrong"), WRONG, ids=[f"{k}-{n}-{i}" for i, (k, n, _) in enumerate(WRONG)])
def test_a_wrong_snippet_fails_the_host_check(monkeypatch, kernel, name, wrong):
    monkeypatch.setattr(cupy_fused, name, wrong)
    bad, _ = _failures(kernel, "float32")
    assert bad, f"{kernel} with a wrong {name} still passed"
