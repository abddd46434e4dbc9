"""Weight-only quantised GEMM specs (gemm_int8, gemm_fp8): ``out[m, n] = x[m, k] @ dequant(w[n, k]).T``.

The weights are stored as ``nn.Linear`` stores them, ``[n, k]`` (out_features x in_features), as codes of
one byte (int8, or the bits of an fp8 e4m3 number) with one float scale per output channel:
``dequant(w)[n, :] = scale[n] * decode(w[n, :])``. The codes reach every variant unchanged whatever the
run dtype (``KernelSpec.input_dtypes``); ``x`` and ``scale`` are in the run dtype.

Inputs are made by quantising float weights whose channel magnitudes span two decades (as real layers'
do), so a variant that mishandles small-scale channels shows. The reference decodes the same codes and
the same rounded scales in float64: quantisation itself is not error, only what a variant does with it.

Error, in units of the dot product's absolute mass: ``max |out - ref| / (scale[n] * sum_k |x[m,k]| *
|decode(w)[n,k]|)`` per output element. Why not ``max |out - ref| / max |ref|``: channels' scales differ
by 100x, so a globally normalised error would let the small channels be wrong by 100x more than the large
ones. The rounding-error analysis of a dot product (Higham, Accuracy and Stability, 3.1) bounds the
error of any summation order by ``gamma_k * sum |x_i w_i|`` (``gamma_k ~ k u``); its probabilistic form
(Higham & Mary 2019) ``~ sqrt(k) u`` for the worst element and, with this normalisation, ~u for a typical
one. Each spec derives its per-dtype tolerances from this in its docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from workbench.catalog.check import check
from workbench.catalog.spec import Arrays, KernelSpec, Params

#: Verify sizes: decode (m = 1), odd m/n/k, and a k long enough for accumulation error to show.
VERIFY_SIZES = [{"m": 1, "n": 1, "k": 1}, {"m": 1, "n": 67, "k": 515}, {"m": 33, "n": 65, "k": 17},
                {"m": 7, "n": 129, "k": 2049}]
QUICK_SIZES = [{"m": 1, "n": 4096, "k": 4096}, {"m": 16, "n": 4096, "k": 4096}, {"m": 256, "n": 1024, "k": 1024}]
FULL_SIZES = [{"m": 1, "n": 14336, "k": 4096}, {"m": 8, "n": 4096, "k": 14336}, {"m": 512, "n": 4096, "k": 4096}]


def float_weights(p: Params, rng: np.random.Generator) -> np.ndarray:
    """``[n, k]`` weights whose channel magnitudes span 10^-2 .. 1 (log-uniform)."""
    return rng.standard_normal((p["n"], p["k"])) * 10.0 ** rng.uniform(-2.0, 0.0, (p["n"], 1))


def mass_error(out: np.ndarray, ref: np.ndarray, x: np.ndarray, w: np.ndarray, scale: np.ndarray) -> float:
    """``max |out - ref| / (scale[n] * sum_k |x[m,k]| |w[n,k]|)`` (float64; w decoded); 0/0 counts as 0."""
    mass = (np.abs(x) @ np.abs(w).T) * np.abs(scale)[None, :]
    diff = np.abs(out.astype(np.float64) - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(mass > 0, diff / np.where(mass > 0, mass, 1.0), np.where(diff > 0, np.inf, 0.0))
    return float(rel.max()) if rel.size else 0.0


def decoded_weights(codes: Any, decode: Callable[[np.ndarray], np.ndarray], by_table: bool = False) -> np.ndarray:
    """``decode(codes)`` in float64. ``by_table`` (a decoder slower than a lookup): one-byte codes go through
    their 256 values decoded once and indexed, the same numbers (``decode`` works value by value) without the
    formula per weight. The fp8 formula on a 4864x896 weight took 240 ms (24 by table), and each check, audit
    and check-after of a gemm_fp8 cell paid it: 14% of a quick suite's cell time. The reference still runs
    the formula on every weight."""
    codes = np.asarray(codes)
    if not by_table or codes.dtype.itemsize != 1:
        return np.asarray(decode(codes), dtype=np.float64)
    table = np.asarray(decode(np.arange(256, dtype=np.uint8).view(codes.dtype)), dtype=np.float64)
    return table[codes.view(np.uint8)]


def weight_only_gemm_spec(name: str, description: str, *, weight_dtype: str,
                          quantize: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                          decode: Callable[[np.ndarray], np.ndarray], tolerances: dict[str, float],
                          llm_params: Callable[[Mapping[str, Any]], dict[str, int] | None],
                          table_decode: bool = False, **extra: Any) -> KernelSpec:
    """A weight-only GEMM spec: ``quantize(float w[n, k]) -> (codes, scale[n])``, ``decode(codes) -> float64``;
    ``table_decode``: the checks decode one-byte codes through a table of the 256 (:func:`decoded_weights`)."""

    def make_inputs(p: Params, rng: np.random.Generator) -> Arrays:
        x = rng.standard_normal((p["m"], p["k"]))
        codes, scale = quantize(float_weights(p, rng))
        return {"x": x, "w": codes, "scale": scale}

    def reference(inp: Arrays, p: Params) -> Arrays:
        return {"out": inp["x"] @ (decode(inp["w"]) * inp["scale"][:, None]).T}

    spec = KernelSpec(
        name=name, description=description, axes=("m", "n", "k"), make_inputs=make_inputs, reference=reference,
        output_shapes=lambda p: {"out": (p["m"], p["n"])},
        flops=lambda p: 2 * p["m"] * p["n"] * p["k"] + p["m"] * p["n"],
        bytes_moved=lambda p, itemsize: (p["m"] * p["k"] + p["n"] + p["m"] * p["n"]) * itemsize + p["n"] * p["k"],
        sizes={"verify": [dict(s) for s in VERIFY_SIZES], "quick": [dict(s) for s in QUICK_SIZES],
               "full": [dict(s) for s in FULL_SIZES]},
        tolerances=dict(tolerances), input_dtypes={"w": weight_dtype}, llm_params=llm_params, **extra)

    def compare(outputs: Arrays, reference: Arrays, inputs: Arrays | None,
                params: Params | None, dtype: str) -> tuple[float, str]:
        basic = check(replace(spec, compare=None), outputs, reference, dtype, params=params, structure_only=True)
        if not basic.passed:  # shape, dtype, NaN/Inf or constant output
            return float("inf"), basic.message
        assert inputs is not None
        x, scale = (np.asarray(inputs[k]).astype(np.float64) for k in ("x", "scale"))
        w = decoded_weights(inputs["w"], decode, table_decode)
        err = mass_error(np.asarray(outputs["out"]), reference["out"], x, w, scale)
        tol = spec.tolerance(dtype, params)
        return err, "" if err <= tol else (f"out: max error {err:.3g} of the dot products' absolute mass "
                                           f"> tolerance {tol:.3g}")

    spec.compare = compare
    return spec


def mlp_weight_params(s: Mapping[str, Any]) -> dict[str, int]:
    """The gate/up projection of a layer's MLP: m = batch * seq tokens, k = hidden, n = intermediate."""
    return {"m": int(s["batch"]) * int(s["seq"]), "k": int(s["hidden"]), "n": int(s["intermediate"])}
