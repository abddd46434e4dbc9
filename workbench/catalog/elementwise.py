"""The one shape every unary activation spec shares (relu, gelu, silu ...).

An activation reads ``x[n]`` and writes ``out[n]``: 1 read + 1 write per
element, the same sizes, and on an LLM layer it runs on the MLP's
intermediate activations. Only the formula, its FLOP count and the input
distribution differ, so a spec states just those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.catalog.sizes import ELEMENTS as SIZES
from workbench.catalog.sizes import copy
from workbench.catalog.spec import Arrays, KernelSpec, Params


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
        sizes=copy(SIZES),
        llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["intermediate"]},
        **extra)
