"""The shape gated-linear-unit specs share (swiglu, geglu): ``out = act(gate) * up``.

A gated MLP (LLaMA, Qwen, Mistral: SwiGLU; Gemma: GeGLU) multiplies the
activated gate projection by the up projection, elementwise over the
``tokens x intermediate`` activations: 2 reads + 1 write per element. The
inputs are two arrays (``gate[n]``, ``up[n]``), as the unfused Hugging Face
MLP produces them; vLLM's ``silu_and_mul`` reads the same elements from one
``[tokens, 2 * intermediate]`` buffer, which moves the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from workbench.catalog.sizes import ELEMENTS, copy
from workbench.catalog.spec import Arrays, KernelSpec, Params

#: Model families whose MLP is not gated (a plain GELU MLP): a GLU kernel has no place in them.
UNGATED_FAMILIES = frozenset({"gpt2", "bert"})


def erf64(x: np.ndarray) -> np.ndarray:
    """erf in float64: scipy's where installed, else ``math.erf`` per element (correctly rounded, slower)."""
    try:
        from scipy.special import erf
    except ImportError:
        return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)
    return erf(x)


def gated_llm_params(shape: Mapping[str, Any]) -> dict[str, int] | None:
    """``n = batch * seq * intermediate`` for models with a gated MLP; None for GPT-2/BERT-style MLPs."""
    if shape.get("family") in UNGATED_FAMILIES:
        return None
    return {"n": int(shape["batch"]) * int(shape["seq"]) * int(shape["intermediate"])}


def glu_spec(name: str, description: str, act: Callable[[np.ndarray], np.ndarray], flops_per_element: int,
             **extra: Any) -> KernelSpec:
    """A spec for ``out = act(gate) * up`` over ``n`` elements, ``gate ~ 3 N(0, 1)`` (both tails of act),
    ``up ~ N(0, 1)``; ``act`` is the float64 activation, ``flops_per_element`` counts it plus the multiply."""

    def make_inputs(p: Params, rng: np.random.Generator) -> Arrays:
        return {"gate": 3.0 * rng.standard_normal(p["n"]), "up": rng.standard_normal(p["n"])}

    def reference(inp: Arrays, p: Params) -> Arrays:
        return {"out": act(inp["gate"]) * inp["up"]}

    return KernelSpec(
        name=name, description=description, axes=("n",), make_inputs=make_inputs, reference=reference,
        output_shapes=lambda p: {"out": (p["n"],)},
        flops=lambda p: flops_per_element * p["n"],
        bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,
        sizes=copy(ELEMENTS), llm_params=gated_llm_params, **extra)

