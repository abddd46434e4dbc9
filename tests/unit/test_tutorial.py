"""workbench.tutorial: the one-line setup every tutorial notebook shares, and its backend choice."""

from __future__ import annotations

import os
import sys
import types

import pandas as pd
import pytest

from workbench import tutorial
from workbench.backends import registry
from workbench.roofs.peaks import ENV_AUTO_PEAKS


@pytest.fixture
def restore_colwidth():
    before = pd.get_option("display.max_colwidth"), pd.get_option("display.float_format")
    yield
    pd.set_option("display.max_colwidth", before[0])
    pd.set_option("display.float_format", before[1])


@pytest.mark.parametrize(("full", "ceilings", "expected"),
                         [(False, None, "0"), (True, None, "1"), (False, True, "1"), (True, False, "0")])
def test_begin_probes_ceilings_only_where_asked(monkeypatch, restore_colwidth, full, ceilings, expected):
    monkeypatch.setenv(ENV_AUTO_PEAKS, "unset by the test")
    tutorial.begin(full, ceilings=ceilings)
    assert os.environ[ENV_AUTO_PEAKS] == expected


def test_begin_sets_the_column_width(restore_colwidth):
    tutorial.begin(colwidth=33)
    assert pd.get_option("display.max_colwidth") == 33
    tutorial.begin(colwidth=None)
    assert pd.get_option("display.max_colwidth") is None


def test_begin_shows_tables_with_readable_floats_and_keeps_the_values(restore_colwidth):
    df = pd.DataFrame({"pct_peak_bw": [2.856318, 92.549975, 0.015445], "elements": [1234567.0, 43648.0, 0.0]})
    tutorial.begin()
    shown = df.to_string()
    assert "2.86" in shown and "92.5" in shown and "0.0154" in shown and "1,234,567" in shown
    assert "2.856318" not in shown and "92.549975" not in shown
    assert df["pct_peak_bw"].iloc[0] == 2.856318  # display only


def test_begin_turns_on_inline_figures_in_ipython_only(monkeypatch, restore_colwidth):
    calls = []
    shell = types.SimpleNamespace(run_line_magic=lambda *a: calls.append(a))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    tutorial.begin()
    assert calls == [("matplotlib", "inline")]
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    tutorial.begin()   # a plain Python process: nothing to turn on, and no error
    monkeypatch.delitem(sys.modules, "IPython")
    tutorial.begin()
    assert len(calls) == 1


def _fake_get(availability):
    def get(name):
        if name not in availability:
            raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(sorted(availability))}")
        probe = types.SimpleNamespace(available=availability[name])
        return types.SimpleNamespace(probe=lambda: probe)
    return get


def test_available_keeps_the_given_order_and_drops_what_is_missing(monkeypatch):
    monkeypatch.setattr(registry, "get", _fake_get({"numpy": True, "numba": False, "opencl": True}))
    assert tutorial.available("opencl", "numba", "numpy") == ["opencl", "numpy"]


def test_available_names_the_valid_backends_for_an_unknown_one(monkeypatch):
    monkeypatch.setattr(registry, "get", _fake_get({"numpy": True}))
    with pytest.raises(ValueError, match="unknown backend 'nunpy'; valid backends: numpy"):
        tutorial.available("nunpy")


def test_backends_for_a_full_run_is_every_backend(monkeypatch):
    monkeypatch.setattr(registry, "get", _fake_get({"numpy": True, "numba": False}))
    assert tutorial.backends_for(True, ["numpy", "numba"]) is None
    assert tutorial.backends_for(False, ["numpy", "numba"]) == ["numpy"]


def test_numpy_is_available_for_real():
    assert tutorial.available("numpy") == ["numpy"]


def test_a_small_run_opens_with_one_line_naming_what_it_leaves_out(capsys, restore_colwidth):
    tutorial.begin(small=True, leaves_out="the DRAM size, so the stream-rate question")
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("Check-sized run (SMALL = True)") and "reduced run only" in out[0]
    assert "leaves out the DRAM size, so the stream-rate question." in out[0]
    tutorial.begin(small=False)
    assert capsys.readouterr().out == ""


def test_a_small_run_must_say_what_it_leaves_out(restore_colwidth):
    with pytest.raises(ValueError, match="leaves_out"):
        tutorial.begin(small=True)


def test_skipped_sections_and_small_findings_say_so():
    assert tutorial.skipped_in_small("no DRAM size: the stream-rate question is not answered here.") == (
        "Not in this SMALL run: no DRAM size: the stream-rate question is not answered here.")
    assert "32³, 64³" in tutorial.of_small_sizes("32³, 64³") and "check sizes only" in tutorial.of_small_sizes("x")
    with pytest.raises(ValueError):
        tutorial.skipped_in_small(" ")
