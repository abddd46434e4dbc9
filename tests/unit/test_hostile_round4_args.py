"""Hostile round four (issue 38): arguments checked before a run exists (10), no tracebacks (11), messages
that name the bad value (13), switches in the environment read strictly (15)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from workbench import config
from workbench.cli import main
from workbench.measure.cell_facts import new_result
from workbench.measure.failures import end_with, exception_text
from workbench.measure.request import Cell


@pytest.fixture()
def store(tmp_path, monkeypatch):
    path = tmp_path / "results.sqlite"
    monkeypatch.setenv("WORKBENCH_STORE", str(path))
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "config.json"))
    monkeypatch.chdir(tmp_path)
    return path


def _runs(path) -> list[tuple[str, str]]:
    if not path.exists():
        return []
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT run_id, status FROM runs").fetchall()
    finally:
        con.close()


TUNE = ["tune", "--kernel", "gemm", "--variant", "numba-tiled", "--backend", "numba", "--budget", "1"]


@pytest.mark.parametrize("argv, words", [
    (TUNE + ["--seed", "-1"], "argument --seed: '-1' is out of range; give a whole number from 0 to 4,294,967,295"),
    (TUNE + ["--seed", "1" * 23], "argument --seed: '11111111111111111111111' is out of range"),
    (TUNE + ["--config", "."], "--config '.' is a directory"),
    (TUNE + ["--config", "/proc/wb_round5.json"], "--config '/proc/wb_round5.json': the folder /proc takes no new"),
    (TUNE + ["--trials", "0"], "argument --trials: '0' is out of range"),
    (TUNE + ["--budget", "nan"], "argument --budget: 'nan' is not a usable number of seconds"),
    (TUNE + ["--size", "12ab"], "bad size '12ab' in --size: not understood"),  # named --sizes, a flag tune lacks
    (["compile-check", "--jobs", "-1"], "argument --jobs: '-1' is out of range; give a whole number from 1"),
    (["compile-check", "--jobs", "x"], "argument --jobs: 'x' is not a whole number"),
    (["compile-check", "--timeout", "nan"], "argument --timeout: 'nan' is not a usable number of seconds"),
    (["compile-check", "--timeout", "0"], "argument --timeout: '0' is not a usable number of seconds"),
    (["compile-check", "--timeout", "inf"], "argument --timeout: 'inf'"),
    (["bench", "--kernels", "vector_add", "--backends", "numpy", "--name", ""], "--name '' is empty"),
    (["bench", "--kernels", "vector_add", "--backends", "numpy", "--tag", "  "], "--tag '  ' is empty"),
])
def test_arguments_are_refused_before_a_run_exists(store, capsys, argv, words):
    """Groups 10 and 13: tune --seed -1 left a run "running" with optuna's message; --config <dir> was refused
    only after measuring; compile-check --jobs -1 / --timeout nan named nothing, --timeout 0 was taken."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert _runs(store) == []


@pytest.mark.parametrize("name, value, words", [
    ("WORKBENCH_AUTO_PEAKS", "maybe", "WORKBENCH_AUTO_PEAKS='maybe' is not understood: use 1 or 0"),
    ("WORKBENCH_WORKER_PROFILE", "1", "WORKBENCH_WORKER_PROFILE='1' is not a folder"),
    ("WORKBENCH_TUNED", "maybe", "WORKBENCH_TUNED='maybe' is not understood: use 1 or 0"),
    ("WORKBENCH_CATALOG_IMPORT_TIMEOUT", "nan", "WORKBENCH_CATALOG_IMPORT_TIMEOUT='nan' is not a usable number"),
    ("WORKBENCH_CATALOG_IMPORT_TIMEOUT", "-1", "WORKBENCH_CATALOG_IMPORT_TIMEOUT='-1' is not a usable number"),
    ("WORKBENCH_BACKEND", "bogus", "WORKBENCH_BACKEND='bogus' names no backend; valid backends: auto"),
])
def test_a_switch_we_do_not_understand_is_refused(store, capsys, monkeypatch, name, value, words):
    """Groups 11 and 15: AUTO_PEAKS=maybe was taken for yes; WORKER_PROFILE=1 ended each worker in a traceback."""
    monkeypatch.setenv(name, value)
    assert main(["verify", "--kernel", "vector_add", "--backend", "numpy"]) == 2
    assert words in capsys.readouterr().err


def test_a_bad_log_level_is_said_once_not_raised():
    """Group 11: WORKBENCH_LOG_LEVEL=bogus ended every command, at import, in logging's traceback."""
    done = subprocess.run([sys.executable, "-c", "import workbench"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WORKBENCH_LOG_LEVEL": "bogus"})
    assert done.returncode == 0, done.stderr
    assert "WORKBENCH_LOG_LEVEL='bogus' is not a log level; use one of DEBUG" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ('{"threads": {"numba": ' + "9" * 5000 + "}}", "a number is out of range (Exceeds the limit"),
    ('{"threads": {"numba": 2.0}}', "key 'threads.numba': 2.0 is not a whole number of threads"),
])
def test_a_bad_config_is_named(tmp_path, text, words):
    """Groups 11 and 13: a config nested 100,000 deep or with a 5,000-digit integer gave a message naming no
    file; threads.numba: 2.0 was accepted and numba ended in a traceback."""
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        config.read(path)
    assert str(path) in str(err.value) and words in str(err.value)


class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


def test_an_exception_whose_str_raises_is_a_row():
    """Group 11: an exception whose __str__ raises ended the worker in a traceback."""
    assert exception_text(_Unprintable()) == ("_Unprintable: (its message could not be read: __str__ raised "
                                              "RuntimeError)")
    res = new_result(Cell.make("vector_add", "numpy", "numpy", "float32", {"n": 7}, "eager", "hot", None), 0)
    try:
        raise _Unprintable()
    except _Unprintable as exc:
        end_with(res, exc)
    assert res.status == "error" and "could not be read" in res.message


@pytest.mark.parametrize("tokens", [["rows=4:rows=5:cols=3"], ["rows=4:cols=3:cols=3"]])
def test_an_axis_given_twice_is_refused(tokens):
    """Group 15: --sizes rows=4:rows=5:cols=3 ran rows=5, unsaid."""
    from workbench.cli.cmd_bench import parse_sizes

    with pytest.raises(ValueError, match="given more than once; give each axis once"):
        parse_sizes(tokens)
    assert parse_sizes(["rows=4:cols=3"]) == [{"rows": 4, "cols": 3}]


@pytest.mark.parametrize("given", ["@", " @ "])
def test_a_baseline_naming_nothing_is_refused(given):
    """Group 15: compare --baseline @ printed "(no matching cells)" and exited 0."""
    import pandas as pd

    from workbench.cli.cmd_report import _baseline
    from workbench.report.data import check_baseline

    df = pd.DataFrame({"status": ["ok"], "variant": ["numpy"], "backend": ["numpy"]})
    with pytest.raises(ValueError, match="names neither a variant nor a backend"):
        check_baseline(df, _baseline(given), flag="--baseline", given=given)
    check_baseline(df, None)  # no baseline asked for: none checked


@pytest.fixture()
def pem(tmp_path):
    """A CA, certificate and key as PEM files, the key readable by its owner only (the README's recipe)."""
    security = pytest.importorskip("distributed.security", reason="the cluster extra is not installed")
    pytest.importorskip("cryptography", reason="the cluster extra's cryptography is not installed")
    creds = security.Security.temporary()
    files = {}
    for name, text in (("ca", creds.tls_ca_file), ("cert", creds.tls_client_cert), ("key", creds.tls_client_key)):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(text)
    files["key"].chmod(0o600)
    return {k: str(v) for k, v in files.items()}


def test_tls_files_are_checked_for_what_they_hold(pem, tmp_path):
    """Groups 15 and 18: a key with mode 0644 was used as it was; a swapped certificate and key gave
    "[SSL] PEM lib (_ssl.c:3905)", naming neither file."""
    from workbench.cluster import tls_security

    assert tls_security("tls://head:8786", pem["ca"], pem["cert"], pem["key"]).require_encryption
    with pytest.raises(ValueError, match="they look swapped"):
        tls_security("tls://head:8786", pem["ca"], pem["key"], pem["cert"])
    with pytest.raises(ValueError, match=r"--tls-ca-file '.*key.pem' holds no PEM certificate"):
        tls_security("tls://head:8786", pem["key"], pem["cert"], pem["key"])
    os.chmod(pem["key"], 0o644)
    with pytest.raises(ValueError, match=r"can be read or written by others \(mode 0644\).*chmod 600"):
        tls_security("tls://head:8786", pem["ca"], pem["cert"], pem["key"])
    os.chmod(pem["key"], 0o600)
    other = tmp_path / "other-key.pem"  # a key, but not this certificate's
    other.write_text(pytest.importorskip("distributed.security").Security.temporary().tls_client_key)
    other.chmod(0o600)
    with pytest.raises(ValueError, match="do not load as a certificate and its key"):
        tls_security("tls://head:8786", pem["ca"], pem["cert"], str(other))


def test_an_encrypted_tls_key_is_named_not_prompted_for(pem, tmp_path):
    """Round five of group 18: a passphrase-protected key made OpenSSL prompt on the terminal, then fail with
    "[Errno 22] Invalid argument", naming no file."""
    from cryptography.hazmat.primitives import serialization

    from workbench.cluster import tls_security

    key = serialization.load_pem_private_key(open(pem["key"], "rb").read(), password=None)
    locked = tmp_path / "locked-key.pem"
    locked.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.BestAvailableEncryption(b"secret")))
    locked.chmod(0o600)
    with pytest.raises(ValueError, match=r"--tls-key '.*locked-key.pem' is encrypted .*openssl pkey -in"):
        tls_security("tls://head:8786", pem["ca"], pem["cert"], str(locked))


def test_vulkan_runtime_folder_is_one_per_user_not_one_per_process(tmp_path, monkeypatch):
    """Group 19: each Vulkan process left an empty /tmp/workbench-xdg-* folder (48 found)."""
    import tempfile

    from workbench.backends import vulkan_backend

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen = set()
    for _ in range(3):
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        vulkan_backend._quiet_xdg_runtime_dir()
        seen.add(os.environ["XDG_RUNTIME_DIR"])
    assert seen == {str(tmp_path / f"workbench-xdg-{os.getuid()}")}
    assert [p.name for p in tmp_path.iterdir()] == [f"workbench-xdg-{os.getuid()}"]
    assert os.stat(seen.pop()).st_mode & 0o777 == 0o700
    os.chmod(tmp_path / f"workbench-xdg-{os.getuid()}", 0o755)  # not private: not used, a folder of its own
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    vulkan_backend._quiet_xdg_runtime_dir()
    assert os.environ["XDG_RUNTIME_DIR"] != str(tmp_path / f"workbench-xdg-{os.getuid()}")
