"""The sentence helpers of tutorials 10 and 11 (defined in their sources), held to what their numbers allow:
a share above 100% is never "all or nearly all", a wide settled interval says its direction and not its size,
a column of single timings has one precision, and a busy machine's rerun advice is a quieter machine."""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

# the tutorials' sources build their cells with nbformat (the notebook extra): in the core venv this file skips,
# and the unit tier's second run (.venv) runs it
pytest.importorskip("nbformat", reason="the notebook extra (nbformat) is not installed")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def literal(node: ast.expr) -> bool:
    """Whether ``node`` is a plain literal (a constant a tutorial's functions read, never a computation)."""
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def helpers(stem: str) -> dict[str, Any]:
    """The imports and top-level functions of a tutorial's code cells, run without the rest of its cells."""
    sys.path.insert(0, str(NOTEBOOKS))
    try:
        cells = runpy.run_path(str(NOTEBOOKS / f"_nb_{stem}.py"))["CELLS"]
    finally:
        sys.path.remove(str(NOTEBOOKS))
    keep: list[ast.stmt] = []
    for cell in cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:   # an IPython magic (08's %wb_timeit): plain Python only
            continue
        keep += [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef))
                 or (isinstance(n, ast.Assign) and literal(n.value))]   # constants the functions read (05's PASSES)
    space: dict[str, Any] = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), f"_nb_{stem}", "exec"), space)  # noqa: S102
    return space


@pytest.fixture(scope="module")
def nb10() -> dict[str, Any]:
    return helpers("10_where_decode_time_goes")


@pytest.fixture(scope="module")
def nb11() -> dict[str, Any]:
    return helpers("11_tuning_gemm")


def test_share_above_the_probe_is_not_all_of_the_time(nb10):
    above = nb10["stream_share_text"](1.53, "its weights")
    assert "153%" in above and "nearly all" not in above and "above 100%" in above and "cache" in above
    assert "all or nearly all" in nb10["stream_share_text"](0.8, "its weights")


def pair(speedup: float, lo: float, hi: float) -> dict[str, Any]:
    verdict = "faster" if lo > 1 else "slower"
    return {"verdict": verdict, "speedup": speedup, "ci_low": lo, "ci_high": hi, "floor": (hi / lo) ** 0.5 - 1,
            "median_a": speedup, "median_b": 1.0}


def test_wide_settled_interval_says_the_direction_not_the_size(nb10):
    from workbench.report.claims import check_claim, verdict_sentence

    v = pair(1.4, 1.004, 2.0)   # tutorial 10 printed "ran 1.4x faster (paired, interval 1.004-2.00x ...)"
    said = nb10["with_figures"](v, verdict_sentence(v, "numba-eager", "numba-fused"))
    check_claim(v, said)
    assert "numba-fused ran at least 1.004× faster than numba-eager" in said
    assert "the direction is settled, its size is not" in said and "1.004-2.00×" in said
    slow = pair(1 / 1.4, 1 / 2.0, 1 / 1.004)
    said = nb10["with_figures"](slow, verdict_sentence(slow, "numpy-naive", "numba-flash"))
    check_claim(slow, said)
    assert "numba-flash took at least 1.004× its time" in said and "its size is not" in said
    narrow = pair(1.4, 1.3, 1.5)
    said = nb10["with_figures"](narrow, verdict_sentence(narrow, "numba-eager", "numba-fused"))
    assert "at least" not in said and "1.4× faster" in said


def test_the_medians_beside_a_settled_sentence_are_the_tables(nb10):
    """10: "(the paired samples' medians 23.8 ms / 2.9 ms, 8.2×)" beside a table of 23.8 ms / 2.75 ms (8.65×), under
    a paragraph promising "the ratio of the two medians in the table"."""
    from workbench.report.claims import verdict_sentence

    v = {"verdict": "faster", "speedup": 8.2, "ci_low": 7.0, "ci_high": 9.9, "floor": 0.19, "median_a": 23.8e-3,
         "median_b": 2.9e-3, "variant": "torch-eager", "backend": "torch-cpu", "baseline_variant": "numpy-eager",
         "baseline_backend": "numpy"}
    rows = pd.DataFrame({"variant": ["numpy-eager", "torch-eager"], "backend": ["numpy", "torch-cpu"],
                         "median_s": [23.8e-3, 2.75e-3]})
    said = nb10["with_figures"](v, verdict_sentence(v, "numpy-eager", "torch-eager"), rows)
    assert "the table's medians 23.8 ms / 2.75 ms, 8.65×" in said and "2.9 ms" not in said


def test_the_medians_ratio_beside_a_settled_sentence_has_three_figures(nb10):
    """10: "(paired, interval 1.01-1.85×; the table's medians 113 µs / 88.7 µs, 1.274×)" where markdown promises
    the ratio "to three figures as the medians are printed", and "1.1×" elsewhere: one rule, three figures."""
    from workbench.report.claims import verdict_sentence

    v = {"verdict": "faster", "speedup": 1.25, "ci_low": 1.006, "ci_high": 1.85, "floor": 0.2,   # prints "1.01"
         "median_a": 113e-6, "median_b": 88.7e-6, "variant": "numba-flash", "backend": "numba",
         "baseline_variant": "numpy-naive", "baseline_backend": "numpy"}
    rows = pd.DataFrame({"variant": ["numpy-naive", "numba-flash"], "backend": ["numpy", "numba"],
                         "median_s": [113e-6, 88.7e-6]})
    said = nb10["with_figures"](v, verdict_sentence(v, "numpy-naive", "numba-flash"), rows)
    assert "the table's medians 113 µs / 88.7 µs, 1.27×" in said, said


def test_advice_for_rounds_across_bands_follows_the_busy_flag(nb10):
    """10: "more rounds would show where most of them fall" on a run that said it shared the machine."""
    busy = nb10["stream_share_text"](0.7, "its weights", [0.64, 0.78], True)
    assert "more rounds could" not in busy and "otherwise idle could show where most of them fall" in busy
    assert "more rounds could show where most of them fall" in nb10["stream_share_text"](0.7, "x", [0.64, 0.78])


def test_single_timings_in_one_precision(nb11):
    # three significant digits of the smallest: trials 1.74 and 1.78 ms (the confirmed ones) must not both read 1.7
    assert nb11["ms_column"]([20.5, 5.68, 18.0, 9.96, None]) == ["20.50", "5.68", "18.00", "9.96", ""]
    assert nb11["ms_column"]([1.74, 1.78]) == ["1.74", "1.78"]
    assert nb11["ms_column"]([0.054, 0.031]) == ["0.0540", "0.0310"]


def test_two_runs_whose_intervals_each_exclude_the_others_estimate_disagree(nb11):
    # 11: a side-by-side 1.12x (1.08-1.16) beside a confirmation's 1.03x (0.98-1.09) read as a finding
    here = {"speedup": 1.12, "ci_low": 1.08, "ci_high": 1.16, "floor": 0.04}
    confirmation = {"speedup": 1.033, "ci_low": 0.98, "ci_high": 1.086, "floor": 0.051}
    assert "each exclude the other's estimate" in nb11["readings_apart"](here, confirmation)
    near = {"speedup": 1.06, "ci_low": 1.01, "ci_high": 1.11, "floor": 0.04}
    assert nb11["readings_apart"](near, confirmation) is None


@pytest.mark.parametrize("nb", ["nb10", "nb11"])
def test_busy_rows_advise_a_quieter_machine_not_more_rounds(nb, request):
    advice = request.getfixturevalue(nb)["rerun_advice"]
    args = ("workbench tune ...", "--confirm-rounds 10") if nb == "nb11" else ()
    busy = advice(pd.DataFrame({"other_cpu_share": [0.8], "load_avg_1m": [7.0]}), *args)
    idle = advice(pd.DataFrame({"other_cpu_share": [0.01], "load_avg_1m": [0.2]}), *args)
    more = "rounds 10" if nb == "nb11" else "more rounds (FULL = True"   # 10: no uncopyable "bench ... --rounds 10"
    assert "quieter machine" in busy and more not in busy
    assert more in idle and "quieter" not in idle
    assert nb == "nb11" or "..." not in busy + idle


def test_probe_spread_reads_the_rows_probes(nb10):
    rows = pd.DataFrame({"round_bandwidth_gbs": ["[37.1, 37.4, 36.0]", "[18.6, 22.6]", None]})
    assert nb10["probe_spread"](rows) == (36.0, 18.6, 37.4)
    assert nb10["probe_spread"](pd.DataFrame({"round_bandwidth_gbs": [None]})) is None


def test_a_share_whose_rounds_span_bands_gets_no_band(nb10, monkeypatch):
    # 10: "70-100%: all or nearly all of it" from rounds at 33%, 83% and 259% of their probes
    monkeypatch.setitem(nb10, "round_rates", lambda row: [(10.0, 30.3), (10.0, 12.05), (10.0, 3.86)])
    across = nb10["rounds_across_bands"]({})
    assert [round(x, 2) for x in across] == [0.33, 0.83, 2.59]
    said = nb10["stream_share_text"](0.83, "its weights", across)
    assert "33% to 259%" in said and "no band is read" in said and "nearly all" not in said
    monkeypatch.setitem(nb10, "round_rates", lambda row: [(10.0, 12.0), (10.0, 12.5), (10.0, 13.0)])
    assert nb10["rounds_across_bands"]({}) == []


def test_probes_are_counted_once_per_round_not_per_cell(nb10):
    # 10: "best of 21 probes", seven cells' copies of the probes their rounds shared
    from workbench.report.claims import host_bandwidth

    rows = pd.DataFrame({"round_bandwidth_gbs": ["[11.6, 12.0, 11.9]"] * 7, "bandwidth_probe_gbs": [11.9] * 7})
    probe = host_bandwidth(rows)
    assert probe == (12.0, 3)
    said = nb10["probes_said"](rows, probe)
    assert "best of 3 distinct probes" in said and "21 copies" in said


def test_no_bound_is_drawn_from_cells_section_1_did_not_read(nb10):
    quiet = {"noisy": False, "rel_spread": 0.02, "iqr_s": 1e-4, "median_s": 1e-3}
    assert not nb10["cell_unread"](quiet)
    assert nb10["cell_unread"]({**quiet, "noisy": True})
    assert nb10["cell_unread"]({**quiet, "iqr_s": 6e-4})


def test_single_timings_above_the_ceiling_are_flagged_where_the_medians_are_not(nb11):
    # 11: single timings at 149 GFLOP/s against a 128 GFLOP/s GEMM ceiling, unflagged
    rates = [149.0, 120.0, None]
    assert nb11["once_rate_cell"](149.0, 128.0, False) == "149 (implausible: above the ceiling)"
    assert nb11["once_rate_cell"](120.0, 128.0, False) == "120"
    assert "implausible" in nb11["above_ceiling_note"](rates, 128.0, False)
    both = nb11["above_ceiling_note"](rates, 128.0, True)   # the medians pass it too: the ceiling is what is low
    assert "implausible" not in both and "as the confirmation's medians do" in both
    assert nb11["once_rate_cell"](149.0, 128.0, True) == "149"
    assert nb11["above_ceiling_note"](rates, None, False) == ""
    assert nb11["gemm_ceiling"](pd.DataFrame({"ceiling_gflops": [None, 128.0]})) == 128.0


def test_an_unsettled_estimate_is_set_beside_the_tables_medians_at_their_figures(nb10):
    """10 (idle run, 21:46): "torch-sdpa measured 1.1× slower, within its ±40% noise floor" beside a table of
    42.9 µs / 37.2 µs, 1.15×: the sentence now names the estimate as the paired rounds' and gives the table's medians
    and their ratio at three figures."""
    from workbench.report.claims import check_claim, verdict_sentence

    v = {"verdict": "inconclusive", "speedup": 1 / 1.12, "ci_low": 0.62, "ci_high": 1.25, "floor": 0.4,
         "median_a": 37.2e-6, "median_b": 42.9e-6, "table_median_a": 37.2e-6, "table_median_b": 42.9e-6}
    said = nb10["with_figures"](v, verdict_sentence(v, "numba-flash", "torch-sdpa"))
    check_claim(v, said)
    assert "the paired rounds' estimate; the table's medians 42.9 µs / 37.2 µs, 1.15×" in said


def test_a_disturbed_comparison_is_summed_up_as_disturbed_naming_no_direction():
    """10: "could not tell at L=256, 1,024 (the comparison or a cell is disturbed)" and a "faster, disturbed" label
    summed up as "ran faster": one comparison, one word, the table's."""
    from workbench.report.beyond_noise import UNDECIDED, direction_said, label_word

    wide = {"verdict": "inconclusive", "speedup": 1.3, "ci_low": 0.5, "ci_high": 3.0, "floor": 1.2}
    one_way = {"verdict": "faster, disturbed", "speedup": 2.0, "ci_low": 1.2, "ci_high": 4.0, "floor": 0.9}
    for v in (wide, one_way):
        assert label_word(direction_said(v)) == "disturbed"
    calm = {"verdict": "inconclusive", "speedup": 1.05, "ci_low": 0.9, "ci_high": 1.2, "floor": 0.2}
    assert label_word(direction_said(calm)) == UNDECIDED


def test_two_runs_that_agree_say_so_with_every_figure_at_three_figures(nb11):
    # 11's reader (issue 39): a confirmation "1.8x faster (interval 1.5x-2.2x)" and a side-by-side "2.17x faster
    # (interval 2.10x-2.24x)" of one pair, and cell 9's "where the two runs agree, that is a finding" printed nothing
    nb11["N"] = 128
    here = {"speedup": 2.17, "ci_low": 2.10, "ci_high": 2.24, "floor": 0.03}
    confirmation = {"speedup": 1.8, "ci_low": 1.5, "ci_high": 2.2, "floor": 0.1}
    said = nb11["agreement"](here, confirmation, "faster", "faster")
    assert "agree by the rule above" in said and "a finding at 128³" in said
    assert "this run 2.17× in 2.10×-2.24×, the confirmation 1.80× in 1.50×-2.20×" in said
    assert "this run's interval holds" not in said and "the confirmation's interval holds this run's estimate" in said
    assert "both estimates lie above the ±5% band" in said
    unsettled = {"speedup": 1.01, "ci_low": 0.852, "ci_high": 1.2, "floor": 0.19}
    assert "no finding" in nb11["agreement"](unsettled, unsettled, "inconclusive", "inconclusive")
    assert "not weighed" in nb11["agreement"](here, confirmation, "disturbed", "faster")
    assert nb11["fig3"](0.985) == "0.985" and nb11["fig3"](1.5) == "1.50" and nb11["fig3"](12.345) == "12.3"


def test_a_verdict_carries_its_rows_busy_note_once(nb11):
    # 11's reader (issue 39): run with one core busy, the output never said the machine was busy
    rows = pd.DataFrame({"noisy": [True, True], "other_cpu_share": [0.8, 0.6]})
    note = nb11["busy_note"](rows, "ran 1.8× faster than hand-picked")
    assert note.startswith("; ") and "marked noisy (other processes used up to 80% of the CPU" in note
    assert nb11["busy_note"](rows, "rerun it on a quieter machine: other processes took up to 80%") == ""
    quiet = pd.DataFrame({"noisy": [False, False], "other_cpu_share": [0.05, 0.1]})
    assert nb11["busy_note"](quiet, "ran 1.8× faster") == ""


def _cell(variant: str, median: float, rounds: list[float], iqr: float | None = None, kv_len: int = 1024) -> dict:
    """A section-1 row: its median, quartiles (``iqr`` wide, else 2% of it) and round medians."""
    iqr = 0.02 * median if iqr is None else iqr
    return {"variant": variant, "backend": variant.split("-")[0], "kv_len": kv_len, "median_s": median,
            "iqr_s": iqr, "q1_s": median - iqr / 2, "q3_s": median + iqr / 2, "noisy": False, "rel_spread": 0.02,
            "round_medians_s": str(rounds)}


def test_no_median_is_read_from_a_disturbed_or_two_mode_cell_and_neither_is_the_baseline(nb10):
    # 10 chose "the cell with the lowest median in the table", a two-mode numba-flash, as every length's baseline,
    # so every comparison read disturbed while torch-sdpa against numpy-naive (two clean cells) went unjudged
    d = pd.DataFrame([_cell("numba-flash", 83e-6, [83.3e-6, 83.5e-6, 134e-6]),
                      _cell("numpy-naive", 114e-6, [113e-6, 114e-6, 115e-6]),
                      _cell("torch-sdpa", 99e-6, [98e-6, 99e-6, 100e-6]),
                      _cell("numba-flash", 300e-6, [300e-6, 301e-6, 302e-6], iqr=200e-6, kv_len=4096),
                      _cell("numpy-naive", 480e-6, [479e-6, 480e-6, 481e-6], kv_len=4096)])
    assert list(nb10["median_unread"](d)) == [True, False, False, True, False]
    assert nb10["unread_why"](d.iloc[0]) == "in two modes" and nb10["unread_why"](d.iloc[3]) == "disturbed"
    lowest = nb10["readable_lowest"](d)
    assert lowest.loc[1024, "variant"] == "torch-sdpa" and lowest.loc[4096, "variant"] == "numpy-naive"
    # where every cell is unread, the lowest of them, so that a baseline is still named
    both = d[d["kv_len"] == 4096].assign(iqr_s=300e-6, q1_s=200e-6, q3_s=500e-6)
    assert nb10["readable_lowest"](both).loc[4096, "variant"] == "numba-flash"


def test_a_ratio_of_single_values_prints_two_significant_figures(nb10):
    # 10's cell comment promised two figures and printed "2,255x"
    two = nb10["two_figures"]
    assert [two(2255.3), two(59.2), two(8.43), two(0.823)] == ["2,300x", "59x", "8.4x", "0.82x"]


def test_a_sentence_says_how_a_figure_draws_a_cell_only_where_one_does(nb10):
    from workbench.report.claims import CELL_CROSSED

    sentence = f"could not tell a from b: a's cell reads disturbed: {CELL_CROSSED}, so no ratio is read from it"
    wide = _cell("numba-graph", 300e-6, [300e-6, 301e-6, 302e-6], iqr=200e-6)
    two = _cell("numba-flash", 83e-6, [83.3e-6, 83.5e-6, 134e-6], iqr=60e-6)
    said = nb10["figure_said"]
    assert "figure" not in said(sentence, pd.DataFrame([wide]), figure=False)   # section 2 draws none
    assert "as an x" in said(sentence, pd.DataFrame([wide]), figure=True)
    drawn = said(sentence, pd.DataFrame([two]), figure=True)   # a two-mode cell is drawn as its modes, not an x
    assert "two modes" in drawn and "as an x" not in drawn, drawn
    assert "figure" not in nb10["marks_said"](False) and "hollow in the figure" in nb10["marks_said"](True)


def test_a_bound_holds_against_both_modes_of_a_two_mode_cell_or_is_not_printed(nb10):
    # 10 printed "numba-eager @ numba took at least 4.0x its time" of a numpy-eager whose rounds fell in two modes,
    # 65.1 us and 117 us, against numba-eager's 417 us: 3.6x the slower mode, so the bound held against one mode only
    import json

    from workbench.report.claim_notes import Claim

    sides = pd.DataFrame([
        {"variant": "numpy-eager", "round_medians_s": json.dumps([65.0e-6, 65.2e-6, 117e-6]), "median_s": 65.1e-6},
        {"variant": "numba-eager", "round_medians_s": json.dumps([417e-6, 418e-6, 416e-6]), "median_s": 417e-6}])
    v = {"variant": "numba-eager", "verdict": "slower", "speedup": 0.2, "ci_low": 0.1, "ci_high": 0.25, "floor": 0.9}
    head = "numpy-eager was faster: numba-eager took at least 4.0× its time, by how much is unknown"
    out = nb10["both_modes"](v, sides, Claim(head, ("r",), head), "numpy-eager", "numba-eager")
    assert "4.0×" not in out.head and "took longer against both of numpy-eager's modes" in out.head
    assert out.head.startswith("numpy-eager was faster:") and "two modes" in out.reasons[0]
    # a bound that holds against both modes (417 us is 3.56x the slower one) is kept as it is
    kept = head.replace("4.0×", "3.5×")
    assert nb10["both_modes"](v, sides, Claim(kept, (), kept), "numpy-eager", "numba-eager").head == kept


def test_no_median_is_quoted_of_a_side_the_table_prints_in_two_modes(nb10):
    # 10 quoted "the table's medians 31.9 µs / 23.9 µs, 1.33×" of a torch-sdpa the table printed as
    # "two modes: 31.9 µs (2 rounds) / 49.1 µs (1 round)": no median of it can be read
    import json

    from workbench.report.claims import verdict_sentence

    v = {"verdict": "slower", "speedup": 1 / 1.35, "ci_low": 1 / 1.40, "ci_high": 1 / 1.29, "floor": 0.05,
         "median_a": 23.9e-6, "median_b": 32.2e-6, "variant": "torch-sdpa", "backend": "torch-cpu",
         "baseline_variant": "numba-flash", "baseline_backend": "numba"}
    rows = pd.DataFrame({"variant": ["numba-flash", "torch-sdpa"], "backend": ["numba", "torch-cpu"],
                         "median_s": [23.9e-6, 31.9e-6],
                         "round_medians_s": [json.dumps([23.8e-6, 23.9e-6, 24.0e-6]),
                                             json.dumps([31.8e-6, 32.0e-6, 49.1e-6])]})
    said = nb10["with_figures"](v, verdict_sentence(v, "numba-flash", "torch-sdpa"), rows)
    assert "(paired, interval 1.29-1.40×)" in said and "31.9 µs" not in said and "table's medians" not in said
