"""The shape rotary-embedding specs share (rope: half-split, rope_interleaved: GPT-J pairs).

RoPE rotates each pair of a head's elements by the token's angle ``pos * theta^(-2i/head_dim)``:
``(a, b) -> (a cos - b sin, b cos + a sin)``, applied to the queries and the keys (fewer key heads under
grouped-query attention). Two layouts pair the elements differently, and a kernel's memory access with
them: ``half`` pairs element i with i + head_dim/2 (GPT-NeoX, LLaMA, Qwen, Mistral: Hugging Face's
``rotate_half``); ``interleaved`` pairs 2i with 2i + 1 (GPT-J, RoFormer, Meta's original complex-number
LLaMA code). They are two specs rather than one with a layout parameter because spec parameters are sizes
(they enter size products, plots and int32 index checks) and because every row then says by its kernel
name which layout it measured.

The kernel takes ``cos``/``sin`` of shape ``[tokens, head_dim / 2]`` as inputs, as Hugging Face's
``apply_rotary_pos_emb``, flash-attn's ``apply_rotary_emb`` and Liger's kernel do: the angles are computed
once per forward pass (here by ``make_inputs``, in float64, from each token's position and the base
``theta``) and shared by every layer, so they are not the per-layer kernel's work. ``theta`` is a property
of the spec (10000 by default; Llama 3 uses 500000, Qwen2 1000000), not a size axis: it changes the
values of cos/sin, never the work.

Inputs ``q[tokens, heads, head_dim]``, ``k[tokens, kv_heads, head_dim]``, ``cos``, ``sin``; outputs
``q_out``, ``k_out``. head_dim must be even. FLOPs: 4 multiplies + 2 adds per pair = 3 per element.
Bytes: q and k read and written, cos and sin read once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from workbench.catalog.spec import Arrays, KernelSpec, Params

LAYOUTS = ("half", "interleaved")
THETA = 10000.0
#: Largest position make_inputs draws (tokens of a batch sit at random positions of long contexts).
MAX_POSITION = 8192
#: Families without rotary embeddings (learned absolute positions): no RoPE kernel runs in them.
NO_ROPE_FAMILIES = frozenset({"gpt2", "bert"})

SIZES = {
    "verify": [{"tokens": 1, "heads": 1, "kv_heads": 1, "head_dim": 2},
               {"tokens": 7, "heads": 5, "kv_heads": 1, "head_dim": 34},
               {"tokens": 33, "heads": 4, "kv_heads": 2, "head_dim": 128},
               {"tokens": 3, "heads": 14, "kv_heads": 2, "head_dim": 64}],
    "quick": [{"tokens": 128, "heads": 32, "kv_heads": 8, "head_dim": 128},
              {"tokens": 512, "heads": 32, "kv_heads": 8, "head_dim": 128}],
    "full": [{"tokens": 1, "heads": 32, "kv_heads": 8, "head_dim": 128},
             {"tokens": 2048, "heads": 32, "kv_heads": 8, "head_dim": 128},
             {"tokens": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128}],
}


def pair_index(layout: str, head_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (first, second) of the ``head_dim / 2`` rotated pairs in ``layout``."""
    half = head_dim // 2
    if layout == "half":
        return np.arange(half), np.arange(half) + half
    if layout == "interleaved":
        return np.arange(0, 2 * half, 2), np.arange(1, 2 * half, 2)
    raise ValueError(f"unknown RoPE layout {layout!r}; valid layouts: {', '.join(LAYOUTS)}")


def rotate(xp: Any, x: Any, cos: Any, sin: Any, layout: str, out: Any) -> Any:
    """``out`` = x ``[tokens, heads, head_dim]`` rotated by ``cos``/``sin`` ``[tokens, head_dim / 2]``, in
    x's dtype, with any numpy-compatible ``xp`` (numpy, cupy); the float64 reference is this on float64."""
    first, second = pair_index(layout, x.shape[-1])
    c, s = cos[:, None, :], sin[:, None, :]
    a, b = x[..., first], x[..., second]
    out[..., first] = a * c - b * s
    out[..., second] = b * c + a * s
    return out


def angles(positions: np.ndarray, head_dim: int, theta: float) -> np.ndarray:
    """``positions[:, None] * theta^(-2i / head_dim)`` in float64: ``[tokens, head_dim / 2]``."""
    inv_freq = theta ** (-np.arange(0, head_dim // 2, dtype=np.float64) * 2.0 / head_dim)
    return positions.astype(np.float64)[:, None] * inv_freq[None, :]


def rope_llm_params(shape: Mapping[str, Any]) -> dict[str, int] | None:
    """tokens = batch * seq, the model's heads, KV heads and head_dim (hidden // heads unless given);
    None for models without RoPE (GPT-2, BERT)."""
    if shape.get("family") in NO_ROPE_FAMILIES or "heads" not in shape:
        return None
    heads = int(shape["heads"])
    head_dim = int(shape.get("head_dim") or int(shape["hidden"]) // heads)
    if head_dim % 2:
        return None
    return {"tokens": int(shape["batch"]) * int(shape["seq"]), "heads": heads,
            "kv_heads": int(shape.get("kv_heads") or heads), "head_dim": head_dim}


def rope_spec(name: str, description: str, layout: str, theta: float = THETA, **extra: Any) -> KernelSpec:
    """A RoPE spec in ``layout`` ("half" or "interleaved") with base ``theta``."""
    pair_index(layout, 2)  # a bad layout fails here, naming the valid ones

    def make_inputs(p: Params, rng: np.random.Generator) -> Arrays:
        t, d = p["tokens"], p["head_dim"]
        if d % 2:
            raise ValueError(f"{name}: head_dim must be even (elements rotate in pairs), got {d}")
        ang = angles(rng.integers(0, MAX_POSITION, t), d, theta)
        return {"q": rng.standard_normal((t, p["heads"], d)), "k": rng.standard_normal((t, p["kv_heads"], d)),
                "cos": np.cos(ang), "sin": np.sin(ang)}

    def reference(inp: Arrays, p: Params) -> Arrays:
        return {o: rotate(np, inp[x], inp["cos"], inp["sin"], layout, np.empty_like(inp[x]))
                for x, o in (("q", "q_out"), ("k", "k_out"))}

    def elements(p: Params) -> int:
        return p["tokens"] * (p["heads"] + p["kv_heads"]) * p["head_dim"]

    spec = KernelSpec(
        name=name, description=description, axes=("tokens", "heads", "kv_heads", "head_dim"),
        make_inputs=make_inputs, reference=reference,
        output_shapes=lambda p: {"q_out": (p["tokens"], p["heads"], p["head_dim"]),
                                 "k_out": (p["tokens"], p["kv_heads"], p["head_dim"])},
        flops=lambda p: 3 * elements(p),
        bytes_moved=lambda p, itemsize: (2 * elements(p) + p["tokens"] * (p["head_dim"] // 2) * 2) * itemsize,
        sizes={k: [dict(s) for s in v] for k, v in SIZES.items()}, llm_params=rope_llm_params)
    return dataclasses.replace(spec, **extra)  # ``extra`` overrides any of the fields above


def rotate_qk(xp: Any, inp: Mapping[str, Any], out: Mapping[str, Any], layout: str) -> None:
    """:func:`rotate` of q into ``q_out`` and of k into ``k_out`` (the numpy / cupy variants' whole run)."""
    for x, o in (("q", "q_out"), ("k", "k_out")):
        rotate(xp, inp[x], inp["cos"], inp["sin"], layout, out[o])
