"""What quick()'s results say about themselves: the size axis is named as setup names it, and a row that failed
its check shows no time in the summary (its samples stay in the store)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.adhoc import quick
from workbench.catalog import registry

FAST = {"budget_s": 0.02, "rounds": 2, "warmup_s": 0.0, "min_samples": 2, "progress": False,
        "isolation": "in-process"}


@pytest.fixture
def run(tmp_path):
    names: list[str] = []

    def go(callables, setup, sizes, **kw):
        name = f"quick-labels-{len(names)}"
        names.append(name)
        return quick(callables, setup, sizes, name=name, store=tmp_path / "s.sqlite", **FAST, **kw)

    yield go
    for n in names:
        registry.unregister_kernel(n)


def test_the_size_axis_is_named_after_setups_parameter(run):
    res = run({"sort": np.sort}, lambda rows: np.random.rand(rows), [64, 100], bytes=lambda rows: 16 * rows)
    assert list(res.df["size_label"]) == ["rows=64", "rows=100"]
    assert registry.get_kernel(res.comparison.name).axes == ("rows",)
    assert res.df["gbps"].notna().all()  # bytes= is called with the rows
    assert list(res.summary()["size"]) == ["rows=64", "rows=100"]


def test_a_setup_with_rng_or_without_a_named_parameter_keeps_n(run):
    res = run({"sort": np.sort}, lambda n, rng: rng.random(n), [32])
    assert list(res.df["size_label"]) == ["n=32"]
    res = run({"sort": np.sort}, lambda *a: np.random.rand(a[0]), [32])
    assert list(res.df["size_label"]) == ["n=32"]


def test_summary_shows_no_time_for_a_row_that_failed_its_check_after_timing(run):
    first: list[np.ndarray] = []

    def replays(x):  # right on the first input set only: fails the check of the rotated sets after timing
        if not first:
            first.append(np.sort(x))
        return first[0]

    res = run({"sort": np.sort, "replays": replays}, lambda n: np.random.rand(n), [500])
    status = dict(zip(res.df["variant"], res.df["status"], strict=True))
    assert status == {"sort": "ok", "replays": "incorrect"}
    stored = res.df.set_index("variant")
    assert stored.loc["replays", "median_s"] > 0  # the samples are kept: nothing stored is lost
    table = res.summary().set_index("variant")
    assert table.loc["replays", "median ± IQR"] == "" and table.loc["replays", "GB/s"] == ""
    assert table.loc["sort", "median ± IQR"] != ""
