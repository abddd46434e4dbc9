"""Array-API helpers for the catalog's ``make_run(xp, special)`` compositions (cupy, or numpy in tests)."""

from __future__ import annotations

from typing import Any


def accumulate(xp: Any, x: Any) -> Any:
    """float16 rows are reduced in float32 (as cuBLAS/CUB-based libraries do); other dtypes in their own."""
    return x.astype(xp.float32) if x.dtype == xp.float16 else x
