"""gemm as a Triton kernel with ``tl.dot`` and ``triton.autotune`` (runtime ``triton``); float32.

Each program computes a BLOCK_M x BLOCK_N tile of ``out``, stepping over k in BLOCK_K slices; every
load and the store are masked, so odd m, n, k work. The autotuner picks among :data:`CONFIGS` on the
first call for each (m, n, k); the chosen config is kept in the run's ``best_config`` attribute
(``None`` until the first call). ``allow_tf32=False``/``input_precision="ieee"`` keeps float32 accuracy.
triton is imported inside the builder only.
"""
import functools
import os
import time

from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile

#: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps): small, since the interpreter runs every program in Python. Each
#: compiles for sm_80, sm_90, gfx90a and gfx942 without spills; 64x64x32 with 4 warps did not (the float32
#: ieee dot is FMA, not MMA: 255 registers and 64 bytes of spills on sm_80), so it has 8.
CONFIGS = ((32, 32, 32, 4), (64, 64, 32, 8), (128, 64, 16, 8))


def _wall_bench(kernel_call, quantiles=None):
    """The autotuner's benchmark under the interpreter, which has no driver to time with: one wall-clock
    call, in ms. It times the interpreter, so the config it picks says nothing about a GPU."""
    t = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w)
               for bm, bn, bk, w in CONFIGS]

    interpreted = os.environ.get("TRITON_INTERPRET") == "1"

    @triton.autotune(configs=configs, key=["m", "n", "k"], do_bench=_wall_bench if interpreted else None)
    @triton.jit
    def gemm_kernel(a_ptr, b_ptr, out_ptr, m, n, k, sam, sak, sbk, sbn, som, son,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, k, BLOCK_K):
            kk = k0 + rk
            a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak,
                        mask=(rm[:, None] < m) & (kk[None, :] < k), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn,
                        mask=(kk[:, None] < k) & (rn[None, :] < n), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, acc,
                 mask=(rm[:, None] < m) & (rn[None, :] < n))

    return gemm_kernel


@kernel_here(__file__).variant("triton", "triton", dtypes=("float32",),
                               description="tl.dot tiles, masked edges, autotuned over "
                                           + ", ".join(f"{bm}x{bn}x{bk}/{w}w" for bm, bn, bk, w in CONFIGS)
                                           + "; float32 (ieee dot, no tf32)")
def build(ctx):
    import triton

    kernel = _kernel()
    m, n, k = ctx.params["m"], ctx.params["n"], ctx.params["k"]

    def grid(meta):
        return (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))

    def run(inp, out):
        a, b, o = inp["a"], inp["b"], out["out"]
        kernel[grid](a, b, o, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     o.stride(0), o.stride(1))
        if run.best_config is None:
            run.best_config = getattr(kernel, "best_config", None)
    run.best_config = None
    return run


#: ``workbench compile-check`` compiles one entry per autotune config (the function under the autotuner).
#: The unit inner strides are constexpr 1, as Triton specializes them when it launches on contiguous tensors.
COMPILE = tuple(
    TritonCompile(lambda: _kernel().fn,
                  {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32", "m": "i32", "n": "i32", "k": "i32",
                   "sam": "i32", "sak": "constexpr", "sbk": "i32", "sbn": "constexpr", "som": "i32", "son": "constexpr",
                   "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
                  {"sak": 1, "sbn": 1, "son": 1, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk},
                  num_warps=w, label=f"{bm}x{bn}x{bk}/{w}w")
    for bm, bn, bk, w in CONFIGS)
