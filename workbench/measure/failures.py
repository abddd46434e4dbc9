"""A cell's failures turned into statuses and words: whatever a variant raises or does, the cell ends with a row."""

from __future__ import annotations

import time
import traceback as tb

from workbench.catalog.spec import Unsupported
from workbench.core.status import Status
from workbench.core.timestamps import now_iso
from workbench.measure.audit import AuditFailed
from workbench.measure.cell_facts import new_result
from workbench.measure.limits import CellTimeout
from workbench.measure.request import (
    FIRST_CALL_FACTOR,
    FIRST_CALL_FLOOR_S,
    FIRST_CALL_SHARE,
    Cell,
    CellRequest,
)
from workbench.measure.result import CellResult

#: What out-of-memory errors say, lower-cased: numpy ("Unable to allocate 8.00 EiB for an array ..."), torch
#: CPU ("DefaultCPUAllocator: can't allocate memory"), torch CUDA / cupy ("out of memory"), pyopencl
#: (MEM_OBJECT_ALLOCATION_FAILURE, OUT_OF_RESOURCES, OUT_OF_HOST_MEMORY).
OOM_TEXTS = ("out of memory", "unable to allocate", "can't allocate memory", "cannot allocate memory",
             "mem_object_allocation_failure", "out_of_resources", "out_of_host_memory",
             "failed to allocate memory")


def is_oom(exc: BaseException) -> bool:
    """MemoryError, torch/cupy OutOfMemoryError (matched by name: neither is imported here), and errors of
    any runtime whose text says it ran out of memory (:data:`OOM_TEXTS`: torch CPU's RuntimeError,
    pyopencl's MemoryError / RuntimeError / LogicError with an allocation-failure code)."""
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {"MemoryError", "OutOfMemoryError"}:
        return True
    runtime_error = isinstance(exc, RuntimeError) or bool(names & {"RuntimeError", "LogicError"}) or any(
        (c.__module__ or "").startswith("pyopencl") for c in type(exc).__mro__)
    if not runtime_error:
        return False
    text = exception_text(exc).lower()
    return any(t in text for t in OOM_TEXTS)


def exception_text(exc: BaseException) -> str:
    """``Type: message``, even for an exception whose ``__str__`` raises (a variant's own exception class may):
    that raised again inside the worker's handler and ended the worker in a traceback."""
    try:
        message = str(exc)
    except BaseException as err:  # noqa: BLE001 - whatever its __str__ raises
        message = f"(its message could not be read: __str__ raised {type(err).__name__})"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def end_with(res: CellResult, exc: BaseException) -> None:
    """End ``res`` with the status of what the cell raised: unsupported, incorrect (a failed audit), timeout,
    oom, or error with its traceback."""
    if isinstance(exc, Unsupported):
        res.end(Status.UNSUPPORTED, str(exc))
    elif isinstance(exc, AuditFailed):
        res.end(Status.INCORRECT, str(exc))
    elif isinstance(exc, CellTimeout):
        res.end(Status.TIMEOUT, str(exc))
    elif is_oom(exc):
        res.end(Status.OOM, exception_text(exc))
    else:
        res.end(Status.ERROR, exception_text(exc),
                traceback="".join(tb.format_exception(type(exc), exc, exc.__traceback__)))


def failed_result(cell: Cell, status: Status, message: str, *, seed: int, started: float,
                  traceback: str | None = None) -> CellResult:
    """The result of a cell that ended without running to completion (its worker died or timed out, its kernel
    could not be rebuilt): identity, status and message, and the wall time since ``started``."""
    res = new_result(cell, seed)
    res.end(status, message, traceback=traceback)
    res.finished_at, res.wall_s = now_iso(), time.perf_counter() - started
    return res


def timeout_message(request: CellRequest, phase: str) -> str:
    """Why a cell that never came back was stopped, ``phase`` being where it was: "build", "first call", "run"."""
    if phase == "build":
        return f"the build did not finish within the {request.build_timeout_s:g} s build limit"
    if phase == "first call":
        return (f"its first call did not return within {request.first_call_limit_s:g} s (a first call may take "
                f"the longest of {FIRST_CALL_FLOOR_S:g} s, {FIRST_CALL_SHARE:.0%} of --timeout and "
                f"{FIRST_CALL_FACTOR:g}x the round's warm-up and budget; a larger --timeout gives it more)")
    return f"no result within the {request.timeout_s:g} s limit: a call never returned"
