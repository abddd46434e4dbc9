"""Issue 39, readers of tutorials 03 and 08: a figure must not draw what its table withholds. A cell the table reads
"disturbed" (quartiles spanning ±50% of its median or more) is a cross off the line with no band and its own
legend entry, counted apart from the noisy cells; a band at a point with no banded neighbour is still drawn (as a
bar); the band's legend text does not name a table the figure may be shown without; and the roofline's footnote
gives the probe's own GEMM above its roof the one hedged cause its row's note gives, with the point's ratio."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection

from workbench.report import plots
from workbench.report.plots.frame import DISTURBED_LABEL, NOISY_LABEL
from workbench.report.plots.series import disturbed_mask
from workbench.report.sample_data import synthetic_peaks, synthetic_results
from workbench.report.summary import summary_table


def _saxpy_numpy() -> pd.DataFrame:
    """saxpy's numpy rows (four sizes), calm (narrow quartiles, not noisy)."""
    df = synthetic_results(with_failures=False)
    rows = df[(df["kernel"] == "saxpy") & (df["variant"] == "numpy")].sort_values("size").reset_index(drop=True)
    med = rows["median_s"]
    return rows.assign(q1_s=med * 0.97, q3_s=med * 1.03, iqr_s=med * 0.06, rel_spread=0.06, noisy=False)


def _widen(rows: pd.DataFrame, i: int, rel: float) -> None:
    """Quartiles of row ``i`` spanning ``rel`` of its median (0.6: ±30% each side, the table's "disturbed")."""
    med = rows.loc[i, "median_s"]
    rows.loc[i, ["q1_s", "q3_s", "iqr_s", "rel_spread", "noisy"]] = [med * (1 - rel / 2), med * (1 + rel / 2),
                                                                      med * rel, rel, True]


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


def test_the_figure_draws_as_disturbed_exactly_the_cells_the_table_reads_disturbed():
    rows = _saxpy_numpy()
    _widen(rows, 1, 0.6)   # disturbed: no rate to read
    _widen(rows, 2, 0.3)   # merely noisy: a band and a hollow point
    table = summary_table(rows)
    said = table["median ± IQR"].astype(str).str.contains("disturbed").to_numpy()
    assert disturbed_mask(rows).tolist() == said.tolist() == [False, True, False, False]
    fig = plots.plot_metric(rows, "gbps")
    ax = fig.axes[0]
    line = next(ln for ln in ax.lines if ln.get_label() == "numpy @ numpy")
    y = np.asarray(line.get_ydata(), float)
    assert np.isnan(y[1]) and np.isfinite(y[[0, 2, 3]]).all()   # no segment leads to or from the disturbed cell
    crosses = [ln for ln in ax.lines if ln.get_marker() == "x" and len(ln.get_xdata())]
    # its quartiles only, an x at each: nothing at the median the text calls no value to read (01, 05)
    assert len(crosses) == 1 and np.allclose(crosses[0].get_xdata(), [rows.loc[1, "size"]] * 2)
    gbps, med = rows.loc[1, "gbps"], rows.loc[1, "median_s"]
    quartiles = [gbps * med / rows.loc[1, "q3_s"], gbps * med / rows.loc[1, "q1_s"]]   # as rates: inverted
    assert np.allclose(sorted(crosses[0].get_ydata()), quartiles)
    assert not np.isclose(crosses[0].get_ydata(), gbps).any()
    hollow = [ln for ln in ax.lines if ln.get_linestyle() == "None" and ln.get_markerfacecolor() == "white"
              and len(ln.get_xdata())]
    assert sum(len(h.get_xdata()) for h in hollow) == 1   # the noisy cell only, not the disturbed one too
    texts = _legend(fig)
    assert f"{NOISY_LABEL} (1)" in texts
    assert any(t.startswith(f"{DISTURBED_LABEL} (1)") and "no value to read" in t for t in texts), texts
    band = next(c for c in ax.collections if isinstance(c, PolyCollection))
    # the band has no vertex at the disturbed cell's size (the fill stops at its neighbours)
    assert all(not np.isclose(p.vertices[:, 0], rows.loc[1, "size"]).any() for p in band.get_paths())


def test_a_band_at_a_point_with_no_banded_neighbour_is_drawn_as_a_bar():
    """08's torch n=64 (±12.5 µs on 26.7 µs) beside disturbed n=512: a fill over one point has no width."""
    rows = _saxpy_numpy()
    _widen(rows, 1, 0.6)
    _widen(rows, 3, 0.6)   # rows 0 and 2 keep their band, but neither has a banded neighbour
    fig = plots.plot_metric(rows, "median_s")
    ax = fig.axes[0]
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert bars, "a lone banded point gets a bar"
    segs = np.concatenate([np.asarray(s) for c in bars for s in c.get_segments()])
    for i in (0, 2):   # each lone point's bar spans its quartiles
        at = segs[np.isclose(segs[:, 0], rows.loc[i, "size"])]
        assert len(at) == 2 and np.allclose(sorted(at[:, 1]), [rows.loc[i, "q1_s"], rows.loc[i, "q3_s"]])
    assert plots.lines.LONE_BAND_LABEL in _legend(fig)


def test_the_band_legend_names_no_table():
    """Tutorial 01 shows the figure with no "± IQR" column beside it: the legend says what the band is."""
    assert "table" not in plots.lines.BAND_LABEL and "IQR" in plots.lines.BAND_LABEL
    assert "narrower than the line" in plots.lines.BAND_LABEL   # 04: a band named in the legend, none seen
    # 01: the shading between two sizes is no measurement; the legend says the band is each measured size's
    assert "at each measured size, joined between them" in plots.lines.BAND_LABEL
    fig = plots.plot_metric(_saxpy_numpy(), "gbps")
    assert plots.lines.BAND_LABEL in _legend(fig) and not any("table" in t for t in _legend(fig))


def test_the_roofline_crosses_a_disturbed_point_and_counts_it_apart():
    df = synthetic_results(with_failures=False)
    gemm = df[df["kernel"] == "gemm"].reset_index(drop=True)
    med = gemm["median_s"]
    gemm = gemm.assign(q1_s=med * 0.97, q3_s=med * 1.03, iqr_s=med * 0.06, rel_spread=0.06, noisy=False)
    _widen(gemm, 0, 0.8)
    _widen(gemm, 1, 0.3)
    fig = plots.plot_roofline(gemm, synthetic_peaks(gbps=20.0, gflops=1000.0))
    ax = fig.axes[0]
    crosses = [ln for ln in ax.lines if ln.get_marker() == "x" and len(ln.get_xdata())]
    gflops, med = gemm.loc[0, "gflops"], gemm.loc[0, "median_s"]   # an x at each quartile, none at the median
    assert len(crosses) == 1 and np.allclose(sorted(crosses[0].get_ydata()),
                                             [gflops * med / gemm.loc[0, "q3_s"], gflops * med / gemm.loc[0, "q1_s"]])
    drawn = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections if "@" in str(c.get_label())])
    assert not np.isclose(drawn, gemm.loc[0, "gflops"]).any()   # not also drawn as an ordinary point
    texts = _legend(fig)
    assert f"{NOISY_LABEL} (1)" in texts and any(t.startswith(f"{DISTURBED_LABEL} (1)") for t in texts)


def test_the_probes_own_gemm_above_its_roof_has_one_hedged_cause_with_its_own_ratio():
    """04 printed "the ceiling was measured low" as fact (1.3-1.5x quoted for a 1.17x reading) in the row's note
    and another cause in the roofline's footnote: both now give the same hedged text and the point's ratio."""
    from workbench.roofs.ceilings import row_peak_note

    df = synthetic_results(with_failures=False)
    gemm = df[(df["kernel"] == "gemm") & (df["variant"] == "numpy")].reset_index(drop=True)
    ceiling = float(gemm["gflops"].iloc[-1]) / 1.17   # the largest size reads 117% of it
    gemm = gemm.assign(ceiling_gflops=ceiling, pct_peak_flops=100 * gemm["gflops"] / ceiling)
    note = row_peak_note(gemm.iloc[-1].to_dict())
    assert "1.17x" in note and "may have read low" in note and "was measured low" not in note
    assert "1.3-1.5" not in note
    fig = plots.plot_roofline(gemm, synthetic_peaks(gbps=1e6, gflops=ceiling))
    footnote = " ".join(" ".join(t.get_text() for t in fig.texts).split())
    cause = note.partition("ceiling: ")[2]
    assert cause and cause in footnote, (cause, footnote)
    assert "automatic GEMM probe is short" not in footnote   # no second explanation for the same point


@pytest.mark.parametrize("rel, disturbed", [(0.4999, False), (0.5, True)])
def test_the_edge_is_the_tables(rel, disturbed):
    rows = _saxpy_numpy()
    _widen(rows, 0, rel)
    assert bool(disturbed_mask(rows)[0]) is disturbed


def test_a_two_mode_cell_is_drawn_as_its_two_modes_as_the_tables_print_it():
    """06 drew a cell its pivot printed "two modes: 1.2 ms (2 rounds) / 3.6 ms (1 round)" as one point of the line:
    the shared mark draws both modes, at the medians the pivot prints, with its own legend entry."""
    import json

    from matplotlib.figure import Figure

    from workbench.report.marked_times import marked_times
    from workbench.report.plots.frame import MODES_LABEL
    from workbench.report.plots.series import mark_modes, mode_medians, modes_legend

    rows = _saxpy_numpy().iloc[:2].copy()
    rows["round_medians_s"] = [json.dumps([1.2e-3, 1.21e-3, 3.6e-3]), json.dumps([1e-3, 1.01e-3, 1.02e-3])]
    modes = mode_medians(rows)
    assert modes[1] is None and modes[0] is not None
    printed = marked_times(rows)[0]
    assert printed.startswith("two modes: ") and all(f"{m * 1e3:.3g} ms" in printed for m in modes[0])
    ax = Figure().add_subplot()
    mark_modes(ax, [0.0], [modes[0]], "C0")
    ys = sorted(float(y) for line in ax.lines for y in line.get_ydata())
    assert ys[0] == modes[0][0] and ys[-1] == modes[0][1]
    modes_legend(ax, 1)
    assert any(lab.startswith(MODES_LABEL) for lab in ax.get_legend_handles_labels()[1])


def test_a_series_drawn_only_as_crosses_has_a_cross_in_the_legend():
    """07's legend gave run A's numba series a line and a square marker while the figure drew it only as crosses."""
    rows = _saxpy_numpy()
    for i in range(len(rows)):
        _widen(rows, i, 0.6)
    ax = plots.plot_metric(rows, "median_s").axes[0]
    line = next(ln for ln in ax.lines if ln.get_label() == "numpy @ numpy")
    assert line.get_marker() == "x" and line.get_linestyle() == "None"
    calm = plots.plot_metric(_saxpy_numpy(), "median_s").axes[0]
    line = next(ln for ln in calm.lines if ln.get_label() == "numpy @ numpy")
    assert line.get_marker() != "x" and line.get_linestyle() != "None"
