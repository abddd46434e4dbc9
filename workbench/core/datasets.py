"""Reference tables shipped with the workbench: LLM layer shapes and published device peaks.

The files live in ``datasets/`` beside the package in a checkout and in
``workbench/_datasets`` inside a wheel (see ``pyproject.toml``), found the same
way the kernel catalog is. They are plain CSV/JSON so a colleague can check a
number against its source without reading code.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # pandas loads when a table is read: the harness's per-cell lookup (published_peak) needs none
    import pandas as pd

SHAPE_COLUMNS = ("model", "family", "hidden", "intermediate", "heads", "kv_heads", "layers", "vocab")
#: Column prefix per dtype; "tf32" is the rate float32 matmuls reach where TF32 is allowed.
_DTYPE_PREFIX = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "tf32": "tf32"}
PEAK_FIGURES = ("fp32_tflops", "fp16_tflops", "bf16_tflops", "fp64_tflops", "tf32_tflops", "mem_bw_gbps")


class LlmShape(TypedDict, total=False):
    """One model's transformer layer shape: a row of ``llm_shapes.csv`` in :data:`SHAPE_COLUMNS` (empty cells
    left out)."""

    model: str
    family: str
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    layers: int
    vocab: int


class LlmSweepDefaults(TypedDict, total=False):
    """``llm_sweep.json``: the default axes of the ``llm`` suite."""

    description: str
    models: list[str]
    batch_sizes: list[int]
    seq_lens: list[int]
    kv_lens: list[int]


def datasets_path() -> Path:
    """``datasets/`` beside the package in a checkout, or ``workbench/_datasets`` in a wheel."""
    pkg = Path(__file__).resolve().parents[1]
    for cand in (pkg.parent / "datasets", pkg / "_datasets"):
        if (cand / "llm_shapes.csv").is_file():
            return cand
    raise FileNotFoundError(f"datasets folder not found next to {pkg}")


@functools.cache
def _read_csv(name: str) -> pd.DataFrame:
    import pandas as pd

    return pd.read_csv(datasets_path() / name, keep_default_na=True)


def llm_shapes(models: Iterable[str] | None = None) -> pd.DataFrame:
    """Transformer layer shapes from the models' published configs, one row per model."""
    df = _read_csv("llm_shapes.csv").copy()
    if models is not None:
        wanted = list(models)
        unknown = sorted(set(wanted) - set(df["model"]))
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; known: {', '.join(df['model'])}")
        df = df.set_index("model").loc[wanted].reset_index()
    return df


def llm_shape_records(models: Iterable[str] | None = None) -> list[LlmShape]:
    """The rows of :func:`llm_shapes` as plain dicts of :data:`SHAPE_COLUMNS` (numbers as int, empty cells
    left out), read without pandas: a sweep's parent plans the suites from these (pandas cost it 0.4-0.5 s
    and ~40 MB)."""
    with open(datasets_path() / "llm_shapes.csv", encoding="utf-8", newline="") as f:
        rows = [{k: (v if k in ("model", "family") else int(float(v))) for k, v in rec.items()
                 if k in SHAPE_COLUMNS and v not in (None, "")} for rec in csv.DictReader(f)]
    if models is None:
        return rows
    wanted = list(models)
    by_name = {r["model"]: r for r in rows}
    unknown = sorted(set(wanted) - set(by_name))
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}; known: {', '.join(by_name)}")
    return [dict(by_name[m]) for m in wanted]


def llm_sweep_defaults() -> LlmSweepDefaults:
    """Default ``models``, ``batch_sizes`` and ``seq_lens`` of the ``llm`` suite (``workbench.sweep.suites``)."""
    with open(datasets_path() / "llm_sweep.json", encoding="utf-8") as f:
        return json.load(f)


def published_peaks() -> pd.DataFrame:
    """Vendor datasheet peaks: name, regex ``pattern``, vendor, kind, TFLOP/s per dtype, GB/s.

    Unknown figures are NaN. fp16/bf16 are dense tensor/matrix-core rates where
    the device has them; the ``notes`` column says which rate each figure is.
    """
    return _read_csv("published_peaks.csv").copy()


def match_published(device_name: str | None) -> pd.Series | None:
    """The published-peaks row for a device name, or None.

    Patterns are case-insensitive regular expressions tried in file order; the
    file lists specific devices before general ones (``A100 PCIe 80GB`` before
    ``A100 PCIe``, ``M1 Max`` before ``M1``), so the first match wins.
    """
    if not device_name:
        return None
    for _, row in published_peaks().iterrows():
        if re.search(str(row["pattern"]), device_name, flags=re.IGNORECASE):
            return row
    return None


@functools.cache
def _published_rows() -> tuple[dict[str, str], ...]:
    """The published-peaks table as plain text rows, in file order: every cell of a sweep looks its device up
    (:func:`published_peak`), in worker processes that otherwise never load pandas."""
    with open(datasets_path() / "published_peaks.csv", newline="", encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def _figure(text: str | None) -> float | None:
    """A table cell as a number; None where empty or not a finite number (pandas would read NaN)."""
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@functools.lru_cache(maxsize=1024)
def published_peak(device_name: str | None, dtype: str) -> tuple[float | None, float | None]:
    """(GFLOP/s for ``dtype``, GB/s) from the published table, None where unknown; the row chosen as
    :func:`match_published` chooses it. Cached (the table is read once per process): a report asks it of every
    float32 row, and the table's patterns were searched again each time."""
    if not device_name:
        return None, None
    row = next((r for r in _published_rows() if re.search(str(r["pattern"]), device_name, flags=re.IGNORECASE)),
               None)
    if row is None:
        return None, None
    tflops = _figure(row.get(f"{_DTYPE_PREFIX.get(dtype, dtype)}_tflops"))
    return (tflops * 1e3 if tflops is not None else None), _figure(row.get("mem_bw_gbps"))
