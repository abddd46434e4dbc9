"""mlp_block: a decoder layer's gated MLP — out = x + (silu(rmsnorm(x) @ w_gate) * (rmsnorm(x) @ w_up)) @ w_down.

Five kernels when run eagerly (rmsnorm, two projections, SwiGLU, the down
projection with the residual add), the block the execution modes compare:
``eager`` launches them one by one, ``graph`` records the sequence once per
shape and replays it, ``fused`` runs fewer, fused kernels (see
``workbench.execution``). Weights are stored [in, out] (``x @ w``) and scaled
by 1/sqrt(fan_in), so activations stay O(1) at any width.

At decode (tokens = batch, one new token per sequence) the block is
memory-bound: every weight is read once per call to multiply a few rows, and
at small widths the launches themselves are a visible share of the time.
Error: three float32 dot products in a row, the longest over intermediate
(4864 for Qwen2.5-0.5B); measured ≤ 2e-6 relative to max|out| — the float32
tolerance 2e-5 keeps a 10x margin, as gemm's does.
"""

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.spec import DEFAULT_TOLERANCES

#: rmsnorm's epsilon (the catalog's rmsnorm kernel, which the eager numba variant calls, uses the same).
EPS = 1e-6


def make_inputs(p, rng: np.random.Generator):
    t, h, i = p["tokens"], p["hidden"], p["intermediate"]
    return {"x": rng.standard_normal((t, h)),
            "norm_weight": 1.0 + 0.1 * rng.standard_normal(h),
            "w_gate": rng.standard_normal((h, i)) / np.sqrt(h),
            "w_up": rng.standard_normal((h, i)) / np.sqrt(h),
            "w_down": rng.standard_normal((i, h)) / np.sqrt(i)}


def forward(inp, xp=np):
    """The block in its inputs' dtype with array module ``xp``: the float64 reference (numpy), numpy's eager
    variant and CuPy's (cupy)."""
    x = inp["x"]
    xn = x / xp.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * inp["norm_weight"]
    g, u = xn @ inp["w_gate"], xn @ inp["w_up"]
    return x + (g / (1 + xp.exp(-g)) * u) @ inp["w_down"]


def reference(inp, p):
    return {"out": forward(inp)}


def flops(p):
    t, h, i = p["tokens"], p["hidden"], p["intermediate"]
    # rmsnorm 4/elem, gate+up 2*2*h*i, SwiGLU 5/elem (exp, add, divide, two multiplies), down 2*i*h, residual 1
    return t * (4 * h + 4 * h * i + 5 * i + 2 * i * h + h)


def bytes_moved(p, itemsize):
    t, h, i = p["tokens"], p["hidden"], p["intermediate"]
    return (2 * t * h + h + 3 * h * i) * itemsize  # x in, out out, the norm weight and three matrices once


def llm_params(s):
    """tokens = batch × seq: a decode step is seq = 1 (one token per sequence)."""
    return {"tokens": int(s["batch"]) * int(s["seq"]), "hidden": int(s["hidden"]),
            "intermediate": int(s["intermediate"])}


SPEC = kernel_here(__file__).register(
    description="decoder MLP block: rmsnorm → gate/up GEMMs → SwiGLU → down GEMM + residual; eager vs graph vs fused",
    axes=("tokens", "hidden", "intermediate"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["tokens"], p["hidden"])},
    flops=flops,
    bytes_moved=bytes_moved,
    sizes={
        "verify": [{"tokens": 1, "hidden": 17, "intermediate": 40}, {"tokens": 3, "hidden": 33, "intermediate": 70},
                   {"tokens": 5, "hidden": 64, "intermediate": 131}, {"tokens": 17, "hidden": 48, "intermediate": 75}],
        # decode steps (one token) of small widths, where launch overhead shows, up to Qwen2.5-0.5B's
        "quick": [{"tokens": 1, "hidden": 128, "intermediate": 352}, {"tokens": 1, "hidden": 256, "intermediate": 704},
                  {"tokens": 1, "hidden": 896, "intermediate": 4864}],
        "full": [{"tokens": 1, "hidden": 256, "intermediate": 704},
                 {"tokens": 1, "hidden": 896, "intermediate": 4864}, {"tokens": 8, "hidden": 896, "intermediate": 4864},
                 {"tokens": 1, "hidden": 2048, "intermediate": 8192},
                 {"tokens": 128, "hidden": 896, "intermediate": 4864}],
    },
    tolerances={**DEFAULT_TOLERANCES, "float32": 2e-5, "float16": 1e-2, "bfloat16": 6e-2},
    bound="memory-bound",
    llm_params=llm_params,
)
