"""Hostile round four (issue 38), the groups about what a run trusts: a spec's reference is checked like a
variant's outputs and an empty size list is refused (3), a catalog file that exits, interrupts or hangs at
import fails to load, named, instead of ending or stalling the command (9), a variant returning more arrays
than the kernel has outputs is an error (15)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from workbench.catalog import get_kernel, loader
from workbench.catalog.reference_check import BadReference
from workbench.catalog.spec import KernelSpec, Variant
from workbench.measure.case import Case, normalize_outputs

ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD_SIZES = {"verify": [{"n": 101}]}


def _spec(**changes) -> KernelSpec:
    base = get_kernel("vector_add")
    return dataclasses.replace(base, name="wb_round4", llm_params=None, sizes=VECTOR_ADD_SIZES, **changes)


def _variant(run) -> Variant:
    return Variant(kernel="wb_round4", name="v", runtimes=("numpy",), build=lambda ctx: run)


def _case(spec: KernelSpec, run) -> Case:
    from workbench.backends import registry

    return Case(spec, _variant(run), registry.get("numpy"), {"n": 101}, "float32")


def _random(i, o):
    o["out"][...] = np.random.default_rng().standard_normal(o["out"].shape)


@pytest.mark.parametrize("reference, words", [
    (lambda inp, p: {"out": np.full(p["n"], np.nan)}, "101 non-finite values (NaN/Inf) of 101"),
    (lambda inp, p: {"out": np.full(p["n"], np.inf)}, "non-finite"),
    (lambda inp, p: {"out": np.zeros(p["n"] + 1)}, "has shape (102,), output_shapes says (101,)"),
    (lambda inp, p: {"result": inp["a"] + inp["b"]}, "gives outputs ['result'], output_shapes declares ['out']"),
    (lambda inp, p: inp["a"] + inp["b"], "returned ndarray, not a dict"),
    # a reference that zeroed its inputs (or ignores them) verified a variant writing zeros as ok
    (lambda inp, p: {"out": np.zeros(p["n"])}, "all zeros for random inputs"),
])
def test_a_reference_is_checked_like_a_variant(reference, words):
    """Group 3: a NaN reference verified a variant writing random numbers as ok with error 0."""
    with pytest.raises(BadReference, match="wb_round4") as err:
        _case(_spec(reference=reference), _random)
    assert words in str(err.value)


def test_an_all_zero_reference_at_an_axis_of_one_is_still_allowed():
    """A layer norm over one column is all zeros by right: only sizes with every axis at least 2 refuse it."""
    from workbench.backends import registry

    spec = _spec(reference=lambda inp, p: {"out": np.zeros(p["n"])})
    case = Case(spec, _variant(lambda i, o: o["out"].fill(0)), registry.get("numpy"), {"n": 1}, "float32")
    assert case.run_and_check().passed


def test_a_good_reference_still_judges_the_variant():
    case = _case(_spec(), _random)
    assert not case.run_and_check().passed


@pytest.mark.parametrize("sizes", [{"verify": []}, {"verify": [{"n": 7}], "quick": []}, {"verify": None}])
def test_an_empty_size_list_is_refused_at_registration(sizes):
    """Group 3: empty `verify` lists said "verification passed: 2 ok" with nothing run."""
    with pytest.raises(ValueError, match="wb_round4.*empty or not a list"):
        _spec().__class__(**{**dataclasses.asdict(_spec()), "sizes": sizes})


def _folder(tmp_path, name: str, top: str):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "spec.py").write_text(top + "\n" + textwrap.dedent("""
        import dataclasses
        from workbench.catalog import get_kernel, kernel_here
        SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(
            get_kernel("vector_add"), name=name, llm_params=None, sizes={"verify": [{"n": 7}]}))
    """))
    return folder


@pytest.mark.parametrize("top, words", [
    ("import sys; sys.exit(0)", "SystemExit: the file called sys.exit(0)"),
    ("raise SystemExit('bye')", "sys.exit('bye')"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("class E(Exception):\n    def __str__(self): raise RuntimeError\nraise E()", "E: (its message could not be read)"),
    ("while True:\n    pass", "timed out: importing it took longer than 1 s"),
    ("import time\ntry:\n    time.sleep(60)\nexcept Exception:\n    pass", "timed out"),
    ("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass",
     "timed out: importing it took longer than 1 s"),
    ("import signal\nsignal.setitimer(signal.ITIMER_REAL, 0)\nwhile True:\n    pass", "timed out"),
])
def test_a_catalog_file_that_exits_or_hangs_fails_to_load_named(tmp_path, monkeypatch, top, words):
    """Group 9: sys.exit(0) in a spec.py made verify and bench exit 0 with no output; a loop hung them."""
    monkeypatch.setenv(loader.ENV_IMPORT_TIMEOUT, "1")
    folder = _folder(tmp_path, f"wb_round4_exit_{abs(hash(top)) % 10**6}", top)
    try:
        assert loader.load_catalog(folder) == [folder.name]  # returned: the command goes on
        assert words in loader.load_errors[f"{folder.name}/spec.py"]
    finally:
        loader.load_errors.pop(f"{folder.name}/spec.py", None)
        loader.forget_folder(folder.resolve())


def test_a_catalog_file_that_calls_os_exit_fails_to_load_named(tmp_path):
    """Round five of group 9: os._exit(0) in a spec.py ended the command with exit 0 and no output (a CI gate
    passed on nothing). In a child process: without the guard it would end the test run itself."""
    folder = _folder(tmp_path, "wb_round5_osexit", "import os\nos._exit(0)")
    code = ("import sys; from workbench.catalog import loader; loader.load_catalog(sys.argv[1]); "
            "print('after:', loader.load_errors)")
    done = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "after:" in done.stdout and "the file called os._exit(0) while loading" in done.stdout


def test_a_catalog_file_cannot_close_the_commands_output(tmp_path):
    """Round five of groups 9 and 12: sys.stdout.close() in a spec.py ended verify with "I/O operation on closed
    file"; sys.stderr replaced stayed replaced."""
    out, err = sys.stdout, sys.stderr
    folder = _folder(tmp_path, "wb_round5_closeout", "import sys\nsys.stdout.close()\nsys.stderr = None")
    try:
        assert loader.load_catalog(folder) == [folder.name]
        assert "wb_round5_closeout/spec.py" not in loader.load_errors
        assert sys.stdout is out and sys.stderr is err and not out.closed
        print("still printing")
    finally:
        sys.stdout, sys.stderr = out, err
        from workbench.catalog import unload_catalog

        unload_catalog(str(folder))  # its kernel too: a later test of the same process lists every kernel


def test_a_stop_signal_while_a_catalog_file_imports_stops_the_command(tmp_path, monkeypatch):
    """Round five of group 16: Ctrl-C or SIGTERM while a slow spec.py imported was recorded as that file's
    failure and the command went on."""
    import signal

    class Stop(BaseException):
        pass

    def stop(signum, frame):
        raise Stop(signum)

    # raise_signal delivers to the importing thread itself, whatever other threads the test process has
    top = ("import signal, time\nsignal.raise_signal(signal.{})\n"
           "try:\n    time.sleep(30)\nexcept BaseException:\n    pass")
    # a test process started with SIGINT ignored (a background job of a non-interactive shell: `make test &`)
    # ignores Ctrl-C as the command would, rightly: only SIGTERM is checked there (two fresh-clone core tiers
    # started with `&` failed here, 12:20 and 12:37; run in the foreground it passed)
    cases = [("SIGTERM", Stop)]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        cases.insert(0, ("SIGINT", KeyboardInterrupt))
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        for name, expected in cases:
            folder = _folder(tmp_path, f"wb_round5_{name.lower()}", top.format(name))
            with pytest.raises(expected):
                loader.load_catalog(folder)
            assert f"{folder.name}/spec.py" not in loader.load_errors
            loader.forget_folder(folder.resolve())
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_import_bound_keeps_a_timer_someone_else_armed(tmp_path, monkeypatch):
    """The bound must not take over SIGALRM: pytest-timeout or a notebook may have armed it."""
    import signal

    from workbench.catalog import unload_catalog

    monkeypatch.setenv(loader.ENV_IMPORT_TIMEOUT, "1")
    fired = []
    host_handler, host_timer = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
    fine, hang = _folder(tmp_path, "wb_round4_fine", ""), _folder(tmp_path, "wb_round4_slow", "while True: pass")
    try:
        signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
        signal.setitimer(signal.ITIMER_REAL, 100)
        loader.load_catalog(fine)
        assert 90 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100 and not fired
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # theirs first, ours after: both are honoured
        loader.load_catalog(hang)
        assert fired == [1] and "timed out" in loader.load_errors["wb_round4_slow/spec.py"]
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, *host_timer)
        signal.signal(signal.SIGALRM, host_handler)
        loader.load_errors.pop("wb_round4_slow/spec.py", None)
        unload_catalog(str(fine))
        loader.forget_folder(hang.resolve())


def test_extra_returned_arrays_are_an_error():
    """Group 15: a variant returning (out, extra) for one output had the extra dropped unseen."""
    outs = {"out": np.zeros(3)}
    with pytest.raises(TypeError, match="returned 2 arrays but the kernel has 1 output"):
        normalize_outputs((np.zeros(3), np.zeros(3)), outs)
    with pytest.raises(TypeError, match=r"outputs \['extra'\] the kernel does not have"):
        normalize_outputs({"out": np.zeros(3), "extra": 1}, outs)
    assert list(normalize_outputs((np.ones(3),), outs)) == ["out"]
