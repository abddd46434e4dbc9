"""argmax of each row: out[r] = index of a maximum of x[r, :] (int64).

Verification does not demand numpy's first-index tie rule: an index passes if
it is in range and points at a value equal to the row maximum of the input as
rounded to the run dtype (float16/bfloat16 rounding makes ties common). The
error is the fraction of rows whose index is wrong; the tolerance is 0.
FLOPs count one compare per element. LLM mapping: greedy decoding over the
vocabulary, only when the shape names ``vocab``.
"""

import numpy as np

from workbench.catalog import kernel_here, sizes

INDEX_BYTES = 8


def make_inputs(p, rng: np.random.Generator):
    return {"x": rng.standard_normal((p["rows"], p["cols"]))}


def reference(inp, p):
    return {"out": np.argmax(inp["x"], axis=1).astype(np.int64)}


def compare(outputs, reference, inputs, params, dtype):
    """(fraction of rows whose index does not point at a row maximum, message)."""
    x = np.asarray(inputs["x"], dtype=np.float64)
    rows, cols = x.shape
    if "out" not in outputs:
        return float("inf"), "output 'out' missing"
    out = np.asarray(outputs["out"])
    if out.shape != (rows,):
        return float("inf"), f"out: shape {out.shape}, expected {(rows,)}"
    if not np.issubdtype(out.dtype, np.integer):
        if not np.all(np.isfinite(out)) or np.any(out != np.round(out)):
            return float("inf"), f"out: non-integer indices (dtype {out.dtype})"
    idx = out.astype(np.int64)
    in_range = (idx >= 0) & (idx < cols)
    picked = x[np.arange(rows), np.where(in_range, idx, 0)]
    ok = in_range & (picked == x.max(axis=1))
    wrong = int(rows - np.count_nonzero(ok))
    if wrong == 0:
        return 0.0, ""
    first = int(np.flatnonzero(~ok)[0])
    return wrong / rows, (f"{wrong}/{rows} rows wrong; row {first}: index {int(idx[first])}, "
                          f"a maximum is at {int(np.argmax(x[first]))}")


SPEC = kernel_here(__file__).register(
    description="row-wise argmax (int64 indices); ties may pick any maximal element",
    axes=("rows", "cols"),
    make_inputs=make_inputs,
    reference=reference,
    output_shapes=lambda p: {"out": (p["rows"],)},
    flops=lambda p: p["rows"] * p["cols"],
    bytes_moved=lambda p, itemsize: p["rows"] * p["cols"] * itemsize + p["rows"] * INDEX_BYTES,
    sizes=sizes.copy(sizes.ROWS_COLS),
    tolerances={"float64": 0.0, "float32": 0.0, "float16": 0.0, "bfloat16": 0.0},
    output_dtypes={"out": "int64"},
    compare=compare,
    llm_params=lambda s: {"rows": s["batch"] * s["seq"], "cols": s["vocab"]} if s.get("vocab") else None,
)
