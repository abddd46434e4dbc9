"""The report's kernel table reads a disturbed cell as the tutorials' tables and the figures do: "disturbed", no
median, never the fastest (its pivot printed "~50.4" for a cell its figure drew as x's at its quartiles)."""

import pandas as pd

from workbench.report.tables import DISTURBED_TEXT, pivot


def _row(variant: str, median: float, q1: float, q3: float) -> dict:
    return {"kernel": "saxpy", "variant": variant, "backend": variant, "status": "ok", "size": 4096,
            "size_label": "n=4096", "params": "{}", "dtype": "float32", "median_s": median, "q1_s": q1, "q3_s": q3,
            "iqr_s": q3 - q1, "noisy": False, "rel_spread": 0.01, "noise_note": "", "timing_mode": "host"}


def test_a_disturbed_cell_prints_no_median_and_is_never_the_fastest():
    df = pd.DataFrame([_row("numpy", 2e-6, 1.9e-6, 2.1e-6), _row("portable", 1e-6, 0.6e-6, 1.4e-6)])
    (row,) = pivot(df, ("numpy", "numpy"))["rows"]
    by_text = {c["text"]: c for c in row["cells"]}
    assert DISTURBED_TEXT in by_text and not by_text[DISTURBED_TEXT]["best"]
    assert not any(c["text"].startswith("1") or "~" in c["text"] for c in row["cells"] if c is by_text[DISTURBED_TEXT])
    assert [c["best"] for c in row["cells"]].count(True) == 1   # numpy, the one cell with a median to read


def test_a_narrow_cell_keeps_its_median():
    df = pd.DataFrame([_row("numpy", 2e-6, 1.9e-6, 2.1e-6), _row("portable", 1e-6, 0.9e-6, 1.1e-6)])
    (row,) = pivot(df, ("numpy", "numpy"))["rows"]
    assert DISTURBED_TEXT not in [c["text"] for c in row["cells"]]
