"""Deprecated: :mod:`workbench.case` holds ``Case`` and the correctness check (this module never ran anything)."""

from __future__ import annotations

import warnings

from .case import (POISON, Case, CheckResult, check, make_host_inputs, normalize_outputs,  # noqa: F401
                   output_dtype, poisoned, reference_outputs, to_device)

warnings.warn("workbench.runner is deprecated; import workbench.case", DeprecationWarning, stacklevel=2)
