"""Named suites: ready-made sweeps.

- ``quick``: every kernel at its "quick" sizes on every available backend,
  eager, fused and graph forms (no ``torch.compile``, except as the decoder blocks' fused torch form);
  tuned to finish in about a
  minute on a 2-core laptop-class machine, so budgets are small.
- ``llm``: the kernels of a transformer layer at the shapes of real models
  (``datasets/llm_shapes.csv``) × batch sizes × sequence lengths × KV-cache lengths (the decode
  attention and the attention block read ``kv_len``; the other kernels get each size once).
- ``full``: every kernel at its "full" (large) sizes, compiled forms included,
  with budgets large enough for tight quartiles.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from itertools import product
from typing import Any

from .sweep import SweepSpec, shape_label  # noqa: F401  (shape_label: re-exported)

log = logging.getLogger(__name__)

SUITES: dict[str, dict[str, Any]] = {
    "quick": dict(sizes="quick", modes=("eager", "fused", "graph"), warmup_s=0.01, budget_s=0.04, target_spread=0.05,
                  min_samples=5, max_samples=200, n_inputs=2, timeout_s=60.0, rounds=3),
    "llm": dict(modes=("eager", "fused", "graph"), warmup_s=0.05, budget_s=0.3, target_spread=0.03, min_samples=5,
                timeout_s=120.0, rounds=3),
    "full": dict(sizes="full", modes=("eager", "fused", "graph", "compiled"), warmup_s=0.1, budget_s=1.0,
                 target_spread=0.02, min_samples=10, max_samples=2000, timeout_s=300.0, rounds=5),
}

#: Used when ``workbench.datasets`` is missing: a few public model configs (hidden, intermediate, heads).
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


def suite_spec(name: str, **overrides: Any) -> SweepSpec:
    """The SweepSpec of suite ``name``; ``overrides`` (SweepSpec fields, None = keep) replace its defaults.

    For ``llm``, ``batch_sizes``, ``seq_lengths``, ``kv_lengths``, ``hidden_sizes`` and ``models``
    choose the shapes; they are expanded here so the stored spec is exactly
    what ran.
    """
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; valid suites: {', '.join(SUITES)}")
    shape_kw = {k: overrides.pop(k, None) for k in SHAPE_AXES}
    fields = {**SUITES[name], **{k: v for k, v in overrides.items() if v is not None}, "suite": name}
    if name == "llm" and fields.get("llm_shapes") is None:
        fields["llm_shapes"] = llm_shapes(**shape_kw)
    elif any(v is not None for v in shape_kw.values()):
        fields["llm_shapes"] = llm_shapes(**shape_kw)
    return SweepSpec(**fields)


def llm_shapes(batch_sizes: Iterable[int] | None = None, seq_lengths: Iterable[int] | None = None,
               hidden_sizes: Iterable[int] | None = None, models: Iterable[str] | None = None,
               kv_lengths: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """(model shape × batch × seq × kv_len) dicts for ``KernelSpec.llm_params``.

    Model shapes come from ``workbench.datasets`` (``llm_shapes.csv``) or, where
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
        from . import datasets
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
    df = datasets.llm_shapes(list(models) if models is not None else None)
    keep = [c for c in datasets.SHAPE_COLUMNS if c in df.columns]
    shapes = [{k: (v if k in ("model", "family") else int(v)) for k, v in rec.items() if v == v}
              for rec in df[keep].to_dict("records")]
    return shapes, defaults
