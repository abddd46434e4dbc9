"""mlp_block with numba: eager (one Python dispatch per kernel), graph (one compiled driver) and fused kernels.

- ``numba-eager``: rmsnorm, three GEMMs, SwiGLU and the residual add, each
  called from Python (a dispatch, a parallel region and fresh intermediates
  per kernel);
- ``numba-graph``: the same kernels called from one ``@njit`` driver over
  buffers allocated once per shape: one dispatch from Python per block;
- ``numba-fused``: two kernels — rmsnorm folded into the gate/up product
  with SwiGLU applied in its epilogue, and the down product with the
  residual add in its epilogue.
"""
import functools

import numpy as np

from workbench.authoring.numba_support import line_buffers
from workbench.catalog import kernel_here
from workbench.execution import register_cached

from .spec import EPS

op = kernel_here(__file__)
#: Output columns per parallel task: a task's slice of every output row stays in L1 while k streams by.
COLS = 128


@functools.cache
def kernels(dtype: str):
    """The block's numba kernels for ``dtype`` (compiled on first use, cached on disk where numba can)."""
    from numba import njit, prange

    from workbench.authoring.numba_math import exp_for, numpy_dtype
    from workbench.authoring.numba_support import disk_cached

    t = numpy_dtype(dtype)
    zero, one, eps, exp = t(0.0), t(1.0), t(EPS), exp_for(dtype)

    def gemm_factory(residual: bool):
        @njit(parallel=True, fastmath=True)
        def gemm(a, b, c, out):  # out = a @ b (+ c when residual); column tasks over the cores
            m, k = a.shape
            n = b.shape[1]
            for jb in prange((n + COLS - 1) // COLS):
                j0 = jb * COLS
                j1 = min(j0 + COLS, n)
                for r in range(m):
                    o = out[r]
                    for j in range(j0, j1):
                        o[j] = c[r, j] if residual else zero
                    for p in range(k):
                        av, br = a[r, p], b[p]
                        for j in range(j0, j1):
                            o[j] += av * br[j]
        return gemm

    @njit(parallel=True, fastmath=True)
    def rmsnorm(x, weight, out):
        rows, cols = x.shape
        for r in prange(rows):
            xr, o = x[r], out[r]
            s = zero
            for j in range(cols):
                s += xr[j] * xr[j]
            rstd = one / np.sqrt(s / t(cols) + eps)
            for j in range(cols):
                o[j] = xr[j] * rstd * weight[j]

    @njit(parallel=True, fastmath=True)
    def swiglu(gate, up, out):
        rows, cols = gate.shape
        for r in prange(rows):
            for j in range(cols):
                g = gate[r, j]
                out[r, j] = g / (one + exp(-g)) * up[r, j]

    @njit(parallel=True, fastmath=True)
    def residual_add(a, b, out):
        rows, cols = a.shape
        for r in prange(rows):
            for j in range(cols):
                out[r, j] = a[r, j] + b[r, j]

    @njit(parallel=True, fastmath=True)
    def gate_up_swiglu(x, weight, w_gate, w_up, xn, up, act):  # act = silu(rmsnorm(x) @ w_gate) * (... @ w_up)
        m = x.shape[0]
        n = w_gate.shape[1]
        rmsnorm(x, weight, xn)  # prologue: the normalised rows, once
        k = x.shape[1]
        for jb in prange((n + COLS - 1) // COLS):
            j0 = jb * COLS
            j1 = min(j0 + COLS, n)
            for r in range(m):
                a, u = act[r], up[r]
                for j in range(j0, j1):
                    a[j] = zero
                    u[j] = zero
                for p in range(k):
                    xv, gw, uw = xn[r, p], w_gate[p], w_up[p]
                    for j in range(j0, j1):
                        a[j] += xv * gw[j]
                        u[j] += xv * uw[j]
                for j in range(j0, j1):  # epilogue: SwiGLU while the slice is in L1
                    g = a[j]
                    a[j] = g / (one + exp(-g)) * u[j]

    ks = {"gemm": gemm_factory(False), "gemm_residual": gemm_factory(True), "rmsnorm": rmsnorm, "swiglu": swiglu,
          "residual_add": residual_add, "gate_up_swiglu": gate_up_swiglu}
    return {name: disk_cached(k, salt=f"{dtype}-{name}") for name, k in ks.items()}


@functools.cache
def driver(dtype: str):
    """The graph: one @njit function running the six kernels over preallocated buffers."""
    from numba import njit

    k = kernels(dtype)
    rmsnorm, gemm, swiglu, residual_add = k["rmsnorm"], k["gemm"], k["swiglu"], k["residual_add"]

    @njit
    def block(x, norm_weight, w_gate, w_up, w_down, out, xn, gate, up, act, down):
        rmsnorm(x, norm_weight, xn)
        gemm(xn, w_gate, xn, gate)  # c is unused without the residual
        gemm(xn, w_up, xn, up)
        swiglu(gate, up, act)
        gemm(act, w_down, act, down)
        residual_add(x, down, out)
    return block


def _buffers(ctx):
    t, h, i = ctx.params["tokens"], ctx.params["hidden"], ctx.params["intermediate"]
    dt = np.dtype(ctx.dtype)
    return line_buffers({"xn": (t, h), "gate": (t, i), "up": (t, i), "act": (t, i), "down": (t, h)}, dt)


@op.variant("numba-eager", "numba")
def numba_eager(ctx):
    """Six numba kernels called one by one from Python; intermediates allocated per call."""
    k = kernels(ctx.dtype)
    rmsnorm, gemm, swiglu, residual_add = k["rmsnorm"], k["gemm"], k["swiglu"], k["residual_add"]

    def run(inp, out):
        b = _buffers(ctx)
        rmsnorm(inp["x"], inp["norm_weight"], b["xn"])
        gemm(b["xn"], inp["w_gate"], b["xn"], b["gate"])
        gemm(b["xn"], inp["w_up"], b["xn"], b["up"])
        swiglu(b["gate"], b["up"], b["act"])
        gemm(b["act"], inp["w_down"], b["act"], b["down"])
        residual_add(inp["x"], b["down"], out["out"])

    run(*_warm(ctx))
    return run


def _warm(ctx):
    """Example inputs and an output: the first call compiles, outside any timing."""
    spec = op.spec
    return (spec.example_inputs(ctx.backend, ctx.params, ctx.dtype),
            {"out": np.empty(spec.output_shapes(ctx.params)["out"], np.dtype(ctx.dtype))})


def record_driver(ctx):
    """The six kernels inside one @njit driver over buffers allocated once per shape: one dispatch per block."""
    block, b = driver(ctx.dtype), _buffers(ctx)

    def run(inp, out):
        block(inp["x"], inp["norm_weight"], inp["w_gate"], inp["w_up"], inp["w_down"], out["out"],
              b["xn"], b["gate"], b["up"], b["act"], b["down"])
    return run


def record_fused(ctx):
    """Two fused kernels: rmsnorm + gate/up GEMMs + SwiGLU, then down GEMM + residual."""
    k, b = kernels(ctx.dtype), _buffers(ctx)
    first, second = k["gate_up_swiglu"], k["gemm_residual"]

    def run(inp, out):
        first(inp["x"], inp["norm_weight"], inp["w_gate"], inp["w_up"], b["xn"], b["up"], b["act"])
        second(b["act"], inp["w_down"], inp["x"], out["out"])
    return run


register_cached(op, "numba-graph", "numba", "graph", record_driver)
register_cached(op, "numba-fused", "numba", "fused", record_fused, eager=lambda ctx: numba_eager(ctx))
