"""mlp_block as portable device kernels (OpenCL, CuPy): the same six launches, eager or as a recorded plan.

graph on OpenCL is a pre-planned launch list (buffers once per shape, no host
synchronisation between kernels, one finish); on CuPy a captured CUDA/HIP
graph (``workbench.execution.device_plan``). No fused portable form exists:
fused is unsupported here, with that reason.
"""
from workbench.catalog import Unsupported, kernel_here
from workbench.execution import register_cached
from workbench.execution.device_plan import Step, compile_plan, eager_runner, graph_runner
from workbench.portable import DEFAULT_BLOCK, DTYPES, cdiv

from .spec import EPS

op = kernel_here(__file__)
TILE = 16
MAX_GRID = 65536
RUNTIMES = ("opencl", "cupy")
DEFINES = {"BLOCK": DEFAULT_BLOCK, "TILE": TILE, "EPS": repr(EPS)}


def elementwise(entry: str, n: int, *args) -> Step:
    return Step(entry, (min(cdiv(n, DEFAULT_BLOCK), MAX_GRID),), (DEFAULT_BLOCK,), (*args, n))


def gemm(a: str, b: str, out: str, m: int, n: int, k: int) -> Step:
    """The catalog's tiled GEMM; below TILE rows (decode) its naive kernel in 256x1 blocks instead — one
    work-item per output column reading the weight rows coalesced, where 16x16 tiles would idle 15 rows."""
    if m < TILE:
        return Step("gemm_naive", (cdiv(n, DEFAULT_BLOCK), m), (DEFAULT_BLOCK, 1), (a, b, out, m, n, k))
    return Step("gemm_tiled", (cdiv(n, TILE), cdiv(m, TILE)), (TILE, TILE), (a, b, out, m, n, k))


def plan(ctx):
    t, h, i = ctx.params["tokens"], ctx.params["hidden"], ctx.params["intermediate"]
    steps = [Step("rmsnorm_rows", (t,), (DEFAULT_BLOCK,), ("x", "norm_weight", "xn", t, h)),
             gemm("xn", "w_gate", "gate", t, i, h), gemm("xn", "w_up", "up", t, i, h),
             elementwise("swiglu", t * i, "gate", "up", "act"),
             gemm("act", "w_down", "down", t, h, i),
             elementwise("residual_add", t * h, "x", "down", "out")]
    buffers = {"xn": (t, h), "gate": (t, i), "up": (t, i), "act": (t, i), "down": (t, h)}
    return compile_plan(ctx, op.path("mlp_block.cu"), steps, buffers, DEFINES)


@op.variant("portable-eager", RUNTIMES, source=str(op.path("mlp_block.cu")), dtypes=DTYPES)
def portable_eager(ctx):
    """Six launches (rmsnorm, gate, up, SwiGLU, down, residual add), fresh intermediates, a host wait after
    each."""
    return eager_runner(plan(ctx))


def record_graph(ctx):
    """The six launches recorded once per shape: OpenCL launch list with one finish / CuPy CUDA-HIP graph."""
    return graph_runner(plan(ctx))


register_cached(op, "portable-graph", RUNTIMES, "graph", record_graph, source=str(op.path("mlp_block.cu")),
                dtypes=DTYPES)


@op.variant("portable-fused", RUNTIMES, mode="fused")
def portable_fused(ctx):
    """No fused portable kernels for this block (the fused forms are numba's and torch.compile's)."""
    raise Unsupported("mlp_block has no fused portable kernel; fused runs on numba (hand-fused kernels) and torch "
                      "(torch.compile)")
