"""%wb_timeit, %%wb_timeit and %wb_quick (workbench/magics.py) in a real IPython shell: what they print, what
they return, and the one-line errors for bad input."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from workbench.catalog import registry

pytest.importorskip("IPython", reason="IPython is not installed in this venv (the notebook extra provides it)")

LINE = re.compile(r"^\S+ \S?s median(?: \(quartiles \S+ \S?s to \S+ \S?s\)|, disturbed: .+); "
                  r"(not noisy \(spread [\d.]+% (?:across \d+ rounds|within one stream of samples)\)|~ noisy \(.+\)); "
                  r"(\d+) rounds, \d+ samples of \d+ calls?; timing mode (?:host|launch|kernel|graph), "
                  r"timer \S+ on (\S+); threads: .+$")


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "workbench.magics")
    ip.user_ns.update(np=np, x=np.random.rand(2000))
    yield ip
    # a plain shell left as the singleton is get_ipython() for every later test in this process (it cannot
    # `%matplotlib inline`: tutorial.begin failed after this module)
    InteractiveShell.clear_instance()


def run(shell, capsys, source):
    """Run a cell; its stdout and stderr lines, and whether it raised."""
    result = shell.run_cell(source)
    out = capsys.readouterr()
    return out.out.splitlines(), out.err.splitlines(), result


def test_importing_workbench_and_the_magics_module_loads_no_ipython():
    code = "import sys, workbench, workbench.magics; print('IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_line_magic_prints_one_line_with_median_quartiles_rounds_noise_and_threads(shell, capsys):
    out, err, result = run(shell, capsys, "%wb_timeit -r 2 -b 0.05 np.sort(x)")
    assert result.success, err
    assert len(out) == 1, out
    m = LINE.match(out[0])
    assert m, out[0]
    assert m.group(2) == "2" and m.group(3) == "numpy"


def test_line_magic_returns_the_measurement_with_o_and_prints_nothing_with_q(shell, capsys):
    out, err, result = run(shell, capsys, "m = %wb_timeit -o -q -r 3 -b 0.05 np.sort(x)")
    assert result.success, err
    assert out == []
    m = shell.user_ns["m"]
    assert m.rounds == 3 and m.q1_s <= m.median_s <= m.q3_s and m.label == "np.sort(x)"


def test_the_statement_is_what_is_timed(shell, capsys):
    shell.user_ns["calls"] = []
    out, err, result = run(shell, capsys, "%wb_timeit -q -r 2 -b 0.02 calls.append(1)")
    assert result.success, err
    assert len(shell.user_ns["calls"]) > 5  # first call, warm-up and samples all ran the statement


def test_cell_magic_runs_the_setup_line_once_and_times_the_cell(shell, capsys):
    shell.user_ns["setups"] = []
    out, err, result = run(shell, capsys, "%%wb_timeit -r 2 -b 0.05 setups.append(1); y = x[::-1]\nnp.sort(y)\n")
    assert result.success, err
    assert shell.user_ns["setups"] == [1] and "y" not in shell.user_ns
    assert len(out) == 1 and LINE.match(out[0]), out


def test_backend_comes_from_the_arrays_the_statement_names(shell, capsys):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    shell.user_ns.update(torch=torch, t=torch.rand(64, 64))
    out, err, result = run(shell, capsys, "%wb_timeit -r 2 -b 0.02 torch.softmax(t, dim=1)")
    assert result.success, err
    assert LINE.match(out[0]).group(3) == "torch-cpu"


@pytest.mark.parametrize("line, named", [
    ("%wb_timeit -z np.sort(x)", "unrecognized arguments: -z"),
    ("%wb_timeit -r 0 np.sort(x)", "-r 0 is out of range"),
    ("%wb_timeit -r abc np.sort(x)", "invalid int value: 'abc'"),
    ("%wb_timeit --backend nope np.sort(x)", "'nope'"),
    ("%wb_timeit -r 2", "no statement to time"),
    ("%wb_quick -s setup -n [8] [np.sort]", "`[np.sort]` must be a non-empty dict of name -> callable, got list"),
    ("%wb_quick -s setup -n [8] {'a': 3}", "'a' maps to int 3"),
    ("%wb_quick -s setup -n [8] fns_nowhere", "`fns_nowhere` could not be evaluated: NameError"),
    ("%wb_quick -n [8] {'a': np.sort}", "required: -s/--setup"),
    ("%wb_quick -s setup -n [0] {'a': np.sort}", "not understood: [0]"),
    ("%wb_quick --bogus 1 -s setup -n [8] {'a': np.sort}", "unrecognized arguments: --bogus"),
])
def test_bad_input_is_one_line_naming_the_value(shell, capsys, line, named):
    shell.user_ns["calls"] = []
    shell.user_ns["setup"] = lambda n: np.random.rand(n)
    out, err, result = run(shell, capsys, line.replace("np.sort(x)", "calls.append(1)"))
    assert not result.success
    assert isinstance(result.error_in_exec, Exception) and type(result.error_in_exec).__name__ == "UsageError"
    assert len(err) == 1 and err[0].startswith("UsageError: %wb_") and named in err[0], err
    assert shell.user_ns["calls"] == []  # nothing ran


def test_quick_magic_runs_the_callables_and_displays_the_summary(shell, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_STORE", str(tmp_path / "s.sqlite"))
    shell.user_ns["setup"] = lambda n: np.random.rand(n)
    try:
        with pd.option_context("display.max_columns", None, "display.width", 400):  # the whole table as text
            out, err, result = run(shell, capsys, "res = %wb_quick -o -s setup -n [64,256] -b 0.02 -r 2 --name "
                                                  "'magic quick' {'sort': np.sort, 'rev': lambda a: np.sort(a)[::-1]}")
    finally:
        registry.unregister_kernel("magic quick")
    assert result.success, err
    res = shell.user_ns["res"]
    statuses = {(r["variant"], r["size"]): r["status"] for _, r in res.df.iterrows()}
    assert statuses == {("sort", 64): "ok", ("sort", 256): "ok", ("rev", 64): "incorrect",
                        ("rev", 256): "incorrect"}
    text = "\n".join(out)
    assert text.startswith("<Results ") and "4 cells" in text
    # a terminal gets one readable line per cell (times and verdicts whole, not a frame cut to "..."): issue 40
    for variant, n, status in (("sort", 64, "ok"), ("sort", 256, "ok"), ("rev", 64, "incorrect")):
        assert re.search(rf"^{variant} numpy \S+ n={n} {status}", text, re.M), text
    assert "median" in text and "max error" in text and "..." not in text
    assert (tmp_path / "s.sqlite").exists()  # stored where the notebook's store is
