"""Tutorial 05's stream-rate shares: a round is set against its own dipped probe only where the cell felt the dip."""

import json
from typing import Any

import pytest

from tests.unit.test_tutorial_10_11_sentences import helpers


@pytest.fixture(scope="module")
def nb05() -> dict[str, Any]:
    return helpers("05_memory_bound_fusion")


def row(medians_ms: list[float], probes: list[float], mode: str = "fused") -> dict[str, Any]:
    nbytes = 62 * 2**20
    return {"bytes": nbytes, "gbps": nbytes / (sorted(medians_ms)[1] / 1e3) / 1e9, "mode": mode,
            "round_medians_s": json.dumps([m / 1e3 for m in medians_ms]), "round_bandwidth_gbs": json.dumps(probes),
            "variant": "numba-fused", "backend": "numba"}


def test_a_dip_the_cell_did_not_feel_is_set_against_the_stream_rate(nb05):
    # 05's readers: rounds 3-4 at 39.1/35.5 and 40.0/35.1 GB/s made 'above 100%' from a probe that dipped while the
    # cell did not slow; those rounds are set against the run's best probe
    r = row([1.74, 1.51, 1.66, 1.62], [42.5, 42.9, 35.5, 35.1])
    rounds = nb05["felt_rounds"](r, 42.9)
    assert [d for _, d, _, _ in rounds] == [42.9] * 4
    assert nb05["share_of"](r, 42.9) < 1.0


def test_a_dip_the_cell_felt_is_set_against_its_own_probe(nb05):
    r = row([1.6, 1.6, 2.4], [40.0, 40.0, 20.0])   # round 3: probe at half, the cell 1.5x slower
    rounds = nb05["felt_rounds"](r, 40.0)
    assert [d for _, d, _, _ in rounds] == [40.0, 40.0, 20.0] and rounds[2][3] == pytest.approx(1.5)


def test_the_unfused_extra_pass_is_the_kernels_own(nb05):
    assert "5 passes over the array to the fused kernel's 4" in nb05["extra_pass"]("rmsnorm_residual")
    assert "reads residual_out" in nb05["extra_pass"]("rmsnorm_residual")
    assert "writes x + bias and reads it back" in nb05["extra_pass"]("bias_gelu")


def test_cache_against_dram_is_said_in_the_direction_the_figures_show(nb05):
    # 05's readers: "at most 20% faster ... in cache (27.9 GB/s)" beside 28.9 GB/s from DRAM
    assert nb05["cache_vs_dram"](27.9, 28.9) == "slower"
    assert nb05["cache_vs_dram"](30.0, 28.0) == "only 7% faster"
    assert nb05["cache_vs_dram"](28.92, 28.9) == "no faster"


def verdict(speedup: float, lo: float, hi: float, floor: float, **extra: Any) -> dict[str, Any]:
    return {"verdict": "faster" if lo > 1 else "slower" if hi < 1 else "inconclusive", "speedup": speedup,
            "ci_low": lo, "ci_high": hi, "floor": floor, "kernel": "rmsnorm_residual", **extra}


@pytest.mark.parametrize(("v", "bucket"), [
    (verdict(1.10, 1.04, 1.17, 0.06), "part"),       # excludes the 1.25x five passes over four predict
    (verdict(1.10, 0.4, 3.0, 0.9), "untested"),      # disturbed: it cannot test the bytes
    (verdict(1.10, 1.04, 1.17, 0.06, median_a=1.3, median_b=1.0), "untested"),   # its medians disagree
    (verdict(1.24, 1.15, 1.33, 0.07), None),         # as the bytes predict: the band stands
])
def test_a_bytes_bound_claim_agrees_with_the_pairs_interval(nb05, monkeypatch, v, bucket):
    import pandas as pd

    monkeypatch.setitem(nb05, "pair_verdicts", lambda *a: pd.DataFrame([v]))
    rows = pd.DataFrame([{"backend": "numba", "mode": m, "variant": n, "bytes": 1, "status": "ok"}
                         for m, n in (("eager", "numba-unfused"), ("fused", "numba-fused"))])
    res = type("R", (), {"df": rows})()
    out = nb05["bytes_test"](res, "rmsnorm_residual", rows, ["numba-fused on numba", "numba-unfused on numba"])
    assert [b for _, _, b in out] == ([bucket] if bucket else [])
    for line, _, b in out:
        assert "1.25× faster" in line and ("excludes" in line or "disturbed" in line)
        assert (b == "part") == ("so the bytes are part of the time" in line)


def test_a_slower_fused_kernel_far_below_the_stream_rate_is_not_blamed_on_traffic(nb05):
    # 05's readers: "the fused kernel's other costs outweigh the traffic it saves" where both PoCL variants ran at
    # 10-12% of the stream rate
    v = verdict(0.8, 0.75, 0.85, 0.05)
    why = nb05["fusion_why"](v, "numpy", "numba-fused", 1e12, False, (0.10, 0.15))
    assert why.startswith("Likely why: not the bytes") and "outweigh the traffic" not in why
    assert "10%" in why and "15%" in why
    near = nb05["fusion_why"](v, "numpy", "numba-fused", 1e12, False, (0.8, 0.9))
    assert "outweigh the traffic it saves" in near


def test_a_disturbed_cell_gets_no_share_and_no_band(nb05, monkeypatch, capsys):
    # 05's reader (17:45, beside CI): "the bytes are part of the time, not all of it, for numba-fused" from a cell
    # the table called disturbed and the figure drew as an x ("its median is no value to read")
    import pandas as pd

    monkeypatch.setitem(nb05, "stream_rate", lambda big: (40.0, "a test rate"))
    monkeypatch.setitem(nb05, "bytes_test", lambda *a: [])
    r = {**row([1.6, 1.7, 3.5], [40.0] * 3), "status": "ok", "median_s": 1.7e-3, "iqr_s": 0.9e-3}
    nb05["bytes_answer"](type("R", (), {"df": pd.DataFrame([r])})(), "bias_gelu")
    said = capsys.readouterr().out
    assert "numba-fused on numba: disturbed" in said and "% of the stream rate" not in said
    assert "numba-fused on numba was disturbed" in said and "part of the time" not in said


def test_the_two_sides_of_a_pair_are_set_against_one_figure_per_round(nb05):
    # issue 39: fused set against its dipped probe (4.2 GB/s), unfused against the stream rate (4.6), "63% against 44%"
    import pandas as pd

    fused = {**row([1.6, 1.6, 2.4], [40.0, 40.0, 20.0]), "run_id": "r", "kernel": "k", "status": "ok"}
    calm = {**row([2.0, 2.0, 2.02], [40.0, 40.0, 22.0], mode="eager"), "variant": "numba-unfused", "run_id": "r",
            "kernel": "k", "status": "ok"}
    felt = {**calm, "round_medians_s": json.dumps([2.0e-3, 2.0e-3, 3.0e-3])}
    frames = nb05["FRAMES"]
    try:
        frames[:] = [pd.DataFrame([fused, calm])]   # only fused felt round 3: both set against the stream rate
        assert [d for _, d, _, _ in nb05["felt_rounds"](fused, 40.0)] == [40.0] * 3
        assert [d for _, d, _, _ in nb05["felt_rounds"](calm, 40.0)] == [40.0] * 3
        frames[:] = [pd.DataFrame([fused, felt])]   # both felt it: both against one figure, their probes' median
        assert nb05["felt_rounds"](fused, 40.0)[2][1] == nb05["felt_rounds"](felt, 40.0)[2][1] == 21.0
    finally:
        frames[:] = []
