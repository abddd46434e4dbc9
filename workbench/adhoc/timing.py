"""``workbench.timeit``: one callable timed with the workbench's own loop, in rounds, in this process.

The same pieces as a sweep's cell — the backend's timer (device events where the runtime has them,
otherwise synchronise + wall clock), the adaptive loop of :func:`~workbench.measure.timer.time_calls`,
rounds merged by :func:`~workbench.measure.rounds.merge_rounds` and their noise flag — without a
kernel spec, a store or a worker process: a notebook gets an answer in tens of milliseconds.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.adhoc.devices import backend_for
from workbench.backends import registry
from workbench.core.conditions import BUSY_CPU_SHARE, MIN_USABLE_S, Conditions, ConditionsMeter
from workbench.core.record import RowDict
from workbench.core.status import Status
from workbench.core.units import fmt_seconds
from workbench.judge.disturbed import CELL_RULE
from workbench.judge.stats import summarize
from workbench.judge.verdicts import BUSY_RERUN_HINT, spread_disturbed
from workbench.measure import host_settle
from workbench.measure.audit import NoAudit
from workbench.measure.rounds import merge_rounds, noise_fields, round_config
from workbench.measure.timer import TimingConfig, time_calls
from workbench.measure.timing_modes import choose_timer, on_cpu, sample_config, settle
from workbench.sweep.driver import SweepSpec

#: Timing defaults of :func:`timeit`, chosen so an answer comes about as fast as torch.utils.benchmark's
#: ``adaptive_autorange`` (see tests/perf/peers.py): a short warm-up after the first call, three rounds
#: sharing a budget, each round stopping once its spread is small.
WARMUP_S = 0.01
BUDGET_S = 0.1
ROUNDS = 3
TARGET_SPREAD = 0.05
MIN_SAMPLES = 5

@dataclass(frozen=True)
class Measurement:
    """The timing of one callable: per-call samples pooled over rounds, and what they say.

    ``median_s`` is the median of the round medians (robust to one drifted round); quartiles are those of
    all samples. ``noisy`` is the workbench's noise flag (:func:`workbench.measure.rounds.noise_fields`):
    the round medians spread by more than 10%, or other processes took a large share of the CPU. The share
    matters even when the rounds agree: a call of a multi-threaded kernel on a busy machine either finds a
    core for each thread or waits a time slice for one, and the median sits wherever the share of waits
    falls (gelu on 2 threads, 2 busy cores: ~0.5 ms or ~3 ms, 20-60% of calls waiting;
    tests/perf/timeit_vs_torch.py).
    """

    label: str
    median_s: float
    q1_s: float
    q3_s: float
    samples_s: tuple[float, ...]
    round_medians_s: tuple[float, ...]
    timer_kind: str
    backend: str
    calls_per_sample: int
    noise: float | None
    noisy: bool
    noise_note: str | None
    #: Wall time from the call of :func:`timeit` to the result (first call, warm-up and rounds).
    wall_s: float
    first_call_s: float
    #: Threads each loaded runtime used (torch intra-op, numba, BLAS and OpenMP pools) and the OpenMP wait
    #: policy, in words (:func:`workbench.core.threads.describe`): says when the policy could not be applied
    #: because a runtime was imported before workbench.
    threads: str = ""
    #: The machine while the rounds ran (:class:`workbench.core.conditions.Conditions`): the share of its CPU other
    #: processes used (0..1; None when the window was too short to read, e.g. the first call in a process)
    #: and the 1-minute load average.
    other_cpu_share: float | None = None
    load_avg_1m: float | None = None
    #: Which time the samples are (``host``, ``launch``, ``kernel``, ``graph``: :mod:`workbench.measure.timing_modes`)
    #: and, where it is not the only one there is, why this one.
    timing_mode: str = "host"
    timing_note: str = ""

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    @property
    def n_samples(self) -> int:
        return len(self.samples_s)

    @property
    def rounds(self) -> int:
        return len(self.round_medians_s)

    @property
    def disturbed(self) -> bool:
        """Whether the samples' IQR is half their median or more (:data:`~workbench.judge.disturbed.CELL_RULE`):
        then no spread is printed and the time reads
        "disturbed", as a summary table's cell does (08 printed "1.29 ms median (IQR 1.15 ms – 6.33 ms)")."""
        return self.median_s > 0 and spread_disturbed(self.iqr_s, self.median_s)

    def spread_text(self) -> str:
        """The median with its spread in words: "63.5 µs median (quartiles 62.8 µs to 64.4 µs)" (an "IQR" beside a
        median read as a half-width), or, where :attr:`disturbed`, the median and why no quartiles are given, with the
        rerun advice the machine's state allows (busy: not more rounds, which add its disturbance)."""
        if not self.disturbed:
            return (f"{fmt_seconds(self.median_s)} median (quartiles {fmt_seconds(self.q1_s)} to "
                    f"{fmt_seconds(self.q3_s)})")
        busy = None if self.other_cpu_share is None else self.other_cpu_share > BUSY_CPU_SHARE
        # the share the advice follows, printed beside it: more rounds only where the machine was read idle
        # (08 advised "more rounds" on one line and "a quieter machine" on the next, with no load to check either)
        load = ("" if self.other_cpu_share is None else
                f"other processes used {self.other_cpu_share:.0%} of the CPU (busy past {BUSY_CPU_SHARE:.0%}); ")
        hint = BUSY_RERUN_HINT if busy else f"time it again with more rounds (rounds={2 * max(self.rounds, 5)})"
        return f"{fmt_seconds(self.median_s)} median, disturbed: {CELL_RULE}, so they are not given; {load}{hint}"

    def noise_text(self) -> str:
        """The noise flag in one format for the repr and ``%wb_timeit``, the rounds' spread said once (the magic
        printed "spread across rounds 125%, NOISY: spread 125% across 3 rounds"; the repr "~noisy"). It is the
        spread between the rounds' medians, not the quartiles of the samples (:meth:`spread_text`)."""
        where = f"across {self.rounds} rounds" if self.rounds >= 2 else "within one stream of samples"
        spread = f"spread {self.noise:.0%} {where}" if self.noise is not None else ""
        if self.noisy:
            note = self.noise_note or ""
            return f"~ noisy ({note if 'spread' in note or not spread else f'{spread}; {note}'})"
        return "not noisy" + (f" ({spread})" if spread else "")

    def __str__(self) -> str:
        return (f"{self.label}: {self.spread_text()}; {self.noise_text()}; {self.rounds} rounds, "
                f"{self.n_samples} samples of "
                f"{self.calls_per_sample} call{'s' * (self.calls_per_sample != 1)}, timing mode {self.timing_mode}, "
                f"timer {self.timer_kind} on {self.backend}; threads: {self.threads}")

    def __repr__(self) -> str:
        return f"<Measurement {self}>"

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self))}</pre>"


def _label(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _machine_read(meter: ConditionsMeter, t0: float) -> Conditions:
    """The machine while a measurement begun at ``t0`` ran. An answer in under MIN_USABLE_S leaves no window to read
    other processes' CPU share in, and without it the busy-machine flag stays off (08, one core busy: a notebook's
    first timeit, 0.15 s, read "not noisy" beside rows flagged at 51%): the window is stretched to the shortest one
    that reads."""
    conditions = meter.stop()
    if conditions.other_cpu_share is None and time.perf_counter() - t0 < MIN_USABLE_S:
        time.sleep(MIN_USABLE_S - (time.perf_counter() - t0) + 0.01)
        conditions = meter.stop()
    return conditions


def timeit(fn: Callable[..., Any], *args: Any, backend: str | None = None, budget_s: float = BUDGET_S,
           rounds: int = ROUNDS, warmup_s: float = WARMUP_S, target_spread: float = TARGET_SPREAD,
           timing_mode: str | None = None, **kw: Any) -> Measurement:
    """Time ``fn(*args, **kw)`` with the workbench harness; returns a :class:`Measurement`.

    The backend (whose synchronise and timer are used) comes from the arguments — torch tensors by their
    device, CuPy arrays, PyOpenCL arrays and buffers — or from ``backend=`` (any backend name:
    ``torch-cuda``, ``cupy``, ...); host arguments mean ``numpy``: a wall clock, no synchronisation.
    ``budget_s`` is shared out between ``rounds`` (each round warms up briefly, then samples until its
    relative spread is at most ``target_spread`` or its share is spent). Every other keyword goes to
    ``fn``. ``timing_mode`` (``host``, ``launch``, ``kernel``, ``graph``; None: a CPU's host time, a GPU's
    kernel time where CUPTI is readable, else graph, else launch) picks which time is taken, as
    ``bench --timing-mode`` does; the result names the mode it got. An exception of ``fn`` propagates; for
    isolation from crashes and hangs use
    :func:`workbench.quick`.
    """
    t0 = time.perf_counter()
    if not callable(fn):
        raise TypeError(f"timeit() needs a callable first, got {type(fn).__name__}: {fn!r}")
    for opt, value in (("budget_s", budget_s), ("rounds", rounds), ("warmup_s", warmup_s),
                       ("target_spread", target_spread)):
        SweepSpec.check_option(opt, value)  # a NaN, a string or 0 rounds is a clear ValueError
    meter = ConditionsMeter()  # before the first call: the longest window this call has to judge the machine by
    meter.start()
    be = registry.get(backend_for(args, kw, backend))
    be.require()
    # partial (C) rather than a Python closure: no extra frame in the timed loop (~60 ns a call).
    call = functools.partial(fn, *args, **kw) if args or kw else fn
    choice = choose_timer(be, timing_mode)  # an unknown mode: a ValueError before anything runs
    first = be.timer().measure(call).device_s  # lazy initialisation and compilation (launch time): never a sample
    choice = settle(choice, be, call)  # a graph that cannot be captured: launch, saying so
    timer = choice.timer
    config = sample_config(choice.mode, TimingConfig(warmup_s=warmup_s, target_spread=target_spread,
                                                      min_samples=MIN_SAMPLES, budget_s=budget_s))
    row: RowDict | None = None
    for r in range(int(rounds)):
        cfg = round_config(config, int(rounds), later=r > 0)
        host = host_settle.settle(cap_s=host_settle.settle_cap(cfg)) if on_cpu(be) else None  # as a sweep's cell
        timing = time_calls(timer, [call], cfg, audit=NoAudit("workbench.timeit: a callable without a spec or "
                                                              "a reference, not a catalog variant"))
        st = summarize(timing.samples_s)
        host_facts = {} if host is None else host.end().facts()
        row = merge_rounds(row, {"status": Status.OK, "samples_s": json.dumps(timing.samples_s),
                                 "host_samples_s": json.dumps(timing.host_samples_s), "median_s": st.median,
                                 "calls_per_sample": timing.calls_per_sample, "stopped_by": timing.stopped_by,
                                 "timing_mode": choice.mode, **host_facts})
    assert row is not None
    conditions = _machine_read(meter, t0)
    row.update(other_cpu_share=conditions.other_cpu_share)
    row.update(noise_fields(row))  # with the busy-machine flag, as a sweep's cell gets it
    samples = tuple(json.loads(row["samples_s"]))
    st = summarize(samples)  # one round: its own quartiles; several: the rounds', each weighing the same
    q1, q3 = (float(row["q1_s"]), float(row["q3_s"])) if row.get("q1_s") is not None else (st.q1, st.q3)
    return Measurement(label=_label(fn), median_s=float(row["median_s"]), q1_s=q1, q3_s=q3,
                       samples_s=samples, round_medians_s=tuple(json.loads(row["round_medians_s"])),
                       timer_kind=timer.kind, backend=be.name, calls_per_sample=int(row["calls_per_sample"]),
                       noise=row.get("noise"), noisy=bool(row.get("noisy")), noise_note=row.get("noise_note"),
                       wall_s=time.perf_counter() - t0, first_call_s=first, threads=conditions.threads or "",
                       other_cpu_share=conditions.other_cpu_share, load_avg_1m=conditions.load_avg_1m,
                       timing_mode=choice.mode, timing_note=choice.note)
