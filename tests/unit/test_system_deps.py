"""scripts/system-deps.sh (make demo / make test): says what it installs before it does, installs what the demo
runs (lavapipe too), and installs nothing with WORKBENCH_SYSTEM_DEPS=skip (issue 38)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "system-deps.sh"


def _run(tmp_path: Path, target: str, **env: str) -> tuple[subprocess.CompletedProcess, str]:
    """The script as root with apt, no package installed; apt-get only writes down what it was asked."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    log = tmp_path / "apt.log"
    for name, body in (("dpkg-query", "exit 1"), ("id", "echo 0"), ("apt-get", f'echo "$@" >> {log}')):
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    done = subprocess.run(["bash", str(SCRIPT), target], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", **env}, timeout=60)
    return done, log.read_text() if log.exists() else ""


def test_it_says_what_it_installs_and_how_to_skip_before_installing(tmp_path):
    done, apt = _run(tmp_path, "demo")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("system packages: installing with apt-get") and "mesa-vulkan-drivers" in first
    assert "WORKBENCH_SYSTEM_DEPS=skip" in done.stdout
    assert "install" in apt and "mesa-vulkan-drivers" in apt and "pocl-opencl-icd" in apt
    assert "chromium" not in apt  # the demo's packages only


def test_skip_installs_nothing_and_names_what_is_missing(tmp_path):
    done, apt = _run(tmp_path, "test", WORKBENCH_SYSTEM_DEPS="skip")
    assert done.returncode == 0 and apt == ""
    assert "not installed" in done.stderr and "chromium" in done.stderr
