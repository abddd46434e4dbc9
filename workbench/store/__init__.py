"""The results store: one SQLite file of runs, rows, environments and peaks (``database.Store``), in modules
with one job each (schema, connection, runs, rows, machines, health, exchange, import schema).

``from workbench.store import Store, open_store`` (and every other name of the former ``workbench.store``
module) keeps working: they are ``workbench.store.database``'s.
"""

from __future__ import annotations

from workbench.store.database import *  # noqa: F403 - the former module's names, listed in its __all__
from workbench.store.database import __all__  # noqa: F401
