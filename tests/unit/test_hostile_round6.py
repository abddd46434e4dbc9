"""Issue 38, hostile round six: cases of the listed kinds that no earlier round tried, each fixed as a class in
the shared guard (the terminal-safe printer, the bounded reader, the tolerance check, the argument checks)."""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from workbench.catalog import get_kernel
from workbench.catalog.tolerance import usable_tolerance
from workbench.cli import main
from workbench.core.regular_files import read_new_part
from workbench.core.terminal_text import SafeLogHandler, SafeTextStream, terminal_safe

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_AUTO_PEAKS="0", **env))


# -- 5/6: the terminal-safe printer ----------------------------------------------------------------------------

def test_a_lone_surrogate_prints_on_a_strict_utf8_stream():
    """A path argument with a byte that is not UTF-8 (``export -o $'e\\xff.json'``) holds a lone surrogate: under
    PYTHONIOENCODING=utf-8 printing "wrote ..." failed after the file was written (exit 2, "surrogates not
    allowed")."""
    assert terminal_safe("e\udcff.json") == "e\\udcff.json"
    raw = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    out = SafeTextStream(raw)
    out.write("wrote e\udcff.json\n")
    out.flush()
    assert raw.buffer.getvalue() == b"wrote e\\udcff.json\n"


def test_log_records_go_to_the_current_stderr_made_safe():
    """A catalog file whose error held an escape sequence reached the terminal raw through logging, whose handler
    kept the stderr it found at ``import workbench``, before the command's terminal-safe stream."""
    handler = SafeLogHandler()
    saved = sys.stderr
    sys.stderr = io.StringIO()
    try:
        handler.emit(logging.LogRecord("workbench.x", logging.WARNING, __file__, 1, "bad \x1b]0;PWNED\x07 spec",
                                       None, None))
        text = sys.stderr.getvalue()
    finally:
        sys.stderr = saved
    assert "bad \\x1b]0;PWNED\\x07 spec" in text and "\x1b" not in text


def test_the_package_logs_through_the_safe_handler():
    code = ("import io, logging, sys, workbench; sys.stderr = io.StringIO(); "
            "logging.getLogger('workbench.catalog.loader').warning('x\\x1b[2Jy'); "
            "sys.__stdout__.write(repr(sys.stderr.getvalue()))")
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "x\\\\x1b[2Jy" in done.stdout and "\x1b" not in done.stderr


# -- 3: a reference nobody checks: tolerances that pass anything -----------------------------------------------

@pytest.mark.parametrize("tol", [float("inf"), float("nan"), -1.0, 1e9, 1.0, "1e-5"])
def test_a_tolerance_that_checks_nothing_is_refused_at_registration(tol):
    """A spec with ``tolerances={"float32": inf}`` verified a variant writing random numbers as ok."""
    base = get_kernel("vector_add")
    with pytest.raises(ValueError, match="tolerance .* is not usable"):
        dataclasses.replace(base, name="wb_round6", llm_params=None, tolerances={"float32": tol})


def test_a_size_dependent_tolerance_that_checks_nothing_is_refused_where_evaluated():
    base = dataclasses.replace(get_kernel("vector_add"), name="wb_round6", llm_params=None,
                               tolerances={"float32": lambda p: float("inf")})
    with pytest.raises(ValueError, match="wb_round6.*not usable"):
        base.tolerance("float32", {"n": 7})
    assert usable_tolerance(0.0, "x") == 0.0 and usable_tolerance(2e-5, "x") == 2e-5


# -- 2: bounded reads: a worker's output -----------------------------------------------------------------------

def test_a_workers_output_is_read_back_bounded_and_the_offset_kept():
    """A kernel printing 50 MB in a worker was read back whole into the command and echoed whole to stderr."""
    with tempfile.TemporaryFile() as f:
        f.write(b"head" + b"x" * (5 << 20) + b"tail")
        f.flush()
        offset = f.tell()
        data, end = read_new_part(f.fileno(), 0, limit=1024)
        assert end == offset and f.tell() == offset  # the shared offset a child writes at is not moved
        assert data.startswith(b"head") and data.endswith(b"tail") and len(data) < 1200
        assert b"bytes of output left out" in data
        f.write(b"more")
        f.flush()
        assert read_new_part(f.fileno(), end) == (b"more", end + 4)
        assert read_new_part(f.fileno(), end + 4) == (b"", end + 4)


# -- 13: messages that name the wrong thing ---------------------------------------------------------------------

def test_config_load_names_what_a_path_is(tmp_path, capsys, monkeypatch):
    """``config load /dev/zero`` (or a FIFO, a folder) said "no such file" of a path that is there."""
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "config.json"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, words in ((fifo, "is a FIFO"), (tmp_path, "is a directory"), (tmp_path / "nope", "no such file")):
        assert main(["config", "load", str(path)]) == 2
        assert words in capsys.readouterr().err


# -- 15: accepted silently --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, traceback", [("maybe", None), ("false", False), ("1", True)])
def test_workbench_debug_is_read_as_a_switch(tmp_path, capsys, monkeypatch, value, traceback):
    """WORKBENCH_DEBUG=maybe (or =false) turned tracebacks on: any value but '' and '0' did."""
    monkeypatch.setenv("WORKBENCH_DEBUG", value)
    assert main(["runs", "--store", str(tmp_path / "none.sqlite")]) == 2
    err = capsys.readouterr().err
    if traceback is None:
        assert "WORKBENCH_DEBUG='maybe' is not understood" in err
    else:
        assert ("Traceback" in err) is traceback and "no results store" in err


def test_verify_that_checked_nothing_is_no_pass(capsys, monkeypatch):
    """`verify --kernels ','` said "verification passed: 0 ok" (exit 0), and so did a verify whose every cell was
    unsupported (numba at float16): a CI gate passed on nothing."""
    from workbench.sweep import verification

    assert main(["verify", "--kernels", ",", "--backends", "numpy"]) == 2
    assert "--kernels ',' names nothing" in capsys.readouterr().err
    row = verification.VerifyResult("vector_add", "numba", "numba", "float16", "unsupported",
                                    message="backend 'numba' does not support float16")
    monkeypatch.setattr(verification, "verify", lambda **kw: verification.VerifyResults([row]))
    assert main(["verify", "--kernels", "vector_add", "--backends", "numpy", "--isolation", "in-process"]) == 2
    err = capsys.readouterr().err
    assert "nothing was verified" in err and "does not support float16" in err
    ok = dataclasses.replace(row, status="ok", message="")
    monkeypatch.setattr(verification, "verify", lambda **kw: verification.VerifyResults([row, ok]))
    assert main(["verify", "--kernels", "vector_add", "--backends", "numpy", "--isolation", "in-process"]) == 0


def test_a_complex_reference_is_refused_by_name():
    """A reference giving complex values failed every variant with numpy's "Cannot cast ufunc 'subtract'",
    naming neither the reference nor the kernel."""
    import numpy as np

    from workbench.catalog.reference_check import reference_problem

    spec = get_kernel("vector_add")
    ref = {"out": (np.arange(7.0) + 1) * 1j}
    assert "complex values" in reference_problem(spec, ref, {"n": 7})
    assert reference_problem(spec, {"out": np.arange(7.0) + 1}, {"n": 7}) is None


# -- 9: a catalog that prints ------------------------------------------------------------------------------------

def test_what_a_catalog_file_prints_goes_to_stderr_not_the_commands_output(tmp_path):
    """``print`` at the top of a spec.py broke ``verify --json``'s document (and ``compile-check --json``'s):
    stdout is the command's output."""
    folder = tmp_path / "wb_round6_prints"
    folder.mkdir()
    (folder / "spec.py").write_text(
        "print('HELLO FROM SPEC')\n"
        "import dataclasses\nfrom workbench.catalog import get_kernel, kernel_here\n"
        "SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(get_kernel('vector_add'), name=name,"
        " llm_params=None, sizes={'verify': [{'n': 7}]}))\n")
    code = ("import sys; from workbench.catalog import loader; loader.load_catalog(sys.argv[1]); "
            "print('loaded', sorted(loader.load_errors))")
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "loaded []\n" and "HELLO FROM SPEC" in done.stderr


def test_a_kernels_own_keyboard_interrupt_in_process_is_an_error_row(bad_catalog, tmp_path):
    """A variant raising KeyboardInterrupt under ``bench --in-process`` stopped the whole sweep as if Ctrl-C had
    been pressed: exit 130, the run "interrupted" with no rows. No signal reaches the cell thread, so it is the
    kernel's own failure."""
    from workbench.catalog import register_variant, unregister_variant
    from workbench.catalog.spec import Variant
    from workbench.sweep import SweepSpec, run_sweep

    def build(ctx):
        def run(i, o):
            raise KeyboardInterrupt
        return run

    register_variant(Variant("wb_bad", "interrupts", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=["wb_bad"], variants=["interrupts"], backends=["numpy"], isolation="in-process",
                         budget_s=0.05, warmup_s=0.01, min_samples=3, max_samples=20, rounds=1)
        rows = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows
        assert [r["status"] for r in rows] == ["error"] * len(rows) and rows
        assert "raised KeyboardInterrupt itself" in rows[0]["message"]
    finally:
        unregister_variant("wb_bad", "interrupts")


# -- 10: arguments checked before a run exists --------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["--confirm-rounds", "9" * 20], "--confirm-rounds"), (["--confirm-rounds", "2"], "--confirm-rounds"),
    (["--confirm", "-1"], "--confirm"), (["--confirm", "9" * 400], "--confirm")])
def test_tune_confirmation_options_are_bounded_before_a_run_exists(tmp_path, capsys, argv, words):
    """``tune --confirm-rounds 99999999999999999999`` stored a run, then failed naming "budget_s 3e+19"."""
    store = tmp_path / "s.sqlite"
    assert main(["tune", "--kernel", "gemm", "--variant", "numba-tiled", "--backend", "numpy", "--store", str(store),
                 *argv]) == 2
    assert f"argument {words}:" in capsys.readouterr().err and not store.exists()


# -- 23: self-contradicting text --------------------------------------------------------------------------------

def test_a_cell_named_twice_is_one_cell_of_the_progress():
    """``bench --kernels vector_add,vector_add --backends numpy,numpy --sizes n=100,n=100`` ran one cell but its
    progress counted six cell rounds, and ended at "3/6 cell rounds (50%)"."""
    from workbench.sweep.plan import SweepPlan
    from workbench.sweep.spec import SweepSpec

    spec = SweepSpec(kernels=["vector_add", "vector_add"], variants=["numpy"], backends=["numpy", "numpy"],
                     sizes=[{"n": 100}, {"n": 100}], rounds=3)
    plan = SweepPlan(spec)
    assert len(plan.cells) == 1 and plan.total == 3


# -- 17: code run in this process changing the process for the command -------------------------------------------

def test_process_state_is_put_back_after_code_we_ran(tmp_path, caplog):
    from workbench.core.process_state import process_state_kept

    cwd, limit, out, err = os.getcwd(), sys.getrecursionlimit(), sys.stdout, sys.stderr
    mask = os.umask(0o022)
    os.umask(mask)
    with caplog.at_level(logging.WARNING), process_state_kept("hk/hostile (in-process)"):
        os.chdir(tmp_path)
        os.umask(0o777)
        sys.setrecursionlimit(60)
        sys.stderr.close()  # refused: the command's stderr stays open
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - what a hostile kernel does
    assert os.getcwd() == cwd and sys.getrecursionlimit() == limit and sys.stdout is out and sys.stderr is err
    assert os.umask(mask) == mask
    assert not err.closed
    said = caplog.text
    assert "hk/hostile (in-process) changed the working directory, the umask, the recursion limit" in said
    assert "sys.stdout or sys.stderr" in said


def test_an_in_process_kernel_cannot_change_the_process_for_the_report(bad_catalog, tmp_path):
    """``os.umask(0o777)`` in a variant under ``bench --in-process`` made its --report unreadable (mode 000);
    ``sys.setrecursionlimit(60)`` lost the report; ``sys.stdout = open(os.devnull)`` swallowed the table."""
    from workbench.catalog import register_variant, unregister_variant
    from workbench.catalog.spec import Variant
    from workbench.sweep import SweepSpec, run_sweep

    def build(ctx):
        def run(i, o):
            os.umask(0o777)
            sys.setrecursionlimit(60)
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            o["out"][...] = i["a"] + i["b"]
        return run

    mask = os.umask(0o022)
    os.umask(mask)
    limit, out = sys.getrecursionlimit(), sys.stdout
    register_variant(Variant("wb_bad", "meddles", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=["wb_bad"], variants=["meddles"], backends=["numpy"], isolation="in-process",
                         budget_s=0.05, warmup_s=0.01, min_samples=3, max_samples=20, rounds=1)
        run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
        assert os.umask(mask) == mask and sys.getrecursionlimit() == limit and sys.stdout is out
    finally:
        os.umask(mask)
        sys.setrecursionlimit(limit)
        sys.stdout = out
        unregister_variant("wb_bad", "meddles")


def test_a_catalog_file_that_changes_directory_does_not_move_the_commands_paths(tmp_path):
    """A spec.py calling os.chdir at import put ``bench --store rel.sqlite --json rel.json`` in its folder."""
    folder = tmp_path / "wb_round6_chdir"
    folder.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (folder / "spec.py").write_text(
        f"import os\nos.chdir({str(tmp_path / 'elsewhere')!r})\n"
        "import dataclasses\nfrom workbench.catalog import get_kernel, kernel_here\n"
        "SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(get_kernel('vector_add'), name=name,"
        " llm_params=None, sizes={'verify': [{'n': 7}]}))\n")
    code = "import os, sys; from workbench.catalog import loader; loader.load_catalog(sys.argv[1]); print(os.getcwd())"
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path) and "changed the working directory" in done.stderr


# -- 16: stop signals ------------------------------------------------------------------------------------------------

def test_a_second_stop_signal_does_not_cut_the_closing_short():
    """A second SIGTERM 50 ms after the first ended ``bench`` with exit 143, no message, and its run "running"."""
    import signal

    from workbench.cli.termination import Terminated, termination_as_interrupt

    if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        pytest.skip("SIGTERM is handled by the test runner here")
    closed = False
    with termination_as_interrupt():
        try:
            signal.raise_signal(signal.SIGTERM)
        except Terminated as first:
            signal.raise_signal(signal.SIGTERM)  # while the run is being closed
            signal.raise_signal(signal.SIGHUP)
            closed = first.exit_status == 143
    assert closed and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


# -- 13: numbers out of every range ------------------------------------------------------------------------------

def test_a_count_of_hundreds_of_digits_is_named_not_an_internal_error(tmp_path, capsys):
    """``bench --rounds 999...9`` (400 digits) ended in "internal error: OverflowError: int too large to convert to
    float", exit 1."""
    assert main(["bench", "--kernels", "vector_add", "--backends", "numpy", "--rounds", "9" * 400,
                 "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "--rounds 9999" in err and "(400 digits) is out of range" in err and "internal error" not in err


def test_a_cell_that_ends_early_completes_only_the_rounds_it_had_left():
    """A worker killed in round 2 of 5 made the bar read "6/5 cell rounds (120%)": the early end counted
    1 + 5 - 1 rounds after the first had been counted already."""
    from workbench.sweep.plan import SweepPlan
    from workbench.sweep.spec import SweepSpec

    plan = SweepPlan(SweepSpec(kernels=["vector_add"], variants=["numpy"], backends=["numpy"], sizes=[{"n": 100}],
                               rounds=5))
    cell = plan.cells[0]
    plan._round(0, [cell]).__next__()
    assert plan.keep(cell, {"status": "ok", "rounds": 1}) == 1
    plan._round(1, [cell]).__next__()
    assert plan.keep(cell, {"status": "crashed", "rounds": 1}) == 4
    assert plan.done == plan.total == 5


# -- 20: a backend labelled by what it should be, not what runs -----------------------------------------------------

def test_numba_with_its_jit_disabled_is_no_numba_backend(monkeypatch):
    """Under NUMBA_DISABLE_JIT=1, ``info`` said numba was available and ``bench --backends numba`` stored rows
    under numba's name that ran plain Python (or failed with "'function' object has no attribute 'py_func'")."""
    numba = pytest.importorskip("numba")
    from workbench.backends.numba_backend import _probe_numba

    assert _probe_numba().available
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    probe = _probe_numba()
    assert not probe.available and "NUMBA_DISABLE_JIT is set" in probe.reason


# -- 11: environment values that ended in a traceback ------------------------------------------------------------

@pytest.mark.parametrize("name, value, ok", [("NUMBA_NUM_THREADS", "abc", False), ("NUMBA_NUM_THREADS", "0", False),
                                             ("OMP_NUM_THREADS", "4,2", True), ("OMP_NUM_THREADS", "-1", False),
                                             ("MKL_NUM_THREADS", "2", True)])
def test_thread_counts_in_the_environment_are_checked(monkeypatch, capsys, name, value, ok):
    """``NUMBA_NUM_THREADS=abc workbench verify`` printed numba's traceback in every worker and went on."""
    monkeypatch.setenv(name, value)
    from workbench.core.env_values import check_thread_counts

    if ok:
        check_thread_counts()
        return
    with pytest.raises(ValueError, match=f"{name}='{value}' is not a thread count"):
        check_thread_counts()
    assert main(["verify", "--kernels", "vector_add", "--backends", "numpy"]) == 2
    assert f"{name}='{value}' is not a thread count" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["history", "--machine", ""], ["history", "--kernel", ","],
                                  ["compare", "latest", "--baseline", ""], ["report", "--baseline", " "]])
def test_an_option_that_names_nothing_is_refused(tmp_path, capsys, argv):
    """``history --machine '' --fail-on-regression 5`` judged every machine; ``compare --baseline ''`` used the
    default baseline; neither said the value was empty."""
    assert main([*argv, "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "names nothing" in capsys.readouterr().err


def test_a_process_a_catalog_file_starts_at_import_ends_with_the_command(tmp_path):
    """A spec.py that started ``sleep`` at its top left it running after ``verify`` exited (its workers' ones
    were ended; the command's own were not)."""
    import psutil

    folder = tmp_path / "wb_round6_forks"
    folder.mkdir()
    (folder / "spec.py").write_text(
        "import subprocess\nP = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "import dataclasses\nfrom workbench.catalog import get_kernel, kernel_here\n"
        "SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(get_kernel('vector_add'), name=name,"
        " llm_params=None, sizes={'verify': [{'n': 7}]}))\n")
    code = ("import sys; from workbench.catalog import loader; loader.load_catalog(sys.argv[1]); "
            "print(sys.modules['workbench_catalog.wb_round6_forks.spec'].P.pid "
            "if 'workbench_catalog.wb_round6_forks.spec' in sys.modules else "
            "[m.P.pid for n, m in sys.modules.items() if n.endswith('wb_round6_forks.spec')][0])")
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    try:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    finally:
        if psutil.pid_exists(pid):
            psutil.Process(pid).kill()


def test_a_user_signal_stops_the_command_as_sigterm_does():
    """SIGUSR1 mid-sweep killed ``bench`` where it stood: exit 138, no message, its run closed by nobody."""
    import signal

    from workbench.cli.termination import Terminated, termination_as_interrupt

    if signal.getsignal(signal.SIGUSR1) != signal.SIG_DFL:
        pytest.skip("SIGUSR1 is handled by the test runner here")
    with pytest.raises(Terminated) as stopped, termination_as_interrupt():
        signal.raise_signal(signal.SIGUSR1)
    assert stopped.value.exit_status == 128 + signal.SIGUSR1
