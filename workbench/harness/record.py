"""Deprecated: the measurement record moved to :mod:`workbench.record` (the bottom layer). Import it from there."""

from __future__ import annotations

import warnings

from ..record import (JSON_COLUMNS, RESULT_COLUMNS, STATUSES, canonical_params, cell_key,  # noqa: F401
                      empty_row, finite_or_none, size_label, size_of)

#: The old names for the column list: every column is now documented and part of the contract.
CONTRACT_COLUMNS = RESULT_COLUMNS

warnings.warn("workbench.harness.record is deprecated; import workbench.record", DeprecationWarning, stacklevel=2)
