"""Issue 39, idle readers of 01, 03 and 08 (idle4): a probe clause that counted set-aside rounds per row beside a
basis that counts them by round id; two pairs of one group given different typical scatters by the path that judged
them; a summary that said "could not be told" of pairs its sentences had called faster."""

from __future__ import annotations

import json

import pandas as pd

from tests.unit.test_few_rounds_at_speed import _quiet_group, _slowed_pair
from workbench.judge import compare as sc
from workbench.report.claims import pair_verdicts
from workbench.report.claims_cause import spread_text
from workbench.report.verdict_reading import summary_reading


def test_the_host_probe_counts_a_round_set_aside_on_both_sides_once_as_the_basis_does():
    # 03: "too few ... to pair (1 shared, 2 set aside ...)" and, in the same sentence, "set 4 rounds aside"
    rows = pd.DataFrame([{"round_medians_s": json.dumps(m), "round_ids": json.dumps(["s:0", "s:1", "s:2"]),
                          "round_host_slowdowns": json.dumps([1.0, 1.3, 1.3])}
                         for m in ([1e-3, 1.5e-3, 1.6e-3], [2e-3, 3e-3, 3.1e-3])])
    said = spread_text(rows)
    assert "set 2 rounds aside" in said, said
    # rows without round ids: each row's rounds are its own
    assert "set 4 rounds aside" in spread_text(rows.drop(columns="round_ids"))


def test_a_pair_judged_alone_sees_the_scopes_the_run_table_gives_it():
    # 08: torch vs numpy (2 shared rounds, 1 set aside) read "no typical paired scatter stood in" while its group's
    # other pair rested on the group's typical scatter: pair_verdicts judged it among its own two rows only
    df = pd.DataFrame(_quiet_group() + _slowed_pair())
    run = sc.speedup_vs_baseline(df, baseline_variant="lib", baseline_backend="numpy")
    want = run[run["variant"] == "fast"].iloc[0]
    got = pair_verdicts(df, "lib", "fast", "numpy").iloc[0]
    assert got["basis"] == want["basis"] == "2 paired rounds (1 set aside by the slow host)"
    assert got["noise"] == want["noise"] and got["ci_low"] == want["ci_low"] and got["ci_high"] == want["ci_high"]


def test_a_summary_lists_a_disturbed_pair_with_quartiles_apart_by_its_direction():
    # 01: "portable @ opencl-0 ... could not be told from it" right after "numpy @ numpy was faster than portable"
    v = {"verdict": "slower", "speedup": 0.04, "ci_low": 0.03, "ci_high": 0.05, "floor": 0.2, "basis": "paired rounds",
         "cells_disturbed": 1, "quartiles_apart": "slower"}
    assert summary_reading(v) == "slower, disturbed"
    assert summary_reading({**v, "quartiles_apart": "faster"}) == "faster, disturbed"
    assert summary_reading({**v, "quartiles_apart": ""}) == "inconclusive"
    assert summary_reading({**v, "cells_disturbed": 0}) == "slower"
