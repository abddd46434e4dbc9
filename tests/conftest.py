"""Shared fixtures: a backend registry that starts empty-handed, and Python run in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch):
    """The backend registry with its discovery cache and current choice cleared, restored afterwards."""
    from workbench.backends import registry

    monkeypatch.setattr(registry, "_cache", None)
    monkeypatch.setattr(registry, "_current", None)
    monkeypatch.delenv(registry.ENV_OVERRIDE, raising=False)
    return registry


@pytest.fixture
def run_python() -> Callable[..., subprocess.CompletedProcess]:
    """Run ``python -c code`` (or ``python *args``) from the repository root; state nothing leaks in."""

    def run(*args: str, code: str | None = None, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        argv = [sys.executable, *(("-c", code) if code is not None else args)]
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        return subprocess.run(argv, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=timeout)

    return run
