"""Issue 41's perf script draws each synthetic series' noise from a cell's own A/A evidence: its twin (round
medians and paired visits of identical code) where it has one, else its round spread / sqrt(rounds)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from history_store import cell_row, machine_record

from workbench.store.database import Store


def _perf():
    path = Path(__file__).resolve().parents[1] / "perf" / "history.py"
    spec = importlib.util.spec_from_file_location("perf_history41", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_aa_noise_is_each_cells_twin_or_round_spread(tmp_path):
    perf = _perf()
    st = Store(tmp_path / "s.sqlite")
    st.add_environment("env-a", machine_record())
    run = st.new_run(name="r", suite="quick", env_id="env-a")
    quiet = cell_row(run, "env-a", "k", "quiet", 1e-3, noise=0.02, rounds=4, precision=0.001)
    twin = cell_row(run, "env-a", "k", "twinned", 1e-3, noise=0.02, rounds=4, precision=0.001)
    twin["round_medians_s"] = [1e-3] * 4
    twin["aa_round_medians_s"] = [1e-3, 1.2e-3, 0.8e-3, 1.1e-3]  # a twin far noisier than the rounds' spread
    twin["aa_pair_d"] = [0.3, -0.3, 0.2, -0.2]
    st.record(quiet)
    st.record(twin)
    st.close()
    spreads, twins = perf.aa_spreads(tmp_path / "s.sqlite")
    sigmas = sorted(s for s, _ in spreads)
    assert twins == 1 and len(sigmas) == 2
    assert sigmas[0] == pytest.approx(0.02 / math.sqrt(4))  # the round spread / sqrt(rounds)
    assert sigmas[1] > 0.05  # the twin's floor, not the quiet rounds
    assert perf.between_spreads(tmp_path / "s.sqlite") == []  # one run: nothing measured twice


def test_the_ceiling_finds_big_steps_in_quiet_series_and_few_in_loud_ones():
    import numpy as np

    perf = _perf()
    assert perf.ceiling([0.01], 0.10, np.random.default_rng(1), n=300) > 0.95
    assert perf.ceiling([0.5], 0.10, np.random.default_rng(1), n=300) < 0.1
