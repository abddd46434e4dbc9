"""gemm: out[m, n] = a[m, k] @ b[k, n] — the compute-bound kernel (2mnk FLOPs).

Bytes are the compulsory traffic (read a and b once, write out once); real
kernels move more unless they tile. Error is normalised by max|out|, which
grows like sqrt(k) for N(0, 1) inputs while the rounding error of a float32
dot product grows like sqrt(k)..k: sequential float32 accumulation measured
4e-7 at k=130, 1.3e-6 at k=2048 and 3.2e-6 at k=8192; BLAS ~4e-7. The
float32 tolerance 1e-5 covers sequential accumulation to k ~ 8192 with
margin. float16/bfloat16 assume float32 accumulation (torch CPU measured
3.6e-4 / 3e-3 at k=2048), i.e. the error of rounding the result.
"""

import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.spec import DEFAULT_TOLERANCES


def make_inputs(p, rng: np.random.Generator):
    m, n, k = p["m"], p["n"], p["k"]
    return {"a": rng.standard_normal((m, k)), "b": rng.standard_normal((k, n))}


def reference(inp, p):
    return {"out": inp["a"] @ inp["b"]}


SPEC = kernel_here(__file__).register(
    description="out = a @ b; naive vs tiled vs library (BLAS / torch.matmul)",
    axes=("m", "n", "k"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["m"], p["n"])},
    flops=lambda p: 2 * p["m"] * p["n"] * p["k"],
    bytes_moved=lambda p, itemsize: (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]) * itemsize,
    sizes={
        "verify": [{"m": 1, "n": 1, "k": 1}, {"m": 33, "n": 65, "k": 17}, {"m": 100, "n": 70, "k": 130}],
        "quick": [{"m": 128, "n": 128, "k": 128}, {"m": 256, "n": 256, "k": 256}, {"m": 384, "n": 384, "k": 384}],
        "full": [{"m": s, "n": s, "k": s} for s in (256, 512, 1024, 2048)],
    },
    tolerances={**DEFAULT_TOLERANCES, "float32": 1e-5, "float16": 5e-3, "bfloat16": 4e-2},
    bound="compute-bound",
    llm_params=lambda s: {"m": s["batch"] * s["seq"], "k": s["hidden"], "n": s["intermediate"]},
)
