"""The quick suite's HBM size on a GPU: a working set of at least 8x the device's L2, read from the device.

Why: the quick suite's sizes come from the host CPU's caches (:mod:`workbench.sweep.working_sets`), and on an
H100 host its largest GPU size was 32 MB, inside the H100's 50 MB L2: no GPU row measured HBM, and rows served by
L2 were scored against an HBM roof (109% and 105% "of ceiling", both ``ok``). So every memory-bound family of the
quick suite gets, on a GPU backend only, one more size whose working set is at least :data:`HBM_FACTOR` times the
L2 the device reports (>= 400 MB on an H100). CPU backends keep exactly the sizes they had.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.sweep.working_sets import mib, sized

if TYPE_CHECKING:
    from workbench.catalog.spec import KernelSpec

#: The HBM size's working set, in L2 sizes: at 8x at most an eighth of the accesses can find their line in L2.
HBM_FACTOR = 8
#: The target is a little past 8x: :func:`~workbench.sweep.working_sets.sized` gives the largest size at most the
#: target, in steps of 64 elements, so aiming at exactly 8x could land just under it.
HBM_TARGET_FACTOR = 9
#: The L2 assumed where the device does not report one: 256 MiB, the largest last-level cache of a GPU we know
#: (AMD MI300X's Infinity Cache; an H100 has 50 MB, a B200 126 MB), so 8x it passes every cache we know of.
FALLBACK_L2_BYTES = 256 * 2**20
#: Largest share of the device's memory the HBM size's working set may take: the cell holds two rotated input
#: sets and its outputs, and the check a reference's copy; a GPU that small is told so in the note.
MAX_MEMORY_SHARE = 1 / 8


@dataclass(frozen=True)
class HbmWorkingSet:
    """The HBM size's working set (bytes), the L2 it is measured against (None: not reported), and a note
    saying where both came from."""

    nbytes: int
    l2_bytes: int | None
    note: str


def is_gpu(backend: Any) -> bool:
    """Whether ``backend`` runs on a device other than the host CPU (its ``device_class``)."""
    return getattr(backend, "device_class", "cpu") != "cpu"


def hbm_working_set(backend: Any) -> HbmWorkingSet:
    """The working set past ``backend``'s L2 (:data:`HBM_TARGET_FACTOR` x its L2), capped at
    :data:`MAX_MEMORY_SHARE` of its memory; the L2 from the device (``last_level_cache_bytes``), else
    :data:`FALLBACK_L2_BYTES` with the reason."""
    try:
        info = backend.device_info()
        l2, memory, device = info.last_level_cache_bytes, info.total_memory_bytes, info.name
    except Exception as exc:  # noqa: BLE001 - a device that cannot describe itself still gets an HBM size
        l2, memory, device = None, None, f"{backend.name} ({type(exc).__name__}: {exc})"
    if l2:
        note = f"{HBM_TARGET_FACTOR}x the {mib(l2)} L2 {device} reports"
    else:
        note = (f"{device} reports no L2 size: {HBM_TARGET_FACTOR}x {mib(FALLBACK_L2_BYTES)}, the largest GPU "
                "last-level cache known (MI300X)")
    target = HBM_TARGET_FACTOR * (l2 or FALLBACK_L2_BYTES)
    if memory and target > MAX_MEMORY_SHARE * memory:
        target = int(MAX_MEMORY_SHARE * memory)
        note += f", capped at an eighth of its {mib(memory)} of memory (below {HBM_FACTOR}x its L2)"
    return HbmWorkingSet(int(target), l2 or None, note)


def hbm_size(spec: KernelSpec, backend: Any, axes: tuple[str, ...] | None = None) -> dict[str, int]:
    """The size of ``spec`` whose working set (float32) is :func:`hbm_working_set` of ``backend``; no cap on a
    call's FLOPs (a GPU runs the quick suite's largest call in milliseconds)."""
    return sized(spec, hbm_working_set(backend).nbytes, axes)


def gpu_sizes_note(backends: list[Any]) -> str:
    """What ``--list-suites`` says of the HBM size on the GPU backends among ``backends`` ("" where none)."""
    parts = []
    for b in backends:
        if is_gpu(b):
            ws = hbm_working_set(b)
            parts.append(f"{b.name} at a working set of {mib(ws.nbytes)} ({ws.note})")
    if not parts:
        return ""
    return "quick's memory-bound families on GPUs also run past the L2, to HBM: " + "; ".join(parts)
