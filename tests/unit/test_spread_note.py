"""Issue 39: a round's spread note names each measure it states (the samples' spread against the spread target;
the median's precision against the one asked), never one sentence for two targets."""

from workbench.measure.timed import spread_note


def test_precision_stop_names_both_measures_with_their_own_figures():
    text = spread_note(0.053, 0.02, "precision", reached=0.0093, asked=0.01)
    assert "spread (interquartile range over median) 0.053 is above the spread target 0.02" in text
    assert "median's precision instead, which reached ±0.9% (asked: ±1.0%)" in text
    assert "its median reached the precision asked" not in text


def test_other_stops_name_what_stopped_them():
    assert spread_note(0.066, 0.05, "budget").endswith("spread target 0.05 (sampling stopped by budget)")
    # a precision stop without its figures says no precision it cannot show
    assert spread_note(0.1, 0.05, "precision").endswith("(sampling stopped by precision)")
