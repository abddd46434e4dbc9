"""workbench.benchmark end to end on the numpy backend, and Results built from stored rows."""

import json

import pytest
from matplotlib.figure import Figure

import workbench
from workbench.api import Results
from workbench.report.sample_data import synthetic_results
from workbench.store.database import Store


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("api") / "store.sqlite"
    return workbench.benchmark(kernel="saxpy", backends=["numpy"], sizes=[4099, 65536], budget_s=0.05,
                               store=str(path), progress=False)


def test_benchmark_saxpy_numpy(results):
    df = results.df
    assert results.run_id and list(df["run_id"].unique()) == [results.run_id]
    assert set(df["kernel"]) == {"saxpy"} and set(df["backend"]) == {"numpy"}
    assert sorted(df["size"]) == [4099, 65536]
    assert (df["status"] == "ok").all(), df[["variant", "status", "message"]]
    assert (df["median_s"] > 0).all() and (df["gbps"] > 0).all()
    assert all(len(json.loads(s)) == n for s, n in zip(df["samples_s"], df["n_samples"], strict=True))
    assert not results.interrupted and results.wall_s > 0
    assert isinstance(results.store, Store)


def test_results_tables_and_plots(results):
    summary = results.summary()
    assert len(summary) == len(results.df) and set(summary["status"]) == {"ok"}
    sp = results.speedup()
    assert set(sp.loc[sp["variant"] == "numpy", "verdict"]) == {"baseline"}
    for kind in ("line", "speedup", "roofline", "memory"):
        assert isinstance(results.plot("gbps", kind=kind), Figure)
    assert isinstance(results.plot("time"), Figure)
    with pytest.raises(ValueError, match="roofline"):
        results.plot(kind="pie")
    assert "saxpy" in results._repr_html_() and results.run_id in repr(results)


def test_results_exports_and_from_store(results, tmp_path):
    for fn, ext in (("to_html", "html"), ("to_markdown", "md"), ("to_csv", "csv"), ("to_json", "json")):
        path = getattr(results, fn)(tmp_path / f"out.{ext}")
        assert path.stat().st_size > 0
    again = Results.from_store(results.store.path, "latest")
    assert again.run_id == results.run_id and len(again) == len(results)
    fresh = Store(tmp_path / "fresh.sqlite")
    assert fresh.import_file(tmp_path / "out.json")["results"] == len(results)
    assert Results.from_store(fresh, [results.run_id]).df["cell_key"].tolist() == results.df["cell_key"].tolist()


def test_benchmark_rounds(tmp_path):
    res = workbench.benchmark(kernel="saxpy", variants=["numpy"], backends=["numpy"], sizes=[4099], budget_s=0.03,
                              rounds=2, store=str(tmp_path / "s.sqlite"), progress=False)
    row = res.df.iloc[0]
    assert row["status"] == "ok" and row["rounds"] == 2 and len(json.loads(row["round_medians_s"])) == 2
    assert res.store.run(res.run_id)["spec"]["rounds"] == 2


def test_benchmark_needs_a_kernel():
    with pytest.raises(ValueError, match="saxpy"):
        workbench.benchmark()


def test_results_from_rows_without_store(tmp_path):
    r = Results(synthetic_results("r1"))
    assert r.run_id == "r1" and r.store is None
    text = r.to_html(tmp_path / "x.html").read_text()
    assert "<svg" in text
    assert r.failures()["status"].tolist() == ["incorrect", "unsupported"]
    with pytest.raises(ValueError, match="nope"):
        Results.from_store(Store(tmp_path / "s.sqlite"), ["nope"])
