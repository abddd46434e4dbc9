"""The one shape every unary activation spec shares (relu, gelu, silu ...).

An activation reads ``x[n]`` and writes ``out[n]``: 1 read + 1 write per
element, the same sizes, and on an LLM layer it runs on the MLP's
intermediate activations. Only the formula, its FLOP count and the input
distribution differ, so a spec states just those.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .spec import Arrays, KernelSpec, Params

SIZES: dict[str, list[dict[str, int]]] = {
    "verify": [{"n": 1}, {"n": 4099}, {"n": 100003}],
    "quick": [{"n": 2**16}, {"n": 2**18}, {"n": 2**20}],
    "full": [{"n": 2**k} for k in (20, 22, 24, 25)],
}


def activation_spec(name: str, description: str, formula: Callable[[np.ndarray], np.ndarray],
                    flops_per_element: int, input_scale: float = 1.0, **extra: Any) -> KernelSpec:
    """A spec for ``out = formula(x)`` with ``x ~ input_scale * N(0, 1)``."""

    def make_inputs(p: Params, rng: np.random.Generator) -> Arrays:
        return {"x": input_scale * rng.standard_normal(p["n"])}

    def reference(inp: Arrays, p: Params) -> Arrays:
        return {"out": formula(inp["x"])}

    return KernelSpec(
        name=name, description=description, axes=("n",),
        make_inputs=make_inputs, reference=reference,
        output_shapes=lambda p: {"out": (p["n"],)},
        flops=lambda p: flops_per_element * p["n"],
        bytes_moved=lambda p, itemsize: 2 * p["n"] * itemsize,
        sizes={k: [dict(s) for s in v] for k, v in SIZES.items()},
        llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["intermediate"]},
        **extra)
