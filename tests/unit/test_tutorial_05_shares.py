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
