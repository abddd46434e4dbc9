"""Every plot returns a Figure with the lines and bands it promises; failures are listed, not drawn."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from workbench.report import plots
from workbench.report.sample_data import synthetic_peaks, synthetic_results


@pytest.fixture(scope="module")
def df():
    return synthetic_results()


def _bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _labels(ax, noisy=False):
    """The legend entries this panel contributes (the figure's one legend sits beside the axes)."""
    return sorted(lab for lab in ax.get_legend_handles_labels()[1]
                  if (noisy or not lab.startswith("hollow")) and not lab.startswith("band:"))


@pytest.mark.parametrize("metric, column", [("time", "median_s"), ("median_s", "median_s"), ("GB/s", "gbps"),
                                            ("gflops", "gflops"), ("% of peak", "pct_peak_bw")])
def test_metric_lines_and_bands(df, metric, column):
    fig = plots.plot_metric(df, metric)
    assert isinstance(fig, Figure)
    assert [a.get_title().split(":")[0] for a in fig.axes] == ["saxpy", "gemm"]
    saxpy = fig.axes[0]
    assert _labels(saxpy) == ["numba_parallel @ numba", "numpy @ numpy"]  # failed rows are not lines
    assert len([ln for ln in saxpy.lines if " @ " in ln.get_label()]) == 2 and len(_bands(saxpy)) == 2
    line = next(ln for ln in saxpy.lines if ln.get_label() == "numpy @ numpy")
    ok = df[(df.kernel == "saxpy") & (df.variant == "numpy") & (df.status == "ok")].sort_values("size")
    np.testing.assert_allclose(line.get_xdata(), ok["size"])
    np.testing.assert_allclose(line.get_ydata(), ok[column])
    if column == "median_s":  # the band is exactly q1..q3
        verts = _bands(saxpy)[[ln.get_label() for ln in saxpy.lines].index("numpy @ numpy")].get_paths()[0].vertices
        assert np.isclose(verts[:, 1].min(), ok["q1_s"].min()) and np.isclose(verts[:, 1].max(), ok["q3_s"].max())
    if column in ("median_s", "gbps", "gflops"):  # the legend says what the band is
        assert plots.lines.BAND_LABEL in saxpy.get_legend_handles_labels()[1]
    text = fig.get_supxlabel()  # the excluded rows are listed under the axes
    assert "incorrect" in text and "unsupported" in text and "broken" in text


def test_time_plot_is_log_log(df):
    ax = plots.plot_time(df).axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_unknown_metric(df):
    with pytest.raises(ValueError, match="valid metrics"):
        plots.plot_metric(df, "furlongs")


def test_speedup_plot_has_ci_error_bars(df):
    for baseline in (None, "numpy", "numpy @ numpy", {"variant": "numpy", "backend": "numpy"}):
        fig = plots.plot_metric(df, "speedup", baseline=baseline)
        saxpy = fig.axes[0]
        bars = [c for c in saxpy.containers if isinstance(c, ErrorbarContainer)]
        assert len(bars) == 1  # numba_parallel vs numpy; the baseline itself is the dashed line at 1
        assert "numba_parallel @ numba vs numpy @ numpy" in _labels(saxpy)
        y = bars[0].lines[0].get_ydata()
        assert (np.asarray(y) > 1.2).all()
        assert any(np.allclose(ln.get_ydata(), 1.0) for ln in saxpy.lines)


def test_roofline(df):
    fig = plots.plot_roofline(df, synthetic_peaks(gbps=20.0, gflops=100.0))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    roof = next(ln for ln in ax.lines if ln.get_label().startswith("numpy roof (measured): DRAM "))
    x, y = roof.get_xdata(), roof.get_ydata()
    np.testing.assert_allclose(y, np.minimum(20.0 * x, 100.0))
    series = [c for c in ax.collections if "@" in str(c.get_label())]
    assert len(series) == 3  # one scatter per variant/backend with ok rows
    # no ceiling anywhere: points only and a note saying so
    bare = df.drop(columns=[c for c in ("ceiling_gbps", "ceiling_gflops", "ceiling_source") if c in df])
    ax2 = plots.plot_roofline(bare).axes[0]
    assert not [ln for ln in ax2.lines if ln.get_linestyle() != "None"]  # no roof (hollow rings are markers only)
    assert any("no ceiling known" in t.get_text() for t in ax2.texts)
    assert len([c for c in ax2.collections if "@" in str(c.get_label())]) == 3


def test_roofline_published_ceiling():
    df = synthetic_results(device="NVIDIA H100 80GB HBM3").drop(columns=["ceiling_gbps", "ceiling_gflops"])
    ax = plots.plot_roofline(df).axes[0]
    roof = next(ln for ln in ax.lines if "published" in ln.get_label())  # no measured ceiling: the datasheet's
    assert roof.get_ydata().max() == pytest.approx(67000.0)


def test_roofline_accepts_long_form_peaks(df):
    # the store's table: bandwidth probed in float64 still bounds float32 rows; compute is per dtype
    long = pd.DataFrame([{"env_id": "env-demo", "backend": "numpy", "dtype": "float64", "metric": "bandwidth_gbps",
                          "value": 10.0},
                         {"env_id": "env-demo", "backend": "numpy", "dtype": "float32", "metric": "gflops",
                          "value": 50.0},
                         {"env_id": "env-demo", "backend": "numpy", "dtype": "float64", "metric": "gflops",
                          "value": 25.0},
                         {"env_id": "other-machine", "backend": "numpy", "dtype": "float32", "metric": "gflops",
                          "value": 999.0}])
    ax = plots.plot_roofline(df, long).axes[0]
    x, y = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    np.testing.assert_allclose(y, np.minimum(10.0 * x, 50.0))


def test_memory_plot(df):
    fig = plots.plot_metric(df, "memory")
    assert len(fig.axes[0].lines) == 2
    assert all("[tracemalloc]" in label for label in _labels(fig.axes[0]))


def test_plots_with_only_failures_and_empty_frames(df):
    bad = df[df.status != "ok"]
    for fig in (plots.plot_metric(bad, "time"), plots.plot_speedup(bad), plots.plot_roofline(bad),
                plots.plot_memory(bad), plots.plot_metric(df.iloc[0:0], "gbps")):
        assert isinstance(fig, Figure)


def test_no_pyplot_figures_leak(df):
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    plots.plot_metric(df, "time")
    assert len(plt.get_fignums()) == before
    assert matplotlib.get_backend()  # importing plots never forced an interactive backend


def test_roofline_rings_points_above_their_roof_and_says_why(df):
    envs = {"env-demo": {"host": {"last_level_cache_bytes": 32 * 2**20}}}
    fig = plots.plot_roofline(df, synthetic_peaks(gbps=1.0, gflops=1000.0), environments=envs)
    ax = fig.axes[0]
    ring = next(c for c in ax.collections if str(c.get_label()).startswith("above its roof"))
    assert len(ring.get_offsets()) > 0
    text = " ".join(" ".join(t.get_text() for t in fig.texts).split())
    assert "above the roof" in text and "fits in the last-level cache" in text  # small working sets
    assert "exceeds" not in text or "workbench peaks" in text


def test_noisy_cells_are_hollow(df):
    fig = plots.plot_metric(df, "time")
    gemm = fig.axes[1]
    hollow = [ln for ln in gemm.lines if ln.get_linestyle() == "None" and ln.get_markerfacecolor() == "white"]
    assert hollow and any("noisy" in lab for lab in _labels(gemm, noisy=True))
    assert any("noisy" in t.get_text() for t in fig.legends[0].get_texts())  # one legend, beside the axes


def test_not_plotted_footnotes_stay_inside_the_figure_and_end_on_a_word(df):
    """A long size label and message (attention_block's timeout on the quick suite) wrap inside the figure;
    a message too long for a footnote is cut at a clause or word, never mid-word."""
    rows = df[df["kernel"] == "saxpy"].assign(kernel="attention_block")
    i = rows.index[rows["status"] == "incorrect"][0]
    rows.loc[i, ["variant", "backend", "status"]] = ["portable-graph", "opencl-0", "timeout"]
    rows.loc[i, "size_label"] = "batch=1 seq=64 past=512 hidden=896 heads=14 kv_heads=2 head_dim=64"
    rows.loc[i, "message"] = ("no result within the 60 s limit: a call never returned; its worker process was killed "
                              "and restarted after the stabilisation window had passed twice")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = plots.plot_kernel(rows, "attention_block")
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    width = fig.bbox.width
    notes = [t for t in fig.texts + [fig._supxlabel] if t is not None and "not plotted" in t.get_text()]  # noqa: SLF001
    assert notes
    for t in notes:
        box = t.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= width, (box, width, t.get_text())
    text = " ".join(notes[0].get_text().split())
    assert "head_dim=64" in text and "timeout" in text
    assert "stabl" not in text or "stabilisation" in text  # cut at a word boundary, or not cut
    assert plots._first_clause("a" * 60 + ": " + "b" * 80) == "a" * 60 + " …"
    assert plots._first_clause("word " * 40).endswith("word …")


def test_the_noisy_ring_is_one_legend_entry_whatever_each_panel_counts(df):
    """Time and % of ceiling panels count different noisy points (rows without a ceiling drop out of the
    second): the figure's legend still lists the hollow ring once."""
    rows = df[df["kernel"] == "saxpy"].copy()
    rows["noisy"] = rows["status"] == "ok"
    first = rows.index[rows["status"] == "ok"][0]
    rows.loc[first, ["pct_peak_bw", "ceiling_gbps"]] = [None, None]
    fig = plots.plot_kernel(rows, "saxpy")
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len([t for t in texts if t.startswith("hollow: noisy cell")]) == 1, texts
    assert f"hollow: noisy cell ({int(rows['noisy'].sum())})" in texts


def test_the_band_is_the_samples_spread_around_the_plotted_median_even_when_rounds_drifted():
    """The line is the median of round medians, the quartiles are of the pooled samples: where rounds
    drifted (round medians 1, 1 and 3 ms; pooled median 2 ms) the band is the spread around the line, so the
    line never runs outside its own band, and exactly as wide as the table's "± IQR" (scaled quartiles drew 01's
    "116 µs ± 47.9 µs" as a 60 µs band); with one round the band is the quartiles as stored."""
    import json as _json

    from workbench.report.plots import quartile_band

    drifted = {"median_s": 1e-3, "q1_s": 1.8e-3, "q3_s": 2.2e-3,
               "samples_s": _json.dumps([0.9e-3, 1e-3, 1.1e-3, 1.9e-3, 2e-3, 2.1e-3, 2.9e-3, 3e-3, 3.1e-3])}
    single = {"median_s": 1e-3, "q1_s": 0.9e-3, "q3_s": 1.1e-3, "samples_s": _json.dumps([0.9e-3, 1e-3, 1.1e-3])}
    g = pd.DataFrame([drifted, single])
    lo, hi = quartile_band(g, "median_s")
    assert np.all(lo <= g["median_s"].to_numpy()) and np.all(g["median_s"].to_numpy() <= hi)
    assert (lo[0], hi[0]) == pytest.approx((0.8e-3, 1.2e-3))   # 1.8-2.2 ms moved by the line's -1 ms
    assert hi - lo == pytest.approx((g["q3_s"] - g["q1_s"]).to_numpy())   # the table's IQR, both rows
    assert (lo[1], hi[1]) == pytest.approx((0.9e-3, 1.1e-3))
    g["gbps"] = 8e-3 / g["median_s"]  # a throughput band follows the same spread, inverted
    lo_t, hi_t = quartile_band(g, "gbps")
    assert np.all(lo_t <= g["gbps"].to_numpy()) and np.all(g["gbps"].to_numpy() <= hi_t)


def test_roofline_shows_every_slope_it_names_up_to_its_ridge(df):
    """GEMM points at 20-80 FLOP/byte under a roof whose ridge lies at 5 FLOP/byte: the axes reach left of
    the ridge, so the slope the legend names is drawn (04's roofline named L1/L2/LLC slopes it never showed)."""
    gemm = df.copy()
    gemm["intensity"] = np.linspace(20.0, 80.0, len(gemm))
    ax = plots.plot_roofline(gemm, synthetic_peaks(gbps=20.0, gflops=100.0)).axes[0]
    assert ax.get_xlim()[0] <= 5.0 / 3 * 1.0001  # the ridge (100 / 20) a factor of 3 inside the axes
    roof = next(ln for ln in ax.lines if ln.get_label().startswith("numpy roof (measured): DRAM "))
    assert (roof.get_ydata() < 100.0).any()  # some of the slope is on the plot, not only the flat roof


def test_a_noisy_point_is_drawn_hollow_in_its_series_own_marker(df):
    """The hollow mark over a noisy point keeps its series' marker shape, so the legend's shapes still tell the
    series apart (every noisy point had been a circle beside a legend of squares and triangles)."""
    rows = df[df["kernel"] == "saxpy"].copy()
    rows["noisy"] = rows["status"] == "ok"
    fig = plots.plot_kernel(rows, "saxpy")
    ax = fig.axes[0]
    drawn = {line.get_color(): line.get_marker() for line in ax.get_lines() if line.get_linestyle() != "None"}
    hollow = [(line.get_markeredgecolor(), line.get_marker()) for line in ax.get_lines()
              if line.get_linestyle() == "None" and line.get_markerfacecolor() == "white" and len(line.get_xdata())]
    assert hollow and len(set(drawn.values())) > 1
    for color, marker in hollow:
        assert drawn.get(color) == marker, (color, marker, drawn)


def test_band_is_moved_by_the_median_of_the_rounds_its_quartiles_are_of():
    """01's torch cell at n=4096: rounds 2 and 3 set aside (taken while the host ran slow), so its headline and
    quartiles are round 1's alone (about 2 us); the band had been moved by the median of every round's samples
    (3.4 us) and drawn at 87-92 GB/s around a point at 25. Moved by round 1's own median, it holds the line."""
    import json as _json

    from workbench.report.plots import quartile_band

    r1, r2, r3 = [1.98e-6, 1.99e-6, 2.02e-6], [3.4e-6, 3.42e-6, 3.45e-6], [3.7e-6, 3.73e-6, 3.76e-6]
    row = {"median_s": 1.99e-6, "q1_s": 1.98e-6, "q3_s": 2.02e-6, "samples_s": _json.dumps(r1 + r2 + r3),
           "round_sizes": "[3, 3, 3]", "round_medians_s": _json.dumps([1.99e-6, 3.42e-6, 3.73e-6]),
           "round_host_slowdowns": "[1.0, 1.29, 1.44]"}
    g = pd.DataFrame([row])
    lo, hi = quartile_band(g, "median_s")
    assert lo[0] <= row["median_s"] <= hi[0]
    assert (lo[0], hi[0]) == pytest.approx((1.98e-6, 2.02e-6))   # round 1's quartiles, where they lie
    g["gbps"] = 49152 / g["median_s"] / 1e9
    lo_t, hi_t = quartile_band(g, "gbps")
    assert lo_t[0] <= g["gbps"][0] <= hi_t[0]
