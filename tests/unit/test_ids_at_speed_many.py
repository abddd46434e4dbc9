"""many_ids_at_speed (rows at once) marks the rounds ids_at_speed marks one row at a time, on random rows that
cover no slow round, every round slow, NaN probes (neither slow nor at speed), lengths that disagree and no ids."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.judge.dips import SET_ASIDE, ids_at_speed, many_ids_at_speed


@pytest.mark.parametrize("seed", range(4))
def test_many_ids_at_speed_equals_one_row_at_a_time(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(3000):
        n = int(rng.integers(0, 8))
        medians = rng.choice([1.0, 1.3, 1.06, 2.0, np.nan], n) * rng.uniform(1, 1.1, n)
        slowdowns = rng.choice([1.0, 1.08, 1.09, 1.4, np.nan], n)
        if rng.random() < 0.1:
            slowdowns = slowdowns[: max(n - 1, 0)]
        ids = [f"r{i}" for i in range(n)] if rng.random() < 0.9 else None
        rows.append((ids, medians, slowdowns))
    expected = [ids_at_speed(k, list(m), list(h)) for k, m, h in rows]
    got = many_ids_at_speed(*zip(*rows, strict=True))
    assert got == expected
    assert any(k and any(x.endswith(SET_ASIDE) for x in k) for k in got)  # some rows had rounds set aside
    assert any(k and not any(x.endswith(SET_ASIDE) for x in k) for k in got)
