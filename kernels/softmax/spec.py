"""softmax over each row: out = exp(x - max) / sum(exp(x - max)).

FLOPs per element: max compare, subtract, exp (one transcendental), sum add,
scale = 5. Compulsory traffic is one read and one write; a kernel that keeps
the row in cache meets it, a three-pass kernel over rows bigger than cache does not.
LLM mapping: attention scores [batch*heads*seq, seq], heads = ``heads`` from the
shape or hidden/128 (head dimension 128) when it is not given.
"""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.rowwise import rowwise_spec


def reference(inp, p):
    x = inp["x"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"out": e / e.sum(axis=1, keepdims=True)}


def llm_params(s):
    heads = s.get("heads") or max(1, s["hidden"] // 128)
    return {"rows": s["batch"] * heads * s["seq"], "cols": s["seq"]}


SPEC = kernel_here(__file__).register(
    rowwise_spec, "row-wise softmax (numerically stable: subtract the row maximum first)",
    make_inputs=lambda p, rng: {"x": 2.0 * rng.standard_normal((p["rows"], p["cols"]))},
    reference=reference, flops_per_element=5, llm_params=llm_params)
