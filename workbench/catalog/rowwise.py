"""The shape row-wise specs share (softmax, layernorm, rmsnorm, bias_gelu ...).

A row-wise op reads ``x[rows, cols]`` plus optional per-column vectors
(weight, bias) and writes ``[rows, cols]`` outputs; on an LLM layer a row is a
token's hidden vector. Sizes, output shapes, the LLM mapping and the
compulsory traffic follow from that, so a spec states only its inputs,
reference, FLOPs per element and description.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from workbench.catalog.sizes import ROWS_COLS, copy
from workbench.catalog.spec import Arrays, KernelSpec, Params


def rowwise_spec(name: str, description: str, make_inputs: Callable[[Params, np.random.Generator], Arrays],
                 reference: Callable[[Arrays, Params], Arrays], flops_per_element: int,
                 outputs: Iterable[str] = ("out",), **extra: Any) -> KernelSpec:
    """A spec for ops over ``[rows, cols]`` with ``[rows, cols]`` outputs.

    Bytes moved: every ``[rows, cols]`` input and output once, plus each
    ``[cols]`` input once (counted from ``make_inputs`` at a probe size).
    """
    outputs = tuple(outputs)
    probe = make_inputs({"rows": 2, "cols": 3}, np.random.default_rng(0))
    full = sum(1 for a in probe.values() if np.shape(a) == (2, 3)) + len(outputs)
    vectors = sum(1 for a in probe.values() if np.shape(a) == (3,))
    spec = KernelSpec(
        name=name, description=description, axes=("rows", "cols"), make_inputs=make_inputs, reference=reference,
        output_shapes=lambda p: {o: (p["rows"], p["cols"]) for o in outputs},
        flops=lambda p: flops_per_element * p["rows"] * p["cols"],
        bytes_moved=lambda p, itemsize: (full * p["rows"] * p["cols"] + vectors * p["cols"]) * itemsize,
        sizes=copy(ROWS_COLS),
        llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["hidden"]})
    return dataclasses.replace(spec, **extra)  # ``extra`` overrides any of the fields above
