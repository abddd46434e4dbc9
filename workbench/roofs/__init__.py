"""Roofs: the limits a measurement is judged against (``model``: roofs and their resolution; ``ceilings``: what
a row's "% of peak" means; ``throughput``: a row's rates), and the probes that measure this machine's
(``probe``, ``peaks``, which sit a layer higher: they run cells).

``from workbench.roofs import RoofSet, resolve_roofs`` (the former module's names) keeps working.
"""

from __future__ import annotations

from workbench.roofs.model import *  # noqa: F403 - the former module's names, listed in its __all__
from workbench.roofs.model import __all__  # noqa: F401
