"""Sizes from the machine, and tables shown as their sentences read (issue 39): the quick suite's and the
tutorials' working sets come from the measured cache sizes, so "past the last-level cache" is true on a host
with a 32 MiB LLC and on one with 480 MiB."""

from __future__ import annotations

import pytest

from workbench import tutorial
from workbench.catalog import registry as catalog
from workbench.sweep import suites
from workbench.sweep import working_sets as ws_module
from workbench.sweep.working_sets import DRAM_FAMILIES, MAX_LARGE_WORKING_SET, working_sets

MiB = 2**20
#: (per-core cache, last-level cache) of the two hosts the issue names.
HOSTS = {"32 MiB LLC": (MiB, 32 * MiB), "480 MiB LLC": (MiB, 480 * MiB)}


@pytest.fixture(params=list(HOSTS), ids=list(HOSTS))
def host(request, monkeypatch):
    per_core, llc = HOSTS[request.param]
    monkeypatch.setattr(ws_module, "cache_sizes", lambda: (per_core, llc))
    return per_core, llc


def test_the_dram_working_set_is_past_the_last_level_cache(host):
    per_core, llc = host
    ws = working_sets()
    assert ws.cache <= per_core // 2 and ws.dram == 2 * llc and ws.past_llc(ws.dram)
    assert ws.larger <= MAX_LARGE_WORKING_SET  # the families that are not memory-bound stay cheap


def test_quick_memory_bound_families_run_past_the_llc_and_the_others_stay_capped(host):
    _, llc = host
    cells = suites.suite_spec("quick", backends=["numpy"]).cells()
    for family, kernel, _ in suites.QUICK_FAMILIES:
        spec = catalog.get_kernel(kernel)
        largest = max(spec.bytes_moved(dict(c.params), 4) for c in cells if c.kernel == kernel)
        if family in DRAM_FAMILIES:
            assert llc < largest <= 2 * llc, (kernel, largest)
        else:
            assert largest <= MAX_LARGE_WORKING_SET, (kernel, largest)


def test_the_sizes_note_says_what_serves_each_size(host):
    _, llc = host
    note = suites.quick_sizes_note()
    assert f"saxpy and sum (memory-bound) at {2 * llc // MiB} MiB (twice the {llc // MiB} MiB last-level cache: " \
           "from DRAM)" in note
    assert "the others at 32 MiB (past the per-core cache" in note and "which may serve all of it" in note
    assert "DRAM size" not in suites.SUITE_HELP["quick"]  # only the memory-bound families are sized for DRAM


def test_tutorial_sizes_straddle_the_caches(host):
    per_core, llc = host
    spec = catalog.get_kernel("saxpy")
    small, large = tutorial.cache_and_dram_sizes("saxpy")
    assert spec.bytes_moved(small, 4) <= per_core // 2
    assert llc < spec.bytes_moved(large, 4) <= 2 * llc
    gelu = catalog.get_kernel("bias_gelu")
    small, large = tutorial.cache_and_dram_sizes("bias_gelu")
    assert gelu.bytes_moved(small, 4) <= per_core // 2 < llc < gelu.bytes_moved(large, 4)
    # the last-level cache's size: large enough for a call's fixed costs not to set its rate, still resident
    small, large = tutorial.cache_and_dram_sizes("bias_gelu", in_cache="llc")
    assert per_core // 2 < gelu.bytes_moved(small, 4) <= llc // 4 < llc < gelu.bytes_moved(large, 4)
    with pytest.raises(ValueError, match="in_cache='l2'; valid: 'per-core', 'llc'"):
        tutorial.cache_and_dram_sizes("bias_gelu", in_cache="l2")


def test_an_unknown_last_level_cache_claims_nothing_past_it(monkeypatch):
    monkeypatch.setattr(ws_module, "cache_sizes", lambda: (None, None))
    ws = working_sets()
    assert ws.dram == ws.larger and not ws.past_llc(ws.dram)
    assert "cache sizes unknown" in suites.quick_sizes_note()


def test_a_disturbed_comparison_is_shown_as_its_sentence_says():
    import pandas as pd

    from workbench.report.claims import shown_verdicts

    table = pd.DataFrame({"verdict": ["inconclusive", "faster", "slower", "faster"],
                          "speedup": [1.2, 3.0, 0.2, 1.2], "ci_low": [0.6, 1.5, 0.1, 1.1],
                          "ci_high": [2.3, 9.0, 0.4, 1.3], "floor": [0.92, 0.6, 0.7, 0.1]})
    shown = shown_verdicts(table)
    assert list(shown["verdict"]) == ["disturbed", "faster, disturbed", "slower, disturbed", "faster"]
    assert shown["floor"].isna().tolist() == [True, True, True, False]
    assert shown["speedup"].isna().tolist() == [True, True, True, False]
    assert shown["ci_low"].isna().tolist() == [True, False, True, False]  # the bound "at least 1.50x" quotes
    assert shown["ci_high"].isna().tolist() == [True, True, False, False]
