"""Wording rules of issue 39 that tutorials and tables share: sizes lists that account for every size, a busy
machine said against the library's threshold, and a summary cell past ±50% said as disturbed."""

from __future__ import annotations

import pandas as pd

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.report.claim_words import busy_words, sizes_said
from workbench.report.claims import check_printed_intervals
from workbench.report.summary import summary_table

SIZES = ["n=64", "n=512", "n=2048"]


def test_a_sizes_list_accounts_for_every_size_measured():
    # 08 printed "(it ran faster at n=2048)" where n=64 and n=512 had been measured too
    said = sizes_said({"faster": ["n=2048"]}, SIZES)
    assert said == "faster at n=2048; not settled at n=64, n=512"
    assert all(s in said for s in SIZES)
    assert sizes_said({"faster": ["n=2048", "n=512"], "slower": ["n=64"]}, SIZES) == \
        "faster at every size but n=64 (slower there)"
    assert sizes_said({"faster": SIZES}, SIZES) == "faster at every size measured (n=64, n=512, n=2048)"
    assert sizes_said({}, SIZES) == "not settled at every size measured (n=64, n=512, n=2048)"


def test_busy_words_follow_the_threshold_of_the_noisy_mark():
    # 11 printed "on a machine this busy" at load 2.5 on 2 cores, citing floors seen at load 10
    busy = pd.DataFrame({"other_cpu_share": [0.1, 0.52]})
    said = busy_words(busy, cores=2)
    assert said == (f"other processes took up to 52% of the CPU, past the {BUSY_CPU_SHARE:.0%} (half a core of 2) "
                    "at which a row is marked busy")
    assert busy_words(pd.DataFrame({"other_cpu_share": [BUSY_CPU_SHARE]}), cores=2) == ""
    assert busy_words(pd.DataFrame({"load_avg_1m": [9.0]}), cores=2) == ""


def _row(median, iqr, share):
    return {"kernel": "axpby", "variant": "portable", "backend": "numpy", "dtype": "float32", "size_label": "n=1",
            "status": "ok", "median_s": median, "iqr_s": iqr, "other_cpu_share": share}


def test_a_summary_time_wider_than_half_its_median_reads_disturbed_with_the_rerun_hint():
    # 03, one core busy: "361 µs ± 172 µs" and wider printed as a spread that could inform
    table = summary_table(pd.DataFrame([_row(361e-6, 200e-6, 0.5), _row(100e-6, 10e-6, 0.0)]))
    wide, tight = table.to_dict("records")
    assert "±" not in wide["median ± IQR"] and "disturbed" in wide["median ± IQR"]
    assert "otherwise idle" in wide["notes"]   # its row saw a busy machine: rerun while it is otherwise idle
    assert "±" in tight["median ± IQR"] and "disturbed" not in tight["notes"]
    for cell in table["median ± IQR"]:
        check_printed_intervals(cell)


def test_the_ceiling_column_names_its_level_dram_included_and_only_where_known():
    # 03 printed "194 GB/s (probe)" beside "142 GB/s (probe)": which was L2 and which the LLC was left to guess
    from workbench.roofs.model import Roof, RoofKind, RoofSet

    rows = pd.DataFrame([{**_row(1e-3, 1e-5, 0.0), "gbps": 40.0, "ceiling_gbps": g, "ceiling_source": "measured",
                          "kernel": "saxpy", "bytes": 1e6, "flops": 1e5} for g in (194.0, 142.0, 45.0)])
    known = RoofSet("cpu", [Roof("cpu", RoofKind.L2, 194.0, "measured", "probe"),
                            Roof("cpu", RoofKind.LLC, 142.0, "measured", "probe"),
                            Roof("cpu", RoofKind.DRAM, 45.0, "measured", "probe")])
    named = summary_table(rows, roofs={("", "numpy"): known})["ceiling"].tolist()
    assert [c.split(", ")[-1] for c in named] == ["L2)", "LLC)", "DRAM)"]
    # from the rows alone (no peaks table) the level is not known, and none is named
    assert not any(level in c for c in summary_table(rows)["ceiling"] for level in ("L2", "LLC", "DRAM"))
