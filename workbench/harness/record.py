"""Deprecated: the measurement record moved to :mod:`workbench.record` (the bottom layer). Import it from there."""

from __future__ import annotations

import warnings
from typing import Any

from .. import record as _record

warnings.warn("workbench.harness.record is deprecated; import workbench.record", DeprecationWarning, stacklevel=2)


def __getattr__(name: str) -> Any:
    if name == "CONTRACT_COLUMNS":  # the old name of the column list: every column is now in the contract
        return _record.RESULT_COLUMNS
    return getattr(_record, name)
