"""The OpenMP idle-wait default (a bounded spin) is set before runtimes load and never overrides the user."""

import json
import os
import subprocess
import sys

import pytest

from workbench.core.threads import ENV_SET_BY_WORKBENCH, WAIT_VARS

CODE = """
import json, os, sys
{pre}
import workbench
print(json.dumps([os.environ.get(k) for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")]))
"""


def _policy(pre: str = "", env_value: str | None = None) -> list[str | None]:
    env = {k: v for k, v in os.environ.items() if k not in WAIT_VARS and k != ENV_SET_BY_WORKBENCH}
    if env_value is not None:
        env["OMP_WAIT_POLICY"] = env_value
    out = subprocess.run([sys.executable, "-c", CODE.format(pre=pre)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_bounded_spin_by_default():
    """Not PASSIVE: on a VM whose idle vCPU is halted every parallel region then pays a 70-100 µs wake-up (a
    65k-element numba add read 97 µs for 6 µs of work)."""
    from workbench.core.threads import BLOCKTIME_MS, SPIN_COUNT

    assert _policy() == [None, str(SPIN_COUNT), str(BLOCKTIME_MS)]


def test_user_choice_is_kept():
    assert _policy(env_value="ACTIVE") == ["ACTIVE", None, None]


@pytest.mark.slow
def test_not_set_when_an_openmp_runtime_already_loaded():
    pytest.importorskip("numba", reason="the OpenMP runtime loaded first here is numba's")
    assert _policy(pre="import numba") == [None, None, None]


def test_environment_record_shows_the_policy():
    from workbench.store.environment import THREAD_ENV_VARS

    assert {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"} <= set(THREAD_ENV_VARS)


def test_thread_counts_name_each_loaded_runtime_and_the_policy():
    from workbench.core import threads

    counts = threads.thread_counts()
    assert any(k.startswith("blas:") for k in counts) and all(int(v) >= 1 for v in counts.values())
    text = threads.describe({"torch": 2, "blas:openblas": 1})
    assert text.startswith("torch 2, blas:openblas 1; OpenMP wait: ")


TIMEIT = """
import json
{pre}
import workbench
m = workbench.timeit(sum, [1, 2, 3], budget_s=0.01, rounds=1)
print(json.dumps(m.threads)); print(str(m))
"""


def test_timeit_reports_threads_and_an_unapplied_policy():
    pytest.importorskip("torch")
    env = {k: v for k, v in os.environ.items() if k not in WAIT_VARS and k != ENV_SET_BY_WORKBENCH}
    # both interpreters at once: each imports torch, and neither waits on the other
    procs = [subprocess.Popen([sys.executable, "-c", TIMEIT.format(pre=pre)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for pre in ("import torch", "")]
    outs = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-2000:]
        outs.append(stdout.splitlines())
    (late, text), (first, _) = outs
    assert "torch " in json.loads(late) and "not applied: torch imported before workbench" in json.loads(late)
    assert "threads: torch " in text
    assert "spin 10000 then sleep, one thread per core (set by workbench)" in json.loads(first)


def test_rows_record_threads_and_rounds_keep_every_setting_seen():
    from workbench.core.conditions import ConditionsMeter
    from workbench.core.record import RESULT_COLUMNS
    from workbench.measure.rounds import merge_conditions

    meter = ConditionsMeter()
    meter.start()
    assert "OpenMP wait: " in meter.stop().threads and "threads" in RESULT_COLUMNS
    assert merge_conditions({"threads": "torch 2; P"}, {"threads": "torch 2; P"})["threads"] == "torch 2; P"
    assert merge_conditions({"threads": "torch 2; P"}, {"threads": "torch 1; P"})["threads"] == \
        "torch 2; P | torch 1; P"


def test_a_worker_says_workbench_set_the_wait_and_a_user_value_is_named():
    """A worker inherits the parent's variables: its rows say workbench set them, not "from the environment";
    a value the user chose is named as theirs."""
    env = {k: v for k, v in os.environ.items() if k not in WAIT_VARS and k != ENV_SET_BY_WORKBENCH}
    code = ("import os, subprocess, sys, workbench; from workbench import threads; print(threads.policy_note()); "
            "print(subprocess.run([sys.executable, '-c', 'import workbench; from workbench import threads; "
            "print(threads.policy_note())'], capture_output=True, text=True).stdout.strip())")
    parent, child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                   check=True).stdout.splitlines()
    assert parent == child == "spin 10000 then sleep, one thread per core (set by workbench)"
    env["GOMP_SPINCOUNT"] = "500"
    mine = subprocess.run([sys.executable, "-c", "import workbench; from workbench import threads; "
                           "print(threads.policy_note())"], env=env, capture_output=True, text=True, check=True)
    assert mine.stdout.strip() == "GOMP_SPINCOUNT=500 (from the environment)"


COUNTS = """
import json, os
import workbench
{pre}
out = {{"cores": len(os.sched_getaffinity(0)), "omp": os.environ.get("OMP_NUM_THREADS")}}
try:
    import torch  # loads libgomp, which binds this thread to the first core
    out["torch"] = torch.get_num_threads()
except ImportError:
    pass
try:
    import numba
    out["numba"] = numba.config.NUMBA_NUM_THREADS
except ImportError:
    pass
out["mask_after"] = len(os.sched_getaffinity(0))
print(json.dumps(out))
"""


def _counts(*envs_extra: dict[str, str]) -> list[dict]:
    """COUNTS from a fresh interpreter per ``envs_extra`` (started together: each imports torch and numba, a few
    seconds of a core, and they wait on nothing of each other)."""
    base = {k: v for k, v in os.environ.items()
            if k not in WAIT_VARS and k not in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS") and k != ENV_SET_BY_WORKBENCH}
    procs = [subprocess.Popen([sys.executable, "-c", COUNTS.format(pre="")], env={**base, **extra},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for extra in envs_extra]
    outs = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-2000:]
        outs.append(json.loads(stdout.strip().splitlines()[-1]))
    return outs


@pytest.mark.extras  # checks more where an optional runtime is installed: runs in both venvs
def test_binding_does_not_shrink_the_pools_to_one_core():
    """Binding pins the first thread to one core when libgomp loads; numba, sized after that from the thread's
    CPU mask, ran every prange on one thread (2026-12-07). The pools are sized to the usable cores first."""
    from workbench.core.threads import COUNT_VARS

    got, mine = _counts({}, {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})  # mine: the user's counts are kept
    assert got["omp"] == str(got["cores"])
    if "numba" in got:
        assert got["numba"] == got["cores"]
    if "torch" in got:
        assert got["torch"] == got["cores"]
    assert {"OMP_NUM_THREADS", "NUMBA_NUM_THREADS"} == set(COUNT_VARS)
    assert mine["omp"] == "1" and mine.get("numba", 1) == 1


WORKER_MASK = """
import json, os, subprocess, sys
import workbench
from workbench.core import threads
given = sorted(os.sched_getaffinity(0))
os.sched_setaffinity(0, {given[0]})  # what torch's libgomp does to the first thread when it loads, bound
env = dict(os.environ, **threads.worker_env())
child = subprocess.run([sys.executable, "-c", "import json, os, workbench; from workbench.core import threads; "
                        "print(json.dumps([sorted(os.sched_getaffinity(0)), threads.usable_cores(), "
                        "os.environ.get(threads.ENV_WORKER_CPUS)]))"], env=env, capture_output=True, text=True)
print(json.dumps({"given": given, "parent_usable": threads.usable_cores(), "child": json.loads(child.stdout)}))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs a CPU mask of two cores or more")
def test_a_worker_runs_on_the_parents_cores_not_the_one_its_binding_left():
    """Once a parent bound by libgomp (torch imported) started workers, each inherited one core: a numba worker
    ran its two-thread pool there and numpy's OpenBLAS sized itself to one thread, in sweeps holding torch-cpu
    only (2026-12-07). A worker takes the cores its parent was given, and does not pass the setting on."""
    out = subprocess.run([sys.executable, "-c", WORKER_MASK], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["parent_usable"] == len(got["given"])
    assert got["child"] == [got["given"], len(got["given"]), None]


CHILD_MASK = """
import json, os, subprocess, sys
import workbench
from workbench.core import threads
given = sorted(os.sched_getaffinity(0))
os.sched_setaffinity(0, {given[0]})  # what torch's libgomp does to the first thread when it loads, bound
probe = ("import json, os, workbench; from workbench.core import threads; "
         "print(json.dumps([sorted(os.sched_getaffinity(0)), threads.usable_cores()]))")
plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)  # `!workbench bench`
chosen = subprocess.run(["taskset", "-c", str(given[-1]), sys.executable, "-c", probe], capture_output=True,
                        text=True)
print(json.dumps({"given": given, "bound": os.environ.get(threads.ENV_BOUND_CPUS), "plain": json.loads(plain.stdout),
                  "chosen": json.loads(chosen.stdout) if chosen.returncode == 0 else None}))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs a CPU mask of two cores or more")
def test_a_program_started_from_a_bound_process_gets_its_cores_back_unless_pinned_on_purpose():
    """A notebook that imported workbench and then torch ran ``!workbench bench`` on core 0 alone: the command
    inherited the one core libgomp's binding left the kernel's thread. It takes back the cores the notebook was
    given; a command pinned elsewhere (``taskset``) keeps its mask."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "KMP_", "WORKBENCH_"))}
    out = subprocess.run([sys.executable, "-c", CHILD_MASK], capture_output=True, text=True, check=True, env=env)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["bound"] == ",".join(map(str, got["given"]))
    assert got["plain"] == [got["given"], len(got["given"])]
    if got["chosen"] is not None:  # taskset present
        assert got["chosen"] == [[got["given"][-1]], 1]
