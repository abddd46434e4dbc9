"""What a sweep measures and how: :class:`SweepSpec`, pure description and JSON-serialisable, so a run stores
the spec it was started with and ``--resume`` rebuilds the same cells from it. The plan
(:mod:`workbench.sweep.plan`) and the driver (:mod:`workbench.sweep.driver`) read it; it reads neither.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.catalog.spec import KernelSpec
from workbench.core.record import TIMING_MODES
from workbench.measure.gpu_budget import QUICK_GPU, GpuBudget
from workbench.measure.isolation import check_isolation
from workbench.measure.memory_cap import parse_memory_cap
from workbench.measure.request import BUILD_TIMEOUT_S, NO_VARIANT, Cell
from workbench.measure.timer import CACHE_MODES, TimingConfig
from workbench.sweep.selection import DEFAULT_MODES, select

#: A size given positionally (axes in the spec's order) or by axis name.
SizeEntry = Mapping[str, int] | Sequence[int]

#: Rounds of a sweep when none are asked for (``workbench bench``, ``workbench.benchmark``, the quick and
#: llm suites). Measured with tests/perf/rounds.py on a 2-core machine (the same sweep twice, 37 cells):
#: the median |A/A difference| per cell was 8.4% with 1 round, 5.0% with 3 and 7.9% with 5 (90th
#: percentiles 30%, 16%, 26%), for a quick suite 1.3x (3 rounds) or 1.7x (5 rounds) as long as with
#: one. Three is also the fewest rounds :mod:`workbench.judge.verdicts` judges by (``MIN_ROUNDS``).
DEFAULT_ROUNDS = 3


@dataclass
class SweepSpec:
    """What to measure and how hard to try. ``None`` means "all" for kernels, variants and backends."""

    kernels: Sequence[str] | None = None
    variants: Sequence[str] | None = None
    backends: Sequence[str] | None = None
    dtypes: Sequence[str] = ("float32",)
    #: None: each kernel's "quick" sizes; a name: that size list of each spec; or explicit sizes.
    sizes: str | Sequence[SizeEntry] | None = None
    modes: Sequence[str] = DEFAULT_MODES
    cache: str | Sequence[str] = "hot"
    budget_s: float = 0.5
    timeout_s: float = 60.0
    #: Limit on building each cell (inputs, reference, compilation), apart from ``timeout_s``.
    build_timeout_s: float = BUILD_TIMEOUT_S
    #: LLM shapes (batch, seq, hidden, intermediate, ...); each spec maps them with ``llm_params``.
    llm_shapes: Sequence[Mapping[str, Any]] | None = None
    warmup_s: float = 0.1
    target_spread: float = 0.02
    #: Sample each round until its median is known to ± this (95%, relative), for up to ``extend_s`` beyond
    #: the budget (all rounds together); 0: stop at ``target_spread`` (the rule before issue 36).
    precision: float = 0.01
    extend_s: float = 1.0
    min_samples: int = 5
    max_samples: int = 1000
    n_inputs: int = 3
    seed: int = 0
    suite: str | None = None
    #: Measure every cell once per round (budget shared out between rounds); rounds after the first
    #: visit the cells in an order shuffled per round.
    rounds: int = DEFAULT_ROUNDS
    #: Where cells run: "process" (a worker process per backend: crashes, hangs and runaway memory end the
    #: cell, not the sweep) or "in-process" (for debugging); None: ``$WORKBENCH_ISOLATION`` or "process".
    isolation: str | None = None
    #: Memory a cell may add to its worker ("8G", "40%", "none"; None: half the host's memory).
    memory_cap: str | int | None = None
    #: Sub-sweeps whose cells together are this sweep's, for a suite that picks variants and sizes per kernel
    #: (``quick``): each maps axis fields (kernels, variants, backends, sizes, llm_shapes, modes) to values
    #: that replace this spec's. None: the axes above.
    parts: Sequence[Mapping[str, Any]] | None = None
    #: GPU cells' timing mode (``kernel``, ``graph``, ``launch``, ``host``); None: kernel, else graph, else launch
    #: (:mod:`workbench.measure.timing_modes`). CPU cells are always ``host``.
    timing_mode: str | None = None
    #: A GPU visit's device seconds at least (:class:`~workbench.measure.gpu_budget.GpuBudget`), and the seconds
    #: of a first round's calls read for energy per call (0: none).
    gpu_min_device_s: float = GpuBudget.min_device_s
    gpu_energy_s: float = GpuBudget.energy_s

    def __post_init__(self) -> None:
        if hasattr(self.sizes, "tolist"):  # a NumPy array of sizes: plain lists, as a stored spec needs
            self.sizes = self.sizes.tolist()
        for name in ("kernels", "variants", "backends", "dtypes", "modes"):  # one name, not its letters
            if isinstance(getattr(self, name), str):
                setattr(self, name, [getattr(self, name)])

    # -- serialisation ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:
            if isinstance(v, Mapping):
                return {k: plain(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            return v
        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SweepSpec:
        known = {f.name for f in dataclasses.fields(cls)}
        fields = {k: v for k, v in d.items() if k in known}
        fields.setdefault("rounds", 1)  # a spec stored before rounds existed ran once
        fields.setdefault("precision", 0.0)  # and one stored before precision stopped at its spread
        fields.setdefault("extend_s", 0.0)
        return cls(**fields)

    def timing_config(self, cache: str = "hot") -> TimingConfig:
        """The whole cell's timing config (one round's share: :func:`workbench.measure.rounds.round_config`)."""
        return TimingConfig(warmup_s=self.warmup_s, target_spread=self.target_spread,
                            min_samples=self.min_samples, max_samples=self.max_samples, budget_s=self.budget_s,
                            cache=cache, n_inputs=self.n_inputs, precision=self.precision, extend_s=self.extend_s,
                            timing_mode=self.timing_mode,
                            gpu=dataclasses.replace(GpuBudget(), min_device_s=self.gpu_min_device_s,
                                                    energy_s=self.gpu_energy_s,
                                                    clock_warmup_limit_s=QUICK_GPU.clock_warmup_limit_s
                                                    if self.gpu_min_device_s <= QUICK_GPU.min_device_s
                                                    else GpuBudget.clock_warmup_limit_s))

    #: Numeric options: (integer?, low, low allowed?, high, what it is). Checked by :meth:`check` for type,
    #: finiteness and range before a run is created, so a NaN never reaches a stored spec.
    LIMITS = {
        "budget_s": (False, 0.0, False, 86400.0, "seconds of timing per cell"),
        "timeout_s": (False, 0.0, False, 604800.0, "seconds per cell and round"),
        "build_timeout_s": (False, 0.0, False, 604800.0, "seconds to build a cell"),
        "warmup_s": (False, 0.0, True, 3600.0, "seconds of warm-up"),
        "target_spread": (False, 0.0, False, 1.0, "a relative spread (0.02 = 2%)"),
        "precision": (False, 0.0, True, 0.5, "the median's 95% half-width, relative (0.01 = ±1%; 0: by spread)"),
        "extend_s": (False, 0.0, True, 86400.0, "seconds beyond the budget to reach the precision"),
        "gpu_min_device_s": (False, 0.0, True, 3600.0, "device seconds a GPU visit takes at least"),
        "gpu_energy_s": (False, 0.0, True, 3600.0, "seconds of calls read for energy per call (0: none)"),
        "min_samples": (True, 1, True, 1_000_000, "samples"),
        "max_samples": (True, 1, True, 10_000_000, "samples"),
        "n_inputs": (True, 1, True, 64, "input sets"),
        "rounds": (True, 1, True, 1000, "rounds"),
        "seed": (True, 0, True, 2**63 - 1, "a seed"),
    }
    #: The ``workbench bench`` option of each field, for messages.
    FLAGS = {"budget_s": "--budget", "timeout_s": "--timeout", "build_timeout_s": "--build-timeout",
             "rounds": "--rounds", "sizes": "--sizes", "timing_mode": "--timing-mode"}
    #: Largest value of one size axis, and of the product of a size's axes (elements).
    MAX_AXIS = 2**31 - 1
    MAX_ELEMENTS = 2**40

    @classmethod
    def check_option(cls, name: str, value: Any, flag: str | None = None) -> int | float:
        """``value`` of numeric option ``name`` if it is a finite number of the right kind and in range;
        otherwise a ValueError naming the option, the value and the valid range."""
        integer, low, low_ok, high, what = cls.LIMITS[name]
        label = flag or name
        valid = (f"{'an integer' if integer else 'a number'} {'>=' if low_ok else '>'} {low:g} and <= {high:g} "
                 f"({what})")
        if isinstance(value, bool) or not isinstance(value, numbers.Integral if integer else numbers.Real):
            raise ValueError(f"{label} must be {valid}, got {value!r}")
        try:  # an integer of hundreds of digits is no float ("--rounds 999...9" ended in an internal OverflowError)
            x = int(value) if integer else float(value)
            shown = f"{x:g}"
        except OverflowError:
            x, shown = math.inf, f"{str(value)[:20]}... ({len(str(value))} digits)"
        if not math.isfinite(x) or x < low or (x == low and not low_ok) or x > high:
            raise ValueError(f"{label} {shown} is out of range: it must be {valid}")
        return x

    def check(self, flags: Mapping[str, str] | None = None) -> None:
        """Refuse a spec whose run options are invalid (wrong type, NaN or infinite, out of range, unknown
        sizes, isolation or memory cap), before any run is created. ``flags`` names options in messages
        (``{"budget_s": "--budget"}``)."""
        flags = flags or {}
        for name in self.LIMITS:
            self.check_option(name, getattr(self, name), flags.get(name))
        if self.max_samples < self.min_samples:
            raise ValueError(f"max_samples ({self.max_samples}) must be at least min_samples ({self.min_samples})")
        if self.timing_mode is not None and self.timing_mode not in TIMING_MODES:
            raise ValueError(f"{flags.get('timing_mode', 'timing_mode')}: unknown timing mode {self.timing_mode!r}; "
                             f"valid timing modes: {', '.join(TIMING_MODES)}")
        check_isolation(self.isolation)
        parse_memory_cap(self.memory_cap)
        self.caches()
        self.size_entries(flags.get("sizes"))

    def n_rounds(self) -> int:
        return int(self.check_option("rounds", self.rounds))

    def size_entries(self, flag: str | None = None) -> list[dict[str, int] | tuple[int, ...]] | str | None:
        """``sizes`` checked: None, a size-list name, or entries each an int, a tuple of ints (axes in a
        kernel's order) or a dict {axis: int}, every value a positive integer in range. Anything else
        (1.5, True, "abc" among numbers, -1, 2**62) is a ValueError naming it."""
        label = flag or "sizes"
        sizes = self.sizes
        if sizes is None:
            return None
        if isinstance(sizes, str):
            if not sizes.strip():
                raise ValueError(f"{label}: an empty size-list name; use quick, full or verify, or explicit sizes")
            return sizes
        if hasattr(sizes, "tolist"):  # a NumPy array (of ints, or of rows of ints)
            sizes = sizes.tolist()
        if isinstance(sizes, Mapping) or isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
            sizes = [sizes]
        if not isinstance(sizes, (list, tuple)):
            raise ValueError(f"{label} must be a size-list name or a list of sizes, got {sizes!r}")
        if not sizes:
            raise ValueError(f"{label} is empty; give at least one size, or None for each kernel's quick sizes")
        hint = ("give positive integers: an int for one-axis kernels (4096), a tuple in the kernel's axis "
                "order ((4096, 1024)) or a dict ({'rows': 4096, 'cols': 1024})")

        def axis(v: Any, entry: Any) -> int:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise ValueError(f"{label}: size {entry!r} is not understood ({v!r} is not an integer); {hint}")
            if not 1 <= int(v) <= self.MAX_AXIS:
                raise ValueError(f"{label}: size {entry!r} is out of range: each axis must be 1 to "
                                 f"{self.MAX_AXIS}")
            return int(v)

        out: list[dict[str, int] | tuple[int, ...]] = []
        for s in sizes:
            if isinstance(s, Mapping):
                if not s or not all(isinstance(k, str) for k in s):
                    raise ValueError(f"{label}: size {s!r} is not understood; {hint}")
                entry: dict[str, int] | tuple[int, ...] = {k: axis(v, s) for k, v in s.items()}
                values = list(entry.values())
            elif isinstance(s, (list, tuple)) and s:
                entry = tuple(axis(v, s) for v in s)
                values = list(entry)
            else:
                entry = (axis(s, s),)
                values = list(entry)
            product = 1
            for v in values:
                product *= v
            if product > self.MAX_ELEMENTS:
                raise ValueError(f"{label}: size {s!r} has {product:,} elements, more than the limit of "
                                 f"{self.MAX_ELEMENTS:,} (2**40)")
            out.append(entry)
        return out

    # -- cells --------------------------------------------------------------
    def caches(self) -> list[str]:
        caches = [self.cache] if isinstance(self.cache, str) else list(self.cache)
        for c in caches:
            if c not in CACHE_MODES:
                raise ValueError(f"unknown cache mode {c!r}; valid cache modes: {', '.join(CACHE_MODES)}")
        return caches

    def cells(self) -> list[Cell]:
        """Every cell of the sweep, grouped so cells sharing inputs are neighbours.

        What the axes mean is decided by :func:`workbench.sweep.selection.select`, as for
        ``verify``: cells that cannot run are kept as ``unsupported`` so reports say
        why — but only for the backends selected, never for every backend known. A
        placeholder for a named backend without variants appears once, not per size.
        """
        if self.parts is not None:
            return list({c.key: c for part in self.part_specs() for c in part.cells()}.values())
        sel = select(self.kernels, self.variants, self.backends, self.dtypes, self.modes, timing=True)
        caches = self.caches()
        self._check_sizes_fit(sel.specs)
        cells: list[Cell] = []
        for spec in sel.specs:
            sizes = self._sizes_for(spec)
            for dtype in sel.dtypes:
                targets = sel.targets(spec, dtype)
                for params in sizes:
                    for t in targets:
                        if t.variant is None and params is not sizes[0]:
                            continue
                        name, mode = (t.variant.name, t.variant.mode) if t.variant else (NO_VARIANT, "eager")
                        cells += [Cell.make(spec.name, name, t.backend.name, dtype, params, mode, c, t.unsupported)
                                  for c in caches]
        return cells

    def part_specs(self) -> list[SweepSpec]:
        """One spec per entry of ``parts``: this spec with the part's axes."""
        return [dataclasses.replace(self, parts=None, **part) for part in self.parts or ()]

    def _check_sizes_fit(self, specs: Sequence[KernelSpec]) -> None:
        """A size-list name some selected kernel has; every explicit size fits some selected kernel."""
        entries = self.size_entries()
        if entries is None or self.llm_shapes is not None or not specs:
            return
        axes = "; ".join(f"{s.name} takes {len(s.axes)} size(s): {' x '.join(s.axes)}" for s in specs[:6]) + (
            "; ..." if len(specs) > 6 else "")
        if isinstance(entries, str):
            names = list(dict.fromkeys(n for s in specs for n in s.sizes))
            if entries not in names:
                raise ValueError(f"unknown size list {entries!r}; valid size lists: {', '.join(names)}, or explicit "
                                 f"sizes ({axes})")
            return
        for entry in entries:
            if not any(_fits(s, entry) for s in specs):
                text = (" ".join(f"{k}={v}" for k, v in entry.items()) if isinstance(entry, dict)
                        else "x".join(str(v) for v in entry))
                raise ValueError(f"size {text!r} fits none of the kernels selected: {axes} (give one value per "
                                 "axis, in that order, e.g. 4096x1024, or name the axes, e.g. rows=4096:cols=1024)")

    def llm_labels(self) -> dict[tuple[str, tuple[tuple[str, int], ...]], str]:
        """(kernel, params) -> the LLM shapes that size came from (``llama-3-8b b1 s2048 kv4096, ...``), for the
        rows of an LLM sweep; empty for other sweeps. Shapes that map to the same size share it."""
        if self.parts is not None:
            return {k: v for part in self.part_specs() for k, v in part.llm_labels().items()}
        if self.llm_shapes is None:
            return {}
        sel = select(self.kernels, self.variants, self.backends, self.dtypes, self.modes, timing=True)
        found: dict[tuple[str, tuple[tuple[str, int], ...]], list[str]] = {}
        for spec in sel.specs:
            for shape in self.llm_shapes:
                p = spec.llm_params(shape) if spec.llm_params else None
                if p is None:
                    continue
                if "kv_len" in shape:  # name the KV length only where this kernel's size depends on it
                    rest = {k: v for k, v in shape.items() if k != "kv_len"}
                    shape = shape if spec.llm_params(rest) != p else rest
                key = (spec.name, tuple((k, int(v)) for k, v in spec.validate_params(p).items()))
                labels = found.setdefault(key, [])
                if shape_label(shape) not in labels:
                    labels.append(shape_label(shape))
        return {k: _joined(v) for k, v in found.items()}

    def _sizes_for(self, spec: KernelSpec) -> list[dict[str, int]]:
        if self.llm_shapes is not None:
            found: list[dict[str, int]] = []
            for shape in self.llm_shapes:
                p = spec.llm_params(shape) if spec.llm_params else None
                if p is not None:
                    p = spec.validate_params(p)
                    if p not in found:
                        found.append(p)
            return found
        if self.sizes is None or isinstance(self.sizes, str):
            name = self.sizes or "quick"
            lists = spec.sizes.get(name) or spec.sizes.get("quick") or []
            return [spec.validate_params(p) for p in lists]
        return _match_sizes(spec, self.sizes, explicit_kernel=self.kernels is not None)


def shape_label(shape: Mapping[str, Any]) -> str:
    """``llama-3-8b b1 s2048 kv4096``: which model shape (and batch, sequence, KV length) a size came from."""
    return " ".join([str(shape.get("model", "?")), f"b{shape.get('batch', '?')}", f"s{shape.get('seq', '?')}"]
                    + ([f"kv{shape['kv_len']}"] if shape.get("kv_len") is not None else []))


def _joined(labels: list[str], most: int = 4) -> str:
    """The first ``most`` labels, and how many more."""
    return ", ".join(labels[:most]) + (f" (+{len(labels) - most} more)" if len(labels) > most else "")


def _fits(spec: KernelSpec, entry: Mapping[str, int] | Sequence[int]) -> bool:
    return set(entry) == set(spec.axes) if isinstance(entry, Mapping) else len(entry) == len(spec.axes)


def _match_sizes(spec: KernelSpec, sizes: Sequence[SizeEntry], explicit_kernel: bool) -> list[dict[str, int]]:
    """Sizes that fit ``spec``: dicts with exactly its axes, or tuples of its arity (axes in spec order).
    Entries are checked first (:meth:`SweepSpec.size_entries`): 1.5, True or -1 never become a size."""
    out: list[dict[str, int]] = []
    checked = SweepSpec(sizes=sizes).size_entries()
    for s in checked if isinstance(checked, list) else []:
        if not _fits(spec, s):
            continue
        if isinstance(s, Mapping):
            p = spec.validate_params(s)
        else:
            p = spec.validate_params(dict(zip(spec.axes, s, strict=True)))
        if p not in out:
            out.append(p)
    if not out and explicit_kernel:
        example = "x".join(["1024"] * len(spec.axes))
        raise ValueError(f"none of the sizes given fits kernel {spec.name!r}, which takes "
                         f"{len(spec.axes)} size(s) {spec.axes} (e.g. --sizes {example})")
    return out
