"""Shared fixtures and the test tiers.

Tiers are folders, and each folder's tests get its marker here, so ``-m unit`` (or ``-m "not acceptance"``)
selects a tier however a test file is named:

- ``tests/unit``: no optional runtime; passes in a venv with only the core dependencies;
- ``tests/backends``: each backend for real, parametrised over what is available, skipping with the
  probe's reason;
- ``tests/acceptance``: the CLI, notebooks executed headless, JupyterLab and reports in a real browser.

Every marker is registered here, in one place.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent

MARKERS = {
    "unit": "tier 1: no optional runtime (tests/unit)",
    "backends": "tier 2: backends and their kernels for real, skipping with the probe's reason (tests/backends)",
    "acceptance": "tier 3: CLI, notebooks, browser (tests/acceptance)",
    "browser": "drives JupyterLab/Voila or a report in headless Chromium",
    "notebook": "executes a tutorial notebook headless",
    "slow": "takes more than a few seconds",
    "extras": "a unit test that passes with the core dependencies alone but checks more where an optional runtime "
              "is installed: `make test` runs it in both venvs (see --skip-ran-in)",
}
TIERS = ("unit", "backends", "acceptance")
#: A folder every process of one test run shares (pytest-xdist workers included): results computed once per run.
SHARED_ENV = "WORKBENCH_TESTS_SHARED"
#: Where screenshots and executed notebooks are copied for inspection (default: a temporary folder).
TEST_OUTPUT_ENV = "WORKBENCH_TEST_OUTPUT"


#: The cores this test process was started on (empty where the platform has no CPU masks).
START_CPUS = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


def unpin() -> None:
    """Give the calling thread back the cores this process started on, where an OpenMP runtime narrowed them.

    WHY: workbench binds OpenMP threads one per core (``workbench/core/threads.py``), and libgomp then pins the
    thread that loads it (importing torch) to the first core. Every pytest-xdist worker ran on core 0 once one of
    its tests had imported torch, and so did all it started (a child inherits the mask): notebook kernels, CLIs,
    the catalog's verify. In ``make test`` both full-tier workers and both unit+ workers shared one core of two.
    Workbench's own worker processes still bind as they do anywhere: this is the test processes' mask only.
    """
    if START_CPUS and os.sched_getaffinity(0) != START_CPUS:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, START_CPUS)


def _unpin_before_a_child(event: str, _args: tuple) -> None:
    """An audit hook: a process this one starts begins on every core it was given (see :func:`unpin`)."""
    if event in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty"):
        unpin()


sys.addaudithook(_unpin_before_a_child)


#: Temporary folders this process made for the run (not those a pytest-xdist worker inherited), removed at its
#: end: every `make test` had left three empty or near-empty folders in /tmp per tier (230 after a day's work).
_made_here: list[str] = []
#: The screenshots' and executed notebooks' folder this process made: kept when a test put something there.
_output_made_here: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    # The automatic ceilings probe keeps a per-user cache; tests (and the CLIs they start) use a private one.
    if "WORKBENCH_CEILINGS_CACHE" not in os.environ:
        import tempfile

        _made_here.append(tempfile.mkdtemp(prefix="wb-ceilings-"))
        os.environ["WORKBENCH_CEILINGS_CACHE"] = str(Path(_made_here[-1]) / "ceilings.json")
    if SHARED_ENV not in os.environ:  # set before pytest-xdist starts its workers, so they inherit it
        import tempfile

        _made_here.append(tempfile.mkdtemp(prefix="wb-tests-shared-"))
        os.environ[SHARED_ENV] = _made_here[-1]
    # Nothing a test writes lands in the working tree (issue 38: `make test` left ./workbench-results.sqlite,
    # which the README's `workbench report latest` then reported): the default store of every command a test
    # runs is a temporary one, and screenshots and executed notebooks go to a temporary folder unless
    # WORKBENCH_TEST_OUTPUT names one (`WORKBENCH_TEST_OUTPUT=test-output make test` keeps them there).
    import tempfile

    if "WORKBENCH_STORE" not in os.environ:
        _made_here.append(tempfile.mkdtemp(prefix="wb-tests-store-"))
        os.environ["WORKBENCH_STORE"] = str(Path(_made_here[-1]) / "workbench-results.sqlite")
    if TEST_OUTPUT_ENV not in os.environ:
        _output_made_here.append(tempfile.mkdtemp(prefix="wb-test-output-"))
        os.environ[TEST_OUTPUT_ENV] = _output_made_here[-1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--file-durations-out", metavar="PATH", default=None,
                     help=f"write each test file's measured seconds (setup + call + teardown, less any wait for a "
                          f"once-per-run command, which runs beside the files) to PATH, in the form of "
                          f"{FILE_DURATIONS.name}, to refresh that table")
    parser.addoption("--ran-out", metavar="PATH", default=None,
                     help="write the node id of every test that ran (passed or failed, not skipped) to PATH, one a "
                          "line: `make test-core` writes it for --skip-ran-in")
    parser.addoption("--skip-ran-in", metavar="PATH", default=None,
                     help="deselect the tests PATH (from --ran-out) lists as ran, except those marked `extras`; "
                          "where PATH does not exist, deselect nothing")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        rel = Path(str(item.path)).resolve().relative_to(TESTS)
        if rel.parts and rel.parts[0] in TIERS:
            item.add_marker(rel.parts[0])
    ran_in = config.getoption("--skip-ran-in")
    if ran_in:
        deselect_ran(config, items, Path(ran_in))
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its order is the order files are handed out
        items[:] = longest_files_first(items)


def deselect_ran(config: pytest.Config, items: list[pytest.Item], ran_file: Path) -> None:
    """Deselect the tests ``ran_file`` lists as ran in another run, keeping those marked ``extras``.

    WHY: ``make test`` runs tests/unit in the core venv (the contract: the unit tier passes with the core
    dependencies alone), then in .venv only what that run did not run: tests that skipped there for want of an
    optional runtime, node ids it never saw (a parametrisation over what is installed), and ``extras`` tests.
    Every unit test thus runs at least once, with nothing to keep up by hand; a missing file (the core run never
    finished) deselects nothing, so the whole tier runs here instead.
    """
    if not ran_file.exists():
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"--skip-ran-in {ran_file}: no such file; every selected test runs here", yellow=True)
        return
    ran = set(ran_file.read_text().splitlines())
    done = [i for i in items if i.nodeid in ran and not i.get_closest_marker("extras")]
    if done:
        config.hook.pytest_deselected(items=done)
        items[:] = [i for i in items if i.nodeid not in ran or i.get_closest_marker("extras")]


#: Each test file's seconds in one process, measured (``--file-durations-out``); orders files for pytest-xdist.
FILE_DURATIONS = TESTS / "file_durations.json"


def longest_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` with whole files ordered longest first by :data:`FILE_DURATIONS`, each file's tests in place.

    WHY: with ``--dist loadfile`` (and ``--no-loadscopereorder``) pytest-xdist hands files out in collection
    order; a long file handed out last runs alone while the other workers idle. A file the table does not
    know goes first (a short one costs little there; a long one would cost its length at the end).
    """
    seconds = json.loads(FILE_DURATIONS.read_text())["seconds"] if FILE_DURATIONS.exists() else {}
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    order = sorted(files, key=lambda f: -seconds.get(_table_key(f), float("inf")))
    return [item for f in order for item in files[f]]


def _table_key(nodeid_file: str) -> str:
    """A file's key in :data:`FILE_DURATIONS`: its path under tests/ (node ids start where pytest's rootdir is)."""
    return str((REPO / nodeid_file).resolve().relative_to(TESTS))


_file_seconds: dict[str, float] = {}
#: Node ids whose test body ran (a skip in its setup or body does not count; an xfail does).
_ran: list[str] = []


#: A test's user property: seconds its setup waited for a once-per-run command (:func:`_once_per_run`), which the
#: durations table leaves out: the command runs in a thread of its own from the start of a run.
ONCE_PER_RUN_WAIT = "once_per_run_wait_s"
_current_item: list[pytest.Item] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    _current_item[:] = [item]
    try:
        return (yield)
    finally:
        _current_item.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    unpin()  # after each phase: a test that imported torch leaves the next one its cores (runs in the worker)
    key = report.nodeid.split("::", 1)[0]
    waited = sum(v for k, v in report.user_properties if k == ONCE_PER_RUN_WAIT) if report.when == "setup" else 0.0
    _file_seconds[key] = _file_seconds.get(key, 0.0) + max(0.0, report.duration - waited)
    if report.when == "call" and (not report.skipped or hasattr(report, "wasxfail")):
        _ran.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    out = Path(os.environ.get(TEST_OUTPUT_ENV, ""))
    if out.is_dir() and any(out.iterdir()):
        terminalreporter.write_line(f"screenshots and executed notebooks: {out} (set {TEST_OUTPUT_ENV} to choose)")


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = session.config.getoption("--file-durations-out")
    if out and not hasattr(session.config, "workerinput"):  # the controller (or a plain run) saw every report
        table = {_table_key(f): round(s, 1) for f, s in sorted(_file_seconds.items(), key=lambda kv: -kv[1])}
        how = ("each file's setup + call + teardown seconds in one process, less waits for a once-per-run command, "
               "from pytest --file-durations-out")
        Path(out).write_text(json.dumps({"how": how, "seconds": table}, indent=1) + "\n")
    ran_out = session.config.getoption("--ran-out")
    if ran_out and not hasattr(session.config, "workerinput"):
        partial = Path(f"{ran_out}.partial")  # renamed when whole: a reader never sees half a list
        partial.write_text("".join(f"{nodeid}\n" for nodeid in _ran))
        partial.replace(ran_out)


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch):
    """The backend registry with its discovery cache and current choice cleared, restored afterwards."""
    from workbench.backends import registry

    monkeypatch.setattr(registry, "_cache", None)
    monkeypatch.setattr(registry, "_current", None)
    monkeypatch.delenv(registry.ENV_OVERRIDE, raising=False)
    return registry


@pytest.fixture
def temp_kernels() -> Iterator[Callable]:
    """Register kernels for one test through the public API; every one is unregistered afterwards.

    ``temp_kernels(spec)`` registers a :class:`KernelSpec` and returns it; ``temp_kernels(spec, like="gelu_tanh")``
    registers a copy of a catalog kernel's spec under ``spec`` (a name) to hang test variants on.
    """
    import dataclasses

    from workbench.catalog import get_kernel, register_kernel, unregister_kernel

    names: list[str] = []

    def register(spec, like: str | None = None):
        if like is not None:
            spec = dataclasses.replace(get_kernel(like), name=spec)
        names.append(spec.name)
        return register_kernel(spec)

    yield register
    for name in names:
        unregister_kernel(name)


#: Deliberately bad kernels (crash, abort, hang, runaway memory, out-of-bounds writes), as a user catalog.
BAD_CATALOG = Path(__file__).resolve().parent / "bad_catalog"


@pytest.fixture(autouse=True)
def _backend_registry_restored():
    """A test that runs ``bench`` in this process may have the registry answer from ``workbench info``'s cached
    probe (:func:`workbench.backends.registry.use_descriptions`): later tests get the real backends again."""
    from workbench.backends import registry

    saved = (dict(registry._modules), set(registry._enumerated), registry._cache, registry._current)
    yield
    modules, enumerated, cache, current = saved
    if registry._modules != modules or registry._enumerated != enumerated:
        registry._modules.clear()
        registry._modules.update(modules)
        registry._enumerated.clear()
        registry._enumerated.update(enumerated)
        registry._cache, registry._current = cache, current


@pytest.fixture(scope="module")
def bad_catalog() -> Iterator[str]:
    """The ``wb_bad`` kernel of :data:`BAD_CATALOG`, loaded for a test module and unloaded after it."""
    from workbench.catalog import load_catalog, unload_catalog

    load_catalog(BAD_CATALOG)
    yield "wb_bad"
    unload_catalog(BAD_CATALOG)


def require_backend(name: str):
    """The backend ``name`` if it is available here; otherwise skip, quoting the probe's reason."""
    from workbench.backends import registry

    known = registry.all_backends()
    if name not in known:
        pytest.skip(f"backend {name!r} is not known here (known: {', '.join(sorted(known))})")
    probe = known[name].probe()
    if not probe.available:
        pytest.skip(f"{name} unavailable: {probe.reason}")
    return known[name]


@pytest.fixture(scope="session")
def catalog_verify() -> dict[str, object]:
    """``workbench verify --json`` over the whole catalog on every available backend, once per test run.

    WHY: it is the longest single thing the suite runs (280-460 s under load as one command, most of it the
    Triton interpreter and torch.compile); test_done_criteria checks every row of it and the backends tier
    reads its own backend's rows (test_triton) instead of verifying the same cells again. pytest-xdist workers
    share it through a file under a lock: the first test to ask runs it, another waits for it. ``--timeout 600``
    is a hang guard with room for a busy machine (the interpreter's attention_decode cell passed the default
    120 s at load 10). It runs as two commands side by side (:func:`verify_parts`). Returns ``returncode``,
    ``stdout`` (one ``--json`` document of both parts' rows) and ``stderr``, as one command's would be.
    """
    return merged_verify([_waited_for(*command) for command in ONCE_PER_RUN["catalog_verify"]])


#: The catalog's kernels whose verify cells take longest (torch.compile of the blocks per shape, the Triton
#: interpreter's attention: ~520 of ~1010 cell-seconds, measured at load 8): one part of the catalog's verify.
VERIFY_HEAVY = ("attention_block", "attention_decode", "attention_prefill", "mlp_block")


def catalog_kernel_names() -> list[str]:
    """The shipped catalog's kernels: a folder each under ``kernels/`` (read from disk, not from this process's
    registry, which tests extend with kernels of their own)."""
    return sorted(p.parent.name for p in (REPO / "kernels").glob("*/spec.py"))


def verify_parts() -> list[list[str]]:
    """``workbench verify`` arguments of the catalog's verify in two parts: :data:`VERIFY_HEAVY`, then every other
    kernel. WHY: one command verifies one cell at a time, 5-8 minutes under CI load, and test_variants,
    test_triton and test_done_criteria wait for it; two run side by side in about half that. Together they
    verify the same cells (every kernel, every available backend, the default sizes and seeds); a kernel that
    neither names would leave test_done_criteria without its rows, and fail it."""
    names = catalog_kernel_names()
    heavy = [k for k in VERIFY_HEAVY if k in names]
    rest = [k for k in names if k not in heavy]
    return [["verify", "--json", "--timeout", "600", "--kernel", *part] for part in (heavy, rest) if part]


def merged_verify(parts: list[dict[str, object]]) -> dict[str, object]:
    """One result of the :func:`verify_parts` commands' results: the first non-zero exit status (else 0), one
    ``--json`` document of every part's rows (empty stdout where a part wrote no document), both stderrs."""
    returncode = next((p["returncode"] for p in parts if p["returncode"]), 0)
    stderr = "".join(str(p["stderr"]) for p in parts)
    try:
        docs = [json.loads(str(p["stdout"])) for p in parts]
    except json.JSONDecodeError:
        return {"returncode": returncode or 1, "stdout": "", "stderr": stderr}
    counts: dict[str, int] = {}
    for doc in docs:
        for status, n in doc["counts"].items():
            counts[status] = counts.get(status, 0) + n
    doc = {"passed": all(d["passed"] for d in docs), "results": [r for d in docs for r in d["results"]],
           "counts": counts, "skipped": [s for d in docs for s in d["skipped"]],
           "catalog_load_errors": {k: v for d in docs for k, v in d["catalog_load_errors"].items()}}
    return {"returncode": returncode, "stdout": json.dumps(doc), "stderr": stderr}


#: The architectures the catalog's compile check is run for once per test run (:func:`catalog_compile_check`).
COMPILE_CHECK_ARCHS = ("sm_80", "sm_90")


@pytest.fixture(scope="session")
def catalog_compile_check() -> dict[str, object]:
    """``workbench compile-check --arch sm_80,sm_90 --json`` over the whole catalog, once per test run.

    WHY: the catalog's portable and Triton sources compiled for both NVIDIA targets is 50-60 s on two cores,
    and three tests check parts of that same table: test_done_criteria the command's exit code and archs,
    test_compile_check every portable row (no errors, no spills, a resource report per entry, shared memory),
    test_compile_check_triton that every catalog Triton file compiled. Each compiled it again before; they now
    read one run of the command (shared by pytest-xdist workers like :func:`catalog_verify`). Tests of one
    small unit, of other flags or of other targets still compile their own. Returns ``returncode``,
    ``stdout`` and ``stderr``.
    """
    (command,) = ONCE_PER_RUN["catalog_compile_check"]
    return _waited_for(*command)


def _waited_for(name: str, args: list[str], timeout: float) -> dict[str, object]:
    """:func:`_once_per_run`'s result, the seconds waited for it noted on the test being set up."""
    import time

    t0 = time.monotonic()
    result = _once_per_run(name, args, timeout)
    for item in _current_item:
        item.user_properties.append((ONCE_PER_RUN_WAIT, time.monotonic() - t0))
    return result


#: The commands run once per test run (:func:`_once_per_run`), by the fixture that returns their result: each
#: (name of its result in the run's shared folder, ``workbench`` arguments, seconds it may take).
ONCE_PER_RUN: dict[str, list[tuple[str, list[str], float]]] = {
    "catalog_verify": [(f"catalog-verify-{i}", args, 1800) for i, args in enumerate(verify_parts())],
    "catalog_compile_check": [("catalog-compile-check",
                               ["compile-check", "--arch", ",".join(COMPILE_CHECK_ARCHS), "--json"], 1800)],
}
#: The once-per-run commands this process started and has not seen end (ended at exit: :func:`pytest_unconfigure`).
_running: set[subprocess.Popen] = set()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start each once-per-run command a selected test will ask for, in a background thread, as tests begin.

    WHY: the catalog's verify is 5-8 minutes under CI load; started by its first test (test_done_criteria),
    it left the other pytest-xdist worker idle wherever a test of its own asked for the same result
    (test_variants' float32 cases, test_triton) before it was done. Started here, it runs beside the first
    files instead; a test that asks waits only for what is left. Both workers start a thread; the lock in
    :func:`_once_per_run` makes one of them run the command and the other read its result.
    """
    if session.config.option.collectonly:
        return
    unpin()  # collection imported torch: the threads started here, and the commands they run, get every core
    import threading

    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ()) if name in ONCE_PER_RUN}
    for fixture in sorted(wanted):
        for command in ONCE_PER_RUN[fixture]:
            threading.Thread(target=_once_per_run, args=command, name=f"once-per-run {command[0]}",
                             daemon=True).start()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the once-per-run commands this process started and no test waited for (a run stopped early, -x):
    a killed one leaves no result, so a worker still running asks again instead of reading it."""
    for proc in list(_running):
        proc.kill()
    import shutil

    for folder in _made_here:
        shutil.rmtree(folder, ignore_errors=True)
    for folder in _output_made_here:  # screenshots and executed notebooks are kept to look at
        with contextlib.suppress(OSError):
            os.rmdir(folder)  # only when empty


def _once_per_run(name: str, args: list[str], timeout: float) -> dict[str, object]:
    """``python -m workbench *args`` run once per test run, its result kept in the run's shared folder.

    pytest-xdist workers share it through a file under a lock: the first to ask (a test, or the thread
    :func:`pytest_collection_finish` starts) runs it, another waits.
    """
    import fcntl

    shared = Path(os.environ[SHARED_ENV])
    done = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            proc = subprocess.Popen([sys.executable, "-m", "workbench", *args], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            _running.add(proc)
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
            finally:
                _running.discard(proc)
            if proc.returncode < 0:  # killed (pytest_unconfigure, or from outside): no result to keep
                raise RuntimeError(f"workbench {' '.join(args)} was killed (signal {-proc.returncode})")
            done.write_text(json.dumps({"returncode": proc.returncode, "stdout": stdout, "stderr": stderr}))
        return json.loads(done.read_text())


@pytest.fixture
def run_python() -> Callable[..., subprocess.CompletedProcess]:
    """Run ``python -c code`` (or ``python *args``) from the repository root; state nothing leaks in."""

    # a guard against a hang, not a target: `workbench verify --kernel saxpy` starts a worker per backend, which
    # took over 120 s with other work on the 2-core machine
    def run(*args: str, code: str | None = None, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        argv = [sys.executable, *(("-c", code) if code is not None else args)]
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        return subprocess.run(argv, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=timeout)

    return run


#: A user kernel's spec.py (``out = 2 x``), named by ``.format(name=...)``: written to a temporary catalog
#: folder by the catalog-loader and worker start-up tests.
DOUBLE_SPEC = """
import numpy as np
from workbench.catalog import KernelSpec, register_kernel

SPEC = register_kernel(KernelSpec(
    name="{name}", description="double x", axes=("n",),
    make_inputs=lambda p, rng: {{"x": rng.standard_normal(p["n"])}},
    reference=lambda inp, p: {{"out": 2 * inp["x"]}},
    output_shapes=lambda p: {{"out": (p["n"],)}},
    flops=lambda p: p["n"], bytes_moved=lambda p, s: 2 * p["n"] * s,
    sizes={{"verify": [{{"n": 7}}], "quick": [{{"n": 1024}}]}}))
"""
