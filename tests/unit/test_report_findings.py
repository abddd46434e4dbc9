"""Key findings: fastest per kernel and size against ONE reference, with the verdict of stats_compare,
the % of ceiling the rows carry, and every caveat that applies."""

import json

import pandas as pd
import pytest

from workbench.judge.compare import speedup_vs_baseline
from workbench.report import write_report
from workbench.report.caveats import is_pocl, report_caveats
from workbench.report.findings import key_findings, pick_reference, size_classes
from workbench.report.sample_data import synthetic_results
from workbench.store.database import Store


@pytest.fixture(scope="module")
def df():
    return synthetic_results("run-a", seed=3)


def _finding(kf, kernel, size):
    return next(f for f in kf.findings if f.kernel == kernel and f.size == size)


def test_fastest_speedup_and_verdict_come_from_stats_compare(df):
    kf = key_findings(df)
    assert [(f.kernel, f.size_class) for f in kf.findings] == [
        ("saxpy", "small"), ("saxpy", "medium"), ("saxpy", "large"),
        ("gemm", "small"), ("gemm", "medium"), ("gemm", "large")]
    big = _finding(kf, "saxpy", "n=4194304")
    assert big.fastest == "numba_parallel @ numba" and big.reference == "numpy @ numpy"
    ok = df[(df["kernel"] == "saxpy") & (df["status"] == "ok")]
    want = speedup_vs_baseline(ok, baseline_variant="numpy", baseline_backend="numpy")
    row = want[(want["variant"] == "numba_parallel") & (want["size_label"] == "n=4194304")].iloc[0]
    assert big.speedup == pytest.approx(row["speedup"]) and big.verdict == row["verdict"] == "faster"
    assert big.ci == (pytest.approx(row["ci_low"]), pytest.approx(row["ci_high"]))
    # one stream a side: an interval wider than ±50% cannot inform, so only its settled bound is printed
    assert row["floor"] > 0.5 and big.disturbed and big.ci_text == "" and big.floor_text == ""
    assert big.speedup_text == f"≥{row['ci_low']:.3g}×" and big.verdict_shown == "faster, disturbed"
    assert "disturbed" in big.settle and "--rounds" in big.settle
    cell = ok[(ok["variant"] == "numba_parallel") & (ok["size_label"] == "n=4194304")].iloc[0]
    assert big.pct == pytest.approx(cell["pct_peak_bw"])  # memory-bound: % of the GB/s ceiling
    gemm = _finding(kf, "gemm", "m=256 n=256 k=256")
    assert gemm.fastest == "numpy @ numpy" and gemm.verdict == "reference" and gemm.speedup is None
    assert gemm.pct == pytest.approx(df[(df["variant"] == "numpy") & (df["size_label"] == "m=256 n=256 k=256")]
                                     ["pct_peak_flops"].iloc[0])  # compute-bound: % of the GFLOP/s ceiling


def test_size_classes_name_at_most_three_measured_sizes(df):
    saxpy = df[df["kernel"] == "saxpy"]
    classes = size_classes(saxpy)
    assert [c for c, _ in classes] == ["small", "medium", "large"]  # four sizes: smallest, middle, largest
    assert classes[0][1] == '{"n": 4096}' and classes[-1][1] == '{"n": 4194304}'
    assert [c for c, _ in size_classes(df[df["kernel"] == "gemm"])] == ["small", "medium", "large"]


def test_one_reference_for_the_whole_report_and_configurable(df):
    torchy = df.copy()
    extra = torchy[(torchy["kernel"] == "saxpy") & (torchy["variant"] == "numpy")].copy()
    extra["variant"], extra["backend"], extra["library"] = "torch", "torch-cpu", True  # torch's library call
    extra["median_s"] = extra["median_s"] * 0.5
    both = pd.concat([torchy, extra], ignore_index=True)
    # default: numpy's library variant, even for a torch row that has a torch library call beside it
    assert pick_reference(both[(both["kernel"] == "saxpy") & (both["status"] == "ok")], None, "numpy") == (
        "numpy", "numpy")
    kf = key_findings(both)
    assert {f.reference for f in kf.findings if f.kernel == "saxpy"} == {"numpy @ numpy"}
    chosen = key_findings(df, "numba_parallel@numba")
    assert chosen.reference == "numba_parallel @ numba"
    assert all(f.verdict == "reference did not run this kernel" for f in chosen.findings if f.kernel == "gemm")
    slow = _finding(chosen, "saxpy", "n=4194304")
    assert slow.verdict == "reference"  # the chosen reference is itself the fastest


def test_caveats_noise_failures_pocl_and_unfinished_runs(df):
    d = df.copy()
    big = (d["kernel"] == "saxpy") & (d["size_label"] == "n=4194304")
    d.loc[big & (d["variant"] == "numba_parallel"), ["noisy", "noise_note"]] = [True, "spread 40% across 3 rounds"]
    crash = d[big & (d["variant"] == "numpy")].copy()
    crash["variant"], crash["status"], crash["message"] = "numba_bad", "crashed", "worker killed by SIGSEGV"
    timeout = crash.copy()
    timeout["variant"], timeout["status"], timeout["message"] = "numba_slow", "timeout", "over 10 s"
    pocl = d[(d["kernel"] == "gemm") & (d["variant"] == "numpy")].copy()
    pocl["variant"], pocl["backend"], pocl["runtime"], pocl["device"] = "portable", "opencl-0", "opencl", \
        "pthread-skylake-avx512-AMD EPYC"
    pocl["median_s"] = pocl["median_s"] / 10  # the fastest: its caveat must say it is a CPU stand-in
    # its samples too: the fastest is named by the paired speed-up over the reference, which reads the samples
    pocl["samples_s"] = [json.dumps([t / 10 for t in json.loads(x)]) for x in pocl["samples_s"]]
    d = pd.concat([d, crash, timeout, pocl], ignore_index=True)
    runs = pd.DataFrame([{"run_id": "run-a", "status": "interrupted", "name": "nightly"}])
    kf = key_findings(d, runs=runs, run_names={"run-a": "nightly"})
    f = _finding(kf, "saxpy", "n=4194304")
    texts = [c["text"] for c in f.caveats]
    assert "~ noisy" in texts and any("spread 40%" in c["detail"] for c in f.caveats)
    assert "did not run: numba_bad @ numpy: crashed (worker killed by SIGSEGV)" in texts
    assert "did not run: numba_slow @ numpy: timeout" in texts
    g = _finding(kf, "gemm", "m=128 n=128 k=128")
    assert g.fastest == "portable @ opencl-0" and any("PoCL" in c["text"] for c in g.caveats)
    text = " ".join(kf.caveats)
    assert "Run nightly was cancelled or interrupted" in text
    assert "1 crashed, 1 timeout" in text and "opencl-0: OpenCL on PoCL" in text
    assert "measured cells are noisy" in text
    assert report_caveats(df[df["status"] == "ok"].assign(noisy=False)) == []


def test_pocl_from_the_environment_record():
    row = {"backend": "opencl-1", "device": "Some device", "env_id": "e"}
    envs = {"e": {"backends": [{"name": "opencl-1", "device": {"extra": {"platform": "Portable Computing Language"}}}]}}
    assert is_pocl(row, envs) and not is_pocl(row, {}) and not is_pocl({"backend": "numpy"}, envs)


def test_html_opens_with_key_findings_then_contents(df, tmp_path):
    text = write_report(df, None, tmp_path / "r.html").read_text(encoding="utf-8")
    h2 = [text.index(s) for s in ('id="key-findings"', 'id="contents"', 'id="summary"', 'id="plots"')]
    assert h2 == sorted(h2) and ">Key findings</h2>" in text
    head = text[text.index('id="key-findings"'):text.index('id="contents"')]
    assert "numba_parallel @ numba" in head and "numpy @ numpy" in head and "faster" in head
    assert "1 of 14 measured cells are noisy" in head  # the noisy gemm cell of the sample data
    assert "<table class=\"pivot\">" in text and "Times in µs" in text


def test_merged_report_has_a_run_column_and_run_names(tmp_path):
    from workbench.report.sample_data import synthetic_environment

    s = Store(tmp_path / "s.sqlite")
    ids = []
    for i, (host, slow) in enumerate((("alpha", 1.0), ("beta", 2.0))):
        env = synthetic_environment(f"env-{host}")
        env["host"]["hostname"] = host
        rid = s.new_run(name="nightly", env_id=f"env-{host}")
        s.add_environment(f"env-{host}", env)
        for row in synthetic_results(rid, seed=i, slowdown=slow, env_id=f"env-{host}").to_dict("records"):
            s.record(row)
        s.set_run_status(rid, "finished", wall_s=3.0)
        ids.append(rid)
    text = write_report(s, ids, tmp_path / "m.html").read_text(encoding="utf-8")
    head = text[text.index('id="key-findings"'):text.index('id="contents"')]
    assert "<th>run</th>" in head and "nightly on alpha" in head and "nightly on beta" in head
    figs = text[text.index('id="plots"'):text.index('id="failures"')]
    assert "nightly on alpha" in figs and ids[0] not in figs  # legends name runs, never their ids


def test_markdown_has_findings_and_pivots(df, tmp_path):
    md = write_report(df, None, tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.index("## Key findings") < md.index("## Summary") < md.index("## Per kernel") < md.index("## Results")
    assert "| numba_parallel @ numba |" in md and "Times in µs" in md and "**" in md


def test_lavapipe_rows_are_marked_correctness_results():
    from workbench.report.caveats import LAVAPIPE_NOTE, is_lavapipe, row_caveats

    row = {"backend": "vulkan", "runtime": "wgpu", "device": "llvmpipe (LLVM 15.0.6, 256 bits)", "status": "ok"}
    assert is_lavapipe(row) and not is_lavapipe({**row, "device": "NVIDIA H100"})
    assert not is_lavapipe({"backend": "numpy", "device": "llvmpipe"})
    envs = {"e": {"backends": [{"name": "vulkan", "device": {"name": "x", "extra": {"lavapipe": True}}}]}}
    assert is_lavapipe({**row, "device": "x", "env_id": "e"}, envs)
    assert any(c.get("detail") == LAVAPIPE_NOTE or LAVAPIPE_NOTE in str(c) for c in row_caveats(row))


def test_a_fastest_variant_that_failed_at_other_sizes_says_so(df):
    """A variant that timed out at every size but the largest is named fastest there with the failures beside
    it, never alone."""
    saxpy = df[df["kernel"] == "saxpy"].copy()
    big = saxpy["size_label"] == "n=4194304"
    winner = (saxpy["variant"] == "numba_parallel") & saxpy["status"].eq("ok")
    saxpy.loc[winner & ~big, "status"] = "timeout"
    kf = key_findings(saxpy)
    f = _finding(kf, "saxpy", "n=4194304")
    assert f.fastest == "numba_parallel @ numba"
    n_sizes = saxpy.loc[winner, "params"].nunique()
    flag = [c for c in f.caveats if c["text"].startswith("⚠ failed at")]
    assert flag and flag[0]["text"] == f"⚠ failed at {n_sizes - 1} of {n_sizes} sizes", f.caveats
    assert "n=4096: timeout" in flag[0]["detail"]
    untouched = _finding(key_findings(df[df["kernel"] == "saxpy"]), "saxpy", "n=4194304")
    assert not [c for c in untouched.caveats if c["text"].startswith("⚠ failed at")]


def test_the_paired_speedup_names_the_fastest_not_a_median_beside_it(df):
    """Issue 39: "torch fastest (1,877 vs 2,899 µs)" beside "0.816× inconclusive": one statistic names the
    fastest and gives its ratio. A cell whose median alone reads fastest (one stream's median moved, its
    samples not) is not named over the cell the paired speed-up puts first."""
    d = df.copy()
    fake = d[(d["kernel"] == "gemm") & (d["variant"] == "naive")].copy()
    fake["variant"] = "median_only"
    fake["median_s"] = fake["median_s"] / 1000  # the median reads fastest; its samples are naive's (slower)
    kf = key_findings(pd.concat([d, fake], ignore_index=True))
    g = _finding(kf, "gemm", "m=256 n=256 k=256")
    assert g.fastest == "numpy @ numpy" and g.verdict == "reference"
    # the reference's margin over the runner-up, in the same paired speed-up
    assert g.runner_up.startswith("runner-up ") and "(slower" in g.runner_up


def test_a_kernel_the_default_reference_did_not_run_is_judged_against_its_own_library_variant(df):
    """Issue 39: gemm_fp8 said "reference did not run this kernel" while its table compared against torch."""
    d = df[df["kernel"] == "gemm"].copy()
    d["backend"] = d["backend"].replace({"numpy": "torch-cpu", "numba": "torch-cpu"})
    kf = key_findings(d)
    assert {f.reference for f in kf.findings} == {"numpy @ torch-cpu"}
    assert not any("did not run" in f.verdict for f in kf.findings)
    chosen = key_findings(d, "numpy@numpy")  # a reference chosen by name has no stand-in
    assert all(f.verdict == "reference did not run this kernel" for f in chosen.findings)
