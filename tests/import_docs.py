"""Export documents for the import tests (test_import_columns, test_import_scale): one result row and the
document around rows, as ``workbench export`` writes them."""

from __future__ import annotations

import json
from collections.abc import Iterable


def import_row(key: str, run: str = "r1", **kw) -> dict:
    """A saxpy row of ``run`` with cell key ``key``; ``kw`` replaces or adds fields."""
    row = {"run_id": run, "cell_key": key, "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
           "dtype": "float32", "params": json.dumps({"n": 8}), "size": 8, "status": "ok", "median_s": 1e-3,
           "samples_s": json.dumps([1e-3, 1.1e-3]), "env_id": "envA"}
    row.update(kw)
    return row


def import_doc(rows: list[dict], runs: Iterable[str] = ("r1",)) -> dict:
    """An export document of ``rows`` with the finished ``runs`` of environment envA."""
    return {"format": "workbench-results", "version": 1,
            "runs": [{"run_id": r, "created_at": "2026-01-01T00:00:00.000Z", "status": "finished", "env_id": "envA"}
                     for r in runs],
            "environments": [{"env_id": "envA", "record": {"host": "A"}}], "results": rows, "peaks": []}
