"""attention_block as portable device kernels (OpenCL, CuPy): ten launches, eager or as a recorded plan.

graph on OpenCL is a pre-planned launch list (buffers once per shape, no host
synchronisation between kernels, one finish); on CuPy a captured CUDA/HIP
graph. The RoPE tables are uploaded once per plan in both modes. There is no
fused portable form: fused is unsupported here, with that reason.
"""
from workbench.catalog import Unsupported, kernel_here
from workbench.execution import register_cached
from workbench.execution.device_plan import Step, compile_plan, eager_runner, graph_runner
from workbench.portable import DEFAULT_BLOCK, DTYPES, cdiv

from .spec import EPS, rope_tables

op = kernel_here(__file__)
RUNTIMES = ("opencl", "cupy")
SOURCE = op.path("attention_block.cu")


def plan(ctx):
    from workbench_catalog.mlp_block.portable import DEFINES, elementwise, gemm

    p = ctx.params
    b, s, past, h, nh, nkv, d = (p[a] for a in ("batch", "seq", "past", "hidden", "heads", "kv_heads", "head_dim"))
    t, qd, kvd = b * s, nh * d, nkv * d
    if d > 256:
        raise Unsupported(f"head_dim {d} is above the 256 the attention kernel is built for")

    def heads(src, dst, n, rotate):
        return Step("rope_heads", (min(cdiv(b * n * s * d // 2, DEFAULT_BLOCK), 65536),), (DEFAULT_BLOCK,),
                    (src, "cos", "sin", dst, b, n, s, rotate))

    steps = [Step("rmsnorm_rows", (t,), (DEFAULT_BLOCK,), ("x", "norm_weight", "xn", t, h)),
             gemm("xn", "wq", "q", t, qd, h), gemm("xn", "wk", "k", t, kvd, h), gemm("xn", "wv", "v", t, kvd, h),
             heads("q", "qr", nh, 1), heads("k", "k_new", nkv, 1), heads("v", "v_new", nkv, 0),
             Step("attention_rows", (b * nh * s,), (DEFAULT_BLOCK,),
                  ("qr", "k_cache", "v_cache", "k_new", "v_new", "attn", b, nh, nkv, s, past)),
             gemm("attn", "wo", "proj", t, h, qd),
             elementwise("residual_add", t * h, "x", "proj", "out")]
    buffers = {"xn": (t, h), "q": (t, qd), "k": (t, kvd), "v": (t, kvd), "qr": (b, nh, s, d), "attn": (t, qd),
               "proj": (t, h)}
    cos, sin = rope_tables(p)
    return compile_plan(ctx, SOURCE, steps, buffers, {**DEFINES, "EPS": repr(EPS), "HEAD_DIM": d},
                        constants={"cos": cos, "sin": sin})


@op.variant("portable-eager", RUNTIMES, source=str(SOURCE), dtypes=DTYPES)
def portable_eager(ctx):
    """Ten launches (rmsnorm, q/k/v GEMMs, RoPE q/k, v split, attention, o GEMM, residual add), fresh
    intermediates, a host wait after each."""
    return eager_runner(plan(ctx))


def record_graph(ctx):
    """The ten launches recorded once per shape: OpenCL launch list with one finish / CuPy CUDA-HIP graph."""
    return graph_runner(plan(ctx))


register_cached(op, "portable-graph", RUNTIMES, "graph", record_graph, source=str(SOURCE), dtypes=DTYPES)


@op.variant("portable-fused", RUNTIMES, mode="fused")
def portable_fused(ctx):
    """No fused portable kernels for this block (the fused forms are numba's and torch.compile's)."""
    raise Unsupported("attention_block has no fused portable kernel; fused runs on numba (hand-fused kernels) and "
                      "torch (torch.compile)")
