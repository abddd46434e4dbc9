"""The setup every tutorial notebook shares, so that a tutorial's cells show only what it teaches.

Each tutorial used to open with the same block (inline figures, pandas column width, the automatic
ceiling probe switched off for the quick run, the list of backends its quick run uses); written once here,
tested once (tests/unit/test_tutorial.py), and called in one line from each notebook.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

import pandas as pd

from workbench.backends import registry
from workbench.roofs.peaks import ENV_AUTO_PEAKS
from workbench.sweep.working_sets import WorkingSets, sized, working_sets

#: pandas' column width in the tutorials: a whole note or error message (at 80, readers met "the median is the
#: s..." and a failure message cut before its point); longer text wraps in the notebook's table cell.
COLWIDTH = 240


def begin(full: bool = False, *, small: bool = False, leaves_out: str = "", ceilings: bool | None = None,
          colwidth: int | None = COLWIDTH) -> None:
    """Prepare a tutorial's notebook: figures inline, pandas columns ``colwidth`` wide (None: never cut), and
    the automatic probe of ceilings for "% of peak" on only where ``ceilings`` says (default: in a ``full``
    run; the quick run saves its few seconds per backend, and ``workbench peaks`` measures them for longer).
    A ``small`` run (the tests' SMALL = True) opens with :func:`small_banner` of ``leaves_out``: its readers took
    check-sized output for the tutorial's findings (04's "did not pay" of 32³)."""
    os.environ[ENV_AUTO_PEAKS] = "1" if (full if ceilings is None else ceilings) else "0"
    if small:
        print(small_banner(leaves_out))
    pd.set_option("display.max_colwidth", colwidth)
    pd.set_option("display.float_format", readable_float)  # tables show 92.5, not 92.549975 (the values keep theirs)
    shell = _ipython()
    if shell is not None:
        shell.run_line_magic("matplotlib", "inline")


#: How a check-sized run's lines begin, so a reader can tell them from the tutorial's own findings.
SMALL_RUN = "this SMALL run"


def small_banner(leaves_out: str = "") -> str:
    """The one line a check-sized run (SMALL = True) opens with: what it is, what it ``leaves_out`` (the sections
    whose question it cannot answer), and that its findings are of its own tiny sizes."""
    if not leaves_out.strip():
        raise ValueError("leaves_out='': a SMALL run names what it leaves out (the sections it cannot answer)")
    return (f"Check-sized run (SMALL = True), only to check that this notebook runs. It leaves out "
            f"{leaves_out.strip().rstrip('.')}. Every finding below is of this reduced run only; set SMALL = False "
            "for the tutorial's own measurement.")


def skipped_in_small(what: str) -> str:
    """The line printed where a section that a SMALL run skips would have answered (``what`` it leaves
    unanswered): "no DRAM size in this SMALL run: the stream-rate question is not answered here"."""
    if not what.strip():
        raise ValueError("what='': say what the skipped section would have answered")
    return f"Not in {SMALL_RUN}: {what.strip().rstrip('.')}."


def of_small_sizes(sizes: str) -> str:
    """The clause a finding printed from a SMALL run's ``sizes`` carries ("32³, 64³"): a "did not pay" of a
    check size is not the tutorial's finding."""
    return f"(of {SMALL_RUN}'s check sizes only, {sizes}: not the tutorial's finding)"


def readable_float(x: float) -> str:
    """A float as a table shows it to a reader: three significant digits (a measured rate has no more), whole
    numbers from 1,000 up with thousands separators, tiny and huge ones in exponent form."""
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x == 0:
        return "0"
    return f"{x:,.0f}" if 1000 <= abs(x) < 1e15 else f"{x:.3g}"


def _ipython():  # noqa: ANN202 - IPython's shell, or None outside one (IPython is not a core dependency)
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None)
    return get() if get else None


def available(*names: str) -> list[str]:
    """Those of ``names`` whose backend is available here, in the order given: the quick run's "one device
    per runtime" (a runtime's name, such as "opencl", stands for its best device; an unknown name is an error
    naming the valid ones)."""
    return [n for n in names if registry.get(n).probe().available]


def backends_for(full: bool, quick: Iterable[str]) -> list[str] | None:
    """The backends a tutorial runs: every one (None) in a ``full`` run, else those of ``quick`` available here."""
    return None if full else available(*quick)


def cache_and_dram_sizes(kernel: str, axes: Iterable[str] | None = None,
                         in_cache: str = "per-core") -> list[dict[str, int]]:
    """Two sizes of ``kernel`` from this machine's caches (:func:`~workbench.sweep.working_sets.working_sets`):
    one whose working set stays in a cache, one past the last-level cache (twice it, so a call streams from
    DRAM); ``axes`` are scaled (default: the kernel's first). A tutorial that says "larger than the last-level
    cache" is then true here, whether that cache is 32 MiB or 480 MiB. ``in_cache``: ``"per-core"`` (at most half
    the per-core cache) or ``"llc"`` (a quarter of the last-level cache: large enough that a call's fixed costs
    do not set its rate — 05 read a fused kernel slower at half a 1 MiB per-core cache, 15-30 us a call, than
    from DRAM — and small enough to stay there beside another core's data)."""
    from workbench.catalog import registry as catalog

    if in_cache not in ("per-core", "llc"):
        raise ValueError(f"in_cache={in_cache!r}; valid: 'per-core', 'llc'")
    spec, ws = catalog.get_kernel(kernel), working_sets()
    scaled = tuple(axes) if axes is not None else None
    resident = ws.llc // 4 if in_cache == "llc" and ws.llc else ws.cache
    return [sized(spec, max(resident, ws.cache), scaled), sized(spec, ws.dram, scaled)]


def machine_caches() -> WorkingSets:
    """This machine's working sets and the cache sizes they come from (for a tutorial's text)."""
    return working_sets()
