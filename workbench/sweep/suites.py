"""Named suites: ready-made sweeps.

- ``quick``: the demo's suite, about 100–150 cells, each kernel family answering one question: how does
  the reference (numpy's library call) compare with the fastest variant of each runtime, at a size in the
  per-core cache and a larger one: past the last-level cache for the memory-bound families (working sets
  derived from this machine's caches, :mod:`workbench.sweep.working_sets`)?
  The operators of a transformer layer run once, at one model shape (:data:`QUICK_LLM_SHAPE`).
- ``standard``: every kernel at its "quick" sizes on every available backend, eager, fused and graph
  forms (no ``torch.compile``, except as the decoder blocks' fused torch form); small budgets.
- ``llm``: the kernels of a transformer layer at the shapes of real models
  (``datasets/llm_shapes.csv``) × batch sizes × sequence lengths × KV-cache lengths (the decode
  attention and the attention block read ``kv_len``; the other kernels get each size once).
- ``full``: every kernel at its "full" (large) sizes, compiled forms included,
  with budgets large enough for tight quartiles.

``workbench bench --list-suites`` prints each with its cell count and an estimated time
(:func:`describe_suites`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from itertools import product
from typing import TYPE_CHECKING, Any

from workbench.measure.gpu_budget import QUICK_GPU, GpuBudget
from workbench.measure.request import NO_VARIANT
from workbench.sweep.driver import SweepSpec, shape_label  # noqa: F401  (shape_label: re-exported)
from workbench.sweep.gpu_sizes import gpu_sizes_note, hbm_size, is_gpu
from workbench.sweep.working_sets import (  # noqa: F401  (re-exported: the suite's sizes are read from here)
    DRAM_FAMILIES,
    MAX_DRAM_WORKING_SET,
    MAX_LARGE_WORKING_SET,
    WorkingSets,
    cache_sizes,
    mib,
    sized,
    working_sets,
)
from workbench.sweep.working_sets import quick_sizes_note as _sizes_note

if TYPE_CHECKING:
    from workbench.catalog.spec import KernelSpec, Variant

log = logging.getLogger(__name__)

_QUICK_TIMING = dict(warmup_s=0.01, budget_s=0.04, target_spread=0.05, min_samples=5, max_samples=2000, n_inputs=2,
                     timeout_s=60.0, rounds=3, precision=0.01, extend_s=0.4,
                     gpu_min_device_s=QUICK_GPU.min_device_s, gpu_energy_s=QUICK_GPU.energy_s)
SUITES: dict[str, dict[str, Any]] = {
    "quick": dict(sizes="quick", modes=("eager", "fused", "graph"), **_QUICK_TIMING),
    "standard": dict(sizes="quick", modes=("eager", "fused", "graph"),
                     **{**_QUICK_TIMING, "gpu_min_device_s": GpuBudget.min_device_s}),  # do_bench's 100 ms
    "llm": dict(modes=("eager", "fused", "graph"), warmup_s=0.05, budget_s=0.3, target_spread=0.03, min_samples=5,
                timeout_s=120.0, rounds=3),
    "full": dict(sizes="full", modes=("eager", "fused", "graph", "compiled"), warmup_s=0.1, budget_s=1.0,
                 target_spread=0.02, min_samples=10, max_samples=2000, timeout_s=300.0, rounds=5),
}
SUITE_HELP = {
    "quick": "the reference vs the fastest variant of each runtime, per kernel family, at a size in the "
             "per-core cache and a larger one (past the last-level cache for the memory-bound families); "
             "LLM operators at one model shape",
    "standard": "every kernel and variant at its quick sizes on every available backend",
    "llm": "a transformer layer's kernels at real model shapes x batch x sequence x KV length",
    "full": "every kernel and variant at its full (large) sizes, torch.compile forms included",
}

#: The quick suite's kernel families: (family, the kernel that answers for it, the question). Measured at a
#: working set in the per-core cache and a larger one: past the last-level cache for
#: :data:`~workbench.sweep.working_sets.DRAM_FAMILIES`, else past the per-core cache.
QUICK_FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("streaming", "saxpy", "how close each runtime gets to the memory bandwidth"),
    ("elementwise math", "gelu_tanh", "whether each runtime vectorises transcendental math"),
    ("reduction", "sum", "how each runtime reduces a vector"),
    ("row-wise", "softmax", "row-wise passes that keep a row in cache"),
    ("fusion", "bias_gelu", "what a fused kernel saves over the reference's separate passes"),
    ("access pattern", "transpose", "strided access, tiled or not"),
    ("compute-bound", "gemm", "how far each runtime is from the BLAS library call"),
)
#: LLM operators, measured once at :data:`QUICK_LLM_SHAPE`.
QUICK_LLM_KERNELS = ("attention_prefill", "attention_decode", "attention_block", "mlp_block", "rmsnorm", "rope",
                     "swiglu", "gemm_int8", "gemm_fp8")
#: One model shape: a small real model (``datasets/llm_shapes.csv``), one sequence, a KV cache of 512. The
#: sequence is the longest of :data:`QUICK_SEQ_LENGTHS` whose every operator call stays within
#: :data:`MAX_CALL_FLOPS`, as the families' sizes do (:func:`quick_llm_shape`): at 64 tokens the MLP block was
#: 1.7 GFLOP a call, and its cells and the attention block's on PoCL and numba took 41 s of a 121 s quick suite.
QUICK_LLM_SHAPE = {"models": ["qwen2.5-0.5b"], "batch_sizes": [1], "kv_lengths": [512]}
QUICK_SEQ_LENGTHS = (64, 32, 16, 8, 4, 2, 1)
#: Axes scaled together to reach a working set (others keep the kernel's largest quick size); default: the first.
SCALED_AXES = {"gemm": ("m", "n", "k"), "transpose": ("rows", "cols")}
#: Most work one call of the quick suite may take, so a compute-bound kernel's larger size stays a quick cell
#: (a 512³ GEMM is 0.27 GFLOP: its working set is already past the per-core cache).
MAX_CALL_FLOPS = 0.3e9
#: Name parts of the slower form where a runtime offers two (the teaching baselines of tiling, fusion, flash
#: attention and dequantisation): a runtime's fastest variant is taken to be another one.
SLOWER_FORMS = frozenset({"naive", "unfused", "dequant"})
#: Modes in the order a runtime's fastest form is looked for: a graph dispatches a block's kernels once, a fused
#: kernel does the work of eager's several. Graph first: every runtime has a real graph form of the decoder
#: blocks, while their "fused" form is a placeholder on numpy and PoCL (unsupported) and torch.compile on
#: torch (30-60 s to compile each shape; the full suite measures it).
MODE_ORDER = ("graph", "fused", "eager")
#: Seconds a cell costs beyond its timing budget and warm-ups (inputs, reference, build, checks, worker
#: round trips), for the estimates of ``--list-suites``. Not yet calibrated on an idle machine: the only
#: measurement (quick suite, 1766 s for 102 cells x 3 rounds at load 10-15, where the pandas+matplotlib import
#: took 8.9x its idle time) suggests ~0.6 s idle, dominated by the 64 MiB cells.
CELL_OVERHEAD_S = 0.25

#: Used when ``workbench.core.datasets`` is missing: a few public model configs (hidden, intermediate, heads).
BUILTIN_LLM_SHAPES: tuple[dict[str, Any], ...] = (
    {"model": "gpt2", "hidden": 768, "intermediate": 3072, "heads": 12, "kv_heads": 12, "vocab": 50257},
    {"model": "qwen2.5-0.5b", "hidden": 896, "intermediate": 4864, "heads": 14, "kv_heads": 2, "vocab": 151936},
    {"model": "llama-3.2-1b", "hidden": 2048, "intermediate": 8192, "heads": 32, "kv_heads": 8, "vocab": 128256},
    {"model": "llama-3-8b", "hidden": 4096, "intermediate": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256},
)
BUILTIN_LLM_AXES = {"batch_sizes": [1, 8], "seq_lens": [128, 512], "kv_lens": [512, 4096]}
#: The axes suite_spec() expands into ``llm_shapes``.
SHAPE_AXES = ("batch_sizes", "seq_lengths", "kv_lengths", "hidden_sizes", "models")


def suite_names() -> list[str]:
    return list(SUITES)


#: Overrides that replace the quick suite's own choice of variants and sizes (kernels and backends narrow it).
_PLAN_REPLACED_BY = ("variants", "sizes", "modes", "llm_shapes")


def suite_spec(name: str, **overrides: Any) -> SweepSpec:
    """The SweepSpec of suite ``name``; ``overrides`` (SweepSpec fields, None = keep) replace its defaults.

    For ``llm``, ``batch_sizes``, ``seq_lengths``, ``kv_lengths``, ``hidden_sizes`` and ``models``
    choose the shapes; they are expanded here so the stored spec is exactly
    what ran. ``quick`` is expanded here too (:func:`quick_parts`, this machine's backends and caches):
    ``kernels`` and ``backends`` narrow it; ``variants``, ``sizes``, ``modes`` or LLM shape axes replace its
    choice, leaving its timing settings.
    """
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; valid suites: {', '.join(SUITES)}")
    shape_kw = {k: overrides.pop(k, None) for k in SHAPE_AXES}
    given = {k: v for k, v in overrides.items() if v is not None}
    fields = {**SUITES[name], **given, "suite": name}
    if name == "llm" and fields.get("llm_shapes") is None:
        fields["llm_shapes"] = llm_shapes(**shape_kw)
    elif any(v is not None for v in shape_kw.values()):
        fields["llm_shapes"] = llm_shapes(**shape_kw)
    elif name == "quick" and not any(k in given for k in _PLAN_REPLACED_BY):
        fields["parts"] = quick_parts(fields.get("kernels"), fields.get("backends"), fields.get("dtypes"))
    return SweepSpec(**fields)


def quick_parts(kernels: Sequence[str] | None = None, backends: Sequence[str] | None = None,
                dtypes: Sequence[str] | None = None) -> list[dict[str, Any]] | None:
    """The quick suite's cells as sweep parts (:attr:`SweepSpec.parts`): per family kernel and backend, the
    reference and the runtime's fastest variant at a cache and a DRAM size; per LLM operator, the same at
    one model shape. ``kernels`` keeps those (a kernel the plan leaves out joins at its quick sizes, every
    variant); ``backends`` names the backends (default: the first available device of each runtime).
    None when the catalog has none of the plan's kernels (a user catalog): the suite is then every kernel
    at its quick sizes."""
    from workbench.catalog import registry as catalog
    from workbench.sweep.selection import select_backends

    known = catalog.kernels()
    chosen = select_backends(backends, timing=True)
    if backends is None:  # one device per runtime: two OpenCL platforms on one CPU answer the same question
        chosen = [b for i, b in enumerate(chosen) if b.runtime not in {c.runtime for c in chosen[:i]}]
    dtype = (list(dtypes) if dtypes else ["float32"])[0]
    ws = working_sets()
    dram_kernels = {k for f, k, _ in QUICK_FAMILIES if f in DRAM_FAMILIES}
    plan = [(k, "family") for _, k, _ in QUICK_FAMILIES] + [(k, "llm") for k in QUICK_LLM_KERNELS]
    wanted = list(kernels) if kernels is not None else [k for k, _ in plan]
    kinds = dict(plan)
    if not any(k in known and k in kinds for k in wanted):
        return None if kernels is None else [{"kernels": [k]} for k in wanted]
    parts: list[dict[str, Any]] = []
    for kernel in wanted:
        if kernel not in kinds or kernel not in known:
            parts.append({"kernels": [kernel]})  # unknown names fail in cells(), as for any sweep
            continue
        spec = known[kernel]
        larger = ws.dram if kernel in dram_kernels else ws.larger
        where = ({"sizes": family_sizes(spec, ws.cache, larger)} if kinds[kernel] == "family"
                 else {"sizes": None, "llm_shapes": [quick_llm_shape()]})
        for backend in chosen:
            names = [v.name for v in quick_variants(kernel, backend, dtype)]
            if names:
                parts.append({"kernels": [kernel], "variants": names, "backends": [backend.name],
                              **gpu_where(spec, backend, where)})
    return parts


def gpu_where(spec: KernelSpec, backend: Any, where: dict[str, Any]) -> dict[str, Any]:
    """A family's sizes on ``backend``: as they are, and on a GPU for a memory-bound kernel one more, past 8x
    the device's L2 (:mod:`workbench.sweep.gpu_sizes`: the host's caches say nothing of a GPU's)."""
    if not (is_gpu(backend) and spec.bound == "memory-bound" and where.get("sizes")):
        return where
    hbm = hbm_size(spec, backend, SCALED_AXES.get(spec.name))
    return where if hbm in where["sizes"] else {**where, "sizes": [*where["sizes"], hbm]}


@functools.cache
def quick_llm_shape() -> dict[str, Any]:
    """The quick suite's one model shape: :data:`QUICK_LLM_SHAPE` at the longest sequence of
    :data:`QUICK_SEQ_LENGTHS` whose every operator of :data:`QUICK_LLM_KERNELS` (as the catalog counts its
    FLOPs) stays within :data:`MAX_CALL_FLOPS` a call."""
    from workbench.catalog import registry as catalog

    known = catalog.kernels()
    specs = [known[k] for k in QUICK_LLM_KERNELS if k in known and known[k].llm_params]
    shape: dict[str, Any] = {}
    for seq in QUICK_SEQ_LENGTHS:
        shape = llm_shapes(**QUICK_LLM_SHAPE, seq_lengths=[seq])[0]
        calls = [spec.llm_params(shape) for spec in specs]
        if all(spec.flops(p) <= MAX_CALL_FLOPS for spec, p in zip(specs, calls, strict=True) if p is not None):
            break
    return shape


def quick_variants(kernel: str, backend: Any, dtype: str = "float32") -> list[Variant]:
    """What the quick suite measures of ``kernel`` on ``backend``: the runtime's fastest variant, and on numpy
    also the reference (its library variant) where that is another one.

    "Fastest" is decided before measuring, from what a variant declares: its mode (:data:`MODE_ORDER`), a form
    not named as the slower of two (:data:`SLOWER_FORMS`), the library call, then
    catalog order; ``torch.compile`` forms are left out (about 30 s to compile each shape)."""
    from workbench.catalog import registry as catalog

    found = [v for v in catalog.variants(kernel).values()
             if backend.runtime in v.runtimes and v.mode in MODE_ORDER and (v.dtypes is None or dtype in v.dtypes)]
    if not found:
        return []
    order = {id(v): i for i, v in enumerate(found)}
    fastest = min(found, key=lambda v: (MODE_ORDER.index(v.mode), bool(SLOWER_FORMS & set(v.name.split("-"))),
                                        not v.library, order[id(v)]))
    if backend.runtime != "numpy":
        return [fastest]
    reference = next((v for v in found if v.library), fastest)
    return [reference] + ([fastest] if fastest is not reference else [])



def family_sizes(spec: KernelSpec, cache_ws: int, larger_ws: int) -> list[dict[str, int]]:
    """Two sizes of ``spec`` whose working sets (compulsory bytes per call, float32) are about ``cache_ws`` and
    ``larger_ws``: the kernel's largest quick size with its :data:`SCALED_AXES` scaled (multiples of 64), at
    most :data:`MAX_CALL_FLOPS` a call."""
    axes = SCALED_AXES.get(spec.name, spec.axes[:1])
    out: list[dict[str, int]] = []
    for target in (cache_ws, larger_ws):
        p = sized(spec, target, axes, MAX_CALL_FLOPS)
        if p not in out:
            out.append(p)
    return out


def suite_checks(name: str, **overrides: Any) -> dict[str, set[tuple[str, str, str]]]:
    """What suite ``name`` measures on this machine, per backend: its (kernel, variant, dtype) triples.
    ``workbench verify --suite`` checks these and nothing else, so the demo verifies what it then benchmarks
    (the full ``verify`` stays a command of its own). ``overrides`` narrow the suite as :func:`suite_spec`'s
    do (kernels, backends, dtypes)."""
    out: dict[str, set[tuple[str, str, str]]] = {}
    for cell in suite_spec(name, **overrides).cells():
        if cell.variant != NO_VARIANT:
            out.setdefault(cell.backend, set()).add((cell.kernel, cell.variant, cell.dtype))
    return out


def describe_suites(names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per suite: its name, what it measures, its cells on this machine (and how many can run), and an
    estimated wall time (:func:`estimate_seconds`)."""
    out = []
    for name in names or suite_names():
        spec = suite_spec(name)
        cells = spec.cells()
        runnable = [c for c in cells if not c.unsupported]
        out.append({"suite": name, "about": SUITE_HELP.get(name, ""), "cells": len(cells),
                    "runnable": len(runnable), "estimate_s": estimate_seconds(spec, runnable)})
    return out


#: Seconds ``torch.compile`` takes per shape on a 2-core CPU (FIELD-NOTES), for the estimates.
COMPILE_S = 30.0


def estimate_seconds(spec: SweepSpec, cells: Sequence[Any]) -> float:
    """A rough wall time for ``cells`` of ``spec``: per cell, its timing budget, a warm-up and
    :data:`CELL_OVERHEAD_S` per round, and a compilation for compiled forms."""
    rounds = spec.n_rounds()
    per_cell = spec.budget_s + rounds * (spec.warmup_s + CELL_OVERHEAD_S)
    return sum(per_cell + (COMPILE_S if getattr(c, "mode", "") == "compiled" else 0.0) for c in cells)


def format_suites(rows: Sequence[Mapping[str, Any]], width: int = 100) -> str:
    """The table ``workbench bench --list-suites`` prints, ``width`` columns wide."""
    import textwrap

    head = f"{'suite':<9} {'cells':>6} {'estimate':>9}  "
    lines = [head + "what it measures"]
    for r in rows:
        est = r["estimate_s"]
        when = f"~{est / 60:.0f} min" if est >= 90 else f"~{est:.0f} s"
        about = textwrap.wrap(r["about"], width - len(head)) or [""]
        lines.append(f"{r['suite']:<9} {r['cells']:>6} {when:>9}  {about[0]}")
        lines += [" " * len(head) + more for more in about[1:]]
    lines.append("")
    lines += textwrap.wrap(quick_sizes_note(), width)
    from workbench.sweep.selection import select_backends

    lines += textwrap.wrap(gpu_sizes_note(select_backends(None, timing=True)), width)
    shape = quick_llm_shape()
    lines += textwrap.wrap(f"quick's model shape: {shape_label(shape)} (the longest sequence at which every LLM "
                           f"operator's call stays within {MAX_CALL_FLOPS / 1e9:g} GFLOP)", width)
    lines.append("Estimates assume an idle 2-core machine; they grow with load.")
    return "\n".join(lines)


def quick_sizes_note(ws: WorkingSets | None = None) -> str:
    """Where the quick suite's working sets come from, and what serves each (the last-level cache or DRAM)."""
    return _sizes_note(QUICK_FAMILIES, ws)


def llm_shapes(batch_sizes: Iterable[int] | None = None, seq_lengths: Iterable[int] | None = None,
               hidden_sizes: Iterable[int] | None = None, models: Iterable[str] | None = None,
               kv_lengths: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """(model shape × batch × seq × kv_len) dicts for ``KernelSpec.llm_params``.

    Model shapes come from ``workbench.core.datasets`` (``llm_shapes.csv``) or, where
    that is missing, a small built-in list. ``hidden_sizes`` keeps the models of
    those widths; a width no model has gets a synthetic shape (intermediate =
    4 × hidden, 128-wide heads), named ``hidden<h>``.
    """
    shapes, axes = _model_shapes(models, all_models=hidden_sizes is not None)
    batches = list(batch_sizes or axes["batch_sizes"])
    seqs = list(seq_lengths or axes["seq_lens"])
    kvs = list(kv_lengths or axes.get("kv_lens") or [None])
    if hidden_sizes is not None:
        wanted = [int(h) for h in hidden_sizes]
        kept = [s for s in shapes if int(s["hidden"]) in wanted]
        have = {int(s["hidden"]) for s in kept}
        kept += [{"model": f"hidden{h}", "hidden": h, "intermediate": 4 * h, "heads": max(1, h // 128),
                  "kv_heads": max(1, h // 128)} for h in wanted if h not in have]
        shapes = kept
    return [{**s, "batch": int(b), "seq": int(q), **({"kv_len": int(kv)} if kv is not None else {})}
            for s, b, q, kv in product(shapes, batches, seqs, kvs)]



def _model_shapes(models: Iterable[str] | None, all_models: bool) -> tuple[list[dict[str, Any]], Mapping]:
    try:
        from workbench.core import datasets
    except ImportError:
        datasets = None
    if datasets is None:
        shapes = [dict(s) for s in BUILTIN_LLM_SHAPES]
        if models is not None:
            wanted = list(models)
            unknown = sorted(set(wanted) - {s["model"] for s in shapes})
            if unknown:
                raise ValueError(f"unknown model(s) {unknown}; known: {', '.join(s['model'] for s in shapes)}")
            shapes = [s for s in shapes if s["model"] in wanted]
        return shapes, BUILTIN_LLM_AXES
    defaults = datasets.llm_sweep_defaults()
    if models is None and not all_models:
        models = defaults.get("models")
    return datasets.llm_shape_records(list(models) if models is not None else None), defaults
