"""Size tables shared by specs of the same shape, so a table is stated once.

Each is a dict of named size lists ("verify": small and odd, "quick", "full");
use :func:`copy` to give a spec its own copy (specs may be edited in notebooks).
"""

from __future__ import annotations

Sizes = dict[str, list[dict[str, int]]]

#: 1-D ops over ``n`` elements (activations, vector_add, sum).
ELEMENTS: Sizes = {
    "verify": [{"n": 1}, {"n": 4099}, {"n": 100003}],
    "quick": [{"n": 2**16}, {"n": 2**18}, {"n": 2**20}],
    "full": [{"n": 2**k} for k in (20, 22, 24, 25)],
}

#: Row-wise ops over ``x[rows, cols]`` (softmax, the norms, bias_gelu, argmax).
ROWS_COLS: Sizes = {
    "verify": [{"rows": 1, "cols": 1}, {"rows": 37, "cols": 1000}, {"rows": 5, "cols": 4097}],
    "quick": [{"rows": 256, "cols": 1024}, {"rows": 512, "cols": 2048}],
    "full": [{"rows": 1024, "cols": 1024}, {"rows": 2048, "cols": 4096}, {"rows": 8192, "cols": 4096}],
}


def copy(table: Sizes) -> Sizes:
    """A deep copy of ``table``."""
    return {k: [dict(s) for s in v] for k, v in table.items()}
