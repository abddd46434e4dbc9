"""softmax over each row: out = exp(x - max) / sum(exp(x - max)).

FLOPs per element: max compare, subtract, exp (one transcendental), sum add,
scale = 5. Compulsory traffic is one read and one write; a kernel that keeps
the row in cache meets it, a three-pass kernel over rows bigger than cache does not.
LLM mapping: attention scores [batch*heads*seq, seq], heads = ``heads`` from the
shape or hidden/128 (head dimension 128) when it is not given.
"""

import numpy as np

from workbench.catalog import KernelSpec, register_kernel


def make_inputs(p, rng: np.random.Generator):
    return {"x": 2.0 * rng.standard_normal((p["rows"], p["cols"]))}


def reference(inp, p):
    x = inp["x"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"out": e / e.sum(axis=1, keepdims=True)}


def llm_params(s):
    heads = s.get("heads") or max(1, s["hidden"] // 128)
    return {"rows": s["batch"] * heads * s["seq"], "cols": s["seq"]}


SPEC = register_kernel(KernelSpec(
    name="softmax",
    description="row-wise softmax (numerically stable: subtract the row maximum first)",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["rows"], p["cols"])},
    flops=lambda p: 5 * p["rows"] * p["cols"],
    bytes_moved=lambda p, itemsize: 2 * p["rows"] * p["cols"] * itemsize,
    sizes={
        "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097}],
        "quick": [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 2048}],
        "full": [{"rows": 1024, "cols": 1024}, {"rows": 2048, "cols": 4096}, {"rows": 8192, "cols": 4096}],
    },
    llm_params=llm_params,
))
