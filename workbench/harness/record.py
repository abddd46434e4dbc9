"""The measurement record: column names and types (docs/measurement-record.md) and the cell key.

The store creates its results table from :data:`RESULT_COLUMNS`, the harness
fills rows with exactly these keys, and reports read them.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Mapping

#: Columns of docs/measurement-record.md, in order, with their SQLite type.
CONTRACT_COLUMNS: dict[str, str] = {
    "run_id": "TEXT", "cell_key": "TEXT",
    "kernel": "TEXT", "variant": "TEXT", "backend": "TEXT", "runtime": "TEXT", "device": "TEXT",
    "dtype": "TEXT", "params": "TEXT", "size": "INTEGER", "size_label": "TEXT",
    "mode": "TEXT", "cache": "TEXT", "status": "TEXT", "message": "TEXT", "traceback": "TEXT",
    "timer_kind": "TEXT", "timer_overhead_s": "REAL",
    "samples_s": "TEXT", "host_samples_s": "TEXT", "n_samples": "INTEGER",
    "median_s": "REAL", "mean_s": "REAL", "min_s": "REAL", "q1_s": "REAL", "q3_s": "REAL", "iqr_s": "REAL",
    "rel_spread": "REAL", "host_median_s": "REAL",
    "flops": "REAL", "bytes": "REAL", "gflops": "REAL", "gbps": "REAL", "intensity": "REAL",
    "pct_peak_bw": "REAL", "pct_peak_flops": "REAL", "pct_published": "REAL",
    "peak_mem_bytes": "INTEGER", "mem_method": "TEXT",
    "max_error": "REAL", "tolerance": "REAL",
    "env_id": "TEXT", "started_at": "TEXT", "finished_at": "TEXT", "wall_s": "REAL",
}

#: Columns the harness adds beyond the contract (reports may ignore them).
EXTRA_COLUMNS: dict[str, str] = {
    "setup_s": "REAL",          # Case construction: inputs, reference, variant build (compilation)
    "first_call_s": "REAL",     # the first timed call, which absorbs JIT compilation
    "warmup_calls": "INTEGER",
    "calls_per_sample": "INTEGER",  # > 1 when short kernels were batched; samples are per call
    "n_inputs": "INTEGER",      # input sets rotated while timing
    "stopped_by": "TEXT",       # spread / budget / max_samples / deadline
    "seed": "INTEGER",
}

RESULT_COLUMNS: dict[str, str] = {**CONTRACT_COLUMNS, **EXTRA_COLUMNS}
JSON_COLUMNS = ("params", "samples_s", "host_samples_s")
STATUSES = ("ok", "incorrect", "unsupported", "oom", "error", "timeout")


def canonical_params(params: Mapping[str, int]) -> str:
    return json.dumps({k: int(v) for k, v in params.items()}, separators=(",", ":"))


def cell_key(kernel: str, variant: str, backend: str, dtype: str, params: Mapping[str, int], mode: str,
             cache: str) -> str:
    """Stable across processes and machines: the resume and de-duplication key."""
    text = json.dumps([kernel, variant, backend, dtype, sorted((k, int(v)) for k, v in params.items()),
                       mode, cache], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def size_of(params: Mapping[str, int]) -> int:
    return math.prod(int(v) for v in params.values()) if params else 0


def size_label(params: Mapping[str, int]) -> str:
    return " ".join(f"{k}={int(v)}" for k, v in params.items())


def empty_row() -> dict[str, Any]:
    return dict.fromkeys(RESULT_COLUMNS)


def finite_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
