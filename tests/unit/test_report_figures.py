"""Figures and tables that read: budgets, one unit per table, named size axes, legends outside the data,
one style per variant@backend across a report, and no roofline without points and a roof."""

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from workbench.core.units import fmt_in_unit, fmt_tick_time, pick_time_unit
from workbench.report import plots, write_report
from workbench.report.data import ReportData
from workbench.report.model import kernel_sections as kernel_figures
from workbench.report.sample_data import suite_results, synthetic_results
from workbench.report.sizes import choose_x_axis, params_frame
from workbench.report.tables import pivot

#: The issue's targets for the quick-suite report.
MAX_BYTES, MAX_FIGURES = 1_000_000, 40


@pytest.fixture(scope="module")
def suite_html(tmp_path_factory):
    return write_report(suite_results(), None, tmp_path_factory.mktemp("s") / "suite.html").read_text("utf-8")


def test_suite_report_meets_size_and_figure_targets(suite_html):
    size = len(suite_html.encode("utf-8"))
    n_figures = suite_html.count("<svg")
    assert size <= MAX_BYTES, f"{size} bytes"
    assert 15 <= n_figures <= MAX_FIGURES  # every kernel has its figure, and only the informative extras
    assert "data:image/png" not in suite_html  # vector figures
    assert suite_html.count("<table class=\"pivot\">") == 15
    assert "max-height: 520px" not in suite_html  # the 230-row scroll box is gone: all rows are folded
    assert re.search(r"<details><summary>\d+ rows, one per cell</summary>", suite_html)


def test_time_units(suite_html):
    assert pick_time_unit([2e-6, 5e-4, np.nan, None, -1]) == ("µs", 1e-6)
    assert pick_time_unit([3e-9, 1e-3]) == ("ns", 1e-9)
    assert pick_time_unit([0.25, 2.0]) == ("ms", 1e-3)
    assert pick_time_unit([1.5]) == ("s", 1.0) and pick_time_unit([]) == ("s", 1.0)
    assert fmt_in_unit(5e-4, 1e-6) == "500" and fmt_in_unit(2.345e-6, 1e-6) == "2.35"
    assert fmt_in_unit(1.2345e-2, 1e-6) == "12,345" and fmt_in_unit(float("nan"), 1e-6) == ""
    assert fmt_tick_time(2e-5) == "20 µs" and fmt_tick_time(1e-3) == "1 ms" and fmt_tick_time(1.5e-3) == "1.5 ms"
    df = synthetic_results()
    p = pivot(df[df["kernel"] == "saxpy"], ("numpy", "numpy"))
    assert p["unit"] == "µs" and p["columns"][0] == "numpy @ numpy"  # the reference first
    assert "torch_eager @ torch-cuda" not in p["columns"]  # an unsupported pair is never a column
    for row in p["rows"]:
        best = [c for c in row["cells"] if c["best"]]
        assert len(best) == 1
        times = [float(c["text"].replace(",", "")) for c in row["cells"] if c["status"] == "ok"]
        assert float(best[0]["text"].replace(",", "")) == min(times)
    broken = [c for r in p["rows"] for c in r["cells"] if c["status"] == "incorrect"]
    assert broken and broken[0]["text"] == "incorrect"


def test_noise_is_marked_in_pivots():
    df = synthetic_results()
    p = pivot(df[df["kernel"] == "gemm"], ("numpy", "numpy"))
    noisy = [c for r in p["rows"] for c in r["cells"] if c["noisy"]]
    assert len(noisy) == int(df[(df["kernel"] == "gemm") & (df["status"] == "ok")]["noisy"].sum()) >= 1


def test_x_axis_is_a_named_parameter():
    gemm = pd.DataFrame({"params": ['{"m": 64, "n": 64, "k": 64}', '{"m": 128, "n": 128, "k": 128}']})
    assert choose_x_axis(params_frame(gemm)).label == "m = n = k"
    rows = pd.DataFrame({"params": ['{"rows": 256, "cols": 1024}', '{"rows": 512, "cols": 2048}']})
    axis = choose_x_axis(params_frame(rows))
    assert axis.name == "cols" and axis.companions == ["rows"] and not axis.group_by
    grid = pd.DataFrame({"params": [f'{{"rows": {r}, "cols": {c}}}' for r in (1, 2) for c in (4, 8, 16)]})
    axis = choose_x_axis(params_frame(grid))
    assert axis.name == "cols" and axis.group_by == ["rows"]  # one line per rows value


def test_ticks_are_powers_of_two_without_offset():
    df = synthetic_results()
    fig = plots.plot_kernel(df, "saxpy")
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    assert ax.get_xlabel() == "n"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2¹²", "2¹⁶", "2²⁰", "2²²"]
    assert ax.xaxis.get_offset_text().get_text() == "" and ax.yaxis.get_offset_text().get_text() == ""
    assert all(re.fullmatch(r"[\d.]+ (ns|µs|ms|s)", t.get_text()) for t in ax.get_yticklabels() if t.get_text())
    assert fig.texts[0].get_text() == "saxpy" or fig._suptitle.get_text() == "saxpy"  # the title names the kernel
    gemm = plots.plot_kernel(df, "gemm").axes[0]
    assert gemm.get_xlabel() == "m = n = k"


def test_legend_sits_outside_the_data():
    df = synthetic_results()
    for fig in (plots.plot_kernel(df, "saxpy"), plots.plot_metric(df, "time"), plots.plot_memory(df)):
        FigureCanvasAgg(fig).draw()
        renderer = fig.canvas.get_renderer()
        assert len(fig.legends) == 1
        box = fig.legends[0].get_window_extent(renderer)
        for ax in fig.axes:
            assert box.x0 >= ax.get_window_extent(renderer).x1 - 1  # right of every panel


def test_one_style_per_series_across_every_figure():
    df = pd.concat([synthetic_results("r1"), suite_results("r1", n_kernels=3)], ignore_index=True)
    styles = plots.styles_for(df)
    assert len({s.color for s in styles.values()}) == len(styles)  # no two series share a colour
    assert plots.style_map(reversed(list(styles))) == styles  # order-independent
    assert styles["numpy @ numpy"].marker == "o" and styles["portable @ opencl-0"].marker == "D"
    seen: dict[str, set] = {}
    figs = [plots.plot_kernel(df, k, styles=styles) for k in ("saxpy", "kernel00", "kernel01")]
    figs += [plots.plot_memory(df[df["kernel"] == "kernel00"], styles=styles),
             plots.plot_roofline(df[df["kernel"] == "kernel00"], styles=styles),
             plots.plot_metric(df, "time")]  # no styles given: the frame's own map, the same one
    for fig in figs:
        for ax in fig.axes:
            for line in ax.lines:
                label = line.get_label()
                if " @ " in label:
                    seen.setdefault(label.split(" [")[0].split(",")[0], set()).add(line.get_color())
            for coll in ax.collections:
                label = str(coll.get_label())
                if " @ " in label and not label.startswith("above"):
                    seen.setdefault(label, set()).add(tuple(np.round(coll.get_facecolor()[0][:3], 3)))
    assert seen
    from matplotlib.colors import to_rgb

    for label, colours in seen.items():
        rgb = {tuple(np.round(to_rgb(c), 3)) for c in colours}
        assert rgb == {tuple(np.round(to_rgb(styles[label].color), 3))}, label
    assert plots.series_style("x @ numba") == plots.series_style("x @ numba")  # stable without a map


def test_no_empty_roofline():
    df = synthetic_results()
    no_ceilings = df.drop(columns=["ceiling_gbps", "ceiling_gflops", "ceiling_source"])
    assert plots.has_roof(df[df["kernel"] == "gemm"])
    assert not plots.has_roof(no_ceilings[no_ceilings["kernel"] == "gemm"])
    assert not plots.has_roof(df[df["status"] != "ok"])  # no points
    with_roof = kernel_figures(ReportData(df, run_ids=["run-demo"]))
    assert [len(k["figures"]) for k in with_roof] == [1, 2]  # gemm's intensity grows: it has a roofline
    without = kernel_figures(ReportData(no_ceilings, run_ids=["run-demo"]))
    assert [len(k["figures"]) for k in without] == [1, 1]
    assert all("roofline" not in f["caption"] for k in without for f in k["figures"])


def test_memory_plot_only_where_memories_differ():
    df = synthetic_results()
    assert not plots.memories_differ(df)  # both variants report the same footprint
    d = df.copy()
    d.loc[d["variant"] == "numpy", "peak_mem_bytes"] *= 3
    assert plots.memories_differ(d)
    figs = kernel_figures(ReportData(d, run_ids=["run-demo"]))
    assert any("memory" in f["caption"] for k in figs for f in k["figures"])


def test_past_twenty_series_no_figure_shows_one_colour_twice():
    """23 series as the quick suite has (at most 5 per kernel): colours repeat across kernels, never within
    one, and none is a pale tint that vanishes beside the strong ones."""
    from matplotlib.colors import to_rgb

    rows = [{"kernel": f"k{i % 16}", "variant": f"v{i}", "backend": "numpy" if i % 2 else "numba"}
            for i in range(23)]
    rows += [{"kernel": f"k{i}", "variant": "v0", "backend": "numba"} for i in range(16)]  # one series everywhere
    df = pd.DataFrame(rows)
    styles = plots.styles_for(df)
    assert len(styles) == 23
    for _, g in df.groupby("kernel"):
        keys = set(g["variant"] + " @ " + g["backend"])
        assert len({styles[k].color for k in keys}) == len(keys), keys
    assert all(sum(to_rgb(s.color)) < 2.2 for s in styles.values())  # no light grey / light pink


def test_a_kernel_measured_at_one_size_names_that_size_whole_on_its_axis():
    """attention_block at its one quick size: the axis says 'one size' and names every parameter, instead of
    'head_dim' under a lone tick as if head_dim were what varied."""
    one = pd.DataFrame({"params": ['{"batch": 1, "seq": 64, "past": 512, "hidden": 896, "heads": 14, '
                                   '"kv_heads": 2, "head_dim": 64}'] * 3})
    label = choose_x_axis(params_frame(one)).label
    assert label.startswith("one size: batch=1") and label.replace("\n", " ").endswith("head_dim=64")
    assert max(len(line) for line in label.split("\n")) <= 40
    single = pd.DataFrame({"params": ['{"n": 4096}']})
    assert choose_x_axis(params_frame(single)).label == "n"


def test_many_runs_are_pooled_into_one_line_per_series():
    """A series timed in more runs than ``MAX_RUN_LINES`` is one line (the median over runs at each size) with a
    band over the runs' range, and the legend says so: a line per run made 400 lines in a 100-run report."""
    n_runs = plots.MAX_RUN_LINES + 2
    df = pd.concat([synthetic_results(f"run{r}", seed=r) for r in range(n_runs)], ignore_index=True)
    k = df[df["kernel"] == df["kernel"].iloc[0]]
    ok = k[k["status"] == "ok"]
    fig = plots.plot_kernel(k)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    series = ok.groupby(["variant", "backend"]).ngroups
    assert f"median of {n_runs} runs; band: their range" in labels
    assert ax.get_title() == "time per call (median of runs, their range)"
    assert len([lab for lab in labels if "median of" not in lab and "noisy" not in lab]) == series
    line = next(li for li in ax.get_lines() if li.get_label().startswith(str(ok["variant"].iloc[0])))
    x, y = line.get_data()
    first = ok[(ok["variant"] == ok["variant"].iloc[0]) & (ok["backend"] == ok["backend"].iloc[0])]
    at = first[first["params"] == first.sort_values("size")["params"].iloc[0]]
    assert y[0] == pytest.approx(float(np.median(at["median_s"].astype(float))))
    few = pd.concat([synthetic_results(f"run{r}", seed=r) for r in range(2)], ignore_index=True)
    few_fig = plots.plot_kernel(few[few["kernel"] == few["kernel"].iloc[0]])
    few_labels = [li.get_label() for li in few_fig.axes[0].get_lines()]
    assert not any("median of" in lab for lab in few_labels)  # two runs: a line each, as before


def test_many_sizes_get_ticks_spread_along_a_log_axis():
    """Every n-th of 500 sizes 1,024 apart put most ticks at the top of a log axis, their labels on top of each
    other; ticks are now the measured sizes nearest evenly spaced log positions, the first and last among them."""
    sizes = [1024.0 * k for k in range(1, 501)]
    ticks = plots.spread_ticks(sizes, log=True)
    assert ticks[0] == sizes[0] and ticks[-1] == sizes[-1] and len(ticks) <= plots.MAX_TICKS
    assert all(b / a > 1.8 for a, b in zip(ticks, ticks[1:], strict=False))  # apart on the axis
    assert set(ticks) <= set(sizes)
    assert plots.spread_ticks(sizes, log=False) == sizes[::63]  # linear: every n-th, as before
    fig = plots.plot_kernel(pd.DataFrame([{**r, "params": f'{{"n": {int(n)}}}', "size": int(n)} for n in sizes
                                          for r in [synthetic_results().iloc[0].to_dict()]]))
    shown = [t for t in fig.axes[0].get_xticks() if t > 0]
    assert len(shown) <= plots.MAX_TICKS and all(b / a > 1.8 for a, b in zip(shown, shown[1:], strict=False))


def test_the_band_is_scaled_by_the_median_its_quartiles_are_weighted_by():
    """04: quartiles weigh every round the same; the band was scaled by the unweighted median of the pooled
    samples, and a round of many fast samples moved it off its line (a band of 11-65 GFLOP/s under a point
    at 70)."""
    import json

    import numpy as np
    import pandas as pd

    from workbench.judge.stats import round_weighted_quartiles
    from workbench.report.plots.lines import quartile_band

    # a quiet round of 40 samples, two of 4; quartiles within ±50% of the line (a wider spread draws no band: the
    # summary reads it disturbed)
    fast, slow = list(np.linspace(4.0, 4.4, 40)), [5.0] * 4 + [5.6] * 4
    samples, sizes = fast + slow, [40, 4, 4]
    q1, q3 = round_weighted_quartiles(samples, sizes)
    g = pd.DataFrame({"samples_s": [json.dumps(samples)], "round_sizes": [json.dumps(sizes)], "q1_s": [q1],
                      "q3_s": [q3], "median_s": [5.0], "gflops": [10.0]})
    lo, hi = quartile_band(g, "median_s")
    assert lo[0] <= 5.0 <= hi[0]   # the line (the median of the round medians) inside its band
    lo, hi = quartile_band(g, "gflops")
    assert lo[0] <= 10.0 <= hi[0]


def test_a_one_size_axis_prints_no_tick_naming_one_parameter():
    """05: "2¹⁰" (its cols) above "one size: rows=64 cols=1024", as if cols were what varied."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from workbench.report.plots.size_axis import set_size_axis

    one = pd.DataFrame({"params": ['{"rows": 64, "cols": 1024}'] * 2})
    axis = choose_x_axis(params_frame(one))
    fig, ax = plt.subplots()
    set_size_axis(ax, [1024.0], axis)
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == [""]
    plt.close(fig)
