"""What a cell's result records beside its samples: catalog facts, execution-cache statistics, an autotuned choice.

Rows carry what their analysis needs, so a stored row is judged by itself on any machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from workbench.catalog import registry as catalog
from workbench.core.timestamps import now_iso
from workbench.execution import row_stats
from workbench.measure.request import Cell
from workbench.measure.result import CellResult


def catalog_facts(cell: Cell) -> tuple[str | None, bool | None]:
    """What analysis needs from the catalog: (memory- or compute-bound?, library baseline?); (None, None) for a
    kernel the catalog does not know."""
    try:
        spec = catalog.get_kernel(cell.kernel)
    except ValueError:
        return None, None
    v = catalog.variants(cell.kernel).get(cell.variant)
    return spec.bound, bool(v is not None and v.library)


def new_result(cell: Cell, seed: int | None = None) -> CellResult:
    """A result with the cell's identity and catalog facts, started now."""
    bound, library = catalog_facts(cell)
    return CellResult(cell=cell, seed=seed, started_at=now_iso(), bound=bound, library=library)


def execution_cache_facts(cell: Cell, res: CellResult) -> None:
    """A block variant's execution-cache statistics (``exec_cache``, JSON) and, when its fused recording fell
    back to eager, a note saying so; nothing for variants that record nothing."""
    stats = row_stats(cell.kernel, cell.variant, cell.backend, cell.params_dict, cell.dtype)
    if stats is None:
        return
    res.exec_cache = json.dumps(stats, separators=(",", ":"))
    if stats["fallback"]:
        res.note(f"fused recording fell back to eager: {stats['fallback']}")


def tuned_config(call: Callable[..., object]) -> str | None:
    """The configuration an autotuned variant settled on, in words: a built call may expose it as
    ``best_config`` (a value or a callable, None until chosen), as Triton's ``triton.autotune`` does."""
    chosen = getattr(call, "best_config", None)
    if callable(chosen):
        chosen = chosen()
    if chosen is None:
        return None
    kwargs = getattr(chosen, "all_kwargs", None)  # a triton.Config: its block sizes, warps and stages
    if callable(kwargs):
        chosen = ", ".join(f"{k}={v}" for k, v in kwargs().items() if v is not None)
    return str(chosen)


def note_tuned_config(res: CellResult, call: Callable[..., object]) -> None:
    """An autotuned variant's choice, recorded and said (nothing for other variants)."""
    chosen = tuned_config(call)
    if chosen:
        res.tuned_config = chosen
        res.note(f"autotune chose {chosen}")
