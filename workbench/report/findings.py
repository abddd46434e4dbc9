"""Key findings: per kernel and size class, who is fastest and by how much over one reference.

One reference for the whole report (default: numpy's library variant) so every speed-up answers the
same question; mixing baselines (torch against torch, the rest against numpy) hides torch vs numpy.
Speed-ups, intervals and verdicts come from :func:`workbench.judge.compare.speedup_vs_baseline` (and so
from :mod:`workbench.judge.verdicts`); nothing here is a new statistic.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.frames import group_positions, split_by, take_rows, where_rows
from workbench.core.status import Status
from workbench.core.units import fmt_time_auto, interval_label
from workbench.judge.baselines import library_variants
from workbench.judge.compare import speedup_vs_baseline
from workbench.judge.few_rounds_basis import too_few_words
from workbench.judge.verdict_labels import verdict_label
from workbench.judge.verdicts import is_disturbed, rerun_hint
from workbench.report.caveats import FAILED_STATUSES, caveat, failed_cells, report_caveats, row_caveats
from workbench.report.claims import disturbance_text, machine_busy
from workbench.report.claims_cause import noise_cause
from workbench.report.reference_checks import ReferenceChecks
from workbench.report.row_notes import RowNotes, one_row_notes
from workbench.report.styles import parse_baseline, series_key
from workbench.roofs.model import RoofKey, RoofSet

#: The reference backend when none is chosen: its library variant is what a user reaches for first.
DEFAULT_REFERENCE_BACKEND = "numpy"
CLASS_NAMES = {1: [""], 2: ["small", "large"], 3: ["small", "medium", "large"]}


@dataclass
class Finding:
    kernel: str
    size_class: str
    size: str
    run: str
    fastest: str
    time: str
    reference: str
    speedup: float | None
    ci: tuple[float, float] | None
    verdict: str
    pct: float | None
    ceiling: str
    caveats: list[dict[str, str]] = field(default_factory=list)
    #: The smallest relative difference the verdict could call (its floor), and what would settle an
    #: inconclusive one: shown beside every verdict.
    floor: float | None = None
    settle: str = ""
    #: The share of repeated runs the interval would cover (from the verdict).
    coverage: float | None = None
    #: Where the reference is itself the fastest: its margin over the runner-up, in the same paired speed-up
    #: ("runner-up numba @ numba: 0.8× (slower)"); else "".
    runner_up: str = ""
    #: What the verdict rests on (its ``basis``): a pair left too few rounds at speed reads so, not "disturbed".
    basis: str = ""

    @property
    def disturbed(self) -> bool:
        """The interval is too wide to inform (:data:`~workbench.judge.verdicts.DISTURBED_FLOOR`): no interval,
        floor or (unless the direction is settled) speed-up is printed; the verdict reads "disturbed", or, where
        too few rounds were left at speed to pair (:attr:`too_few`), "could not tell (too few rounds at speed ...)"."""
        return self.speedup is not None and is_disturbed(self.floor)

    @property
    def too_few(self) -> str:
        """"too few rounds at speed: 1 set aside" where the interval is that wide because the slow host's rounds were
        set aside and too few were left to pair (no disturbance: its caveat says so, not "disturbed"); else ""."""
        return too_few_words(self.basis) if self.disturbed else ""

    @property
    def settled(self) -> bool:
        """Whether the finding may name a fastest: not a disturbed comparison whose direction is unsettled
        (a median from rounds that disagree is never headlined)."""
        return not (self.disturbed and self.verdict not in ("faster", "slower"))

    @property
    def fastest_shown(self) -> str:
        return self.fastest if self.settled else "not settled"

    @property
    def time_shown(self) -> str:
        return self.time if self.settled else ""

    @property
    def floor_text(self) -> str:
        if self.disturbed:
            return ""
        return f"±{self.floor:.0%}" if self.floor is not None and self.floor == self.floor else ""

    @property
    def verdict_shown(self) -> str:
        """The verdict as printed: "disturbed" (or "faster, disturbed") past the floor that can inform; "could not
        tell (too few rounds at speed: 1 set aside)" where that is why
        (:func:`workbench.judge.verdict_labels.verdict_label`)."""
        return verdict_label(self.verdict, self.floor, self.basis) if self.disturbed and self.floor is not None \
            else self.verdict

    @property
    def verdict_text(self) -> str:
        """The verdict with its floor beside it ("faster (floor ±5%)")."""
        return f"{self.verdict} (floor {self.floor_text})" if self.floor_text else self.verdict_shown

    @property
    def speedup_text(self) -> str:
        """The paired speed-up over the reference (the estimate the verdict rests on); a disturbed comparison
        gives only the bound its interval guarantees where the direction is settled ("≥1.8×"), else nothing."""
        if self.speedup is None:
            return ""
        if self.disturbed:
            if self.verdict == "faster" and self.ci:
                return f"≥{self.ci[0]:.3g}×"
            if self.verdict == "slower" and self.ci:
                return f"≤{self.ci[1]:.3g}×"
            return ""
        return f"{self.speedup:.3g}×"

    @property
    def ci_text(self) -> str:
        return f"{self.ci[0]:.3g}–{self.ci[1]:.3g}×" if self.ci and not self.disturbed else ""

    @property
    def warnings(self) -> list[dict[str, str]]:
        """The caveats marked ⚠ (implausible, failed at other sizes, reference off): flagged beside the verdict
        on the first screen."""
        return [c for c in self.caveats if c["text"].startswith("⚠")]

    @property
    def pct_text(self) -> str:
        return f"{self.pct:.0f}%" if self.pct is not None else ""


@dataclass
class KeyFindings:
    reference: str
    findings: list[Finding]
    caveats: list[str]

    @property
    def at_a_glance(self) -> list[Finding]:
        """One finding per kernel (and run), at its largest measured size: the first screen's answer to who
        wins, by how much and how sure, for every kernel; the table below has every size class."""
        last: dict[tuple[str, str], Finding] = {}
        for f in self.findings:
            last[(f.kernel, f.run)] = f
        return list(last.values())

    @property
    def interval_label(self) -> str:
        """The heading of the interval column: its coverage when all share one ("95% interval")."""
        return interval_label(f.coverage for f in self.findings if f.ci is not None)


def parse_reference(reference: Any) -> tuple[str | None, str | None]:
    """(variant, backend) of the chosen reference; the default is the library variant on numpy."""
    variant, backend = parse_baseline(reference)
    if variant is None and backend is None:
        backend = DEFAULT_REFERENCE_BACKEND
    return variant, backend


def is_default_reference(reference: Any) -> bool:
    """Whether no reference was chosen (the report's default, which a stand-in may replace per kernel)."""
    return parse_baseline(reference) == (None, None)


def reference_text(reference: Any) -> str:
    variant, backend = parse_reference(reference)
    if variant and backend:
        return series_key(variant, backend)
    if variant:
        return f"{variant} (on numpy where it ran there)"
    return f"{backend}'s library variant"


def pick_reference(ok: pd.DataFrame, variant: str | None, backend: str | None,
                   fallback: bool = False) -> tuple[str, str] | None:
    """The (variant, backend) that stands for the reference among one kernel's ok rows, or None.

    ``fallback`` (the report's default reference, none chosen): where numpy's library variant did not run the
    kernel (gemm_fp8 runs on torch only), the kernel's first library variant by name stands in, so the key
    findings and the kernel's speed-up table compare against one reference, which both name."""
    if ok.empty:
        return None
    if fallback:
        return pick_reference(ok, variant, backend) or pick_reference(ok, None, None)
    rows = ok
    if variant is not None:
        rows = rows[rows["variant"] == variant]
        if backend is None and (rows["backend"] == DEFAULT_REFERENCE_BACKEND).any():
            backend = DEFAULT_REFERENCE_BACKEND
    if backend is not None:
        rows = rows[rows["backend"] == backend]
    if variant is None and not rows.empty:
        libs = library_variants(ok, str(ok["kernel"].iloc[0]))
        lib_rows = rows[rows["variant"].isin(libs)]
        rows = lib_rows if not lib_rows.empty else rows.iloc[0:0]
    if rows.empty:
        return None
    named = [(v, b) for v, b in zip(rows["variant"], rows["backend"], strict=True) if isinstance(v, str)
             and isinstance(b, str)]
    if len(named) == len(rows):  # the first by name, as sorting the rows gives it
        return min(named)
    r = rows.sort_values(["variant", "backend"]).iloc[0]
    return str(r["variant"]), str(r["backend"])


def failed_elsewhere(kernel_rows: pd.DataFrame, best: Mapping[str, Any]) -> tuple[str, str] | None:
    """("⚠ failed at 3 of 4 sizes", which sizes and how) when the series named fastest here did not give a
    time at other sizes of the kernel: a variant that times out or is wrong at most sizes is no winner
    without that said beside it. None when it gave a time at every size it ran."""
    if not kernel_rows["status"].isin(FAILED_STATUSES).any():  # nothing failed here at all
        return None
    same = kernel_rows[(kernel_rows["variant"] == best.get("variant")) & (kernel_rows["backend"] == best.get("backend"))
                       & (kernel_rows["dtype"] == best.get("dtype"))]
    same = same[same["status"] != Status.UNSUPPORTED]
    bad = same[same["status"].isin(FAILED_STATUSES)]
    if bad.empty:
        return None
    sizes = same["params"].nunique()
    how = "; ".join(f"{_text(r.get('size_label')) or r.get('params')}: {r.get('status')}" for _, r in bad.iterrows())
    who = f"{best.get('variant')} @ {best.get('backend')}"
    return f"⚠ failed at {bad['params'].nunique()} of {sizes} sizes", f"{who} did not give a time at {how}"


def size_classes(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(class name, params) per size class of one kernel: every size up to three, else the smallest, the
    middle and the largest (a finding is about one measured size, never a blend of several)."""
    if rows.empty or "params" not in rows:
        return []
    sizes = (rows.assign(_size=pd.to_numeric(rows["size"], errors="coerce"))
             .drop_duplicates("params").sort_values(["_size", "params"]))
    params = list(sizes["params"])
    if len(params) > 3:
        params = [params[0], params[len(params) // 2], params[-1]]
    names = CLASS_NAMES[len(params)] if params else []
    return list(zip(names, params, strict=True))


#: The columns the key findings pick rows by (the fastest cell, the reference, failures, size classes).
NARROW_COLUMNS = ("kernel", "run_id", "params", "size", "size_label", "status", "variant", "backend", "dtype",
                  "library", "median_s", "message")
#: The columns :func:`workbench.report.claims.disturbance_text` reads of a disturbed pair's rows.
DISTURBANCE_COLUMNS = ("load_avg_1m", "other_cpu_share")
#: The column that holds a picked row's position in the report's frame.
POSITION = "__position"


def key_findings(df: pd.DataFrame, reference: Any = None, *, runs: pd.DataFrame | None = None,
                 environments: Mapping[str, Any] | None = None,
                 run_names: Mapping[str, str] | None = None,
                 roofs: Mapping[RoofKey, RoofSet] | None = None,
                 checks: ReferenceChecks | None = None,
                 judged: Mapping[tuple[str, tuple[str, str]], pd.DataFrame] | None = None) -> KeyFindings:
    """Per kernel, size class (and run, when there are several): the fastest variant@backend, its speed-up
    over the reference with interval and verdict, its % of ceiling (of ``roofs``, default the rows' own),
    and the caveats that apply — a reference whose time is off its own other evidence among them
    (``checks``: the report's :class:`ReferenceChecks` of ``df``, shared with its speed-up tables).
    ``judged``: :func:`speedup_vs_baseline` of each kernel's ok rows (every run) by (kernel, reference), as
    the report's kernel sections computed them: a run's rows of it are what judging that run alone gives
    (pairs and typical spreads never reach across runs)."""
    variant, backend = parse_reference(reference)
    out: list[Finding] = []
    if df.empty or "kernel" not in df:
        return KeyFindings(reference_text(reference), out, report_caveats(df, runs, environments, run_names))
    run_ids = [str(r) for r in dict.fromkeys(df["run_id"])] if "run_id" in df else [""]
    ctx = _Context(df, environments, roofs, checks if checks is not None else ReferenceChecks(df))
    # the rows are picked on a few columns (filtering every column took most of this function's time on a
    # 1M-row report); the rows a finding shows are read whole, by position
    narrow = df[[c for c in NARROW_COLUMNS if c in df]].assign(**{POSITION: np.arange(len(df))})
    for kernel, positions in group_positions(narrow, "kernel").items():  # one kernel's rows at a time
        if _text(kernel) == "":  # rows without a kernel name belong to no finding
            continue
        for kr in _kernel_runs(df, take_rows(narrow, positions), str(kernel), run_ids, (variant, backend),
                               judged, run_names, is_default_reference(reference)):
            out += [_size_finding(ctx, kr, cls, params) for cls, params in size_classes(kr.rows)]
    used = sorted({f.reference for f in out if f.reference})
    text = reference_text(reference) + (f" ({', '.join(used)})" if used and variant is None else "")
    return KeyFindings(text, out, report_caveats(df, runs, environments, run_names))


@dataclass
class _Context:
    """What every finding of a report reads: the report's rows (read whole, by position), the environment
    records, the roofs and the checks of the references' times."""

    df: pd.DataFrame
    environments: Mapping[str, Any] | None
    roofs: Mapping[RoofKey, RoofSet] | None
    checks: ReferenceChecks


@dataclass
class _KernelRun:
    """One kernel's rows of one run, judged against its reference: what the findings of its size classes read."""

    kernel: str
    #: The kernel's narrow rows of the run (:data:`NARROW_COLUMNS` and :data:`POSITION`).
    rows: pd.DataFrame
    #: The run's name in the findings ("" when the report has one run).
    run: str
    ref: tuple[str, str] | None
    #: :func:`speedup_vs_baseline` of the run's ok rows against ``ref`` (None without a reference).
    table: pd.DataFrame | None
    #: (variant, backend, params) -> the position of its row in ``table``.
    judged_at: dict[tuple[Any, ...], int]
    #: (variant, backend, dtype) -> :func:`failed_elsewhere` of that series, worked out once per series.
    elsewhere_of: dict[tuple[Any, Any, Any], tuple[str, str] | None] = field(default_factory=dict)


def _kernel_runs(df: pd.DataFrame, k_all: pd.DataFrame, kernel: str, run_ids: list[str],
                 reference: tuple[str | None, str | None],
                 judged: Mapping[tuple[str, tuple[str, str]], pd.DataFrame] | None,
                 run_names: Mapping[str, str] | None, default: bool = False) -> Iterator[_KernelRun]:
    """The kernel's rows (``k_all``, narrow) run by run, each judged against its reference: the report's
    judged table where ``judged`` has it, else judged here (``default``: no reference was chosen, so a
    stand-in where numpy's did not run, see :func:`pick_reference`)."""
    by_run = split_by(k_all, "run_id") if "run_id" in df else {"": k_all}
    tables: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}  # the judged table of a reference, by run
    for run_id in run_ids:
        k = by_run.get(run_id)
        if k is None:  # this kernel has no rows in that run
            continue
        ok = where_rows(k, k["status"] == Status.OK)
        ref = pick_reference(ok, *reference, fallback=default)
        whole = (judged or {}).get((kernel, ref)) if ref is not None else None
        if whole is not None:
            if ref not in tables:
                tables[ref] = split_by(whole, "run_id") if run_id else {"": whole}
            table = tables[ref].get(run_id, whole.iloc[0:0])
        else:
            table = (speedup_vs_baseline(take_rows(df, ok[POSITION].to_numpy()), baseline_variant=ref[0],
                                         baseline_backend=ref[1])
                     if ref is not None else None)
        run = (run_names or {}).get(run_id, run_id) if len(run_ids) > 1 else ""
        judged_at = _first_positions(table, ("variant", "backend", "params")) if table is not None else {}
        yield _KernelRun(kernel, k, run, ref, table, judged_at)


def _size_finding(ctx: _Context, kr: _KernelRun, cls: str, params: str) -> Finding:
    """The finding of one size class of a kernel's run: its fastest cell against the reference."""
    everything = kr.rows[kr.rows["params"] == params]
    cell = everything[everything["status"] == Status.OK]
    label = _text(everything["size_label"].iloc[0]) if "size_label" in everything else params
    failed = failed_cells(everything)
    if cell.empty:
        return Finding(kr.kernel, cls, label, kr.run, "", "", "", None, None, "nothing measured",
                       None, "", [caveat(f"did not run: {f}") for f in failed])
    ratios = _paired_speedups(kr, cell, params)
    best_at = int(np.nanargmax(ratios)) if _paired_decides(kr, cell, ratios) else \
        int(pd.to_numeric(cell["median_s"], errors="coerce").reset_index(drop=True).idxmin())
    best = ctx.df.iloc[int(cell[POSITION].iloc[best_at])]
    notes = one_row_notes(best, dict(ctx.environments or {}), ctx.roofs)
    pct = notes["pct"] if notes["pct"] is not None and not pd.isna(notes["pct"]) else None
    caveats = _best_caveats(ctx, kr, best, notes, failed)
    vs = _versus_reference(ctx, kr, best, params, cell)
    time = fmt_time_auto(best["median_s"])
    finding = Finding(kr.kernel, cls, label, kr.run, series_key(best["variant"], best["backend"]),
                      f"~ {time}" if notes["noisy"] else time, vs.reference, vs.speedup, vs.ci, vs.verdict, pct,
                      _text(notes["ceiling"]), caveats + vs.caveats, vs.floor if vs.speedup is not None else None,
                      vs.settle, vs.coverage, basis=vs.basis)
    if finding.too_few:  # no interval, and no disturbance: too few rounds were left at speed to pair
        finding.settle = _too_few_settle(finding, vs.row)
        finding.caveats.insert(0, caveat(finding.settle.split(":")[0], finding.settle))
    elif finding.disturbed:  # no interval: what disturbed it, from the pair's own rows, and how to rerun
        finding.settle = _disturbed_settle(ctx, kr, cell, best)
        finding.caveats.insert(0, caveat(finding.settle.split(":")[0], finding.settle))
    if vs.verdict == "reference":
        finding.runner_up = _runner_up(kr, cell, params, ratios)
    return finding


def _paired_speedups(kr: _KernelRun, cell: pd.DataFrame, params: str) -> np.ndarray:
    """Each of a size's ok cells' paired speed-up over the reference (1 for the reference itself, NaN where no
    pair was judged): the one estimate that names the fastest, gives its ratio and carries its verdict."""
    out = np.full(len(cell), np.nan)
    if kr.ref is None or kr.table is None or "speedup" not in kr.table:
        return out
    speedups = kr.table["speedup"].to_numpy()
    for i, key in enumerate(zip(cell["variant"], cell["backend"], strict=True)):
        at = kr.judged_at.get((*key, params))
        out[i] = 1.0 if key == kr.ref else (float(speedups[at]) if at is not None else np.nan)
    return out


def _paired_decides(kr: _KernelRun, cell: pd.DataFrame, ratios: np.ndarray) -> bool:
    """Whether the paired speed-ups name the fastest: the reference ran here and another cell was judged
    against it (else the medians do, the only estimate there is)."""
    here = [(v, b) == kr.ref for v, b in zip(cell["variant"], cell["backend"], strict=True)]
    return any(here) and int(np.isfinite(ratios).sum()) >= 2


def _runner_up(kr: _KernelRun, cell: pd.DataFrame, params: str, ratios: np.ndarray) -> str:
    """The reference's margin over the next fastest, in the same paired speed-up: "runner-up numba @ numba:
    0.8× (slower)" ("" when nothing else was judged here)."""
    # the columns read once as lists: two pandas lookups per row were 6% of a 100k-row HTML report's time
    finite = np.isfinite(np.asarray(ratios, dtype=float)).tolist()
    series = list(zip(cell["variant"].tolist(), cell["backend"].tolist(), strict=True))
    others = [(ratios[i], i) for i, (ok, key) in enumerate(zip(finite, series, strict=True)) if ok and key != kr.ref]
    if not others or kr.table is None:
        return ""
    ratio, i = max(others)
    key = series[i]
    m = kr.table.iloc[kr.judged_at[(*key, params)]]
    shown = verdict_label(str(m["verdict"]), float(m["floor"]), m.get("basis"))
    number = "" if is_disturbed(m["floor"]) else f"{ratio:.3g}× "
    return f"runner-up {series_key(*key)}: {number}({shown})"


def _disturbed_settle(ctx: _Context, kr: _KernelRun, cell: pd.DataFrame, best: pd.Series) -> str:
    """What disturbed a comparison too wide to inform (the pair's rows' load and other processes' CPU share)
    and how to rerun it."""
    sides = ((best["variant"], best["backend"]), kr.ref)  # read once, not once per row of the cell
    pair = cell[[(v, b) in sides for v, b in zip(cell["variant"], cell["backend"], strict=True)]]
    # only the columns disturbance_text reads: the pair's whole rows, taken from a million-row frame once per
    # disturbed finding, were a third of a 1M-row report's key findings
    cols = [c for c in DISTURBANCE_COLUMNS if c in ctx.df]
    rows = ctx.df.iloc[pair[POSITION].to_numpy(), [ctx.df.columns.get_loc(c) for c in cols]]
    by = disturbance_text(rows)
    # "while the machine is otherwise idle" only where the rows show other work (an idle run's rounds varied)
    return f"disturbed{f' ({by})' if by else ''}: {rerun_hint(machine_busy(rows))}"


def _too_few_settle(finding: Finding, row: Mapping[str, Any]) -> str:
    """Why a comparison too wide to inform is no disturbance: the slow host's rounds were set aside and too few were
    left to pair, so its interval rests on an assumed drift (:func:`~workbench.report.claims_cause.noise_cause`);
    then what would settle it (the verdict's own advice, which counts the rounds set aside). Its head, before the
    first colon, is the caveat's text: "too few rounds at speed (1 set aside)", never "disturbed"."""
    why = noise_cause(row) or str(row.get("basis") or "")
    rerun = finding.settle or rerun_hint(None)
    return f"{finding.too_few.replace(': ', ' (', 1)}): {why}; {rerun}"


def _best_caveats(ctx: _Context, kr: _KernelRun, best: pd.Series, notes: RowNotes,
                  failed: list[str]) -> list[dict[str, str]]:
    """The caveats of a size class's fastest cell: failures of its series at other sizes first, then its own
    (noise, stand-ins), the cells that did not run here, and a rate above its ceiling."""
    caveats = row_caveats(best, ctx.environments) + [caveat(f"did not run: {f}") for f in failed]
    series = (best.get("variant"), best.get("backend"), best.get("dtype"))
    if series not in kr.elsewhere_of:  # one answer per series of the kernel's run
        kr.elsewhere_of[series] = failed_elsewhere(kr.rows, best)
    elsewhere = kr.elsewhere_of[series]
    if elsewhere:
        caveats.insert(0, caveat(*elsewhere))
    if notes["peak_note"]:
        note = str(notes["peak_note"])
        mark = ("⚠ implausible" if note.startswith("implausible") else
                "⚠ above its ceiling" + (" (within a measured cache ceiling)"
                                         if "stays under that level's measured" in note else ""))
        caveats.append(caveat(mark, note))
    return caveats


@dataclass
class _VersusReference:
    """How a size class's fastest cell compares with the reference there, and the reference's own caveats."""

    verdict: str
    reference: str = ""
    speedup: float | None = None
    ci: tuple[float, float] | None = None
    floor: float | None = None
    settle: str = ""
    coverage: float | None = None
    caveats: list[dict[str, str]] = field(default_factory=list)
    #: The verdict's basis (what it rests on), and its judged row as a mapping (what its caveat words read).
    basis: str = ""
    row: dict[str, Any] = field(default_factory=dict)


def _versus_reference(ctx: _Context, kr: _KernelRun, best: pd.Series, params: str,
                      cell: pd.DataFrame) -> _VersusReference:
    """The verdict on ``best`` against the kernel run's reference, read from its judged table; where the
    reference ran in ``cell`` (this size's ok rows), its noise and a time off its own other evidence."""
    if kr.ref is None:
        return _VersusReference("reference did not run this kernel")
    ref_key = series_key(*kr.ref)
    at = kr.judged_at.get((best["variant"], best["backend"], params))
    if at is None or kr.table is None:
        return _VersusReference("reference did not run at this size", ref_key)
    m = kr.table.iloc[at]
    vs = _VersusReference(str(m["verdict"]), ref_key, floor=float(m["floor"]) if pd.notna(m.get("floor")) else None,
                          settle=_text(m.get("settle")),
                          coverage=float(m["coverage"]) if pd.notna(m.get("coverage")) else None,
                          basis=_text(m.get("basis")), row=m.to_dict())
    if vs.verdict == "baseline":
        vs.verdict = "reference"
    elif pd.notna(m["speedup"]):
        vs.speedup = float(m["speedup"])
        vs.ci = (float(m["ci_low"]), float(m["ci_high"])) if pd.notna(m["ci_low"]) else None
    ref_rows = cell[(cell["variant"] == kr.ref[0]) & (cell["backend"] == kr.ref[1])]
    if len(ref_rows):  # the reference's own time off its other evidence, even where it is the fastest
        ref_row = ctx.df.iloc[int(ref_rows[POSITION].iloc[0])]
        if vs.verdict != "reference":
            vs.caveats += [c for c in row_caveats(ref_row, ctx.environments, "reference ") if "noisy" in c["text"]]
        off = ctx.checks.anomaly(ref_row)
        if off:
            vs.caveats.append(caveat("⚠ reference time off", off))
    return vs


def reference_anomaly(df: pd.DataFrame, ref: Mapping[str, Any]) -> str | None:
    """Why the reference's time in ``ref`` is off its own other evidence in ``df``, or None (see
    :meth:`workbench.report.reference_checks.ReferenceChecks.anomaly`; for many references of one frame,
    build one :class:`~workbench.report.reference_checks.ReferenceChecks` and ask it)."""
    return ReferenceChecks(df).anomaly(ref)


def _first_positions(df: pd.DataFrame, columns: tuple[str, ...]) -> dict[tuple[Any, ...], int]:
    """The position of the first row of ``df`` with each combination of ``columns``' values (a lookup per
    finding, not a filter of a run's judged rows per finding)."""
    if df.empty or not set(columns) <= set(df.columns):
        return {}
    out: dict[tuple[Any, ...], int] = {}
    for i, key in enumerate(zip(*(df[c].tolist() for c in columns), strict=True)):
        out.setdefault(key, i)
    return out


def _text(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)
