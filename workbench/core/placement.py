"""Where a kernel's host-memory arrays start: on a cache line, at a fixed offset within a page.

Why: on a CPU the same kernel on the same data ran up to 1.3x slower or faster depending only on where its
arrays happened to start. numpy's arrays come from ``malloc``: 16-byte aligned, so a 64-byte vector load
straddles two cache lines, and at page offsets that depend on what was allocated before (glibc's mmap
threshold moves as arrays are freed). A numpy saxpy over 43,648 floats took 4.0 µs with all three arrays
on a cache line and 5.3 µs with all three 16 bytes past one; re-allocating its arrays between blocks of
calls spread the blocks 1.2x, where the same arrays kept repeated within 2%. Rounds of a cell re-allocate,
so did runs: the cell's time followed the allocator's history, not the kernel. Every array a sweep hands a
host-memory kernel (inputs, rotated input sets, outputs and their guard zones) now starts on a cache line
at the page offset of its slot, the same in every round and every run (``(slot * 2560) mod 4096``: eight
slots 512 bytes apart, so arrays read at the same index do not share an L1 set or alias one another's
stores at 4 KiB). What is left between runs is physical placement (the L2 and beyond), which no process
chooses.
"""

from __future__ import annotations

import numpy as np

PAGE = 4096
LINE = 64
#: Page offset step between slots: 5 x 512 bytes, so eight slots land 512 bytes apart (5 is coprime with 8).
SLOT_STEP = 2560


def page_offset(slot: int) -> int:
    """The byte offset within a page at which the array in ``slot`` starts (a multiple of :data:`LINE`)."""
    return (slot * SLOT_STEP) % PAGE


def placed_empty(shape: tuple[int, ...], dtype: np.dtype | str, slot: int, lead: int = 0) -> np.ndarray:
    """An uninitialised C-contiguous array whose element ``lead`` starts at :func:`page_offset` (``slot``):
    ``lead`` elements before it (an output's guard zone) sit just below that offset."""
    dt = np.dtype(dtype)
    n = 1
    for d in shape:
        n *= int(d)
    nbytes = n * dt.itemsize
    raw = np.empty(nbytes + 2 * PAGE, np.uint8)
    start = (page_offset(slot) - lead * dt.itemsize - raw.ctypes.data) % PAGE
    return raw[start:start + nbytes].view(dt).reshape(shape)


def placed_copy(a: np.ndarray, slot: int) -> np.ndarray:
    """A placed copy of ``a`` (C-contiguous)."""
    out = placed_empty(a.shape, a.dtype, slot)
    out[...] = a
    return out


def placed_full(shape: tuple[int, ...], dtype: np.dtype | str, value: float, slot: int, lead: int = 0) -> np.ndarray:
    """A placed array filled with ``value`` (see :func:`placed_empty` for ``lead``)."""
    out = placed_empty(shape, dtype, slot, lead)
    out.fill(value)
    return out
