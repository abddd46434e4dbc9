"""The configuration file (issue 15): validation naming the key, set/save/load, environment defaults, CLI."""

from __future__ import annotations

import json

import pytest

from workbench import config
from workbench.cli import main


@pytest.fixture
def cfg_path(tmp_path, monkeypatch):
    path = tmp_path / "config.json"
    monkeypatch.setenv("WORKBENCH_CONFIG", str(path))
    return path


ENTRY = {"kernel": "gemm", "variant": "numba-tiled", "device": "numba|cpu|avx2|2 cores", "dtype": "float32",
         "shape_class": "work 2^25", "config": {"NB": 128, "KC": 256, "MC": 64}}


def test_missing_file_is_empty_and_roundtrips(cfg_path):
    assert config.config_path() == cfg_path and config.read() == {}
    config.write({"threads": {"numba": 2}, "store": "x.sqlite", "tuned": [ENTRY]})
    data = config.read()
    assert data["threads"] == {"numba": 2} and data["tuned"] == [ENTRY] and data["format"] == "workbench-config"


@pytest.mark.parametrize(("doc", "words"), [
    ({"threads": {"numba": 0}}, ["'threads.numba'", "minimum"]),
    ({"threads": {"numba": "two"}}, ["'threads.numba'", "integer"]),
    ({"threads": {"cuda": 1}}, ["unknown key 'threads.cuda'", "valid keys: numba, torch, blas"]),
    ({"backend": "numba"}, ["unknown key 'backend'", "default_backend"]),
    ({"default_backend": "cuda9"}, ["'default_backend'", "'cuda9' names no backend", "valid choices: auto"]),
    ({"tuned": [{**ENTRY, "dtype": "int3"}]}, ["'tuned.0.dtype'", "'int3'"]),
    ({"tuned": [{k: v for k, v in ENTRY.items() if k != "device"}]}, ["'tuned.0'", "'device'"]),
])
def test_bad_values_name_the_key(cfg_path, doc, words):
    cfg_path.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as err:
        config.read()
    assert str(cfg_path) in str(err.value) and all(w in str(err.value) for w in words), str(err.value)


def test_bad_json_says_where(cfg_path):
    cfg_path.write_text('{"threads": ')
    with pytest.raises(ValueError, match="not valid JSON .* line 1"):
        config.read()


@pytest.mark.parametrize(("key", "value", "words"), [
    ("threads.numba", "-2", ["'threads.numba'", "positive integer"]),
    ("threads.gpu", "2", ["unknown config key 'threads.gpu'", "threads.numba"]),
    ("default_backend", "nope", ["'nope' names no backend", "numpy"]),
    ("store", "/dev/zero", ["config key 'store'", "character device, not a regular file"]),  # was kept
])
def test_set_value_refuses_bad_values(key, value, words):
    with pytest.raises(ValueError) as err:
        config.set_value({}, key, value)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_set_value_and_tuned_replacement():
    c = config.set_value(config.set_value({}, "threads.torch", "3"), "default_backend", "numpy")
    assert c == {"threads": {"torch": 3}, "default_backend": "numpy"}
    c = config.with_tuned(config.with_tuned(c, ENTRY), {**ENTRY, "config": {"NB": 64}})
    assert [e["config"] for e in c["tuned"]] == [{"NB": 64}]
    c = config.with_tuned(c, {**ENTRY, "dtype": "float64"})
    assert len(c["tuned"]) == 2


def test_environment_defaults_never_override_the_user():
    env = {"NUMBA_NUM_THREADS": "1"}
    applied = config.apply_to_environment({"threads": {"numba": 2, "blas": 4}, "store": "s.sqlite",
                                           "default_backend": "numpy"}, env)
    assert env["NUMBA_NUM_THREADS"] == "1" and "NUMBA_NUM_THREADS" not in applied
    assert env["OPENBLAS_NUM_THREADS"] == "4" and env["WORKBENCH_STORE"] == "s.sqlite"
    assert env["WORKBENCH_BACKEND"] == "numpy"


def test_cli_set_show_save_load(cfg_path, tmp_path, capsys):
    assert main(["config", "set", "threads.numba", "2"]) == 0
    assert main(["config", "set", "store", str(tmp_path / "r.sqlite")]) == 0
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "threads: numba=2" in out and "r.sqlite" in out
    saved = tmp_path / "saved.json"
    assert main(["config", "save", str(saved)]) == 0 and json.loads(saved.read_text())["threads"] == {"numba": 2}
    saved.write_text(json.dumps({"threads": {"torch": 1}}))
    assert main(["config", "load", str(saved)]) == 0
    assert config.read() == {"format": "workbench-config", "version": 1, "threads": {"torch": 1}}


@pytest.mark.parametrize(("argv", "content", "words"), [
    (["config", "set", "colour", "red"], None, ["unknown config key 'colour'", "valid keys"]),
    (["config", "set", "threads.numba", "many"], None, ["'threads.numba'", "'many' is not a thread count"]),
    (["config", "load", "/nonexistent/c.json"], None, ["no such file"]),
    (["config", "show"], {"threads": {"numba": -1}}, ["'threads.numba'"]),
    (["runs"], {"threads": {"numba": -1}}, ["'threads.numba'"]),  # every command reads it
])
def test_cli_bad_input(cfg_path, capsys, argv, content, words):
    if content is not None:
        cfg_path.write_text(json.dumps(content))
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and all(w in err for w in words), err


def test_optimize_measures_threads_and_writes_only_with_apply(cfg_path, tmp_path, capsys):
    pytest.importorskip("threadpoolctl")
    argv = ["optimize", "--backend", "numpy", "--budget", "1", "--store", str(tmp_path / "s.sqlite")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "threads.blas:" in out and "nothing written" in out and not cfg_path.exists()
    assert main([*argv, "--apply"]) == 0
    written = config.read()
    assert written["default_backend"] == "numpy" and written["threads"]["blas"] >= 1


@pytest.mark.parametrize(("argv", "words"), [
    (["optimize", "--backend", "nope"], ["unknown backend 'nope'", "valid backends"]),
    (["optimize", "--backend", "numpy", "--budget", "0"], ["--budget must be a positive number"]),
])
def test_optimize_bad_input(cfg_path, capsys, argv, words):
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and all(w in err for w in words), err
