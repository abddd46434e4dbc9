"""workbench.report.pass_bound: a fusion speed-up is credited to its saved passes only as far as they go."""

from __future__ import annotations

import pytest

from workbench.report.pass_bound import pass_bound_text, pass_ratio


def test_an_interval_above_the_pass_ratio_is_not_explained_by_the_bytes():
    # 05: 1.36x (1.29-1.43) beside 5 passes to 4, which can give at most 1.25x
    text = pass_bound_text({"speedup": 1.36, "ci_low": 1.29, "ci_high": 1.43}, fused=4, unfused=5)
    assert "at most 1.25× (5 passes / 4)" in text
    assert "not explained by the bytes moved" in text and "1.29×" in text


def test_an_interval_within_the_pass_ratio_claims_no_remainder():
    text = pass_bound_text({"speedup": 1.32, "ci_low": 1.27, "ci_high": 1.37}, fused=2, unfused=4)
    assert "2.00× (4 passes / 2)" in text and "not explained" not in text


def test_bad_pass_counts_are_named():
    assert pass_ratio(4, 5) == 1.25
    with pytest.raises(ValueError, match="fused=0"):
        pass_ratio(0, 5)


def test_an_interval_wholly_below_the_pass_ratio_says_all_or_none_not_a_ceiling():
    # 05: "accounts for at most 1.25× (5 passes / 4)" beside a measured 1.13× (1.09×-1.17×) said nothing
    text = pass_bound_text({"speedup": 1.13, "ci_low": 1.09, "ci_high": 1.17}, fused=4, unfused=5)
    assert "at most" not in text and "all of the speed-up or none of it" in text and "1.25× (5 passes / 4)" in text


def test_the_low_end_prints_as_the_interval_beside_it_does():
    # 05: "(97.5% interval 1.36×-1.51×)" then "(1.37× at its low end)" of one interval
    text = pass_bound_text({"speedup": 1.44, "ci_low": 1.366, "ci_high": 1.51}, fused=4, unfused=5)
    assert "(1.36× at its low end)" in text
