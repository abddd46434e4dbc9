"""Issue 39, tutorial 10: each sentence promises only what the run prints, and a rule's thresholds are stated where
the rule is defined. 10 deferred a kink's cause to "the bandwidth lines below", which said nothing of it in that run;
said the weights were read "from cache, not DRAM" after the first call, unmeasured and twice; and called exponents
linear or not, and steps kinks, by cuts it never stated."""

import re
from pathlib import Path

SOURCE = (Path(__file__).resolve().parents[2] / "notebooks" / "_nb_10_where_decode_time_goes.py").read_text()


def test_the_exponent_cuts_in_the_markdown_are_the_codes():
    steeper = re.search(r"^STEEPER = ([0-9.]+)", SOURCE, re.M).group(1)
    lo, hi = re.search(r'"close to linear" if ([0-9.]+) <= k <= ([0-9.]+)', SOURCE).groups()
    assert f"steeper than the one before it by {float(steeper):g} or more" in SOURCE
    assert f'within {float(lo):g}-{float(hi):g} is "close to linear"' in SOURCE
    assert "read from the medians\nalone, with no interval" in SOURCE


def test_no_sentence_promises_what_the_run_may_not_print():
    assert "the bandwidth lines below say whether" not in SOURCE
    assert "reads them from \"\n" not in SOURCE and "cache, not DRAM" not in SOURCE
    assert SOURCE.count("can stay in cache between calls (not") == 1
    assert "so each step reads it from DRAM" not in SOURCE
