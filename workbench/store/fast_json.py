"""A fast JSON decoder for the import's hot path: ``orjson`` where it is installed, else the standard library.

Why: an import of a million real rows decodes every row and checks each JSON text column (samples, host
samples, round medians: hundreds of numbers a row); Python's ``json`` does that at about a hundred MB/s,
orjson several times faster. orjson is a dependency, imported when first needed; without it (a platform with
no wheel) the standard library decodes the same documents, only slower.

Only a fast path: orjson differs from ``json`` at the edges (an integer beyond 64 bits becomes a float, a lone
surrogate escape is refused), so a caller uses :func:`loads` to vouch for plain values and sends anything else
to the standard library's decoder, whose errors the import's messages are built on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_loads: Callable[[str | bytes], Any] | None = None
_backend = ""


def _pick() -> Callable[[str | bytes], Any]:
    global _loads, _backend
    if _loads is None:
        try:
            import orjson
        except ImportError:  # the standard library's decoder, with NaN/Infinity refused like orjson refuses them
            _loads, _backend = json.JSONDecoder(parse_constant=_refuse_constant).decode, "json"
        else:
            _loads, _backend = orjson.loads, "orjson"
    return _loads


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def loads(text: str | bytes) -> Any:
    """``text`` decoded; ValueError (or RecursionError from the fallback) for anything that is not strict JSON.
    NaN and Infinity are refused; see the module's note on where the result may differ from ``json.loads``."""
    return (_loads or _pick())(text)


def loader() -> Callable[[str | bytes], Any]:
    """:func:`loads` itself (orjson's C function, or the fallback), for a caller that maps it over many texts:
    a Python call per text around it cost a tenth of their decoding."""
    return _loads or _pick()


def backend() -> str:
    """Which decoder :func:`loads` uses: ``orjson`` or ``json``."""
    _pick()
    return _backend
