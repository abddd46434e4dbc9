"""`make test` runs each unit test at least once: tests/conftest.py's --ran-out lists what the core venv ran, and
--skip-ran-in leaves only the rest (skipped there, never seen there, or marked `extras`) to the run with extras."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

#: Stands in for tests/unit: one test that runs anywhere, one that needs a runtime (HAVE_RUNTIME), one
#: parametrised over what is installed, one marked `extras`.
SAMPLE = '''
import os
import pytest

HERE = ["numpy"] + (["numba"] if os.environ.get("HAVE_RUNTIME") else [])

def test_core_only():
    pass

def test_needs_a_runtime():
    if not os.environ.get("HAVE_RUNTIME"):
        pytest.skip("no runtime here")

@pytest.mark.parametrize("backend", HERE)
def test_each_backend_here(backend):
    pass

@pytest.mark.extras
def test_checks_more_with_a_runtime():
    pass
'''


def _pytest(root: Path, *args: str, runtime: bool) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), **({"HAVE_RUNTIME": "1"} if runtime else {})}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rA",
                           "--rootdir", str(root), *args, str(root / "unit")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _ids(proc: subprocess.CompletedProcess) -> set[str]:
    return {line.split()[1].split("::", 1)[1] for line in proc.stdout.splitlines() if line.startswith("PASSED ")}


def test_the_second_run_takes_only_what_the_first_did_not_run(tmp_path: Path):
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "test_sample.py").write_text(SAMPLE)
    ran = tmp_path / "ran.txt"

    core = _pytest(tmp_path, "--ran-out", str(ran), runtime=False)
    assert core.returncode == 0, core.stdout[-3000:] + core.stderr[-3000:]
    assert "3 passed, 1 skipped" in core.stdout, core.stdout[-2000:]
    assert len(ran.read_text().splitlines()) == 3 and not any("needs_a_runtime" in n for n in ran.read_text().split())

    extras = _pytest(tmp_path, "--skip-ran-in", str(ran), runtime=True)
    assert extras.returncode == 0, extras.stdout[-3000:] + extras.stderr[-3000:]
    assert _ids(extras) == {"test_needs_a_runtime", "test_each_backend_here[numba]",
                            "test_checks_more_with_a_runtime"}, extras.stdout[-2000:]
    assert "2 deselected" in extras.stdout

    ran.unlink()  # the core run left no list: every test runs in the second
    whole = _pytest(tmp_path, "--skip-ran-in", str(ran), runtime=True)
    assert whole.returncode == 0 and len(_ids(whole)) == 5, whole.stdout[-2000:]
    assert "no such file" in whole.stdout
