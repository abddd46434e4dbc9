"""Issue 39, idle readers of 01 and 05 (3/5): five classes of sentence that did not follow from the numbers beside
them. A pair left too few rounds at speed read "disturbed" though nothing was; a pair resting on a disturbed cell
read "could not tell" beside cells ~25x apart; the rerun advice named only a command line; two probes read as one;
"not busy" said twice with a doubled closing parenthesis, and one basis said twice in one sentence."""

import inspect
import json

import pandas as pd

import workbench
from workbench.judge.disturbed import RERUN_HINT
from workbench.judge.few_rounds import too_few_basis_text
from workbench.judge.verdicts import verdict_label
from workbench.report import claims
from workbench.report.claims import check_claim, mark_busy, shown_verdicts, verdict_sentence
from workbench.report.claims_cause import disturbance_text, spread_text
from workbench.report.disturbed_cells import disturbed_cells_text

#: 05's numba rmsnorm pair: 2 shared rounds at speed (1.35-1.45x), 1 set aside, no typical scatter: an assumed ±16%
#: drift a side made the interval reach ±50% (floor 0.62) with no disturbance at all.
TOO_FEW = {"verdict": "inconclusive", "speedup": 1.39, "ci_low": 0.6, "ci_high": 3.2, "floor": 0.62, "noise": 0.148,
           "basis": too_few_basis_text(2, 1), "n_a": 2, "n_b": 2, "cells_disturbed": 0, "busy": False,
           "round_ratios": [1.35, 1.45]}
IDLE = pd.DataFrame({"load_avg_1m": [0.8, 0.7], "other_cpu_share": [0.0, 0.004],
                     "round_medians_s": ["[1.0e-5, 1.2e-5, 1.1e-5]", "[8.9e-6, 9.0e-6, 8.8e-6]"]})


def test_too_few_rounds_at_speed_reads_so_not_disturbed_in_table_and_sentence():
    label = verdict_label("inconclusive", 0.62, TOO_FEW["basis"])
    assert label == "could not tell (too few rounds at speed: 1 set aside)"
    assert verdict_label("slower", 0.62, TOO_FEW["basis"]) == "slower, amount unknown (too few rounds at speed: " \
        "1 set aside)"
    assert verdict_label("inconclusive", 0.62, "paired rounds") == "disturbed"   # a real disturbance keeps its word
    assert shown_verdicts(pd.DataFrame([TOO_FEW]))["verdict"].iloc[0] == label
    sentence = verdict_sentence(TOO_FEW, "numba-unfused", "numba-fused", disturbance_text(IDLE))
    check_claim(TOO_FEW, sentence)
    assert "disturbed" not in sentence and "too few of its rounds were left at speed to pair" in sentence
    # the scopes tried are named, and the basis is said once (04: "too few ... to pair" and "judged on ..., too few")
    assert "none of its group, its kernel or the run had one" in sentence
    assert sentence.count("too few") == 1 and "judged on" not in sentence
    # its basis alone (no noise to say it): the sentence still says why no amount is read
    bare = verdict_sentence({**TOO_FEW, "noise": float("nan")}, "numba-unfused", "numba-fused")
    check_claim(TOO_FEW, bare)
    assert claims.TOO_FEW in bare and "disturbed" not in bare and bare.count("too few") == 1, bare


def test_a_pair_resting_on_a_disturbed_cell_says_disturbed_and_the_direction_its_quartiles_show():
    # 01: numpy ~25x faster than a crossed-out portable cell read "could not tell portable from numpy"
    rows = pd.DataFrame({"variant": ["numpy", "portable"], "backend": ["numpy", "opencl-0"], "size_label": ["n"] * 2,
                         "median_s": [1e-5, 2.5e-4], "q1_s": [0.9e-5, 1.2e-4], "q3_s": [1.1e-5, 4.0e-4],
                         "iqr_s": [0.2e-5, 2.8e-4], "other_cpu_share": [0.0, 0.0], "load_avg_1m": [0.8, 0.8],
                         "round_medians_s": ["[1e-5, 1e-5, 1e-5]", "[2e-4, 2.5e-4, 2.4e-4]"]})
    table = pd.DataFrame([{"variant": "portable", "backend": "opencl-0", "baseline_variant": "numpy",
                           "baseline_backend": "numpy", "size_label": "n", "verdict": "slower", "speedup": 0.04,
                           "ci_low": 0.03, "ci_high": 0.05, "floor": 0.2, "basis": "paired rounds"}])
    v = mark_busy(table, rows).iloc[0].to_dict()
    assert v["quartiles_apart"] == "slower"
    sentence = verdict_sentence(v, "numpy @ numpy", "portable @ opencl-0")
    check_claim(v, sentence)
    assert "could not tell" not in sentence and "was disturbed" in sentence
    assert "numpy @ numpy was faster than portable @ opencl-0, the amount not readable" in sentence
    # quartiles that overlap: disturbed, no direction, still no "could not tell"
    v2 = mark_busy(table, rows.assign(q1_s=[0.9e-5, 0.5e-5])).iloc[0].to_dict()
    s2 = verdict_sentence(v2, "numpy @ numpy", "portable @ opencl-0")
    check_claim(v2, s2)
    assert v2["quartiles_apart"] == "" and "could not tell" not in s2 and "was faster" not in s2
    # the table says what each sentence says: the direction where the quartiles lie apart, none where they overlap
    assert shown_verdicts(pd.DataFrame([v]))["verdict"].iloc[0] == "slower, disturbed"
    assert shown_verdicts(pd.DataFrame([v2]))["verdict"].iloc[0] == "disturbed"


def test_rerun_advice_names_the_command_line_and_the_python_api_parameter():
    assert "rounds" in inspect.signature(workbench.benchmark).parameters
    assert "--rounds 10 on the command line" in RERUN_HINT and "rounds=10 in workbench.benchmark)" in RERUN_HINT


def test_the_two_probes_are_named_and_a_calm_sweep_probe_is_no_reassurance_beside_a_round_set_aside():
    rows = IDLE.assign(round_probes_s=[json.dumps([1.0, 1.01, 1.0])] * 2,
                       round_host_slowdowns=[json.dumps([1.0, 1.17, 1.0]), json.dumps([1.0, 1.0, 1.0])])
    said = spread_text(rows)
    assert "the host's speed probe" not in said
    assert "the sweep's between-rounds speed probe moved by up to 1%" in said
    assert "the workers' host probe, read around each cell's rounds, set 1 round aside" in said


def test_not_busy_is_said_once_with_balanced_parentheses():
    rows = IDLE.assign(variant=["numba", "portable"], backend=["numba", "opencl-0"], size_label=["n"] * 2,
                       status=["ok"] * 2, median_s=[1.1e-5, 2.5e-4], iqr_s=[1e-6, 2e-4])
    text = disturbed_cells_text(rows)
    assert text.count("not busy") == 1, text
    assert text.count("(") == text.count(")") and "))" not in text, text
    cause = disturbance_text(IDLE)
    assert "(" not in cause.split("not busy", 1)[1], cause
