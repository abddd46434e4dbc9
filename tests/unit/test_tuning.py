"""Tunable parameters, the tuner and the tuned configuration used by later builds (issue 15).

A numpy variant of a copy of gemm stands in for a tunable kernel: it multiplies in k-blocks of BLOCK, and
BLOCK=3 drops the last partial block (a wrong configuration that must be recorded as such, never chosen).
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from workbench.catalog import Tunable, get_variant, registry, variant
from workbench.measure import Cell, CheckOnly, run_cell
from workbench.tuning import device_fingerprint, shape_class

KERNEL = "gemm_tuning_test"


def _blocked(ctx):
    block = ctx.config["BLOCK"]
    assert set(ctx.config) == {"BLOCK", "ORDER"}

    def run(inp, out):
        a, b = inp["a"], inp["b"]
        k = a.shape[1]
        stop = k if block != 3 else k - k % block  # BLOCK=3 forgets the last partial k-block
        acc = np.zeros(out["out"].shape, dtype=out["out"].dtype)
        for k0 in range(0, stop, block):
            acc += a[:, k0:k0 + block] @ b[k0:k0 + block, :]
        out["out"][...] = acc
    return run


@pytest.fixture
def tunable(temp_kernels):
    temp_kernels(KERNEL, like="gemm")
    variant(KERNEL, "blocked", "numpy", description="k-blocked numpy matmul",
            tunables=(Tunable("BLOCK", (3, 8, 16, 32), 16), Tunable("ORDER", ("ij", "ji"), "ij")),
            restrictions=("BLOCK != 32 or ORDER == 'ij'",))(_blocked)
    return get_variant(KERNEL, "blocked")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "config.json"))
    monkeypatch.delenv("WORKBENCH_TUNED", raising=False)
    return tmp_path


def test_space_keeps_restrictions_and_defaults(tunable):
    space = tunable.space()
    assert len(space) == 4 * 2 - 1 and {"BLOCK": 32, "ORDER": "ji"} not in space
    assert tunable.default_config() == {"BLOCK": 16, "ORDER": "ij"}


@pytest.mark.parametrize(("config", "words"), [
    ({"BLOCK": 5}, ["BLOCK=5", "valid BLOCK: 3, 8, 16, 32"]),
    ({"TILE": 8}, ["no tunable 'TILE'", "valid tunables: BLOCK, ORDER"]),
    ({"BLOCK": 32, "ORDER": "ji"}, ["breaks the restriction", "BLOCK != 32"]),
])
def test_bad_configuration_names_the_key_and_choices(tunable, config, words):
    with pytest.raises(ValueError) as err:
        tunable.check_config(config)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_defaults_breaking_a_restriction_are_refused(temp_kernels):
    temp_kernels(KERNEL, like="gemm")
    with pytest.raises(ValueError, match="breaks the restriction"):
        variant(KERNEL, "bad", "numpy", tunables=(Tunable("B", (1, 2), 1),), restrictions=("B > 1",))(_blocked)


def test_tunable_default_must_be_a_value():
    with pytest.raises(ValueError, match="not one of"):
        Tunable("B", (1, 2), 4)


def test_configured_variants_by_name(tunable):
    v = registry.configured(KERNEL, "blocked", {"BLOCK": 8})
    assert v.name == "blocked[BLOCK=8,ORDER=ij]" and not v.tunables
    assert get_variant(KERNEL, "blocked[ORDER=ji,BLOCK=3]").name == "blocked[BLOCK=3,ORDER=ji]"
    with pytest.raises(ValueError, match="valid BLOCK: 3, 8, 16, 32"):
        get_variant(KERNEL, "blocked[BLOCK=7]")


def test_configured_variant_is_verified(tunable, isolated):
    p = {"m": 9, "n": 7, "k": 11}
    good = run_cell(Cell.make(KERNEL, "blocked[BLOCK=8]", "numpy", "float32", p), CheckOnly((0,)))
    bad = run_cell(Cell.make(KERNEL, "blocked[BLOCK=3]", "numpy", "float32", p), CheckOnly((0,)))
    assert good["status"] == "ok" and bad["status"] == "incorrect"


def test_the_catalog_resolves_configurations_through_the_installed_resolver(tunable, monkeypatch):
    """The catalog never imports the tuner: import workbench installs tuning's resolver in the registry, and a
    tunable build asks whatever resolver is installed (here a stand-in) for its configuration and label."""
    from workbench.backends import registry as backends
    from workbench.catalog.spec import BuildContext
    from workbench.tuning import resolve

    assert registry._resolver is resolve.resolve_config
    seen = []

    def stand_in(v, spec, ctx):
        seen.append((v.name, spec.name))
        return {"BLOCK": 8, "ORDER": "ji"}, "picked by the stand-in"

    monkeypatch.setattr(registry, "_resolver", registry.given_or_default)
    registry.set_config_resolver(stand_in)
    call = tunable.build(BuildContext(backend=backends.get("numpy"), params={"m": 4, "n": 4, "k": 4},
                                      dtype="float64"))
    assert seen == [("blocked", KERNEL)] and call.best_config == "picked by the stand-in"
    registry.set_config_resolver(registry.given_or_default)
    default = tunable.build(BuildContext(backend=backends.get("numpy"), params={"m": 4, "n": 4, "k": 4},
                                         dtype="float64"))
    assert not hasattr(default, "best_config")  # defaults, unlabelled: the catalog alone knows no tuning

def test_shape_class_and_fingerprint():
    from workbench.backends import registry as backends
    from workbench.catalog import get_kernel

    spec = get_kernel("gemm")
    assert shape_class(spec, {"m": 256, "n": 256, "k": 256}, "float32") == "work 2^25"
    assert shape_class(spec, {"m": 250, "n": 260, "k": 256}, "float32") == "work 2^25"
    assert shape_class(spec, {"m": 1024, "n": 1024, "k": 1024}, "float32") == "work 2^31"
    fp = device_fingerprint(backends.get("numpy"))
    assert fp.startswith("numpy|") and "cores" in fp  # a CPU: its vector ISA and core count are in the key


def _tune(**kw):
    from workbench.tuning import tune

    return tune(KERNEL, "blocked", "numpy", params={"m": 40, "n": 30, "k": 50}, progress=False, **kw)


def test_grid_tuning_verifies_stores_and_keeps_the_best(tunable, isolated):
    pytest.importorskip("optuna")
    from workbench import config
    from workbench.measure.timer import TimingConfig

    store = isolated / "s.sqlite"
    seen = []
    result = _tune(strategy="grid", budget_s=60, store=str(store), on_trial=seen.append, confirm=0,
                   timing=TimingConfig(budget_s=0.02, min_samples=3, warmup_s=0.0))
    assert len(result.trials) == len(tunable.space()) == len(seen)
    assert result.trials[0].config == tunable.default_config()  # the hand-picked one is measured first
    wrong = [t for t in result.trials if t.config["BLOCK"] == 3]
    assert wrong and all(t.status == "incorrect" and t.median_s is None for t in wrong)
    assert result.best is not None and result.best.config["BLOCK"] != 3
    assert result.best.median_s == min(t.median_s for t in result.trials if t.status == "ok")
    best_so_far = [t.best_so_far_s for t in result.trials if t.best_so_far_s is not None]
    assert best_so_far == sorted(best_so_far, reverse=True)
    rows = sqlite3.connect(store).execute(
        "SELECT variant, status, tuned_config FROM results WHERE run_id = ?", (result.run_id,)).fetchall()
    assert len(rows) == len(result.trials)
    assert all(tc and v == f"blocked[{tc}]" for v, _, tc in rows)
    assert sum(s == "incorrect" for _, s, _ in rows) == len(wrong)
    (entry,) = config.read()["tuned"]
    assert entry["config"] == result.best.config and entry["shape_class"] == result.shape_class
    assert entry["device"] == result.device and entry["dtype"] == "float32" and entry["run_id"] == result.run_id


def test_builds_use_the_tuned_configuration_unless_disabled(tunable, isolated, monkeypatch):
    pytest.importorskip("optuna")
    result = _tune(strategy="random", budget_s=30, max_trials=3, store=str(isolated / "s.sqlite"), confirm=0)
    assert result.kept is result.best is not None
    cell = Cell.make(KERNEL, "blocked", "numpy", "float32", {"m": 41, "n": 30, "k": 50})  # same shape class
    from workbench.measure.timer import TimingConfig

    timing = TimingConfig(budget_s=0.02, min_samples=3, warmup_s=0.0)
    row = run_cell(cell, timing)
    label = ",".join(f"{k}={v}" for k, v in result.kept.config.items())
    assert row["status"] == "ok" and row["tuned_config"].startswith(f"{label} (tuned for {result.shape_class}")
    assert result.run_id in row["message"]
    other = run_cell(Cell.make(KERNEL, "blocked", "numpy", "float32", {"m": 400, "n": 300, "k": 500}), timing)
    assert other["tuned_config"] is None  # another shape class: the defaults
    monkeypatch.setenv("WORKBENCH_TUNED", "0")
    assert run_cell(cell, timing)["tuned_config"] is None


def test_confirmation_keeps_a_candidate_only_when_faster(tunable, isolated):
    pytest.importorskip("optuna")
    from workbench import config
    from workbench.measure.timer import TimingConfig

    store = isolated / "s.sqlite"
    result = _tune(strategy="grid", budget_s=60, store=str(store), confirm=2, confirm_rounds=3,
                   timing=TimingConfig(budget_s=0.02, min_samples=3, warmup_s=0.0))
    assert result.confirm_run_id and result.verdict is not None and len(result.confirmed_s) == 3
    # every candidate's verdict is kept, the reported one among them, judged as the tuner judged it
    assert len(result.candidates) == 2 and result.verdict["against"] in [c["against"] for c in result.candidates]
    reported = next(c for c in result.candidates if c["against"] == result.verdict["against"])
    assert reported["speedup"] == result.verdict["speedup"] and reported["verdict"] == result.verdict["verdict"]
    rows = sqlite3.connect(store).execute("SELECT variant, status, rounds FROM results WHERE run_id = ?",
                                          (result.confirm_run_id,)).fetchall()
    assert len(rows) == 3 and all(s == "ok" and r == 3 for _, s, r in rows)  # default + 2 candidates, 3 rounds
    if result.verdict["settled"]:
        assert result.verdict["verdict"] == "faster"
        assert result.kept.config == result.verdict["against"] != result.default.config
    else:
        assert result.kept.config == result.default.config
    (entry,) = config.read()["tuned"]
    assert entry["config"] == result.kept.config
    assert entry["verdict"] == ("not settled" if result.verdict["verdict"] == "faster" and not result.verdict["settled"]
                                else result.verdict["verdict"])


@pytest.mark.parametrize(("row", "kept"), [
    ({"verdict": "faster", "floor": 0.04, "ci_low": 1.05, "ci_high": 1.15, "median_a": 1.1, "median_b": 1.0}, True),
    # a disturbed "faster" (only its bound informs): a 7-round rerun put such a gain in 0.985-1.031x
    ({"verdict": "faster", "floor": 0.9, "ci_low": 1.07, "ci_high": 3.0, "median_a": 1.1, "median_b": 1.0}, False),
    # the cells' own medians outside the interval: the pick was slower by its medians
    ({"verdict": "faster", "floor": 0.03, "ci_low": 1.06, "ci_high": 1.12, "median_a": 0.68, "median_b": 1.0}, False),
    ({"verdict": "same", "floor": 0.03, "ci_low": 0.98, "ci_high": 1.02, "median_a": 1.0, "median_b": 1.0}, False),
])
def test_the_tuner_keeps_a_candidate_only_on_a_settled_faster(row, kept):
    from workbench.tuning.search import settled_faster

    assert settled_faster(row) is kept


def test_bayes_strategy_runs(tunable, isolated):
    pytest.importorskip("optuna")
    result = _tune(strategy="bayes", budget_s=30, max_trials=4, store=str(isolated / "s.sqlite"), save=False,
                   confirm=0)
    assert len(result.trials) == 4 and result.saved_to is None
    assert len({tuple(t.config.items()) for t in result.trials}) == 4  # no configuration measured twice


def test_numba_tiled_gemm_declares_its_tiles():
    v = get_variant("gemm", "numba-tiled")
    assert {t.name for t in v.tunables} == {"NB", "KC", "MC"}
    assert {"NB": 512, "KC": 512, "MC": 64} not in v.space() and v.default_config() in v.space()
    assert {t.name for t in get_variant("gemm", "portable-tiled").tunables} == {"TILE"}


def test_numba_tiled_gemm_other_tiles_verify():
    pytest.importorskip("numba")
    row = run_cell(Cell.make("gemm", "numba-tiled[NB=64,KC=64,MC=16]", "numba", "float32",
                             {"m": 100, "n": 70, "k": 130}), CheckOnly((0, 1)))
    assert row["status"] == "ok", row["message"]


@pytest.mark.parametrize(("argv", "words"), [
    (["--variant", "numpy"], ["declares no tunable parameters", "tunable variants of gemm: numba-tiled"]),
    (["--variant", "numba-tiled", "--strategy", "annealing"], ["invalid choice", "grid"]),
    (["--variant", "numba-tiled", "--budget", "0"], ["--budget", "'0' is not a usable number of seconds"]),
    (["--variant", "numba-tiled", "--size", "3x3"], ["gemm takes m x n x k"]),
    (["--variant", "numba-tiled", "--trials", "0"], ["--trials", "'0' is out of range", "1 or more"]),
    (["--variant", "numba-tiled", "--confirm-rounds", "2"], ["--confirm-rounds", "'2' is out of range", "from 3"]),
    (["--variant", "nope"], ["no variant 'nope'", "valid variants"]),
])
def test_tune_cli_bad_input(argv, words, isolated, capsys):
    from workbench.cli import main

    backend = "numpy" if "numpy" in argv else "numba"
    rc = main(["tune", "--kernel", "gemm", "--backend", backend, "--store", str(isolated / "s.sqlite"), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and all(w in err for w in words), err


def test_tune_without_optuna_names_the_extra(isolated, capsys, monkeypatch):
    """The core install has no optuna: tuning says which extra installs it, and stores nothing."""
    import sys

    pytest.importorskip("numba")
    from workbench.cli import main

    monkeypatch.setitem(sys.modules, "optuna", None)  # `import optuna` raises ImportError
    rc = main(["tune", "--kernel", "gemm", "--variant", "numba-tiled", "--backend", "numba",
               "--store", str(isolated / "s.sqlite")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "kernel-workbench[tune]" in err, err
    assert not (isolated / "s.sqlite").exists()


def test_tuned_label_says_when_the_hand_picked_tiles_were_kept():
    """A tuning whose confirmation found nothing faster keeps the defaults: the row must not call them tuned."""
    from workbench.tuning.resolve import tuned_label

    default = {"NB": 256, "KC": 256}
    kept = {"shape_class": "work 2^28", "run_id": "R1", "verdict": "inconclusive"}
    assert tuned_label(default, kept, default) == ("NB=256,KC=256 (hand-picked, kept by run R1 for work 2^28: "
                                                   "no candidate was confirmed faster)")
    won = dict(kept, verdict="faster")
    assert tuned_label({"NB": 128, "KC": 256}, won, default) == "NB=128,KC=256 (tuned for work 2^28 by run R1)"
    # a search without confirmation, or an older file without a verdict, still reads "tuned for"
    assert tuned_label(default, {"shape_class": "work 2^28"}, default) == "NB=256,KC=256 (tuned for work 2^28)"


def test_the_confirmation_reports_an_undisturbed_candidate_over_a_disturbed_one():
    """With nothing settled faster, the candidate set against the default is ranked by an estimate that informs:
    a disturbed comparison's point estimate (here 1.4x, floor ±80%) ranks nothing."""
    import pandas as pd

    from workbench.tuning.search import confirmation_pick

    table = pd.DataFrame([
        {"variant": "noisy", "speedup": 1.4, "ci_low": 0.5, "ci_high": 3.0, "floor": 0.8, "verdict": "inconclusive"},
        {"variant": "calm", "speedup": 1.05, "ci_low": 0.95, "ci_high": 1.15, "floor": 0.1, "verdict": "inconclusive"}])
    faster, pick = confirmation_pick(table)
    assert faster.empty and pick["variant"] == "calm"
    faster, pick = confirmation_pick(table.iloc[:1])   # only a disturbed one: it is still the one reported
    assert pick["variant"] == "noisy"
    # every one disturbed: the first (the search's lowest single timing), never the highest disturbed estimate
    both = pd.DataFrame([{**table.iloc[0].to_dict(), "variant": "first", "speedup": 1.1},
                         {**table.iloc[0].to_dict(), "variant": "second", "speedup": 2.5}])
    assert confirmation_pick(both)[1]["variant"] == "first"
    won = pd.concat([table, pd.DataFrame([{"variant": "win", "speedup": 1.3, "ci_low": 1.2, "ci_high": 1.4,
                                           "floor": 0.05, "verdict": "faster", "median_a": 1.3, "median_b": 1.0}])])
    faster, pick = confirmation_pick(won)
    assert list(faster["variant"]) == ["win"] and pick["variant"] == "win"
    assert confirmation_pick(table.iloc[:0])[1] is None


def test_a_disturbed_confirmation_prints_no_estimate():
    """Tutorial 11's reader: `workbench tune` printed a disturbed candidate's "1.40x [0.50, 3.00], floor ±80%"
    (an interval wider than ±50%, which informs nothing)."""
    from workbench.cli.cmd_tune import summary
    from workbench.report.claims import check_printed_intervals
    from workbench.tuning.search import Trial, TuneResult

    default = Trial(0, {"NB": 256}, "ok", 2e-3)
    other = Trial(1, {"NB": 512}, "ok", 1.5e-3)
    result = TuneResult("gemm", "numpy-tiled", "numpy", "float32", {"m": 512}, "exhaustive", "cpu", "512", "r1",
                        trials=[default, other], best=other, default=default, space_size=2, chosen=default,
                        confirm_run_id="c1",
                        verdict={"speedup": 1.4, "ci_low": 0.5, "ci_high": 3.0, "floor": 0.8,
                                 "verdict": "inconclusive", "against": {"NB": 512}, "median_a": 2e-3,
                                 "median_b": 1.5e-3, "settled": False})
    text = summary(result)
    assert "NB=512 vs hand-picked: disturbed" in text and "1.40x" not in text and "±80%" not in text
    check_printed_intervals(text)


def test_a_tune_stopped_in_its_confirmation_leaves_its_run_interrupted_not_finished(tunable, isolated, monkeypatch):
    """Issue 38, noticed: a tune SIGTERMed while it confirmed its candidates stored its run "finished", as if a
    configuration had been kept."""
    pytest.importorskip("optuna")
    from workbench.measure.timer import TimingConfig
    from workbench.tuning import search

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # what SIGTERM raises on the main thread (workbench.cli.termination)

    monkeypatch.setattr(search, "_confirm", stopped)
    store = isolated / "s.sqlite"
    with pytest.raises(KeyboardInterrupt):
        _tune(strategy="grid", budget_s=60, store=str(store), confirm=2,
              timing=TimingConfig(budget_s=0.01, min_samples=3, warmup_s=0.0))
    statuses = {s for (s,) in sqlite3.connect(store).execute("SELECT status FROM runs")}
    assert statuses == {"interrupted"}
    done = _tune(strategy="grid", budget_s=60, store=str(store), confirm=0,
                 timing=TimingConfig(budget_s=0.01, min_samples=3, warmup_s=0.0))
    (status,) = sqlite3.connect(store).execute("SELECT status FROM runs WHERE run_id = ?", (done.run_id,)).fetchone()
    assert status == "finished"


def test_search_trials_run_on_a_cell_thread_as_the_confirmation_does(tunable, isolated, monkeypatch):
    """Issue 39, tutorial 11: timed in the calling thread (a notebook kernel's main thread), every search trial read
    1.3-3.9 ms where the confirmation's in-process sweep, on its cell thread, measured the same tiles at 0.13-0.24
    ms; the search's cells now run on a cell thread too, so a trial and a confirmation row are taken alike."""
    pytest.importorskip("optuna")
    import threading

    from workbench.measure.timer import TimingConfig
    from workbench.tuning import search

    threads = []

    def recording(*args, **kwargs):
        threads.append(threading.current_thread())
        return run_cell(*args, **kwargs)

    monkeypatch.setattr(search, "run_cell", recording)
    result = _tune(strategy="grid", budget_s=60, max_trials=2, store=str(isolated / "s.sqlite"), save=False,
                   confirm=0, timing=TimingConfig(budget_s=0.01, min_samples=3, warmup_s=0.0))
    assert len(result.trials) == 2 and all(t.status == "ok" for t in result.trials)
    assert threads and threading.current_thread() not in threads
    assert {t.name for t in threads} == {"workbench-tune"}
