"""Autotuning: variants declare tunable parameters (``Tunable`` and restrictions on the variant), the tuner
measures configurations (each verified against the float64 reference before it is timed) with an optuna
sampler, and the best one per device fingerprint, dtype and shape class goes into the configuration file,
where every later build of the variant finds it (:mod:`.resolve`, which ``import workbench`` installs as the
catalog's configuration resolver).

The search (:mod:`.search`) runs sweeps, so it loads on first use of its names: importing the resolver
must not load the harness and the sweep into every process that builds a variant.
"""

from typing import Any

from workbench.tuning.resolve import device_fingerprint, lookup, resolve_config, shape_class, tuned_enabled

_SEARCH_NAMES = ("STRATEGIES", "Trial", "TuneResult", "tune")


def __getattr__(name: str) -> Any:
    if name in _SEARCH_NAMES:
        from workbench.tuning import search

        return getattr(search, name)
    raise AttributeError(f"module 'workbench.tuning' has no attribute {name!r}")


__all__ = ["STRATEGIES", "Trial", "TuneResult", "device_fingerprint", "lookup", "resolve_config", "shape_class",
           "tune", "tuned_enabled"]
