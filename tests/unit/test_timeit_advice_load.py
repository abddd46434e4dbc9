"""A disturbed timeit's rerun advice prints the CPU share it follows (issue 39: 08 advised more rounds on one line
and a quieter machine on the next, with no load printed to check either)."""
from __future__ import annotations

from workbench.adhoc.timing import Measurement


def _measurement(share: float | None) -> Measurement:
    samples = (1e-3, 1.1e-3, 1.2e-3, 4e-3)
    return Measurement("f", 1.15e-3, 1e-3, 3e-3, samples, (1.1e-3, 1.2e-3, 1.15e-3), "sync+perf_counter", "numpy",
                       1, 0.05, False, None, 0.1, 1e-3, other_cpu_share=share)


def test_idle_advice_names_the_share_it_follows():
    text = _measurement(0.03).spread_text()
    assert "disturbed" in text and "other processes used 3% of the CPU" in text and "more rounds" in text


def test_busy_advice_names_the_share_and_no_more_rounds():
    text = _measurement(0.8).spread_text()
    assert "other processes used 80% of the CPU" in text and "more rounds (rounds=" not in text


def test_unread_share_prints_no_share():
    assert "other processes used" not in _measurement(None).spread_text()
