"""Issue 41: runs on a timeline. What a run records of its code (commit, dirty, tag, version), series per
cell and machine, change points with a noise-set penalty and a threshold, and `workbench history`."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess

import numpy as np
import pytest
from history_store import machine_record, write_history

from workbench.cli import main
from workbench.history.changes import find_changes
from workbench.history.provenance import code_commits, commit_label, folder_commit
from workbench.history.series import SeriesFilter, machine_of, point_sigma, read_series
from workbench.history.timeline import build_history
from workbench.store.database import Store


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "cat"
    (root / "k1").mkdir(parents=True)
    (root / "k1" / "spec.py").write_text("x = 1\n")
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    return root


def test_a_catalog_in_git_records_its_commit_and_dirty_state(repo):
    clean = code_commits([repo / "k1"])
    assert len(clean) == 1 and len(clean[0]["commit"]) == 40 and clean[0]["dirty"] is False
    (repo / "k1" / "spec.py").write_text("x = 2\n")
    dirty = folder_commit(repo, [repo / "k1"])
    assert dirty["dirty"] is True and dirty["commit"] == clean[0]["commit"]
    assert commit_label([dirty]) == dirty["commit"][:10] + "+"


def test_outside_git_the_entry_says_why(tmp_path):
    (tmp_path / "k").mkdir()
    entry = code_commits([tmp_path / "k"])[0]
    assert "commit" not in entry and entry["reason"] == "not in a git repository"
    assert "does not exist" in folder_commit(tmp_path / "nope")["reason"]


def test_a_run_stores_tag_version_and_commits_and_they_travel(tmp_path):
    st = Store(tmp_path / "a.sqlite")
    write_history(st, {("k", "v"): [1e-3, 1e-3]})
    run = st.run(st.latest_run_id())
    assert run["tag"] == "t2" and run["workbench_version"] and run["code_commits"][0]["commit"].endswith("1")
    out = st.export(None, tmp_path / "e.json")
    other = Store(tmp_path / "b.sqlite")
    other.import_file(out)
    assert other.run(run["run_id"])["code_commits"] == run["code_commits"]
    assert other.run(run["run_id"])["tag"] == "t2"


def test_an_export_with_a_bad_code_commits_field_is_refused(tmp_path):
    st = Store(tmp_path / "a.sqlite")
    write_history(st, {("k", "v"): [1e-3]})
    path = st.export(None, tmp_path / "e.json")
    doc = json.loads(path.read_text())
    doc["runs"][0]["code_commits"] = [{"commit": "x", "dirty": "yes"}]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="dirty"):
        Store(tmp_path / "b.sqlite").import_file(path)


def test_a_store_from_before_the_history_columns_stays_readable(tmp_path):
    path = tmp_path / "old.sqlite"
    st = Store(path)
    write_history(st, {("k", "v"): [1e-3, 1.1e-3]})
    st.close()
    with sqlite3.connect(path) as c:  # as an older workbench wrote it
        for col in ("tag", "workbench_version", "code_commits"):
            c.execute(f"ALTER TABLE runs DROP COLUMN {col}")
    ro = Store(path, read_only=True)
    series, runs = read_series(ro.connection)
    assert len(series) == 1 and len(series[0].points) == 2
    old = ro.run(next(iter(runs)))
    assert "tag" not in old
    # a run from before them falls back on the workbench checkout's commit, when it recorded one
    assert all(r.tag is None and [c.get("commit") for c in r.commits] == ([old["git_commit"]] if old["git_commit"]
                                                                           else []) for r in runs.values())
    ro.close()
    rw = Store(path)  # opened for writing: the columns come back, empty
    assert {"tag", "code_commits"} <= {r[1] for r in rw.connection.execute("PRAGMA table_info(runs)")}


def test_the_fingerprint_is_the_hardware_and_versions_are_events():
    a = machine_of("e1", machine_record(numpy="2.0.0"))
    b = machine_of("e2", machine_record(numpy="2.1.0"))
    c = machine_of("e3", machine_record(cpu="Other CPU"))
    assert a.id == b.id != c.id and a.versions["numpy"] == "2.0.0"
    assert machine_of("e4", None).id != a.id


def test_runs_of_two_machines_never_share_a_series_and_an_upgrade_is_an_event(tmp_path):
    st = Store(tmp_path / "a.sqlite")
    write_history(st, {("k", "v"): [1e-3] * 3}, env_id="env-a")
    write_history(st, {("k", "v"): [2e-3] * 3}, env_id="env-b", record=machine_record(cpu="Other CPU"),
                  start_day=5)
    write_history(st, {("k", "v"): [1e-3] * 2}, env_id="env-c", record=machine_record(numpy="9.9"),
                  start_day=9)
    series, _ = read_series(st.connection)
    assert sorted(len(s.points) for s in series) == [3, 5]
    five = next(s for s in series if len(s.points) == 5)
    assert [(e.index, e.changes) for e in five.events()] == [(3, ("numpy 2.0.0 -> 9.9",))]
    only_b, _ = read_series(st.connection, SeriesFilter(machine="other cpu"))
    assert len(only_b) == 1 and only_b[0].machine.label.startswith("Other CPU")


def test_a_point_sigma_comes_from_its_own_rounds_and_precision():
    assert point_sigma(0.1, 4, 0.01) == pytest.approx(0.05)
    assert point_sigma(None, None, 0.0392) == pytest.approx(0.02)
    assert point_sigma(math.nan, 3, None) == 0.0


def _series(tmp_path, values, noise=0.01):
    st = Store(tmp_path / "s.sqlite")
    write_history(st, {("k", "v"): values}, noise={("k", "v"): noise})
    return st, read_series(st.connection)[0][0]


def test_a_step_is_found_at_its_run_with_an_interval_and_commits(tmp_path):
    rng = np.random.default_rng(3)
    values = list(np.exp(rng.normal(0, 0.01, 20)) * 1e-3)
    values[12:] = [v * 1.15 for v in values[12:]]
    _, s = _series(tmp_path, values)
    changes, sigma = find_changes(s)
    assert [c.index for c in changes] == [12] and 0.01 <= sigma < 0.03
    c = changes[0]
    assert c.regression and c.low < 0.15 < c.high and c.low > 0.1
    assert (c.runs_before, c.runs_after) == (12, 8)
    assert c.commit_before == f"c{11:09x}" and c.commit_after == f"c{12:09x}" and not c.same_code


def test_noise_alone_and_steps_below_the_threshold_are_not_changes(tmp_path):
    rng = np.random.default_rng(4)
    flat = list(np.exp(rng.normal(0, 0.02, 40)) * 1e-3)
    _, s = _series(tmp_path, flat, noise=0.02)
    assert find_changes(s)[0] == []
    small = [v * (1.03 if i >= 20 else 1.0) for i, v in enumerate(np.exp(rng.normal(0, 0.002, 40)) * 1e-3)]
    _, s2 = _series(tmp_path / "b", small, noise=0.002)
    assert find_changes(s2, threshold=0.05)[0] == []
    assert [c.index for c in find_changes(s2, threshold=0.01)[0]] == [20]


def test_one_wild_run_is_not_a_change(tmp_path):
    values = [1e-3] * 15
    values[7] = 3e-3
    _, s = _series(tmp_path, values)
    assert find_changes(s)[0] == []


def test_history_gate_exits_1_naming_the_series_and_run(tmp_path, capsys):
    st = Store(tmp_path / "g.sqlite")
    rng = np.random.default_rng(5)
    slow = [1e-3 * math.exp(rng.normal(0, 0.01)) * (1.2 if i >= 6 else 1.0) for i in range(12)]
    ids = write_history(st, {("k", "slow"): slow, ("k", "flat"): [2e-3] * 12})
    st.close()
    store = str(tmp_path / "g.sqlite")
    assert main(["history", "--store", store, "--fail-on-regression", "10"]) == 1
    out, err = capsys.readouterr()
    assert "k slow @ numpy" in err and ids[6] in err and "flat" not in err
    assert "slower +" in out
    assert main(["history", "--store", store, "--fail-on-regression", "30"]) == 0
    capsys.readouterr()
    assert main(["history", "--store", store, "--kernel", "k", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    changed = [s for s in doc["series"] if s["changes"]]
    assert len(changed) == 1 and changed[0]["changes"][0]["run_after"] == ids[6]
    assert len(changed[0]["points"]) == 12 and changed[0]["points"][0]["tag"] == "t1"
    assert main(["history", "--store", store, "--since", ids[8]]) == 0  # the step is before: no change now
    assert "no changes" in capsys.readouterr().out


def test_the_gate_leaves_a_step_of_the_same_code_to_the_machine(tmp_path, capsys):
    st = Store(tmp_path / "g.sqlite")
    rng = np.random.default_rng(5)
    slow = [1e-3 * math.exp(rng.normal(0, 0.01)) * (1.2 if i >= 6 else 1.0) for i in range(12)]
    write_history(st, {("k", "slow"): slow}, commits=["ab" * 20] * 12)  # one clean commit throughout
    st.close()
    assert main(["history", "--store", str(tmp_path / "g.sqlite"), "--fail-on-regression", "10"]) == 0
    out, err = capsys.readouterr()
    assert "slower +" in out and "same code on both sides" in out and "not gated: k slow" in err
    assert main(["history", "--store", str(tmp_path / "g.sqlite"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["series"][0]["changes"][0]["same_code"] is True


@pytest.mark.parametrize("argv, message", [
    (["--threshold", "-1"], "--threshold -1.0 is not a percentage"),
    (["--fail-on-regression", "nan"], "--fail-on-regression nan"),
    (["--since", "yesterday"], "--since 'yesterday' is neither a run id"),
    (["--kernel", "nope"], "--kernel nope: no such kernel"),
    (["--machine", "zzz"], "--machine 'zzz': no machine of"),  # was "no series" and exit 0
    (["--since", "2099-01-01", "--fail-on-regression", "5"], "no series to judge"),  # a gate passing on nothing
])
def test_bad_history_flags_are_one_line_errors(tmp_path, capsys, argv, message):
    st = Store(tmp_path / "g.sqlite")
    write_history(st, {("k", "v"): [1e-3] * 3})
    st.close()
    assert main(["history", "--store", str(tmp_path / "g.sqlite"), *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_history_of_many_runs_is_judged_whole(tmp_path):
    st = Store(tmp_path / "m.sqlite")
    rng = np.random.default_rng(6)
    medians = {("k", f"v{j}"): list(1e-3 * np.exp(rng.normal(0, 0.01, 60))) for j in range(5)}
    write_history(st, medians)
    h = build_history(st.connection, min_runs=10)
    assert len(h.series) == 5 and all(len(s.series.points) == 60 for s in h.series)
    assert h.regressions(5) == []


def test_the_report_has_a_history_section_only_with_several_runs(tmp_path):
    from workbench.report.model import build_report
    from workbench.report.render import markdown

    st = Store(tmp_path / "r.sqlite")
    rng = np.random.default_rng(7)
    write_history(st, {("k", "a"): [1e-3 * math.exp(rng.normal(0, 0.01)) * (1.2 if i >= 5 else 1) for i in range(10)],
                       ("k", "b"): [2e-3] * 10})
    report = build_report(st, st.latest_run_id())
    assert [s.id for s in report.sections].index("history") == [s.id for s in report.sections].index("plots") + 1
    first = report.history.figures[0]
    assert first.label.startswith("k a") and first.regression and "<svg" in first.svg and "history-hover" in first.svg
    assert report.history.n_changed == 1 and "at run 6 of the series" in markdown(report)
    few = Store(tmp_path / "few.sqlite")
    write_history(few, {("k", "a"): [1e-3] * 3})
    assert "history" not in [s.id for s in build_report(few, few.latest_run_id()).sections]


def test_the_dashboards_history_view_is_quiet_before_the_first_run(tmp_path, caplog):
    pytest.importorskip("ipywidgets")
    from workbench.ui.history_view import HistoryView
    view = HistoryView()
    with caplog.at_level("WARNING"):
        view.update(str(tmp_path / "not-yet.sqlite"), "saxpy")
    assert "no store yet" in view.widget.value and not caplog.records


def test_cells_with_too_few_runs_in_the_store_are_not_read_but_a_series_of_enough_is(tmp_path):
    """Issue 38: a store of a million one-off cells built a million series, only to drop them (min_runs)."""
    st = Store(tmp_path / "a.sqlite")
    write_history(st, {("k", "v"): [1e-3] * 4, ("k", "w"): [1e-3] * 3}, env_id="env-a")
    write_history(st, {("k", "w"): [2e-3]}, env_id="env-b", record=machine_record(cpu="Other CPU"), start_day=9)
    every = {(s.variant, len(s.points)) for s in read_series(st.connection)[0]}
    assert every == {("v", 4), ("w", 3), ("w", 1)}
    # w has 4 runs in the store (3 + 1 on another machine): read, each machine's series still short
    assert {(s.variant, len(s.points)) for s in read_series(st.connection, min_runs=4)[0]} == every
    assert {(s.variant, len(s.points)) for s in read_series(st.connection, min_runs=5)[0]} == set()
    assert [h.series.variant for h in build_history(st.connection, min_runs=4).series] == ["v"]
