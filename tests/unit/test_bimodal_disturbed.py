"""A disturbed pair with a bimodal side: the direction is settled where every mode lies on one side of the other
cell past the noise, and every sentence on a bimodal pair says it is bimodal (06, one core busy: "could not tell
float16 from float32: the comparison was disturbed" beside float32 modes of 1.03 ms and 1.92 ms against float16's
28.8 ms, both 15-28x apart)."""

import json

from workbench.report import claims


def pair(f32_rounds, f16_median, speedup, lo, hi, floor):
    a = {"round_medians_s": json.dumps(f32_rounds), "median_s": sorted(f32_rounds)[len(f32_rounds) // 2]}
    b = {"round_medians_s": json.dumps([f16_median] * 3), "median_s": f16_median}
    return {"verdict": "slower", "speedup": speedup, "ci_low": lo, "ci_high": hi, "floor": floor,
            "median_a": a["median_s"], "median_b": f16_median, **claims.bimodal_fields(a, b, "float32", "float16")}


def test_every_mode_one_way_past_the_noise_settles_the_direction():
    v = pair([1.03e-3, 1.03e-3, 1.92e-3], 28.8e-3, 1 / 20, 1 / 60, 1 / 9, 1.6)
    assert claims.reading(v) == "inconclusive" and claims.settled_direction(v)[0] == "slower"
    sentence = claims.verdict_sentence(v, "float32", "float16", busy=True)
    assert sentence.startswith("float32 ran faster in both modes, by how much is unknown: float32's rounds fell in "
                               "two modes: 2 near 1.03 ms, 1 near 1.92 ms, against float16's median 28.8 ms")
    assert "could not tell" not in sentence and claims.DISTURBED in sentence
    claims.check_claim(v, sentence)


def test_modes_within_the_noise_or_an_interval_holding_no_change_settle_nothing():
    # the slow mode 1.6x from the other cell, inside a floor of ±160%: not past the noise
    near = pair([10e-3, 10e-3, 18e-3], 28.8e-3, 1 / 2.5, 1 / 8, 1 / 1.2, 1.6)
    # every mode far away, but the paired interval reaches past no change
    open_ = pair([1.03e-3, 1.03e-3, 1.92e-3], 28.8e-3, 1 / 20, 1 / 60, 1.2, 1.6)
    for v in (near, open_):
        assert claims.settled_direction(v) is None
        sentence = claims.verdict_sentence(v, "float32", "float16", busy=True)
        # a bimodal side is named in the disturbed sentence too (06 said only "disturbed")
        assert sentence.startswith("could not tell float16 from float32: float32's rounds fell in two modes")
        claims.check_claim(v, sentence)


def test_a_disturbed_rows_label_says_what_its_sentence_says():
    """07 (one core busy): "gelu_tanh ... ≥ 1.1× faster, too wide to read" beside a sentence that could not tell:
    a disturbed "faster" whose medians part with its interval reads "could not tell", so its row shows no direction
    and no bound; one whose interval settles the direction says only its size is unreadable."""
    import pandas as pd

    parted = {"verdict": "faster", "speedup": 1.9, "ci_low": 1.1, "ci_high": 3.3, "floor": 0.75,
              "median_a": 1.0, "median_b": 1.0}   # the medians give 1.0x, outside the interval
    sentence = claims.verdict_sentence(parted, "the other host", "this machine", wide_because="the machines differ")
    assert sentence.startswith("could not tell")
    for wide, label in ((True, "too wide to read"), (False, "disturbed")):
        row = claims.shown_verdicts(pd.DataFrame([parted]), wide=wide).iloc[0]
        assert row["verdict"] == label and pd.isna(row["ci_low"]) and pd.isna(row["ci_high"])
    settled = {**parted, "median_a": 1.9}
    row = claims.shown_verdicts(pd.DataFrame([settled]), wide=True).iloc[0]
    assert row["verdict"] == "faster, amount too wide to read" and row["ci_low"] == 1.1
    assert "ran at least 1.10× faster" in claims.verdict_sentence(settled, "the other host", "this machine",
                                                             wide_because="the machines differ")
