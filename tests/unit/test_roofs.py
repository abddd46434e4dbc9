"""Roofs: one typed set per physical device, the implausibility test, probe refusal, one set for every runtime."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.roofs import peaks
from workbench.roofs import probe as roof_probe
from workbench.roofs.ceilings import headline_pct, peak_note
from workbench.roofs.model import (
    AUTO_PROBE,
    MEASURED,
    PUBLISHED,
    Roof,
    RoofKind,
    RoofSet,
    above_top_roof,
    resolve_roofs,
)
from workbench.store.database import Store

MiB = 2**20


def _cpu(l1: float | None = 200.0, device: str = "cpu") -> RoofSet:
    how = "automatic probe: triad"
    roofs = [Roof(device, RoofKind.DRAM, 10.0, AUTO_PROBE, how),
             Roof(device, RoofKind.L2, 100.0, AUTO_PROBE, how, working_set_bytes=4 * MiB),
             Roof(device, RoofKind.FLOPS, 50.0, AUTO_PROBE, "automatic probe: gemm", "float32")]
    if l1:
        roofs.append(Roof(device, RoofKind.L1, l1, AUTO_PROBE, how, working_set_bytes=96 * 1024))
    return RoofSet(device, roofs)


def test_resolve_roofs_reads_the_store_table_typed_per_environment():
    rows = pd.DataFrame([{"env_id": "e1", "backend": "numpy", "device": "cpu", "dtype": "float32", "status": "ok"},
                         {"env_id": "e1", "backend": "numba", "device": "cpu", "dtype": "float32", "status": "ok"}])
    table = pd.DataFrame([
        {"env_id": "e1", "backend": b, "metric": m, "dtype": d, "value": v, "method": "automatic probe: x",
         "details": '{"device": "CPU Demo", "working_set_bytes": 4194304}'}
        for b in ("numpy", "numba")
        for m, d, v in (("bandwidth_gbps", "float32", 10.0), ("l2_bandwidth_gbps", "float32", 100.0),
                        ("gflops", "float32", 50.0))] +
        [{"env_id": "other", "backend": "numpy", "metric": "gflops", "dtype": "float32", "value": 999.0,
          "method": "", "details": "{}"}])
    roofs = resolve_roofs(rows, table)
    assert set(roofs) == {("e1", "numpy"), ("e1", "numba")}
    rs = roofs[("e1", "numpy")]
    assert rs.device == "CPU Demo" and rs.value(RoofKind.FLOPS, "float32") == 50.0  # not the other machine's
    assert rs.get(RoofKind.L2).working_set_bytes == 4 * MiB and rs.get(RoofKind.DRAM).source == AUTO_PROBE
    assert rs.cache_level_for(1 * MiB).kind is RoofKind.L2 and rs.cache_level_for(64 * MiB) is None
    assert roofs[("e1", "numba")].roofs == rs.roofs  # one device, one roof set


def test_resolve_roofs_falls_back_to_the_rows_then_the_datasheet_and_says_what_is_missing():
    scored = pd.DataFrame([{"env_id": "e", "backend": "numpy", "device": "cpu", "dtype": "float32",
                            "ceiling_gbps": 12.0, "ceiling_gflops": None, "ceiling_source": MEASURED}])
    rs = resolve_roofs(scored)[("e", "numpy")]
    assert rs.value(RoofKind.DRAM) == 12.0 and rs.get(RoofKind.FLOPS, "float32") is None
    missing = rs.for_row("compute-bound", "float32")
    assert not missing.known and "no peak FLOP/s float32 roof" in missing.text() and "None" not in missing.text()
    h100 = pd.DataFrame([{"env_id": "e", "backend": "torch-cuda", "device": "NVIDIA H100 80GB HBM3",
                          "dtype": "float32"}])
    pub = resolve_roofs(h100)[("e", "torch-cuda")]
    assert pub.get(RoofKind.FLOPS, "float32").source == PUBLISHED
    assert resolve_roofs(h100, published=False)[("e", "torch-cuda")].roofs == []


def test_memory_bound_rows_are_scored_against_bandwidth_or_nothing():
    assert _cpu().for_row("memory-bound", "float32").kind is RoofKind.DRAM
    no_bw = RoofSet("cpu", [Roof("cpu", RoofKind.FLOPS, 50.0, AUTO_PROBE, dtype="float32")])
    assert not no_bw.for_row("memory-bound", "float32").known  # never the FLOP/s roof instead
    row = {"bound": "memory-bound", "pct_peak_bw": None, "pct_peak_flops": 40.0}
    assert headline_pct(row) is None


def test_above_top_roof_marks_what_no_cache_explains():
    cpu = _cpu()
    assert above_top_roof({"gbps": 250.0, "gflops": 1.0, "dtype": "float32"}, cpu) is None  # within 1.5x L1
    reason = above_top_roof({"gbps": 400.0, "gflops": 1.0, "dtype": "float32"}, cpu)
    assert reason.startswith("implausible") and "L1 bandwidth roof" in reason and "2.0x" in reason
    assert "fits in" not in reason  # never explained away by a cache
    flops = above_top_roof({"gbps": 1.0, "gflops": 80.0, "dtype": "float32"}, cpu)
    assert flops.startswith("implausible") and "peak FLOP/s roof" in flops
    assert above_top_roof({"gbps": 1.0, "gflops": 80.0, "dtype": "float64"}, cpu) is None  # no float64 peak
    assert above_top_roof({"gbps": 1e6, "dtype": "float32"}, _cpu(l1=None)) is None  # no top roof: cannot tell
    assert above_top_roof({"gbps": 1e6}, None) is None


def test_notes_above_dram_need_a_measured_cache_roof():
    cpu = _cpu()
    within = peak_note(500.0, None, 1 * MiB, 32 * MiB, AUTO_PROBE, roofs=cpu)  # 50 GB/s from 1 MiB: in L2
    assert "fits in the L2 cache" in within and "stays under" in within
    unmeasured = peak_note(500.0, None, 1 * MiB, 32 * MiB, AUTO_PROBE)
    assert "no cache bandwidth ceiling was measured, so that explains nothing" in unmeasured
    top = peak_note(4000.0, None, 1 * MiB, 32 * MiB, AUTO_PROBE, roofs=cpu,
                    row={"gbps": 400.0, "gflops": 0.0, "dtype": "float32"})
    assert top.startswith("implausible")


def _figure(best: float, median: float) -> roof_probe.Figure:
    return roof_probe.Figure(best, median)


def test_an_unstable_probe_is_measured_again_then_refused():
    calls = []

    def unstable():
        calls.append(1)
        return _figure(100.0, 20.0), "triad"

    roof = roof_probe._measured("cpu", RoofKind.DRAM, unstable)
    assert len(calls) == 2 and not roof.known and roof.missing.startswith("probe refused: unstable")
    assert "None" not in roof.text()
    answers = iter([(_figure(100.0, 20.0), "triad"), (_figure(30.0, 29.0), "triad")])
    again = roof_probe._measured("cpu", RoofKind.DRAM, lambda: next(answers))
    assert again.value == 30.0 and "measured twice" in again.method


def test_a_probe_far_below_the_roof_it_must_exceed_is_refused():
    low = roof_probe._measured("cpu", RoofKind.L2, lambda: (_figure(4.0, 4.0), "triad"), floor=10.0)
    assert not low.known and "far below" in low.missing
    ok = roof_probe._measured("cpu", RoofKind.L2, lambda: (_figure(40.0, 39.0), "triad"), floor=10.0)
    assert ok.value == 40.0


def test_cache_sizes_come_from_the_os_never_a_constant(tmp_path):
    for i, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"),
                                             (3, "Unified", "260M")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        for name, text in (("level", str(level)), ("type", kind), ("size", size)):
            (d / name).write_text(text + "\n")
    c = roof_probe.cache_sizes(tmp_path)
    assert (c.l1d, c.l2, c.llc) == (48 * 2**10, 2 * MiB, 260 * MiB)


def test_every_cpu_runtime_shares_one_probe_and_one_roof_set(tmp_path, monkeypatch):
    pytest.importorskip("numba")  # a second CPU runtime to share the roofs with
    monkeypatch.setenv(peaks.ENV_CEILINGS_CACHE, str(tmp_path / "ceilings.json"))
    monkeypatch.delenv(peaks.ENV_AUTO_PEAKS, raising=False)
    monkeypatch.setattr(peaks, "_probed", {})
    monkeypatch.setattr(peaks, "_cpu_probed", {})
    probed = []

    def fake_probe(device):
        probed.append(device)
        return _cpu(device=device)

    monkeypatch.setattr(peaks, "probe_cpu", fake_probe)
    store = Store(tmp_path / "s.sqlite")
    a = peaks.ensure_ceilings(store, "env", "numpy")
    b = peaks.ensure_ceilings(store, "env", "numba")
    assert len(probed) == 1 and probed[0].startswith("CPU ")
    assert dict(a) == dict(b) and a[("bandwidth_gbps", "float32")] == 10.0
    assert b.roof_set.value(RoofKind.L1) == 200.0 and b.roof_set.device == probed[0]
    assert set(b.sources.values()) == {AUTO_PROBE}
    stored = store.peaks("env")
    assert set(stored["backend"]) == {"numpy", "numba"}
    assert (stored.groupby("metric")["value"].nunique() == 1).all()  # the same roofs, copied


def test_the_roofline_draws_one_roof_per_device_with_its_measured_cache_slopes():
    from workbench.report import plots
    from workbench.report.sample_data import synthetic_results

    df = synthetic_results()
    df = df[df["kernel"] == "gemm"]
    table = pd.DataFrame([
        {"env_id": "env-demo", "backend": b, "metric": m, "dtype": "float32", "value": v,
         "method": "automatic probe: x", "details": '{"device": "CPU Demo"}'}
        for b in ("numpy", "numba")
        for m, v in (("bandwidth_gbps", 20.0), ("l1_bandwidth_gbps", 200.0), ("gflops", 100.0))])
    ax = plots.plot_roofline(df, table).axes[0]
    labels = [ln.get_label() for ln in ax.lines if ln.get_linestyle() != "None"]  # roofs, not noisy-cell rings
    # the solid line's slope and top are named with their figures, as the dashed cache slopes are
    # and say what they are: the flat top a GEMM library's rate, the dashed slopes cache levels (04's readers)
    assert labels == ["CPU Demo (2 runtimes) roof (probed): DRAM 20 GB/s, 100 GFLOP/s (a GEMM library's measured rate)",
                      "dashed: a cache level's bandwidth, L1 200 GB/s"]


def test_a_probe_process_that_fails_leaves_every_roof_missing_with_why():
    rs = roof_probe.probe_cpu("CPU test", timeout_s=0.01)  # no interpreter starts that fast
    assert rs.roofs and all(not r.known and r.missing.startswith("probe process failed") for r in rs.roofs)
    assert {r.kind for r in rs.roofs} == set(RoofKind)


def test_a_working_set_in_a_measured_cache_is_scored_against_that_level():
    from workbench.report.row_notes import row_notes
    from workbench.roofs.throughput import Ceilings, rates

    c = Ceilings({("bandwidth_gbps", "float32"): 10.0}, {("bandwidth_gbps", "float32"): AUTO_PROBE})
    c.roof_set = _cpu()
    in_l2 = rates(0.0, 1 * MiB, 1 * MiB / 50e9, "float32", c)  # 50 GB/s from 1 MiB: the L2 roof is 100
    assert in_l2["ceiling_gbps"] == 100.0 and in_l2["pct_peak_bw"] == pytest.approx(50) and not in_l2["peak_note"]
    dram = rates(0.0, 64 * MiB, 64 * MiB / 5e9, "float32", c)  # 64 MiB: only DRAM holds it
    assert dram["ceiling_gbps"] == 10.0 and dram["pct_peak_bw"] == pytest.approx(50)
    hot = rates(0.0, 1 * MiB, 1 * MiB / 150e9, "float32", c)  # above L2, within 1.5x L1: not implausible
    assert hot["peak_note"].startswith("150% of the measured (automatic probe) L2 bandwidth ceiling")
    row = pd.DataFrame([{**in_l2, "status": "ok", "bound": "memory-bound", "backend": "numpy", "env_id": "e",
                         "dtype": "float32", "device": "cpu", "ceiling_source": AUTO_PROBE}])
    notes = row_notes(row, roofs={("e", "numpy"): _cpu()})
    assert notes["ceiling"].iloc[0] == "100 GB/s (probe, L2)" and notes["pct"].iloc[0] == pytest.approx(50)


@pytest.mark.extras  # checks more where an optional runtime is installed: runs in both venvs
def test_every_cpu_runtime_here_names_the_same_physical_device():
    from workbench.backends import registry

    cpu = {}
    for name in registry.available_backends():
        backend = registry.get(name)
        if backend.device_info().kind == "cpu":  # numpy, numba, torch-cpu, PoCL, lavapipe, triton-interp
            cpu[name] = peaks.physical_device(backend)
    assert "numpy" in cpu and len(set(cpu.values())) == 1, cpu
    assert cpu["numpy"][1] and cpu["numpy"][0].startswith("CPU ")


def test_the_report_lists_one_roof_set_per_device_and_scores_rows_by_it(tmp_path):
    from workbench.report.model import build_report
    from workbench.report.sample_data import synthetic_results

    df = synthetic_results(with_failures=False)
    table = pd.DataFrame([
        {"env_id": "env-demo", "backend": b, "metric": m, "dtype": "float32", "value": v,
         "method": "automatic probe: x", "details": '{"device": "CPU Demo", "working_set_bytes": 4194304}'}
        for b in ("numpy", "numba")
        for m, v in (("bandwidth_gbps", 20.0), ("l2_bandwidth_gbps", 100.0), ("gflops", 100.0))])
    from workbench.report.data import ReportData

    report = build_report(ReportData(df, peaks=table, run_ids=["run-demo"]), figures=False)
    assert [d for d, _ in report.device_roofs] == ["CPU Demo"]
    assert report.device_roofs[0][1][0].startswith("DRAM bandwidth 20 GB/s")


def test_float32_with_tf32_allowed_is_bounded_by_the_tf32_rate_and_dgemm_by_the_fp64_tensor_cores():
    """A float32 GEMM run with TF32 allowed reaches the tensor cores' TF32 rate; an H200's DGEMM reached 60
    TFLOP/s on its FP64 tensor cores. Neither is impossible speed; twice the TF32 datasheet rate is."""
    from workbench.measure.audit import implausible_reason
    from workbench.roofs.model import MEASURED, Roof, RoofKind, RoofSet

    roofs = RoofSet("NVIDIA H200", [Roof("NVIDIA H200", RoofKind.DRAM, 4000.0, MEASURED, "saxpy"),
                                    Roof("NVIDIA H200", RoofKind.FLOPS, 51e3, MEASURED, "gemm", "float32")])
    row = {"dtype": "float32", "gflops": 400e3, "gbps": 100.0, "ceiling_gflops": 51e3, "ceiling_gbps": 4000.0}
    assert "implausible" in (implausible_reason(row, roofs) or "")
    tf32 = {**row, "precision": '{"torch_matmul_allow_tf32": true}'}
    assert implausible_reason(tf32, roofs) is None
    assert "implausible" in (implausible_reason({**tf32, "gflops": 1000e3}, roofs) or "")
    unknown = RoofSet("Some GPU", roofs.roofs)  # no TF32 figure: nobody can call it impossible
    assert implausible_reason({**tf32, "gflops": 1000e3}, unknown) is None
    published = resolve_roofs(pd.DataFrame([{"env_id": "e", "backend": "cupy", "device": "NVIDIA H200",
                                             "dtype": "float64"}]), pd.DataFrame())
    dgemm = {"dtype": "float64", "gflops": 60e3, "gbps": 10.0}
    assert implausible_reason(dgemm, next(iter(published.values()))) is None


def test_a_probed_flop_roof_is_a_lower_bound_a_measured_one_is_not():
    """numba's tiled GEMM ran 1.1-1.2x a 128 GFLOP/s automatic probe on a 2-core AVX-512 EPYC and was refused
    as implausible: the probe is a few short BLAS calls, a lower bound of the cores' peak, not the peak."""
    probed = _cpu()  # its float32 FLOP roof, 50 GFLOP/s, from the automatic probe
    assert above_top_roof({"gbps": 1.0, "gflops": 60.0, "dtype": "float32"}, probed) is None
    assert above_top_roof({"gbps": 1.0, "gflops": 80.0, "dtype": "float32"}, probed).startswith("implausible")
    measured = RoofSet("cpu", [Roof("cpu", RoofKind.FLOPS, 50.0, MEASURED, "workbench peaks: gemm", "float32")])
    assert above_top_roof({"gbps": 1.0, "gflops": 60.0, "dtype": "float32"}, measured).startswith("implausible")


def test_the_flops_roof_is_labelled_a_ceiling_not_a_peak():
    # the FLOP/s roof is a measured ceiling (often the BLAS library's rate from a short probe): 04's flops_roof
    # column read "peak 105 GFLOP/s" beside text saying that figure is not the hardware's peak
    from workbench.roofs.model import RoofKind

    assert RoofKind.FLOPS.short == "ceiling"
    assert [k.short for k in (RoofKind.DRAM, RoofKind.L2)] == ["DRAM", "L2"]
