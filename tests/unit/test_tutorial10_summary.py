"""Issue 39, a reader of tutorial 10 on a busy machine: each summary sentence follows from what the lines and the
tables beside it print.

10 summed up "numba: disturbed (the comparison or a cell)" beside lines that said no "disturbed" and a table that
marked no cell; said "settle ... at 0 of 3 lengths only" and "had the lowest median at every cache length" beside
disturbed comparisons; printed "every one of its 2 rounds (1.01-1.01×)" and an interval "reaching ±50%" with no word
of the basis it was judged on; and "the table's medians give 0.97×" beside rounds all the other way, unnamed."""

from workbench.judge.few_rounds import paired_basis_text, too_few_basis_text
from workbench.report.beyond_noise import direction_said, disturbed_why, lowest_text
from workbench.report.claims import verdict_sentence
from workbench.report.claims_cause import basis_why, medians_outside_text, one_way_text, past_one_text


def verdict(name, speedup, ci_low, ci_high, floor, **more):
    return {"verdict": name, "speedup": speedup, "ci_low": ci_low, "ci_high": ci_high, "floor": floor, **more}


CALM = {"variant": "numba-graph", "median_s": 598e-6, "iqr_s": 40e-6}
WIDE = {"variant": "numba-eager", "median_s": 700e-6, "iqr_s": 400e-6}


def test_a_disturbed_label_names_the_cell_that_made_it():
    v = verdict("inconclusive", 1.2, 0.9, 1.5, 0.26)
    assert direction_said(v, [WIDE, CALM]).endswith(", disturbed")
    why = disturbed_why(v, [WIDE, CALM])
    assert "numba-eager's quartiles" in why and "numba-graph" not in why and "comparison" not in why
    assert disturbed_why(v, [CALM]) == ""


def test_a_disturbed_label_names_the_comparison_where_its_interval_is():
    v = verdict("inconclusive", 1.0, 0.4, 2.5, 0.8)
    assert disturbed_why(v, [CALM]) == "the comparison's interval reaches ±50% or more"


def test_no_length_settled_and_one_disturbed_reads_without_counts_or_a_fastest_there():
    said = lowest_text("numba-flash", [("L=256", ["could not tell, disturbed", "could not tell, disturbed"]),
                                       ("L=1,024", ["could not tell", "could not tell"]),
                                       ("L=4,096", ["could not tell, disturbed", "slower, disturbed"])])
    assert "0 of" not in said and "every length" not in said and "At L=1,024 the verdicts do not settle" in said
    assert "At L=256, L=4,096 a comparison is disturbed, so no fastest is named there." in said


def test_every_length_settled_says_so_and_some_settled_names_them():
    assert "at every length" in lowest_text("a", [("L=1", ["slower", "slower"]), ("L=2", ["slower"])])
    said = lowest_text("a", [("L=1", ["slower", "slower"]), ("L=2", ["slower", "could not tell"])])
    assert said.startswith("a had the lowest median at every length") and "at L=1 only" in said
    assert "At L=2 the verdicts do not settle" in said and said.count(". ") == 2


def test_rounds_that_print_alike_print_one_value():
    assert past_one_text(1.0101, 1.0104) == "1.01×"
    assert past_one_text(1.004, 1.3) == "1.004-1.300×"


def test_a_wide_interval_on_few_rounds_says_its_basis():
    for basis, word in ((too_few_basis_text(2, 1), "unpaired"), (paired_basis_text(2, 1), "typical paired scatter")):
        v = verdict("inconclusive", 0.99, 0.4, 2.4, 0.8, basis=basis, round_ratios=[0.9901, 0.9899],
                    cells_disturbed=0)
        said = verdict_sentence(v, "numpy-graph", "numpy-eager")
        # too few rounds at speed is no disturbance: its sentence says which (issue 39, 05's idle readers)
        wide = "no amount is read from its rounds at speed" if basis == too_few_basis_text(2, 1) else "was disturbed"
        assert f"judged on {basis}" in said and word in said and wide in said, said
        assert "(1.01×" in one_way_text(v, "numpy-graph", "numpy-eager") and "1.01-1.01" not in said
    assert basis_why({"basis": "paired rounds"}) == ""
    plain = verdict("inconclusive", 0.99, 0.4, 2.4, 0.8, basis="paired rounds", cells_disturbed=0)
    assert "judged on" not in verdict_sentence(plain, "a", "b")


def test_table_medians_the_other_way_from_the_rounds_name_the_faster_by_them():
    # rounds: numpy-eager (the other) slower in both, as the base's speed-up 1.01x; the table's medians make it faster
    v = verdict("inconclusive", 0.99, 0.4, 2.4, 0.8, table_median_a=67.2e-6, table_median_b=69.2e-6)
    said = medians_outside_text(v, 1 / 1.0101, 1 / 1.0099, "numpy-graph", "numpy-eager")
    assert "numpy-graph the faster by them" not in said and "numpy-eager" not in said.split(",")[0]
    v["table_median_a"], v["table_median_b"] = 69.2e-6, 67.2e-6
    said = medians_outside_text(v, 1 / 1.0101, 1 / 1.0099, "numpy-graph", "numpy-eager")
    assert "numpy-eager the faster by them" in said, said
