"""Issue 24, unclear or wrong results: every --help works, and values that used to be accepted and then went
wrong (a missing catalog folder, --memory-cap 0.5, an unwritable --report, an unreachable --cluster, --threshold
abc, --budget inf, WORKBENCH_BACKEND=nonsense, --arch sm_xx, config save into /proc, control bytes in --name, a
user catalog taking a built-in name, a closed stdout pipe) are refused up front with one line, exit 2."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import build_parser, checks, command_modules, main
from workbench.store.database import MAX_RUN_NAME_CHARS, Store, check_run_name


def _actions(parser) -> list[list[str]]:
    """Every command and sub-action, as argv prefixes."""
    out = []
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for name, sub in action.choices.items():
            out.append([name])
            out += [[name, *rest] for rest in _actions(sub)]
    return out


ALL_COMMANDS = _actions(build_parser())


def test_every_command_is_listed():
    assert len({a[0] for a in ALL_COMMANDS}) == len(command_modules())


@pytest.mark.parametrize("argv", ALL_COMMANDS, ids=" ".join)
def test_every_help_works(argv, capsys):
    assert main([*argv, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage:" in out and "Traceback" not in out


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_catalog_folder_that_is_not_there_fails_up_front(tmp_path, monkeypatch, capsys, kind):
    target = tmp_path / ("nope" if kind == "missing" else "a-file.py")
    if kind == "file":
        target.write_text("")
    monkeypatch.setenv("WORKBENCH_CATALOG", str(target))
    assert main(["verify", "--kernel", "vector_add"]) == 2
    err = capsys.readouterr().err
    assert "WORKBENCH_CATALOG" in err and str(target) in err


@pytest.mark.parametrize("cap, words", [("0.5", "a number without a unit is bytes"), ("200%", "at most 100%"),
                                        ("1000", "at least 16M")])
def test_a_memory_cap_that_makes_no_sense_is_refused(cap, words):
    with pytest.raises(ValueError, match=words):
        checks.check_memory_cap(cap)


@pytest.mark.parametrize("cap", [None, "40%", "100%", "8G", "512M", "none"])
def test_sensible_memory_caps_pass(cap):
    checks.check_memory_cap(cap)


def test_verify_refuses_half_a_byte(capsys):
    assert main(["verify", "--kernel", "vector_add", "--memory-cap", "0.5"]) == 2
    assert "--memory-cap '0.5'" in capsys.readouterr().err


def test_an_output_in_proc_fails_before_the_run():
    with pytest.raises(ValueError, match="cannot create a file in '/proc'"):
        checks.check_writable_file("--report", "/proc/x.html")


@pytest.mark.parametrize("address, words", [("tcp://127.0.0.1:99999", "port must be 1 to 65535"),
                                            ("tcp://127.0.0.1:1", "no Dask scheduler answers")])
def test_an_unreachable_scheduler_fails_fast(address, words):
    with pytest.raises(ValueError, match=words):
        checks.check_cluster_address(address, timeout_s=2.0)


def test_compare_checks_its_threshold_without_fail_on(capsys):
    assert main(["compare", "a", "b", "--threshold", "abc"]) == 2
    assert "--threshold 'abc'" in capsys.readouterr().err


@pytest.mark.parametrize("budget", ["inf", "nan", "-1", "1e9"])
def test_optimize_refuses_a_budget_that_never_ends(budget, capsys):
    assert main(["optimize", "--backend", "numpy", "--budget", budget]) == 2
    assert "--budget" in capsys.readouterr().err


def test_an_unknown_backend_override_is_refused(monkeypatch):
    monkeypatch.setenv("WORKBENCH_BACKEND", "nonsense")
    with pytest.raises(ValueError, match="WORKBENCH_BACKEND='nonsense' names no backend; valid backends: auto"):
        checks.check_backend_env()


@pytest.mark.parametrize("arch", ["sm_xx", "", ",", "sm_8", "gfx", "x86"])
def test_compile_check_refuses_non_targets_up_front(arch, capsys):
    assert main(["compile-check", "--arch", arch]) == 2
    assert "--arch" in capsys.readouterr().err


def test_compile_check_accepts_real_targets():
    assert checks.check_arch_names("sm_80,sm_90a,gfx90a,gfx1030,gfx942,".split(",")) == [
        "sm_80", "sm_90a", "gfx90a", "gfx1030", "gfx942"]


def test_config_save_names_the_file_asked_for(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "c.json"))
    assert main(["config", "save", "/proc/cfg.json"]) == 2
    err = capsys.readouterr().err
    assert "/proc/cfg.json" in err and ".tmp" not in err


@pytest.mark.parametrize("name", ["bell\x07", "esc\x1b[31mred", "x" * (MAX_RUN_NAME_CHARS + 1), "tab\there"])
def test_a_run_name_with_control_bytes_or_too_long_is_refused(name, tmp_path):
    with pytest.raises(ValueError, match="--name"):
        check_run_name(name, flag="--name")
    with pytest.raises(ValueError):
        Store(tmp_path / "s.sqlite").new_run(name=name)


def test_import_accepts_any_name_bench_accepts(tmp_path, capsys):
    name = "ünïcode · " + "n" * (MAX_RUN_NAME_CHARS - 10)
    check_run_name(name)
    src = Store(tmp_path / "a.sqlite")
    src.new_run(name=name)
    src.export(None, tmp_path / "e.json")
    assert main(["import", str(tmp_path / "e.json"), "--store", str(tmp_path / "b.sqlite")]) == 0


def test_a_user_catalog_cannot_take_a_built_in_kernel_name(tmp_path):
    from workbench.catalog import get_kernel
    from workbench.catalog.loader import forget_folder, load_catalog, load_errors

    builtin = get_kernel("vector_add")
    folder = tmp_path / "mine" / "vector_add"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(
        "import dataclasses\nfrom workbench.catalog.registry import get_kernel, register_kernel\n"
        "SPEC = register_kernel(dataclasses.replace(get_kernel('vector_add')))\n")
    try:
        load_catalog(tmp_path / "mine")
        assert "already defines" in load_errors["vector_add/spec.py"]
        assert get_kernel("vector_add") is builtin
    finally:
        forget_folder(folder.resolve())
        load_errors.pop("vector_add/spec.py", None)
    assert dataclasses.is_dataclass(builtin)


def test_a_closed_pipe_ends_quietly(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    for i in range(400):
        store.new_run(name=f"run {i}")
    store.close()
    env = {**os.environ, "WORKBENCH_STORE": str(tmp_path / "s.sqlite")}
    p = subprocess.Popen([sys.executable, "-m", "workbench", "runs"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=Path(__file__).resolve().parents[2])
    p.stdout.close()  # the reader (head) went away before the table was written
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141
    assert "Broken pipe" not in err and "Traceback" not in err


BENCH = ["bench", "--kernels", "vector_add", "--backends", "numpy", "--sizes", "64", "--budget", "0.01",
         "--rounds", "1", "--quiet"]


@pytest.mark.parametrize("extra, env, words", [
    (["--report", "/proc/x.html"], {}, "the folder /proc takes no new file"),
    (["--cluster", "tcp://127.0.0.1:99999"], {}, "port must be 1 to 65535"),
    (["--memory-cap", "200%"], {}, "at most 100%"),
    (["--name", "a\x1b[2Jb"], {}, "control character"),
    ([], {"WORKBENCH_BACKEND": "nonsense"}, "WORKBENCH_BACKEND='nonsense' names no backend"),
    ([], {"WORKBENCH_CATALOG": "/no/such/folder"}, "WORKBENCH_CATALOG='/no/such/folder': no such folder"),
])
def test_bench_refuses_before_creating_a_store_or_a_run(tmp_path, monkeypatch, capsys, extra, env, words):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    store = tmp_path / "s.sqlite"
    assert main([*BENCH, "--store", str(store), *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
    assert not store.exists()
