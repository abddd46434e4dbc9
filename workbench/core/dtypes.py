"""Host-side dtype handling: numpy has no bfloat16, so it travels as float32 rounded to bf16."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Every dtype name the workbench knows; backends' capabilities pick from these.
KNOWN_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32", "float64")


def check_dtype(dtype: str) -> str:
    if dtype not in KNOWN_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; valid dtypes: {', '.join(KNOWN_DTYPES)}")
    return dtype


def itemsize(dtype: str) -> int:
    """Bytes per element of a compute dtype or of an output dtype such as ``int64`` (argmax)."""
    if dtype == "bfloat16":
        return 2
    if dtype in KNOWN_DTYPES or dtype.startswith(("int", "uint")):
        return np.dtype(dtype).itemsize
    return np.dtype(check_dtype(dtype)).itemsize  # raises, naming the valid dtypes


def host_dtype(dtype: str) -> np.dtype:
    """The numpy dtype that carries values of ``dtype`` on the host."""
    return np.dtype(np.float32) if dtype == "bfloat16" else np.dtype(check_dtype(dtype))


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """``a`` rounded to ``dtype`` and stored in :func:`host_dtype` (round-to-nearest-even for bf16)."""
    if dtype != "bfloat16":
        return np.asarray(a).astype(host_dtype(dtype))
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out)


def reduced_float32_flags(settings: Mapping[str, Any] | str | None) -> list[str]:
    """The settings (as :func:`workbench.measure.audit.precision_settings` records them, or that record as
    JSON) that let float32 matmuls round their inputs to TF32. Such a run may reach the TF32 tensor-core rate,
    not the float32 one.

    A setting's name says what it is, whichever runtime recorded it (each names its own, prefixed with its
    name): ``*_allow_tf32`` a flag, on when true; ``*_float32_matmul_precision`` a level, reduced below
    ``highest``; another ``*_tf32`` an environment variable, on unless ``0`` (named as the variable)."""
    if isinstance(settings, str):  # a row's stored text: decoded once per distinct text
        return list(_reduced_float32_flags_of_text(settings))
    if not isinstance(settings, Mapping):
        return []
    found = []
    for key, value in settings.items():
        if key.endswith("_allow_tf32"):
            found += [key] if value else []
        elif key.endswith("_float32_matmul_precision"):
            found += [f"float32 matmul precision {value!r}"] if value not in (None, "highest") else []
        elif key.endswith("_tf32") and str(value) not in ("0", ""):
            found.append(key.upper())
    return found


@functools.lru_cache(maxsize=256)
def _reduced_float32_flags_of_text(text: str) -> tuple[str, ...]:
    """:func:`reduced_float32_flags` of a JSON text. Why cached: a report asks it of every float32 row (a
    million rows repeat a few settings), and decoding each row's text again was a tenth of its row notes."""
    try:
        settings = json.loads(text)
    except ValueError:
        return ()
    return tuple(reduced_float32_flags(settings)) if isinstance(settings, Mapping) else ()
