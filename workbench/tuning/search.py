"""The search: optuna proposes configurations, the harness verifies and times each, the store keeps every row.

Each configuration is measured as the variant ``name[K=V,...]`` (:func:`workbench.catalog.registry.configured`)
through :func:`workbench.measure.run_cell`, in this process, on a cell thread as the confirmation's in-process
sweep runs its cells (:func:`on_cell_thread`): first checked against the float64 reference on
the spec's odd ``verify`` sizes (two seeds), then, at the tuning size, checked again, timed and checked
after timing. A configuration that fails any check is stored with its status and never chosen. The
hand-picked default is measured first, so the result can always say how the best compares with it.

Strategies map to optuna samplers: ``grid`` (GridSampler: every configuration, in order), ``random``
(RandomSampler) and ``bayes`` (TPESampler). Configurations breaking a restriction are pruned, never built; each
configuration is measured once (a sampler proposing it again gets the stored time).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from workbench import config as config_file
from workbench.backends import registry as backend_registry
from workbench.backends.base import Backend
from workbench.catalog import registry
from workbench.catalog.spec import KernelSpec, TunableConfig, Variant, format_config
from workbench.core.record import RowDict, size_label
from workbench.core.status import Status
from workbench.core.timestamps import now_iso
from workbench.judge import verdicts as vd
from workbench.judge.compare import speedup_vs_baseline
from workbench.measure.cell import Cell, CheckOnly, run_cell
from workbench.measure.timer import TimingConfig
from workbench.measure.worker import CellWorker
from workbench.store.database import current_environment, open_store
from workbench.sweep.driver import SweepSpec, run_sweep
from workbench.tuning.resolve import device_fingerprint, shape_class

if TYPE_CHECKING:
    import pandas as pd

STRATEGIES = ("grid", "random", "bayes")


@dataclass
class Trial:
    number: int
    config: TunableConfig
    status: str
    median_s: float | None
    message: str = ""
    best_so_far_s: float | None = None
    elapsed_s: float = 0.0


class TuneVerdict(TypedDict):
    """The confirmation's paired verdict on the chosen configuration against the default (the speed-up with
    its confidence interval and noise floor, from :func:`workbench.judge.compare.speedup_vs_baseline`)."""

    speedup: float
    ci_low: float
    ci_high: float
    floor: float
    verdict: str
    #: The configuration judged.
    against: TunableConfig
    #: Both cells' own medians (the default's, the candidate's), printed beside the paired figure.
    median_a: float
    median_b: float
    #: What the verdict rests on: too few rounds at speed reads so in its label, not "disturbed".
    basis: str
    #: Whether the tuner may act on it: "faster" with an interval that informs (not disturbed) and the cells'
    #: own medians inside it (:func:`settled_faster`); only then is the candidate kept.
    settled: bool


@dataclass
class TuneResult:
    kernel: str
    variant: str
    backend: str
    dtype: str
    params: dict[str, int]
    strategy: str
    device: str
    shape_class: str
    run_id: str
    trials: list[Trial] = field(default_factory=list)
    best: Trial | None = None
    default: Trial | None = None
    space_size: int = 0
    saved_to: str | None = None
    #: The configuration kept: the confirmed winner, or the default when no candidate beat it for sure.
    chosen: Trial | None = None
    #: The confirmation: its run, and the chosen one's paired verdict against the default.
    confirm_run_id: str | None = None
    verdict: TuneVerdict | None = None
    #: Median of the confirmation's round medians per configuration (``NB=128,...`` -> seconds).
    confirmed_s: dict[str, float] = field(default_factory=dict)
    #: Every candidate's paired verdict against the default in the confirmation (the one in ``verdict`` among them),
    #: as the tuner judged it, so a reader can check which was reported and why.
    candidates: list[TuneVerdict] = field(default_factory=list)

    @property
    def speedup(self) -> float | None:
        """Default time / best time, both from this search (one timing each: a hint, not a verdict)."""
        if self.best and self.default and self.best.median_s and self.default.median_s:
            return self.default.median_s / self.best.median_s
        return None

    @property
    def kept(self) -> Trial | None:
        return self.chosen or self.best

    def _verdict_word(self) -> str:
        """The confirmation's verdict as the configuration file keeps it: a "faster" that did not decide what
        was kept (disturbed, or its medians disagree) reads "not settled"."""
        v = self.verdict
        if v is None:
            return "unconfirmed"
        return ("faster" if v["settled"] else "not settled") if v["verdict"] == "faster" else v["verdict"]

    def entry(self) -> config_file.TunedEntry:
        """The configuration-file entry of the best configuration."""
        kept = self.kept
        assert kept is not None
        return {"kernel": self.kernel, "variant": self.variant, "device": self.device, "dtype": self.dtype,
                "shape_class": self.shape_class, "config": dict(kept.config), "median_s": kept.median_s,
                "verdict": self._verdict_word(),
                "default_median_s": self.confirmed_s.get(format_config(self.default.config), self.default.median_s)
                if self.default else None,
                "size": size_label(self.params), "run_id": self.run_id, "tuned_at": now_iso(),
                "strategy": self.strategy, "trials": len(self.trials)}


def import_optuna() -> Any:
    """optuna, or a clear error naming the extra that installs it (LookupError: the CLI's exit 2, no traceback)."""
    try:
        import optuna
    except ImportError as exc:
        raise LookupError("tuning needs optuna, which is not installed: pip install 'kernel-workbench[tune]' "
                          "(or pip install optuna)") from exc
    return optuna


def sampler_for(strategy: str, variant: Any, seed: int) -> Any:
    optuna = import_optuna()

    if strategy == "grid":
        return optuna.samplers.GridSampler({t.name: list(t.values) for t in variant.tunables}, seed=seed)
    if strategy == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if strategy == "bayes":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=5)
    raise ValueError(f"unknown strategy {strategy!r}; valid strategies: {', '.join(STRATEGIES)}")


def tune(kernel: str, variant: str, backend: str, *, dtype: str = "float32", params: Mapping[str, int] | None = None,
         strategy: str = "bayes", budget_s: float = 60.0, max_trials: int | None = None, store: Any = None,
         timing: TimingConfig | None = None, seed: int = 0, save: bool = True, config_path: str | None = None,
         progress: bool = True, on_trial: Callable[[Trial], None] | None = None, confirm: int = 3,
         confirm_rounds: int = 5) -> TuneResult:
    """Search ``variant``'s tunables on ``backend`` for ``dtype`` at ``params`` (default: the largest
    ``quick`` size) within ``budget_s`` seconds (a trial started in time finishes). Every measured
    configuration's row goes into ``store`` under one run.

    The search times each configuration once, and the fastest of many noisy single timings is biased low
    (the winner's curse: measured here, a search's best at 1024^3 ran 0.94x the default in a run holding
    both). So the ``confirm`` fastest are then measured with the default in one run of ``confirm_rounds``
    interleaved rounds, and a candidate is kept only where the paired verdict calls it faster than the
    default; otherwise the default is kept. With ``save`` the kept configuration is written to the
    configuration file for this device, dtype and shape class."""
    spec, base, b = _target(kernel, variant, backend, dtype, strategy, budget_s)
    optuna = import_optuna()  # after the arguments are checked: a bad one is reported with or without optuna
    params = spec.validate_params(params if params is not None else max(
        spec.sizes.get("quick") or spec.sizes["verify"], key=lambda p: spec.flops(p)))
    verify_sizes = [spec.validate_params(p) for p in spec.sizes.get("verify", [])][-2:]
    space = base.space()
    timing = timing or TimingConfig(budget_s=0.3, min_samples=5, warmup_s=0.05)

    st = open_store(store)
    env_id, env = current_environment()
    st.add_environment(env_id, env)
    run_id = st.new_run(name=f"tune {kernel}/{variant} on {backend} ({strategy})", suite="tune",
                        argv=list(sys.argv), env_id=env_id)
    result = TuneResult(kernel, variant, b.name, dtype, dict(params), strategy, device_fingerprint(b),
                        shape_class(spec, params, dtype), run_id, space_size=len(space))
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(direction="minimize", sampler=sampler_for(strategy, base, seed))
    study.enqueue_trial(base.default_config())

    worker = CellWorker("workbench-tune")  # the trials' thread: the confirmation's in-process sweep times on one

    def measure(config: TunableConfig, number: int) -> Trial:
        return _measure(st, run_id, env_id, kernel, variant, b.name, dtype, params, verify_sizes, config, timing,
                        seed, number, on_cell_thread(worker))

    search = _Search(result, base, measure, len(space), max_trials, _bar(len(space), progress), on_trial)
    # the run is "finished" only once its search and confirmation are: a tune stopped in either (Ctrl-C, SIGTERM)
    # kept no configuration, and its run must not read as one that did
    status = "interrupted"
    try:
        try:
            study.optimize(search, timeout=budget_s, catch=(_Failed,))
        finally:
            if search.bar is not None:
                search.bar.close()
        if confirm > 0 and result.best is not None:
            _confirm(result, st, base.default_config(), confirm, confirm_rounds, timing)
        status = "finished"
    finally:
        worker.close()
        st.set_run_status(run_id, status, wall_s=time.perf_counter() - search.started)
    if save and result.kept is not None:
        result.saved_to = _save_kept(result, config_path)
    return result


def _save_kept(result: TuneResult, config_path: str | None) -> str:
    """Where the kept configuration was written: ``config_path``, else this machine's configuration file."""
    path = config_path or config_file.config_path()
    config_file.write(config_file.with_tuned(config_file.read(path), result.entry()), path)
    return str(path)


def _target(kernel: str, variant: str, backend: str, dtype: str, strategy: str,
            budget_s: float) -> tuple[KernelSpec, Variant, Backend]:
    """The spec, tunable variant and available backend a search runs on; a ValueError naming the bad
    argument and the valid choices otherwise (checked before optuna is needed)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; valid strategies: {', '.join(STRATEGIES)}")
    if not budget_s > 0:
        raise ValueError(f"--budget must be a positive number of seconds, got {budget_s!r}")
    spec = registry.get_kernel(kernel)
    base = registry.get_variant(kernel, variant)
    if not base.tunables:
        tunable = [n for n, v in registry.variants(kernel).items() if v.tunables]
        raise ValueError(f"variant {variant!r} of kernel {kernel!r} declares no tunable parameters; tunable "
                         f"variants of {kernel}: {', '.join(tunable) or '(none)'}")
    b = backend_registry.get(backend)
    reason = base.unsupported_reason(b, dtype)
    if reason:
        raise ValueError(f"cannot tune here: {reason}")
    b.require()
    return spec, base, b


@dataclass
class _Search:
    """The optuna objective: each configuration measured once (a sampler proposing it again gets the stored
    time), the result's best and default kept up to date, the search stopped when the space is exhausted."""

    result: TuneResult
    base: Variant
    measure: Callable[[TunableConfig, int], Trial]
    space_size: int
    max_trials: int | None
    bar: Any
    on_trial: Callable[[Trial], None] | None
    started: float = field(default_factory=time.perf_counter)
    measured: dict[str, Trial] = field(default_factory=dict)

    def __call__(self, ot: Any) -> float:
        config = {t.name: ot.suggest_categorical(t.name, list(t.values)) for t in self.base.tunables}
        try:
            full = self.base.check_config(config)
        except ValueError:  # breaks a restriction: never built, not counted
            raise import_optuna().TrialPruned() from None
        key = format_config(full)
        trial = self.measured.get(key)  # proposed again: the stored answer, no second measurement
        if trial is None:
            trial = self.measured[key] = self._new_trial(full)
        if len(self.measured) == self.space_size or (
                self.max_trials is not None and len(self.result.trials) >= self.max_trials):
            ot.study.stop()
        if trial.status != Status.OK:
            raise _Failed(f"{key}: {trial.status}")
        return trial.median_s

    def _new_trial(self, full: TunableConfig) -> Trial:
        result = self.result
        trial = self.measure(full, len(result.trials))
        trial.elapsed_s = time.perf_counter() - self.started
        result.trials.append(trial)
        if trial.status == Status.OK and (result.best is None or trial.median_s < result.best.median_s):
            result.best = trial
        if full == self.base.default_config():
            result.default = trial
        trial.best_so_far_s = result.best.median_s if result.best else None
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(_postfix(result))
        if self.on_trial is not None:
            self.on_trial(trial)
        return trial


#: Runs one cell and returns its row: :func:`run_cell` in the calling thread, or on a cell thread.
CellRunner = Callable[..., RowDict]


def on_cell_thread(worker: CellWorker) -> CellRunner:
    """:func:`run_cell` on ``worker``'s thread, as the confirmation's in-process sweep runs its cells
    (:func:`workbench.measure.isolation.run_on_thread`). WHY: timed in the calling thread, a search's trials were
    not comparable with the confirmation's rows of the same tiles. In a notebook kernel (tutorial 11 headless,
    numba-tiled 128^3, load ~15 on 2 cores, 2026-12-07) all 8 trials of two searches read 1.3-3.9 ms (their
    samples' 10th percentiles 0.9-1.3 ms) where each confirmation measured the same tiles at 0.13-0.24 ms; a
    plain script's searches, whose main thread libgomp keeps bound to one core (the notebook harness unbinds the
    kernel's), read 0.07-0.15 ms. On the cell thread, 6 of the next 8 notebook trials read 0.09-0.22 ms beside
    confirmation medians of 0.13-0.24 ms (the other two caught the load's slow spells, as the confirmation's
    first rounds did)."""
    def run(cell: Cell, what: TimingConfig | CheckOnly, **kwargs: Any) -> RowDict:
        return worker.run(lambda cancel: run_cell(cell, what, cancel=cancel, **kwargs), math.inf)

    return run


def _measure(st: Any, run_id: str, env_id: str, kernel: str, variant: str, backend: str, dtype: str,
             params: dict[str, int], verify_sizes: list[dict[str, int]], config: TunableConfig,
             timing: TimingConfig, seed: int, number: int, run: CellRunner = run_cell) -> Trial:
    """Verify ``config`` on the odd sizes, then check and time it at ``params`` (each cell through ``run``);
    store the row that decides."""
    name = registry.configured(kernel, variant, config).name
    row: RowDict = {}
    for p in verify_sizes:
        row = run(Cell.make(kernel, name, backend, dtype, p), CheckOnly((seed, seed + 1)))
        if row["status"] != Status.OK:
            break
    else:
        row = run(Cell.make(kernel, name, backend, dtype, params), timing, seed=seed)
    row.update(run_id=run_id, env_id=env_id, tuned_config=format_config(config))
    st.record(row)
    timed = row["status"] == Status.OK and row.get("median_s") is not None and math.isfinite(row["median_s"])
    status = row["status"] if timed or row["status"] != Status.OK else "error"
    return Trial(number, dict(config), status, row["median_s"] if timed else None, row.get("message") or "")


def settled_faster(row: Mapping[str, Any]) -> bool:
    """Whether a confirmation row's "faster" may decide what is kept: its interval informs (not disturbed: a
    "faster" whose only bound is "at least 1.07x" was kept once and a 7-round rerun then put the gain in
    0.985-1.031x) and the two cells' own medians agree with it (their ratio inside the interval)."""
    if row.get("verdict") != "faster" or vd.is_disturbed(row.get("floor")):
        return False
    try:
        ratio = float(row["median_a"]) / float(row["median_b"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return True  # no medians to set beside it: the interval alone decides
    return not math.isfinite(ratio) or float(row["ci_low"]) <= ratio <= float(row["ci_high"])


def confirmation_pick(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series | None]:
    """(the candidates settled faster, fastest first; the one reported against the default): the fastest settled
    one, else the undisturbed one with the highest paired speed-up (a disturbed comparison's point estimate
    ranks nothing: tutorial 11 named a disturbed candidate beside an undisturbed one it could not be set
    against), else, every comparison disturbed, the first row (the candidate with the search's lowest single
    timing: the table keeps the candidates' order), never the highest disturbed estimate; None for an empty
    table."""
    settled = table.apply(settled_faster, axis=1).astype(bool) if len(table) else table["verdict"].astype(bool)
    faster = table[settled].sort_values("speedup", ascending=False)
    if len(faster):
        return faster, faster.iloc[0]
    informs = table[[not vd.is_disturbed(f) for f in table["floor"]]] if len(table) else table
    if not len(informs):
        return faster, table.iloc[0] if len(table) else None
    return faster, informs.sort_values("speedup", ascending=False).iloc[0]


def _confirm(result: TuneResult, st: Any, default: TunableConfig, top: int, rounds: int,
             timing: TimingConfig) -> None:
    """Measure the ``top`` fastest configurations with the default in one run of interleaved ``rounds``, in
    this process; keep the fastest that the paired verdict settles as faster than the default
    (:func:`settled_faster`), else the default."""
    ok = sorted((t for t in result.trials if t.status == Status.OK), key=lambda t: t.median_s)
    candidates = [t for t in ok if t.config != default][:top]
    if result.default is None or result.default.status != Status.OK or not candidates:
        result.chosen = result.default if result.default and result.default.status == Status.OK else result.best
        return
    names = {registry.configured(result.kernel, result.variant, t.config).name: t
             for t in [result.default, *candidates]}
    base_name = next(iter(names))
    spec = SweepSpec(kernels=[result.kernel], variants=list(names), backends=[result.backend], dtypes=[result.dtype],
                     sizes=[dict(result.params)], rounds=max(rounds, 3), budget_s=timing.budget_s * max(rounds, 3),
                     isolation="in-process")
    outcome = run_sweep(spec, store=st, name=f"tune {result.kernel}/{result.variant}: confirm", progress=False)
    result.confirm_run_id = outcome.run_id
    df = outcome.results()
    table = speedup_vs_baseline(df[df["status"] == Status.OK], baseline_variant=base_name,
                                baseline_backend=result.backend)
    table = table[table["variant"] != base_name]
    medians = dict(zip(df["variant"], df["median_s"], strict=True))
    result.confirmed_s = {format_config(t.config): medians[n] for n, t in names.items() if n in medians}
    faster, pick = confirmation_pick(table)
    def judged(row: Any) -> TuneVerdict:
        return {"speedup": row["speedup"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "floor": row["floor"],
                "verdict": row["verdict"], "against": names[row["variant"]].config,
                "median_a": float(row.get("median_a", math.nan)), "median_b": float(row.get("median_b", math.nan)),
                "basis": str(row.get("basis") or ""), "settled": bool(settled_faster(row))}

    result.candidates = [judged(row) for _, row in table.iterrows()]
    if pick is not None:
        result.verdict = {**judged(pick), "settled": bool(len(faster))}
    if len(faster):
        winner = names[faster.iloc[0]["variant"]]
        result.chosen = Trial(winner.number, winner.config, "ok", medians[faster.iloc[0]["variant"]], winner.message)
    else:
        result.chosen = result.default


class _Failed(Exception):
    """A configuration that did not pass (incorrect, error...): a failed optuna trial, never the best."""


def _bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="config", dynamic_ncols=True, leave=True)


def _postfix(result: TuneResult) -> str:
    if result.best is None:
        return "no correct configuration yet"
    return f"best {result.best.median_s * 1e3:.3f} ms [{format_config(result.best.config)}]"

