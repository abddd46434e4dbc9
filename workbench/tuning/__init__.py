"""Autotuning: variants declare tunable parameters (``Tunable`` and restrictions on the variant), the tuner
measures configurations (each verified against the float64 reference before it is timed) with an optuna
sampler, and the best one per device fingerprint, dtype and shape class goes into the configuration file,
where every later build of the variant finds it (:mod:`.resolve`).
"""

from .resolve import device_fingerprint, lookup, resolve_config, shape_class, tuned_enabled
from .search import STRATEGIES, Trial, TuneResult, tune

__all__ = ["STRATEGIES", "Trial", "TuneResult", "device_fingerprint", "lookup", "resolve_config", "shape_class",
           "tune", "tuned_enabled"]
