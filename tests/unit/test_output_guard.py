"""Issue 24, data loss: no output path (export -o, report --out, bench --json/--report) ever replaces a results
store — the one in use, another one, its -wal file, through a symlink or a hard link — and outputs are written
atomically (a failed write leaves the old file whole)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.output_guard import atomic_write_text, check_output_path
from workbench.report.sample_data import synthetic_environment, synthetic_results
from workbench.store.database import Store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def store(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "workbench-results.sqlite"
    s = Store(path)
    rid = s.new_run(name="one", env_id="env-demo")
    s.add_environment("env-demo", synthetic_environment())
    for row in synthetic_results(rid, seed=1).to_dict("records")[:6]:
        s.record(row)
    s.set_run_status(rid, "finished", wall_s=1.0)
    s.close()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORKBENCH_STORE", raising=False)
    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")
    return path


def _copy_store(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


@pytest.mark.parametrize("argv", [
    ["export", "-o", "workbench-results.sqlite"],                      # the default store, by name
    ["export", "-o", "STORE.json", "--store", "STORE.json"],           # the store in use, any extension
    ["report", "latest", "--store", "STORE.json", "--out", "STORE.json"],
    ["report", "latest", "--out", "OTHER.html"],                       # another store, named .html
    ["report", "latest", "--out", "LINK.md"],                          # a symlink to a store
    ["report", "latest", "--out", "HARD.csv"],                         # a hard link to a store
    ["report", "latest", "--out", "workbench-results.sqlite-wal.md"],  # not a side file: written (below)
])
def test_an_output_that_is_a_store_is_refused_and_nothing_changes(store, tmp_path, capsys, argv):
    other = _copy_store(store, tmp_path / "STORE.json")
    _copy_store(store, tmp_path / "OTHER.html")
    (tmp_path / "LINK.md").symlink_to(other)
    os.link(other, tmp_path / "HARD.csv")
    before = {p.name: _digest(p) for p in tmp_path.iterdir() if p.is_file()}
    rc = main(argv)
    err = capsys.readouterr().err
    if argv[-1].endswith("-wal.md"):
        assert rc == 0  # a name that merely looks like a side file is an ordinary output
        return
    assert rc == 2, err
    assert "destroy" in err and "choose another file" in err
    assert {p.name: _digest(p) for p in tmp_path.iterdir() if p.is_file() and p.name in before} == before


def test_the_side_files_of_a_store_are_refused(store, tmp_path):
    wal = Path(f"{store}-wal")
    with pytest.raises(ValueError, match="wal file"):
        check_output_path(wal, stores=[store])
    other = _copy_store(store, tmp_path / "other.sqlite")
    with pytest.raises(ValueError, match="wal file of the database"):
        check_output_path(f"{other}-wal")


def test_an_empty_new_store_in_use_is_recognised_by_path(tmp_path):
    """A store not yet created (or 0 bytes) has no content to recognise: its path alone refuses it."""
    new = tmp_path / "st3.json"
    with pytest.raises(ValueError, match="results store in use"):
        check_output_path(new, flag="--json", stores=[new], export=True)


def test_bench_refuses_its_own_store_as_an_output_before_running(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")
    st = tmp_path / "st3.json"
    rc = main(["bench", "--kernels", "vector_add", "--backends", "numpy", "--sizes", "64", "--budget", "0.01",
               "--rounds", "1", "--store", str(st), "--json", str(st)])
    assert rc == 2
    assert "results store in use" in capsys.readouterr().err
    assert not st.exists()  # refused before the store was created


def test_an_export_may_be_refreshed_but_not_replaced_by_a_report(store, tmp_path, capsys):
    assert main(["export", "-o", "e.json"]) == 0
    assert main(["export", "-o", "e.json"]) == 0  # re-exporting to the same file is an ordinary refresh
    os.replace("e.json", "backup.csv")
    before = _digest(tmp_path / "backup.csv")
    assert main(["report", "latest", "--out", "backup.csv"]) == 2
    assert "holds a workbench results export" in capsys.readouterr().err
    assert _digest(tmp_path / "backup.csv") == before


@pytest.mark.parametrize("out, words", [("e.csv", "an export is JSON, not '.csv'"), ("", "needs a file name"),
                                        ("e.sqlite", "give a file ending in .json")])
def test_export_format_follows_the_extension(store, capsys, out, words):
    assert main(["export", "-o", out]) == 2
    assert words in capsys.readouterr().err
    assert not Path("e.csv").exists()


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("old report")

    def full_disk(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError):
        atomic_write_text(target, "new " * 1000)
    assert target.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left behind


def test_an_atomic_write_goes_through_a_symlink_and_keeps_the_mode(tmp_path):
    real = tmp_path / "real.md"
    real.write_text("x")
    real.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert real.stat().st_mode & 0o777 == 0o640
