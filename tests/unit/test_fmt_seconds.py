"""fmt_seconds: three significant figures, and with ``zeros`` the trailing zeros a line that states three keeps."""

from workbench.core.units import fmt_seconds


def test_a_time_said_to_three_figures_keeps_its_trailing_zeros():
    # 08's reader (issue 39): "timeit 4 ms" on a line whose figures are three significant ones
    assert fmt_seconds(4e-3, zeros=True) == "4.00 ms" and fmt_seconds(1.5e-6, zeros=True) == "1.50 µs"
    assert fmt_seconds(123e-3, zeros=True) == "123 ms" and fmt_seconds(None, zeros=True) == "n/a"
    assert fmt_seconds(4e-3) == "4 ms" and fmt_seconds(80.6e-6) == "80.6 µs"   # the table's form is unchanged
