"""Issue 38: past ``MAX_RUN_LINES`` runs, a roofline draws one point per series and size (the median over the
runs) and the memory figure one line per series, as the time figure already did: a 100-run report's figures
were 160 MB of SVG. With few runs every point and line is drawn as before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.report import plots
from workbench.report.plots.series import pooled_over_runs
from workbench.report.sample_data import synthetic_results


def _runs(n: int) -> pd.DataFrame:
    df = pd.concat([synthetic_results(f"run{r}", seed=r) for r in range(n)], ignore_index=True)
    return df[(df["kernel"] == "gemm") & (df["status"] == "ok")].reset_index(drop=True)


def _points(fig) -> int:
    """Points drawn: the series' scatter, and the disturbed cells drawn apart from it (an x at each quartile: one
    cell per intensity its x's stand at)."""
    crosses = sum(len(np.unique(line.get_xdata())) for line in fig.axes[0].get_lines() if line.get_marker() == "x")
    return crosses + sum(len(c.get_offsets()) for c in fig.axes[0].collections if c.get_label() and
                         not c.get_label().startswith(("_", "above")))


def test_roofline_of_many_runs_draws_the_median_of_each_series_and_size():
    many, few = _runs(plots.MAX_RUN_LINES + 2), _runs(2)
    groups = many.groupby(["variant", "backend", "params"]).ngroups
    fig = plots.plot_roofline(many)
    assert _points(fig) == groups
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert f"median of {plots.MAX_RUN_LINES + 2} runs at each size" in labels
    pooled = pooled_over_runs(many, ["variant", "backend", "dtype", "cache", "env_id", "params"])
    first = many[(many["variant"] == pooled["variant"][0]) & (many["params"] == pooled["params"][0])
                 & (many["backend"] == pooled["backend"][0])]
    assert pooled["gflops"][0] == pytest.approx(float(np.median(first["gflops"].astype(float))))
    assert pooled["run_id"].isna().all() and len(pooled) == groups
    assert _points(plots.plot_roofline(few)) == len(few)  # two runs: every point, as before
    assert pooled_over_runs(few, ["variant"]) is few


def test_memory_figure_of_many_runs_has_a_line_per_series():
    many = _runs(plots.MAX_RUN_LINES + 2)
    many["peak_mem_bytes"] = many["peak_mem_bytes"].astype(float) * (1 + many.index % 3)  # runs differ
    ax = plots.plot_memory(many).axes[0]
    lines = [li for li in ax.get_lines() if not li.get_label().startswith("_")]
    series = many.groupby(["variant", "backend"]).ngroups
    assert len([li for li in lines if "median of" not in li.get_label()]) == series
    assert any("median of" in li.get_label() for li in lines)
