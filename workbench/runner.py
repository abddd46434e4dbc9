"""Deprecated: :mod:`workbench.case` holds ``Case`` and the correctness check (this module never ran anything)."""

from __future__ import annotations

import warnings
from typing import Any

from . import case as _case

warnings.warn("workbench.runner is deprecated; import workbench.case", DeprecationWarning, stacklevel=2)


def __getattr__(name: str) -> Any:
    return getattr(_case, name)
