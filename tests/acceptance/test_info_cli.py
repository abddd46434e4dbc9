"""``workbench info``: the table for people, ``--json`` for machines (and nothing else on stdout)."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main


@pytest.fixture(scope="module")
def info_json() -> dict:
    import subprocess
    import sys

    from conftest import REPO

    res = subprocess.run([sys.executable, "-m", "workbench", "info", "--json"], cwd=REPO, capture_output=True,
                         text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)  # fails if anything but the JSON reached stdout


def test_json_lists_available_and_unavailable_backends(info_json):
    by_name = {b["name"]: b for b in info_json["backends"]}
    for name in ("numpy", "numba", "torch-cpu"):
        assert by_name[name]["available"], by_name[name]
    opencl = [b for b in info_json["backends"] if b["runtime"] == "opencl"]
    assert any(b["available"] for b in opencl), opencl
    for name in ("cupy", "torch-cuda", "torch-mps", "torch-xpu"):
        assert not by_name[name]["available"] and by_name[name]["reason"], by_name[name]
    assert info_json["host"]["cpu_model"] and info_json["environment_id"]


def test_table(capfd: pytest.CaptureFixture[str]):
    assert main(["info"]) == 0
    out = capfd.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Backends" and "available" in lines[1] and "reason" in lines[1]
    rows = {ln.split()[0]: ln for ln in lines[2:] if ln.startswith("  ") and ln.split()}
    assert rows["numpy"].split()[1] == "yes"
    assert rows["torch-cuda"].split()[1] == "no" and "CUDA" in rows["torch-cuda"]
    for section in ("Host", "Thread pools (threadpoolctl: libraries loaded in this process)", "Thread settings"):
        assert section in lines
    assert "OMP_NUM_THREADS" in out and "RAM" in out and "blas" in out


def test_a_command_imports_only_its_own_module(run_python):
    code = """
import json, sys
from workbench.cli import build_parser
build_parser(["info", "--json"])
own = sorted(m for m in sys.modules if m.startswith("workbench.cli.cmd_"))
build_parser([])
print(json.dumps([own, len([m for m in sys.modules if m.startswith("workbench.cli.cmd_")])]))
"""
    res = run_python(code=code)
    assert res.returncode == 0, res.stderr
    own, every = json.loads(res.stdout.strip().splitlines()[-1])
    assert own == ["workbench.cli.cmd_info"] and every >= 10  # --help still lists every command
