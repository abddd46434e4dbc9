"""swiglu: out = silu(gate) * up = gate / (1 + exp(-gate)) * up — the gated MLP of LLaMA, Qwen, Mistral.

FLOPs per element: silu's 4 (exp, +1, divide, *gate folded as the divide's numerator) + the multiply by
up = 5. Bytes: gate and up read once, out written once (3 per element).

Tolerances: the defaults (float32 1e-5 of max|out|, float16 5e-3, bfloat16 4e-2). silu is well
conditioned (|d silu/dx| <= 1.1), so a variant's error is a few roundings of the product: every float32
variant (numpy, numba's polynomial exp, torch, PoCL, Triton) measured 1e-7 at the verify sizes; the half
precisions round the result (2^-11, 2^-8) and, in torch's unfused form, the silu temporary once more.
"""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.glu import glu_spec

FLOPS_PER_ELEMENT = 5

SPEC = kernel_here(__file__).register(
    glu_spec, "out = silu(gate) * up; the SwiGLU of a gated MLP, memory-bound (3 arrays per element)",
    act=lambda g: g / (1.0 + np.exp(-g)), flops_per_element=FLOPS_PER_ELEMENT)
