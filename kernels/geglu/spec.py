"""geglu: out = gelu(gate) * up with the exact (erf) GELU, 0.5 g (1 + erf(g / sqrt 2)) — torch's default
``F.gelu`` (approximate='none'), used by GeGLU MLPs (Gemma uses the tanh form; this spec is the erf one).

FLOPs per element: gelu_erf's 5 (g/sqrt2, erf, +1, *g, *0.5) + the multiply by up = 6. Bytes: 3 per element.

Tolerances: the defaults (float32 1e-5 of max|out|, float16 5e-3, bfloat16 4e-2): GELU is well
conditioned; numba's float32 erf has 4.5e-7 absolute error (``numba_math.erf32``); float32 variants
measured 6e-8 .. 1.2e-7 at the verify sizes; the half precisions round the result and torch's unfused
gelu temporary (float16 3.4e-4, bfloat16 3.3e-3 measured).
"""
import math

from workbench.catalog import kernel_here
from workbench.catalog.glu import erf64, glu_spec

INV_SQRT2 = 1.0 / math.sqrt(2.0)
FLOPS_PER_ELEMENT = 6

SPEC = kernel_here(__file__).register(
    glu_spec, "out = gelu_erf(gate) * up; the GeGLU of a gated MLP (exact GELU, torch's default), memory-bound",
    act=lambda g: 0.5 * g * (1.0 + erf64(g * INV_SQRT2)), flops_per_element=FLOPS_PER_ELEMENT)
