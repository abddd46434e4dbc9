"""The OpenMP wait policy default is set before runtimes load and never overrides the user."""

import json
import os
import subprocess
import sys

import pytest

CODE = """
import json, os, sys
{pre}
import workbench
print(json.dumps(os.environ.get("OMP_WAIT_POLICY")))
"""


def _policy(pre: str = "", env_value: str | None = None) -> str | None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_value is not None:
        env["OMP_WAIT_POLICY"] = env_value
    out = subprocess.run([sys.executable, "-c", CODE.format(pre=pre)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_passive_by_default():
    assert _policy() == "PASSIVE"


def test_user_choice_is_kept():
    assert _policy(env_value="ACTIVE") == "ACTIVE"


@pytest.mark.slow
def test_not_set_when_an_openmp_runtime_already_loaded():
    pytest.importorskip("numba", reason="the OpenMP runtime loaded first here is numba's")
    assert _policy(pre="import numba") is None


def test_environment_record_shows_the_policy():
    from workbench.environment import THREAD_ENV_VARS

    assert "OMP_WAIT_POLICY" in THREAD_ENV_VARS
