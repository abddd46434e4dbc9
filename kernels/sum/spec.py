"""sum: out[0] = sum(x) — a full reduction, bandwidth-bound, and a lesson in accumulation error.

Inputs are N(1, 1) / sqrt(n): the sum is well conditioned (sum|x| / |sum x|
~ 1.2), so the error relative to |sum| measures the summation algorithm, not
cancellation; and the sum (~ sqrt(n), 5793 at 2^25) stays representable in
float16, whose largest value is 65504. A pairwise or blocked float32 sum (numpy, torch, a numba kernel
that sums blocks in float32 and combines the partial sums in float64) has an
error bound of about (block + log2 n) * 6e-8 and measures 1e-8 to 4e-8 at
n = 2^20 .. 2^25; sequential float32 accumulation measures 7e-6 at 2^20 and
2.4e-5 at 2^25. The float32 tolerance 2e-6 accepts the first and rejects the
second. Half precisions are limited by rounding the result (2^-11, 2^-8).
"""

import numpy as np

from workbench.catalog import kernel_here, sizes
from workbench.catalog.spec import DEFAULT_TOLERANCES


def make_inputs(p, rng: np.random.Generator):
    n = p["n"]
    return {"x": (rng.standard_normal(n) + 1.0) / np.sqrt(n)}


def reference(inp, p):
    return {"out": np.array([np.sum(inp["x"])])}


SPEC = kernel_here(__file__).register(
    description="out[0] = sum of x; the reduction tutorial (tree vs blocked vs sequential accumulation)",
    axes=("n",),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (1,)},
    flops=lambda p: p["n"],
    bytes_moved=lambda p, itemsize: (p["n"] + 1) * itemsize,
    sizes=sizes.copy(sizes.ELEMENTS),
    tolerances={**DEFAULT_TOLERANCES, "float32": 2e-6},
    llm_params=None,
)
