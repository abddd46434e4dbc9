"""CUDA snippets of the catalog's fused CuPy variants (``cupy.ElementwiseKernel`` / ``cupy.ReductionKernel``), the
kernels made of them, and the harness that compiles a snippet with NVRTC where no GPU is.

Why: a CuPy library variant written as a chain of array operations launches a kernel per operation and moves
every temporary through memory (gelu_tanh at n=4,194,304: 295 us on an H100 against torch's 20.7 us; softmax
2048x2048: 134 us against 24.7 us). CuPy's idiomatic best is one kernel per pass: an ``ElementwiseKernel``, and
a ``ReductionKernel`` for a row's statistics (softmax, rmsnorm; rope at 574 us against torch's 111 us is one
``ElementwiseKernel`` too). The chains stay, named ``cupy-unfused``, as torch's unfused forms.

Every snippet computes in ``A``, the preamble's compute type: float for float16 and float32, double for float64
(CuPy's ``float16`` converts to and from float), so float16 is never accumulated in float16.
"""

from __future__ import annotations

import functools
from typing import Any

#: gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), one read and one write per element.
GELU_TANH = """
const A v = (A)x;
const A inner = (A)0.7978845608028654 * (v + (A)0.044715 * v * v * v);
out = (T)((A)0.5 * v * ((A)1 + tanh(inner)));
"""
#: softmax's row statistics as ReductionKernel (map, reduce, post-map, identity): the maximum, then the sum of
#: exp(x - max) (``m`` the row's maximum, broadcast).
ROW_MAX = ("(A)x", "max(a, b)", "y = (T)a", "-__int_as_float(0x7f800000)")
ROW_EXP_SUM = ("exp((A)x - (A)m)", "a + b", "y = (A)a", "0")
#: softmax's last pass: exp(x - max) / sum, one read and one write per element (``s`` in the compute type).
SOFTMAX_SCALE = """
out = (T)(exp((A)x - (A)m) / s);
"""
#: rmsnorm's row statistic as ReductionKernel: the mean of x^2 in the compute type (the row's length is the input's
#: size over the output's, as CuPy's own ``mean`` divides).
ROW_MEAN_SQUARE = ("(A)x * (A)x", "a + b", "y = (A)(a / (A)(_in_ind.size() / _out_ind.size()))", "0")
#: rmsnorm's scale: x * rsqrt(ms + eps) * weight, one read of x and one write per element (``ms`` the row's mean
#: square and ``eps`` the spec's, both in the compute type).
RMSNORM_SCALE = """
out = (T)((A)x * rsqrt(ms + eps) * (A)w);
"""
#: rope, half-split pairs (element j of a head pairs with j + half): each output element reads its pair (a, b) of
#: its (token, head) row and the token's cos/sin at the pair, and writes a cos - b sin (first half) or
#: b cos + a sin (second half). ``x``, ``c``, ``s`` are raw (``[tokens, heads, 2 half]``, ``[tokens, half]``),
#: ``i`` the output's flat index.
ROPE_HALF = """
const long long d = 2 * (long long)half, j = i % d, p = j < half ? j : j - half;
const long long row = i - j, at = (i / (d * heads)) * half + p;
const A cv = (A)c[at], sv = (A)s[at], a = (A)x[row + p], b = (A)x[row + p + half];
out = (T)(j < half ? a * cv - b * sv : b * cv + a * sv);
"""


#: The numpy name of a compute type, for CuPy's parameter lists.
NUMPY_NAME = {"float": "float32", "double": "float64"}


def compute_type(dtype: Any) -> str:
    """The C type a snippet computes in for an element ``dtype``: double for float64, else float."""
    return "double" if str(dtype) == "float64" else "float"


def preamble(ctype: str) -> str:
    return f"typedef {ctype} A;\n"


@functools.cache
def gelu_tanh_kernel(cupy: Any, ctype: str) -> Any:
    return cupy.ElementwiseKernel("T x", "T out", GELU_TANH, "wb_gelu_tanh", preamble=preamble(ctype))


@functools.cache
def softmax_kernels(cupy: Any, ctype: str) -> tuple[Any, Any, Any]:
    """(row max, row sum of exp(x - max), scale) for rows of compute type ``ctype``."""
    pre = preamble(ctype)
    row_max = cupy.ReductionKernel("T x", "T y", *ROW_MAX, name="wb_row_max", reduce_type=ctype, preamble=pre)
    acc = NUMPY_NAME[ctype]  # the row sums are kept in the compute type
    exp_sum = cupy.ReductionKernel("T x, T m", f"{acc} y", *ROW_EXP_SUM, name="wb_row_exp_sum", reduce_type=ctype,
                                   preamble=pre)
    scale = cupy.ElementwiseKernel(f"T x, T m, {acc} s", "T out", SOFTMAX_SCALE, "wb_softmax_scale", preamble=pre)
    return row_max, exp_sum, scale


@functools.cache
def rmsnorm_kernels(cupy: Any, ctype: str) -> tuple[Any, Any]:
    """(row mean of x^2, scale) for rows of compute type ``ctype``; the scale takes ``eps`` as an argument."""
    pre, acc = preamble(ctype), NUMPY_NAME[ctype]
    mean_square = cupy.ReductionKernel("T x", f"{acc} y", *ROW_MEAN_SQUARE, name="wb_row_mean_square",
                                       reduce_type=ctype, preamble=pre)
    scale = cupy.ElementwiseKernel(f"T x, {acc} ms, T w, {acc} eps", "T out", RMSNORM_SCALE, "wb_rmsnorm_scale",
                                   preamble=pre)
    return mean_square, scale


@functools.cache
def rope_half_kernel(cupy: Any, ctype: str) -> Any:
    """``(x, cos, sin, heads, half, out)``: ``out`` = x rotated in half-split pairs, one thread per element."""
    return cupy.ElementwiseKernel("raw T x, raw T c, raw T s, int32 heads, int32 half", "T out", ROPE_HALF,
                                  "wb_rope_half", preamble=preamble(ctype))


def elementwise_source(body: str, ctype: str, params: tuple[str, ...] = ("x",), acc_params: tuple[str, ...] = (),
                       ttype: str | None = None, raw_params: tuple[str, ...] = (),
                       int_params: tuple[str, ...] = ()) -> str:
    """A CUDA translation unit that holds ``body`` as CuPy's ElementwiseKernel does (``T`` the element type,
    ``params`` inputs of type T, ``acc_params`` inputs of the compute type, ``raw_params`` raw arrays of T indexed
    by the body, ``int_params`` int32 scalars, ``out`` the output, ``i`` its index as CuPy's ptrdiff_t), for
    NVRTC's compile check; ``ttype`` the element type (default ``ctype``; CuPy's own float16 type needs CuPy's
    headers: that case compiles on a GPU machine only)."""
    args = ", ".join([f"const T* {p}_" for p in params] + [f"const A* {p}_" for p in acc_params]
                     + [f"const T* {p}" for p in raw_params] + [f"int {p}" for p in int_params] + ["T* out_", "int n"])
    loads = "".join(f"const {'A' if p in acc_params else 'T'} {p} = {p}_[i];\n" for p in (*params, *acc_params))
    return (f"typedef {ttype or ctype} T;\n{preamble(ctype)}"
            f'extern "C" __global__ void wb_check({args}) {{\n'
            "const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
            f"{loads}T& out = out_[i];\n{body}\n}}\n")


#: CuPy's CIndexer as a reduction's expressions see it: ``_in_ind.size()`` and ``_out_ind.size()``.
_INDEXER = "struct wb_indexer { long long n; __device__ long long size() const { return n; } };\n"


def reduction_source(parts: tuple[str, str, str, str], ctype: str, params: tuple[str, ...] = ("x",),
                     out_type: str = "T") -> str:
    """A CUDA translation unit holding a ReductionKernel's (map, reduce, post-map, identity) expressions as CuPy
    combines them (a serial loop here: the expressions are what is checked; one output, ``_in_ind`` of the
    input's size), for NVRTC."""
    mapped, reduce, post, identity = parts
    args = ", ".join(f"const T* {p}_" for p in params)
    loads = "".join(f"const T {p} = {p}_[i];\n" for p in params)
    return (f"typedef {ctype} T;\n{preamble(ctype)}{_INDEXER}"
            f'extern "C" __global__ void wb_check({args}, {out_type}* y_, int n) {{\n'
            "const wb_indexer _in_ind = {n}, _out_ind = {1};\n"
            f"A a = {identity};\nfor (int i = 0; i < n; ++i) {{ {loads}const A b = {mapped}; a = {reduce}; }}\n"
            f"{out_type}& y = *y_; {post};\n}}\n")
