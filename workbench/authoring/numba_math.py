"""Vectorizable math for the catalog's numba kernels: exp, sigmoid, erf without libm calls.

Inside a numba loop ``np.exp`` / ``np.tanh`` / ``math.erf`` become one libm
call per element, which LLVM cannot vectorize (numba here has no SVML): a gelu
written that way runs at ~0.7 GB/s instead of ~30 GB/s on 32M floats. The
functions below are straight-line arithmetic (polynomials, ``floor``, a
bitcast to build 2**n), so a ``prange`` loop over them compiles to AVX/AVX-512.

Accuracy, measured against float64 (see tests/test_variants_numba_math.py):

- ``exp32``: Cephes ``expf`` polynomial after Cody-Waite range reduction,
  ~1e-7 relative; inputs are clamped to [-87, 88], so it never returns inf.
- ``exp64``: Cephes ``exp`` Padé form, ~2e-16 relative, clamped to [-745, 709.78].
- ``fmax``: ``llvm.maxnum``, so max reductions vectorize (see its docstring).
- ``prefetch``: ``llvm.prefetch``, for row kernels to fetch the next row while
  they compute on this one (see its docstring).
- ``line_empty``: scratch on a cache line (``np.empty`` from numba is 16-byte aligned).
- ``erf32``: Eigen's float rational erf (odd 13/8 rational on [-4, 4]),
  4.5e-7 absolute.  There is no float64 counterpart: float64 kernels call
  ``math.erf`` (scalar, exact) and say so.

Only this module and the catalog's numba builders (``numba_variants.py``) import numba, and only
when a numba variant is built, so loading the catalog stays cheap.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

LOG2E = 1.4426950408889634


@intrinsic
def _bits_to_f32(typingctx, bits):
    """Reinterpret the low 32 bits of an integer as float32 (LLVM trunc + bitcast: vectorizable)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        v = args[0]
        if bits.bitwidth > 32:
            v = builder.trunc(v, ir.IntType(32))
        return builder.bitcast(v, ir.FloatType())

    return types.float32(bits), codegen


@intrinsic
def _bits_to_f64(typingctx, bits):
    """Reinterpret an int64 as float64."""
    if not (isinstance(bits, types.Integer) and bits.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(bits), codegen


@intrinsic
def fmax(typingctx, a, b):
    """max(a, b) as ``llvm.maxnum``: a max reduction written with it vectorizes.

    LLVM in numba 0.68 does not turn ``m = max(m, x[j])`` (or its compare-and-
    select spelling) into a SIMD reduction — measured 7 GB/s single-threaded —
    but it does vectorize a ``maxnum`` reduction (39 GB/s). NaN handling is
    maxnum's: a NaN operand is ignored.
    """
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, signature, args):
        lty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.maxnum", [lty], ir.FunctionType(lty, [lty, lty]))
        return builder.call(fn, args, fastmath=("fast",))

    return a(a, b), codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to load the cache line holding ``arr[idx]`` (1-D array; never faults, no bounds check).

    A row kernel reads its row from memory in the first pass and then computes
    on it in cache, so memory idles while it computes. Prefetching the *next*
    row a few lines at a time during the heavy pass overlaps the two: softmax
    (exp pass) went from 29.4 to 32.3 GB/s on two threads at 8192 x 4096
    float32 (triad 36.8 in the same rounds; 80% -> 88%). It is not a general
    win: the same in any pass of layernorm, whose passes are light, made it
    slower (27.8 -> 17.6 GB/s), so only softmax uses it.
    """
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(idx, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False,
                                       boundscheck=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        # read (0), keep in all cache levels (3), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(arr, idx), codegen


#: Elements per prefetch block in row kernels: the inner loop over a block vectorizes, and the
#: block's prefetches cover the same number of elements of the next row.
PREFETCH_BLOCK = 64
CACHE_LINE_BYTES = 64


@njit(inline="always")
def prefetch_block(arr, start, line):
    """Prefetch ``arr[start:start + PREFETCH_BLOCK]``, one call per cache line of ``line`` elements."""
    for q in range(start, start + PREFETCH_BLOCK, line):
        prefetch(arr, q)


@njit(inline="always")
def line_empty(n, dtype):
    """``np.empty(n, dtype)`` starting on a 64-byte cache line, for scratch a kernel allocates per call.

    numba's allocations come from ``malloc``: 16-byte aligned, at an address that follows the allocator's
    history, so a tiled GEMM's packed panel and accumulator tiles straddled cache lines in some processes and
    not in others, and the same kernel read 3.0 ms in one run and 4.6 ms in the next (issue 36). Over-allocated
    by a line and sliced: a 1-D C-contiguous view that ``reshape`` keeps contiguous."""
    raw = np.empty(n + 64, dtype)
    item = raw.itemsize
    line = max(1, 64 // item)
    off = (-(raw.ctypes.data // item)) % line
    return raw[off:off + n]


@njit(inline="always", fastmath=True)
def exp32(x):
    """exp for float32: x = n ln2 + r, exp(r) by a degree-7 polynomial, 2**n from the exponent bits."""
    x = min(max(x, np.float32(-87.0)), np.float32(88.0))
    n = np.floor(x * np.float32(LOG2E) + np.float32(0.5))
    r = x - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    y = p * r * r + r + np.float32(1.0)
    return y * _bits_to_f32((np.int32(n) + np.int32(127)) << np.int32(23))


@njit(inline="always", fastmath=True)
def exp64(x):
    """exp for float64: Cephes' Padé approximant 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2)) after range reduction."""
    x = min(max(x, -745.0), 709.78)
    n = np.floor(x * LOG2E + 0.5)
    r = x - n * 6.93145751953125e-1 - n * 1.42860682030941723212e-6
    rr = r * r
    p = r * ((1.26177193074810590878e-4 * rr + 3.02994407707441961300e-2) * rr + 9.99999999999999999910e-1)
    q = ((3.00198505138664455042e-6 * rr + 2.52448340349684104192e-3) * rr
         + 2.27265548208155028766e-1) * rr + 2.00000000000000000009e0
    y = 1.0 + 2.0 * p / (q - p)
    # 2**n in two factors so n = 1024 (x near 709.78) does not overflow the exponent field.
    h = np.int64(n) // 2
    return y * _bits_to_f64((h + np.int64(1023)) << np.int64(52)) * _bits_to_f64(
        (np.int64(n) - h + np.int64(1023)) << np.int64(52))


@njit(inline="always", fastmath=True)
def erf32(x):
    """erf for float32: odd rational x P(x^2) / Q(x^2) on [-4, 4] (erf is +-1 in float32 beyond)."""
    x = min(max(x, np.float32(-4.0)), np.float32(4.0))
    x2 = x * x
    p = np.float32(-2.72614225801306e-10)
    p = p * x2 + np.float32(2.77068142495902e-08)
    p = p * x2 + np.float32(-2.10102402082508e-06)
    p = p * x2 + np.float32(-5.69250639462346e-05)
    p = p * x2 + np.float32(-7.34990630326855e-04)
    p = p * x2 + np.float32(-2.95459980854025e-03)
    p = p * x2 + np.float32(-1.60960333262415e-02)
    q = np.float32(-1.45660718464996e-05)
    q = q * x2 + np.float32(-2.13374055278905e-04)
    q = q * x2 + np.float32(-1.68282697438203e-03)
    q = q * x2 + np.float32(-7.37332916720468e-03)
    q = q * x2 + np.float32(-1.42647390514189e-02)
    return x * p / q


@njit(inline="always", fastmath=True)
def erf64(x):
    """erf for float64: libm (scalar, not vectorized) — no float64-accurate rational here yet."""
    return math.erf(x)


def exp_for(dtype: str):
    """The exp matching a run dtype (float32 / float64)."""
    return exp32 if dtype == "float32" else exp64


def erf_for(dtype: str):
    return erf32 if dtype == "float32" else erf64


def line_elements(dtype: str) -> int:
    """Elements of ``dtype`` per cache line."""
    return CACHE_LINE_BYTES // np.dtype(numpy_dtype(dtype)).itemsize


def numpy_dtype(dtype: str):
    """np.float32 / np.float64 for the dtypes numba kernels implement."""
    if dtype not in ("float32", "float64"):
        raise ValueError(f"numba kernels implement float32 and float64, not {dtype}")
    return np.float32 if dtype == "float32" else np.float64


#: fastmath without ``reassoc``: elementwise kernels vectorize without it, and reassociation
#: would undo the Cody-Waite range reduction in exp (measured: 3e-7 instead of 8e-8 for exp32).
#: Reductions need ``reassoc`` to vectorize and use ``fastmath=True``.
ELEMENTWISE_FASTMATH = {"nnan", "ninf", "nsz", "arcp", "contract", "afn"}



# --- Disk caching (``cache=True``) of kernels that call the helpers above -------------------------------------------
#
# numba keys a cached kernel by its bytecode and a pickle of its closure variables. The catalog's
# kernels are closures over dtype constants and over the dispatchers/intrinsics of this module, and a
# numba dispatcher pickles with a random per-process uuid: the key changed in every process, so the
# cache never hit and its index grew by one entry per run (measured). Giving each jitted object a uuid
# derived from its name and the source file it comes from makes the key stable between processes, and
# editing that file (this one, for the helpers) changes it, so a kernel is recompiled when a helper
# it inlines changes — which numba's own check (the kernel's file only) would miss.

def _file_digest(path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return "nofile"


def _stamp(obj, name: str) -> None:
    """Give a numba dispatcher or intrinsic a deterministic uuid (no-op if it has one or is neither)."""
    set_uuid = getattr(obj, "_set_uuid", None)
    if set_uuid is None:
        return
    try:
        set_uuid(name)
    except AssertionError:  # already has one (pickled or stamped before)
        pass


def stable_identities(kernel, salt: str) -> None:
    """Stamp the jitted objects in ``kernel``'s closure (recursively) so its disk-cache key is reproducible.

    ``salt`` distinguishes factory calls that build different objects from one code (e.g. the dtype).
    """
    seen: set[int] = set()

    def walk(disp) -> None:
        py_func = getattr(disp, "py_func", None)
        if py_func is None or id(disp) in seen:
            return
        seen.add(id(disp))
        for cell in py_func.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # empty cell
                continue
            inner = getattr(value, "py_func", None)
            if inner is not None:
                digest = _file_digest(inner.__code__.co_filename)
                _stamp(value, f"{inner.__module__}.{inner.__qualname__}:{salt}:{digest}")
                walk(value)

    walk(kernel)


_DIGEST = _file_digest(__file__)
for _name, _obj in list(globals().items()):
    if hasattr(_obj, "_set_uuid") and not isinstance(_obj, type):
        _stamp(_obj, f"{__name__}.{_name}:{_DIGEST}")
del _name, _obj


def elementwise_kernel(scalar, arity: int):
    """``out[i] = scalar(a[i], ...)`` over ``arity`` 1-D inputs, parallel and vectorizable (``scalar`` inlined).

    The parameters are positional (the spec's inputs in order, then ``out``);
    the loop is the one every elementwise kernel of the catalog used to spell out.
    """
    f = njit(inline="always")(scalar)
    if arity == 1:
        @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
        def map1(a, out):
            for i in prange(a.shape[0]):
                out[i] = f(a[i])
        return map1
    if arity == 2:
        @njit(parallel=True, fastmath=ELEMENTWISE_FASTMATH)
        def map2(a, b, out):
            for i in prange(a.shape[0]):
                out[i] = f(a[i], b[i])
        return map2
    raise ValueError(f"elementwise kernels take 1 or 2 inputs, not {arity}")
