"""Write every report format from the sample data and from an exported GPU run, and print their hashes.

Run before and after a change that must not alter reports (a refactor): the two listings must be identical.
``python scripts/checks/report_fingerprint.py OUTDIR`` writes the reports under OUTDIR and prints
``sha256  name`` per file.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pandas as pd

from workbench.report import write_report
from workbench.report.sample_data import suite_results, synthetic_results

GPU_RUN = Path(__file__).resolve().parents[2] / "docs/gpu-runs/2026-11-26-h100/quick-run3.json"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    sample = pd.concat([synthetic_results("run-a", seed=1), synthetic_results("run-b", seed=2, slowdown=0.8)],
                       ignore_index=True)
    suite = suite_results()
    for fmt in ("md", "html", "json", "csv"):
        write_report(sample, ["run-a", "run-b"], out / f"sample.{fmt}")
        write_report(suite, None, out / f"suite.{fmt}")
    from workbench.store.database import Store

    store = Store(out / "gpu.sqlite")
    store.import_file(GPU_RUN)
    for fmt in ("md", "html", "json", "csv"):
        write_report(store, None, out / f"gpu.{fmt}")
    for p in sorted(out.iterdir()):
        if ".sqlite" not in p.name:
            print(hashlib.sha256(_timeless(p.read_bytes())).hexdigest()[:16], p.name)


def _timeless(data: bytes) -> bytes:
    """The report without the moment it was written (``exported_at``, ``Generated ... UTC``)."""
    data = re.sub(rb'"exported_at": "[^"]*"', b'"exported_at": ""', data)
    return re.sub(rb"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", b"Generated", data)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
