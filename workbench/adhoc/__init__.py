"""Ad-hoc comparisons: time one callable (:func:`timeit`) or compare several over sizes (:func:`quick`)
without writing a kernel spec, then promote a comparison to a catalog kernel (:func:`promote`)."""

from workbench.adhoc.quick import QuickResults, quick
from workbench.adhoc.timing import Measurement, timeit

__all__ = ["Measurement", "QuickResults", "quick", "timeit"]
