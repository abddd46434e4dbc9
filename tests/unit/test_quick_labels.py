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


def _legend_texts(fig) -> list[str]:
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend() is not None]
    return [t.get_text() for leg in legends for t in leg.get_texts()]


def test_each_callable_is_labelled_with_the_runtime_its_code_runs_on(run):
    numba = pytest.importorskip("numba")
    torch = pytest.importorskip("torch")

    @numba.njit
    def nb_double(x):
        return x * 2.0

    def torch_double(x):  # torch code given numpy arrays: the comparison's backend stays numpy
        return (torch.from_numpy(x) * 2.0).numpy()

    res = run({"np": lambda x: x * 2.0, "nb": nb_double, "th": torch_double}, lambda n: np.random.rand(n), [256])
    assert dict(zip(res.df["variant"], res.df["runtime"], strict=True)) == {"np": "numpy", "nb": "numba",
                                                                              "th": "torch"}
    assert set(res.df["backend"]) == {"numpy"} and set(res.df["status"]) == {"ok"}
    labels = _legend_texts(res.plot())
    assert "nb (numba, numpy inputs)" in labels and "th (torch, numpy inputs)" in labels and "np @ numpy" in labels
    assert not [s for s in labels if "nb @ numpy" in s or "th @ numpy" in s]
    speedup = _legend_texts(res.plot("speedup"))
    assert "nb (numba, numpy inputs) vs np @ numpy" in speedup
    table = res.summary().set_index("variant")  # the summary's backend column says the same
    assert table.loc["nb", "backend"] == "numpy (numba code)" and table.loc["th", "backend"] == "numpy (torch code)"
    assert table.loc["np", "backend"] == "numpy"


def test_runtimes_names_what_reading_the_callable_cannot(run):
    res = run({"a": np.sort, "b": lambda x: np.sort(x)}, lambda n: np.random.rand(n), [64],
              runtimes={"b": "my-extension"})
    assert dict(zip(res.df["variant"], res.df["runtime"], strict=True)) == {"a": "numpy", "b": "my-extension"}
    with pytest.raises(ValueError, match=r"runtimes= names 'c'.*valid: 'a', 'b'"):
        run({"a": np.sort, "b": np.sort}, lambda n: np.random.rand(n), [64], runtimes={"c": "numba"})
    with pytest.raises(ValueError, match="non-empty names"):
        run({"a": np.sort}, lambda n: np.random.rand(n), [64], runtimes={"a": ""})


def test_callable_runtime_reads_the_callable_without_calling_it():
    import functools

    from workbench.adhoc.devices import callable_runtime

    def plain(x):
        return [v for v in x]

    assert callable_runtime(np.add) == "numpy" and callable_runtime(lambda x: np.sort(x)) == "numpy"
    assert callable_runtime(plain) is None
    numba = pytest.importorskip("numba")
    jitted = numba.njit(lambda x: x)
    assert callable_runtime(jitted) == "numba" and callable_runtime(functools.partial(jitted)) == "numba"
    assert callable_runtime(lambda x: jitted(x) + np.ones(1)) == "numba"  # calls numba code (and numpy)
    torch = pytest.importorskip("torch")
    assert callable_runtime(torch.tanh) == "torch" and callable_runtime(torch.nn.Linear(2, 2)) == "torch"
    assert callable_runtime(lambda x: torch.tanh(torch.from_numpy(x)).numpy()) == "torch"


def test_a_series_is_renamed_only_where_its_runtime_is_not_its_backends():
    from workbench.report.styles import series_name, styles_for

    assert series_name("wgsl", "vulkan", "wgpu") == "wgsl @ vulkan"  # the vulkan backend's runtime is wgpu
    assert series_name("k", "opencl-7", "opencl") == "k @ opencl-7"  # a device this install does not list
    assert series_name("k", "torch-cpu", "torch") == "k @ torch-cpu"
    assert series_name("k", "numpy", None) == "k @ numpy" and series_name("k", "numpy", float("nan")) == "k @ numpy"
    assert series_name("nb", "numpy", "numba") == "nb (numba, numpy inputs)"
    import pandas as pd

    styles = styles_for(pd.DataFrame({"variant": ["a", "nb"], "backend": ["numpy", "numpy"],
                                      "runtime": ["numpy", "numba"]}))
    assert styles["a @ numpy"].label is None and styles["nb @ numpy"].label == "nb (numba, numpy inputs)"
    assert styles["a @ numpy"].color != styles["nb @ numpy"].color
