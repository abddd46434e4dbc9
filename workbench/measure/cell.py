"""One cell of a sweep, measured from start to finish, with every failure turned into a status.

A cell is (kernel, variant, backend, dtype, params, mode, cache). :func:`measure`
takes a :class:`~workbench.measure.request.CellRequest` and never raises for a
problem of the cell itself; it returns a :class:`~workbench.measure.result.CellResult`
whose status is ok / incorrect / unsupported / oom / error / timeout.

This module builds the cell's case and hands it on; the parts live beside it:
:mod:`.timed` (first call, checks, the audited timing loop), :mod:`.verify_only`
(a cell only checked), :mod:`.rotation` and :mod:`.input_cache` (input sets),
:mod:`.partner` (a baseline timed beside it), :mod:`.limits` (its deadlines),
:mod:`.failures` (exceptions to statuses) and :mod:`.cell_facts` (what the
result records beside its samples).
"""

from __future__ import annotations

import math
import threading
import time

from workbench.backends import registry as backend_registry
from workbench.catalog import registry as catalog
from workbench.catalog.spec import Unsupported
from workbench.core.conditions import take_reading
from workbench.core.record import RowDict
from workbench.core.timestamps import now_iso
from workbench.measure.backend_facts import after_oom, device_info, prepare_backend
from workbench.measure.case import Case
from workbench.measure.cell_facts import execution_cache_facts, new_result, tuned_config
from workbench.measure.failures import end_with, failed_result, is_oom, timeout_message
from workbench.measure.input_cache import InputCache, SharedInputCase
from workbench.measure.limits import Clock, Limits, deadline_check
from workbench.measure.request import BUILD_TIMEOUT_S, Cell, CellRequest, CheckOnly, RoundRole
from workbench.measure.result import CellResult, Rates
from workbench.measure.rotation import identical_sets, rotation_sets, shared_versions
from workbench.measure.rounds import finish_single_round
from workbench.measure.shared_arrays import SharedArrays
from workbench.measure.timed import time_case, warmup_left
from workbench.measure.timer import Cancelled, TimingConfig
from workbench.measure.verify_only import verify_only
from workbench.measure.worker import CellWorker
from workbench.roofs.throughput import Peaks, work

#: This module's entry points, and names of its parts still imported from here (tests, scripts, notebooks).
__all__ = [
    "BUILD_TIMEOUT_S", "Cell", "CellWorker", "CheckOnly", "InputCache", "Limits", "SharedArrays", "SharedInputCase",
    "TimingConfig", "after_oom", "failed_result", "identical_sets", "is_oom", "measure",
    "new_result", "now_iso", "prepare_backend", "rotation_sets", "run_cell", "shared_versions",
    "timeout_message", "tuned_config", "warmup_left",
]


class KernelInterrupt(RuntimeError):
    """A kernel raised KeyboardInterrupt on the cell thread of this process (``--in-process``): it stopped the
    whole sweep as if the user had pressed Ctrl-C, and the run was stored "interrupted" with no rows."""


def measure(request: CellRequest, *, cancel: threading.Event | None = None, inputs: InputCache | None = None,
            limits: Limits | None = None) -> CellResult:
    """Measure (or with :class:`CheckOnly`, only verify) one cell in the calling thread. Never raises for a
    problem of the cell itself: every failure is a status.

    The request's role says what a round does (:class:`RoundRole`): a later round only warms up, times and,
    in the cell's last round, checks the output after timing; the first call, the check before timing and
    peak memory are left to the first round (:func:`workbench.measure.rounds.merge_rounds` keeps them).
    Building the case has its own limit, ``build_timeout_s``; ``timeout_s`` starts when the build is done.
    ``limits`` (from :func:`run_on_thread` or a worker process) shares those deadlines with the waiting side.
    """
    t_start = time.perf_counter()
    take_reading()  # a short cell's CPU window may start here, not where this process last measured
    if limits is None:
        limits = Limits.starting_now(request.build_timeout_s, request.timeout_s)
    res = new_result(request.cell, request.first_seed)
    try:
        _measure(request, res, limits=limits, cancel=cancel, inputs=inputs)
    except Cancelled:
        raise
    except KeyboardInterrupt as exc:
        if threading.current_thread() is threading.main_thread():
            raise  # Ctrl-C or SIGTERM: signals land on the main thread (a worker process's cells run there)
        end_with(res, KernelInterrupt("the kernel raised KeyboardInterrupt itself (no signal reaches this "
                                      "thread): a failure of the cell, not a stop of the run"
                                      ).with_traceback(exc.__traceback__))
    except BaseException as exc:  # noqa: BLE001 - a variant's failure is a result, whatever it raised
        end_with(res, exc)
    if res.exec_cache is None:
        execution_cache_facts(request.cell, res)
    res.finished_at, res.wall_s = now_iso(), time.perf_counter() - t_start
    return res


def _measure(request: CellRequest, res: CellResult, *, limits: Limits, cancel: threading.Event | None,
             inputs: InputCache | None) -> None:
    """Build the cell's case, then check it only or time it."""
    case = _build(request, res, inputs)
    deadline_check(limits.build_deadline, cancel,
                   f"while building the variant and its inputs (build limit {limits.build_s:g} s)")
    deadline = limits.start_run()
    if isinstance(request.what, CheckOnly):
        verify_only(request.cell, case, request.what.seeds, res, deadline, cancel, limits.run_s, inputs)
    else:
        clock = Clock(deadline, limits.run_s, cancel, limits.first_call_done)
        time_case(request, request.what, case, case.backend, res, clock, inputs)


def _build(request: CellRequest, res: CellResult, inputs: InputCache | None) -> Case:
    """The cell's case: its variant built on its seeded inputs (from ``inputs`` when a sweep shares them), with
    what the result knows before the first call (runtime, device, work, set-up time); a backend that is
    unavailable or a cell known unsupported raises :class:`Unsupported`."""
    cell, seed = request.cell, request.first_seed
    spec = catalog.get_kernel(cell.kernel)
    backend = backend_registry.get(cell.backend)
    res.runtime = backend.runtime
    params = spec.validate_params(cell.params_dict)
    flops, nbytes = work(spec, params, cell.dtype)
    res.rates = Rates(flops=flops, bytes=nbytes, intensity=flops / nbytes if nbytes else None)
    probe = backend.probe()
    if not probe.available:
        raise Unsupported(f"backend {backend.name!r} is unavailable: {probe.reason}")
    res.device = device_info(backend).name
    if cell.unsupported:
        raise Unsupported(cell.unsupported)
    variant = catalog.get_variant(cell.kernel, cell.variant)
    # an ad-hoc callable names the runtime its own code runs on (numba code given numpy arrays is numba)
    res.runtime = getattr(variant.build, "code_runtime", None) or backend.runtime

    t = time.perf_counter()
    case = (Case(spec, variant, backend, params, cell.dtype, seed=seed) if inputs is None
            else SharedInputCase(spec, variant, backend, params, cell.dtype, seed, inputs))
    res.setup_s = time.perf_counter() - t
    return case


# -- row-returning entry points (tests, tuning, scripts): one cell's row, as a sweep would store it ----------
def run_cell(cell: Cell, config: TimingConfig | CheckOnly, *, seed: int = 0, timeout_s: float = math.inf,
             cancel: threading.Event | None = None, inputs: InputCache | None = None,
             peaks: Peaks | None = None, later_round: bool = False, check_after: bool = True,
             build_timeout_s: float = BUILD_TIMEOUT_S) -> RowDict:
    """:func:`measure` of one cell in the calling thread, as its row (without run_id / env_id)."""
    request = CellRequest(cell, config, RoundRole.of_flags(later_round, check_after), seed, timeout_s,
                          build_timeout_s, peaks)
    return finish_single_round(measure(request, cancel=cancel, inputs=inputs).to_row())
