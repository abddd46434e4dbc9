"""Issue 41: the change-point rules on synthetic series. A step is found at its run; one wild run (or two
runs that then come back alone at the end) is not a change; a step does not inflate the noise that should
reveal it; a run whose own rounds disagreed weighs less than one whose rounds agreed."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from workbench.history.changes import analyse
from workbench.history.segment import MIN_SIGMA, outliers, pelt, series_noise
from workbench.history.series import Machine, Point, RunInfo, Series


def _series(values, sigmas=0.01) -> Series:
    s = Series("c", "k", "v", "numpy", "float32", "n=1", "eager", "hot", "t", Machine("m", "m"))
    sig = np.broadcast_to(np.asarray(sigmas, dtype=float), (len(values),))
    for i, (v, sd) in enumerate(zip(values, sig, strict=True)):
        s.points.append(Point(RunInfo(f"r{i}", f"{i:04d}", None, None, (), None), float(v), float(sd), {}))
    return s


def _noisy(n, sigma, seed, step=0.0, at=0):
    rng = np.random.default_rng(seed)
    return 1e-3 * np.exp(rng.normal(0, sigma, n) + np.where(np.arange(n) >= at, math.log1p(step), 0.0))


@pytest.mark.parametrize("seed", range(6))
def test_a_step_is_found_at_its_run(seed):
    at = 8 + 5 * seed
    changes = analyse(_series(_noisy(50, 0.01, seed, 0.10, at))).changes
    assert len(changes) == 1 and abs(changes[0].index - at) <= 2 and changes[0].regression
    assert changes[0].low < 0.10 < changes[0].high


def test_a_step_is_found_exactly_when_the_noise_is_small():
    changes = analyse(_series(_noisy(30, 0.005, 1, -0.15, 17), 0.005)).changes
    assert [c.index for c in changes] == [17] and not changes[0].regression
    assert (changes[0].runs_before, changes[0].runs_after) == (17, 13)


@pytest.mark.parametrize("where", [0, 1, 7, 13, 14])
def test_a_single_run_off_by_20_percent_is_not_a_change(where):
    values = _noisy(15, 0.005, where, 0.0)
    values[where] *= 1.2
    a = analyse(_series(values, 0.005))
    assert a.changes == []
    if where < 14:  # the last run has nothing after it to say it is alone; it is simply not a change
        assert a.outliers == (where,)


def test_two_wild_runs_at_the_end_do_not_make_a_change_when_the_last_is_unsure():
    values = list(_noisy(12, 0.005, 3))
    values[10] *= 1.3  # a whole run slowed by the host, precise inside itself
    values[11] *= 1.15
    sig = [0.005] * 11 + [0.11]  # the last run's rounds disagreed: it confirms nothing
    assert analyse(_series(values, sig)).changes == []


def test_the_step_does_not_inflate_the_noise_that_reveals_it():
    flat = np.log(_noisy(40, 0.01, 9))
    stepped = flat + np.where(np.arange(40) >= 20, math.log1p(0.15), 0.0)
    own = np.full(40, MIN_SIGMA)  # the runs say nothing of themselves: the noise comes from the series
    quiet, loud = series_noise(flat, own).typical, series_noise(stepped, own).typical
    assert loud < 1.3 * quiet and loud < 0.02  # the plain spread of the stepped series is about 7%
    assert float(np.std(stepped)) > 0.05
    changes = analyse(_series(np.exp(stepped), MIN_SIGMA)).changes
    assert [c.index for c in changes] == [20]


def test_runs_whose_rounds_disagreed_weigh_less():
    # the 'flagged' history of a busy host: before the step, three runs whose rounds disagreed read 12-25%
    # slow; their own σ (5-11%) says so; the runs whose rounds agreed show a clean 15% step at run 7
    before = [89.6, 73.9, 80.9, 72.3, 80.3, 71.8]
    after = [82.4, 81.9, 105.0, 82.7, 111.1, 82.7]
    sig = [0.054, 0.110, 0.089, 0.0068, 0.077, 0.0047, 0.005, 0.005, 0.108, 0.0043, 0.054, 0.091]
    a = analyse(_series([v * 1e-6 for v in before + after], sig))
    assert [c.index for c in a.changes] == [6] and 0.10 < a.changes[0].step < 0.20
    unweighted = analyse(_series([v * 1e-6 for v in before + after], 0.05))
    assert unweighted.changes == []  # the same medians, every run trusted alike: no change stands


def test_noise_alone_is_not_a_change():
    calls = sum(bool(analyse(_series(_noisy(50, 0.03, seed), 0.03)).changes) for seed in range(40))
    assert calls <= 1


def test_the_series_noise_comes_from_the_runs_when_their_own_understates_it():
    x = np.log(_noisy(50, 0.04, 2))
    assert 0.03 < series_noise(x, np.full(50, 0.005)).typical < 0.055  # the runs said 0.5%
    assert series_noise(x, np.full(50, 0.08)).typical == pytest.approx(0.08)  # never below what runs say
    # runs whose own σ tell which are loud: the loud ones stay loud, the quiet ones quiet
    rng = np.random.default_rng(3)
    loud = rng.random(50) < 0.5
    own = np.where(loud, 0.08, 0.005)
    s = series_noise(np.log(1e-3) + rng.normal(0, own), own).sigmas
    assert np.median(s[loud]) > 5 * np.median(s[~loud])


def test_outliers_are_far_from_both_sides_not_the_first_run_of_a_step():
    x = np.log(np.array([1.0, 1.0, 1.0, 1.3, 1.0, 1.0, 1.2, 1.2, 1.2, 1.2]))
    assert list(np.flatnonzero(outliers(x, np.full(10, 0.01)))) == [3]


def _brute(x, w, penalty, m):
    """The optimal partition by trying every set of cuts (small n only)."""
    n, best = len(x), (math.inf, [])
    for k in range(0, n // m):
        for cuts in itertools.combinations(range(m, n - m + 1), k):
            b = [0, *cuts, n]
            if any(b[i + 1] - b[i] < m for i in range(len(b) - 1)):
                continue
            cost = sum(float(w[lo:hi] @ (x[lo:hi] - (w[lo:hi] @ x[lo:hi]) / w[lo:hi].sum()) ** 2)
                       for lo, hi in itertools.pairwise(b)) + penalty * k
            best = min(best, (cost, list(cuts)))
    return best[1]


@pytest.mark.parametrize("seed", range(8))
def test_pelt_finds_the_optimal_partition(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, 11) + np.repeat(rng.normal(0, 3, 3), [4, 3, 4])
    w = rng.uniform(0.2, 2.0, 11)
    assert pelt(x, w, 4.0, 2) == _brute(x, w, 4.0, 2)
