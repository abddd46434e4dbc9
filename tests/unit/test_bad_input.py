"""Bad input, table-driven (issue 12): every case is one or two lines of error naming the bad value, never a
traceback, and the results store it ran against is intact afterwards (same runs, same row count).

CLI cases call :func:`workbench.cli.main` in-process (it returns the exit status); Python cases call the API.
Kinds follow the issue: 1 paths from data, 2 import validation, 3 sizes, 4 numeric options, 7 exports,
8 other. Stores that cannot be opened and run status (kinds 5 and 6) are tested elsewhere.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.report.sample_data import synthetic_environment, synthetic_results
from workbench.store.database import Store

RUN_A = "20260101T000000Z-aaaaaa"


def _fill(store: Store, name: str) -> str:
    rid = store.new_run(name=name, env_id="env-demo")
    store.add_environment("env-demo", synthetic_environment())
    for row in synthetic_results(rid, seed=1).to_dict("records"):
        store.record(row)
    store.set_run_status(rid, "finished", wall_s=3.0)
    return rid


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A store with two runs (built once; each test gets a copy)."""
    path = tmp_path_factory.mktemp("tpl") / "results.sqlite"
    s = Store(path)
    s.set_peak("env-demo", "numpy", "bandwidth_gbps", "float64", 20.0, "GB/s", "triad")
    _fill(s, "first")
    _fill(s, "second")
    s.close()
    return path


@pytest.fixture()
def store(template, tmp_path, monkeypatch) -> Path:
    path = tmp_path / "results.sqlite"
    for suffix in ("", "-wal", "-shm"):
        if Path(str(template) + suffix).exists():
            shutil.copy(str(template) + suffix, str(path) + suffix)
    monkeypatch.chdir(tmp_path)  # default output paths (reports/...) land here
    monkeypatch.setenv("WORKBENCH_STORE", str(path))
    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")
    return path


def snapshot(path: Path) -> tuple[list[str], int]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id")]
        rows = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    finally:
        con.close()
    return runs, rows


def _export(store: Path, tmp: Path) -> dict:
    out = tmp / "good.json"
    Store(store).export(None, out)
    return json.loads(out.read_text())


def _write_doc(tmp: Path, name: str, mutate) -> Path:
    doc = json.loads((tmp / "good.json").read_text())
    mutate(doc)
    path = tmp / name
    path.write_text(json.dumps(doc))
    return path


def _set(path: str, value):
    """A mutation: the dotted ``path`` ("results.0.wall_s") set to ``value``."""
    def mutate(doc):
        *parents, last = path.split(".")
        node = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        node[int(last) if isinstance(node, list) else last] = value
    return mutate


# -- CLI cases: (id, kind, argv, exit code, text the message must contain) ------------------------------
# {store} is the pre-populated store, {tmp} the test's folder, {run} a run id in the store, {file} the
# file the case writes (import cases).

BENCH = ["bench", "--kernels", "softmax", "--backends", "numpy", "--store", "{store}"]
BENCH1 = ["bench", "--kernels", "saxpy", "--backends", "numpy", "--store", "{store}"]

CLI_CASES = [
    # 3: sizes
    ("size-negative", 3, [*BENCH, "--sizes", "-1"], 2, "'-1'"),
    ("size-word", 3, [*BENCH, "--sizes", "abc"], 2, "'abc'"),
    ("size-float", 3, [*BENCH, "--sizes", "1.5"], 2, "'1.5'"),
    ("size-bare-x", 3, [*BENCH, "--sizes", "x"], 2, "'x'"),
    ("size-wrong-axis", 3, [*BENCH, "--sizes", "n=1024"], 2, "n=1024"),
    ("size-wrong-axis-names-axes", 3, [*BENCH, "--sizes", "n=1024"], 2, "rows x cols"),
    ("size-huge", 3, [*BENCH1, "--sizes", str(2**62)], 2, str(2**62)),
    ("size-zero", 3, [*BENCH1, "--sizes", "0"], 2, "0"),
    ("size-trailing-x", 3, [*BENCH, "--sizes", "4096x"], 2, "'4096x'"),
    ("size-arity", 3, [*BENCH1, "--sizes", "4096x1024"], 2, "4096x1024"),
    ("size-name-among-numbers", 3, [*BENCH1, "--sizes", "quick", "4096"], 2, "'quick'"),
    ("size-empty-axis-value", 3, [*BENCH, "--sizes", "rows=:cols=5"], 2, "rows=:cols=5"),
    ("batch-negative", 3, ["bench", "--suite", "llm", "--batch-sizes", "-1", "--store", "{store}"], 2, "'-1'"),
    ("hidden-word", 3, ["bench", "--suite", "llm", "--hidden-sizes", "abc", "--store", "{store}"], 2, "'abc'"),
    # 4: numeric options
    ("budget-zero", 4, [*BENCH1, "--budget", "0"], 2, "--budget 0"),
    ("budget-negative", 4, [*BENCH1, "--budget", "-5"], 2, "-5"),
    ("budget-nan", 4, [*BENCH1, "--budget", "nan"], 2, "nan"),
    ("budget-inf", 4, [*BENCH1, "--budget", "inf"], 2, "inf"),
    ("budget-word", 4, [*BENCH1, "--budget", "fast"], 2, "'fast'"),
    ("timeout-nan", 4, [*BENCH1, "--timeout", "nan"], 2, "--timeout nan"),
    ("build-timeout-zero", 4, [*BENCH1, "--build-timeout", "0"], 2, "--build-timeout 0"),
    ("rounds-zero", 4, [*BENCH1, "--rounds", "0"], 2, "--rounds 0"),
    ("rounds-huge", 4, [*BENCH1, "--rounds", "100000"], 2, "100000"),
    ("rounds-word", 4, [*BENCH1, "--rounds", "x"], 2, "'x'"),
    ("verify-timeout-nan", 4, ["verify", "--kernel", "saxpy", "--backend", "numpy", "--timeout", "nan"], 2, "nan"),
    ("verify-seeds-zero", 4, ["verify", "--kernel", "saxpy", "--backend", "numpy", "--seeds", "0"], 2, "--seeds 0"),
    ("compare-threshold", 4, ["compare", "{run}", "{run}", "--fail-on", "slower", "--threshold", "5"], 2, "'5'"),
    # 8: outputs, baselines, formats
    ("report-pdf", 8, ["report", "--out", "{tmp}/r.pdf"], 2, "'.pdf'"),
    ("report-format-mismatch", 8, ["report", "--format", "md", "--out", "{tmp}/r.csv"], 2, "'.csv'"),
    ("report-baseline", 8, ["report", "--baseline", "nope@numpy", "--out", "{tmp}/r.html"], 2, "nope@numpy"),
    ("report-baseline-lists-valid", 8, ["report", "--baseline", "nope", "--out", "{tmp}/r.md"], 2,
     "numpy @ numpy"),
    ("compare-baseline", 8, ["compare", "{run}", "--baseline", "@cupy"], 2, "@cupy"),
    ("report-unknown-run", 8, ["report", "nope", "--out", "{tmp}/x.html"], 2, "'nope'"),
    ("bench-report-pdf", 8, [*BENCH1, "--sizes", "1024", "--report", "{tmp}/out.pdf"], 2, "'.pdf'"),
    ("bench-json-csv", 8, [*BENCH1, "--sizes", "1024", "--json", "{tmp}/out.csv"], 2, "'.csv'"),
    ("bench-report-under-file", 8, [*BENCH1, "--sizes", "1024", "--report", "{tmp}/afile/out.html"], 2, "afile"),
    ("bench-report-directory", 8, [*BENCH1, "--sizes", "1024", "--report", "{tmp}/adir.html"], 2, "adir.html"),
    ("bench-unknown-kernel", 8, ["bench", "--kernels", "nosuch", "--store", "{store}"], 2, "'nosuch'"),
    ("bench-unknown-cache", 8, [*BENCH1, "--cache", "warm"], 2, "'warm'"),
    ("bench-unknown-option", 8, ["bench", "--nope"], 2, "--nope"),
    ("bench-retry-without-resume", 8, [*BENCH1, "--retry-crashed"], 2, "--retry-crashed"),
    ("bench-memory-cap", 8, [*BENCH1, "--memory-cap", "lots"], 2, "lots"),
    ("unknown-command", 8, ["frobnicate"], 2, "frobnicate"),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_bad_input(case, store, tmp_path, capsys):
    _, _kind, argv, code, needle = case
    (tmp_path / "afile").write_text("a file, not a folder")
    (tmp_path / "adir.html").mkdir()
    before = snapshot(store)
    run = before[0][0]
    argv = [a.format(store=store, tmp=tmp_path, run=run) for a in argv]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == code, err
    assert needle in err, err
    assert "Traceback" not in err
    assert len([line for line in err.strip().splitlines() if line.strip()]) <= 2, err
    assert snapshot(store) == before
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "out.pdf").exists()


# -- import cases (kind 2): (id, how the file is made, text the message must contain) --------------------

def _raw(text: str | bytes):
    def make(tmp: Path, name: str) -> Path:
        p = tmp / name
        (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
        return p
    return make


def _doc(mutate):
    return lambda tmp, name: _write_doc(tmp, name, mutate)


IMPORT_CASES = [
    ("not-json", _raw("this is not json"), "not valid JSON"),
    ("bad-utf8", _raw(b'{"format": "workbench-results", "x": "\xff\xfe"}'), "not UTF-8"),
    ("deep-nesting", _raw("[" * 100_000 + "]" * 100_000), "nested more than"),
    ("deep-nesting-in-object", _raw('{"format": "workbench-results", "version": 1, "x": ' + "[" * 5000
                                    + "]" * 5000 + "}"), "nested more than"),
    ("huge-string", _doc(_set("runs.0.name", "x" * 50_000_000)), "runs[0].name"),
    ("version-string", _doc(_set("version", "1")), "'1' is not an integer"),
    ("version-newer", _doc(_set("version", 99)), "newer"),
    ("wrong-format", _doc(_set("format", "something-else")), "'something-else'"),
    ("top-level-list", _raw("[1, 2, 3]"), "not a workbench results export"),
    ("wall-s-string", _doc(_set("runs.0.wall_s", "slow")), "runs[0].wall_s: 'slow'"),
    ("spec-string", _doc(_set("runs.0.spec", "x")), "runs[0].spec"),
    ("spec-bad-budget", _doc(_set("runs.0.spec", {"budget_s": "fast"})), "runs[0].spec.budget_s"),
    ("params-number", _doc(_set("results.0.params", 5)), "results[0].params"),
    ("params-json-not-sizes", _doc(_set("results.0.params", '{"n": "big"}')), "results[0].params"),
    ("int-2-70", _doc(_set("results.0.n_samples", 2**70)), "results[0].n_samples"),
    ("nan-constant", _raw('{"format": "workbench-results", "version": 1, "runs": [{"run_id": "a", "wall_s": NaN}]}'),
     "NaN"),
    ("run-id-path", _doc(_set("runs.0.run_id", "../../x")), "'../../x'"),
    ("run-id-absolute", _doc(_set("results.0.run_id", "/abs/path")), "results[0].run_id"),
    ("env-id-path", _doc(_set("environments.0.env_id", "../env")), "environments[0].env_id"),
    ("results-not-list", _doc(_set("results", {"a": 1})), "results"),
    ("result-missing-cell-key", _doc(lambda d: d["results"][0].pop("cell_key")), "'cell_key' is a required"),
    ("result-is-string", _doc(_set("results.1", "row")), "results[1]"),
    ("env-record-list", _doc(_set("environments.0.record", [1])), "environments[0].record"),
    ("peak-value-string", _doc(_set("peaks.0.value", "fast")), "peaks[0].value"),
    ("argv-number", _doc(_set("runs.0.argv", 7)), "runs[0].argv"),
    ("status-huge-list", _doc(_set("results.0.status", ["ok"])), "results[0].status"),
    ("escape-in-name", _doc(_set("runs.0.name", "\x1b[2Jgotcha")), "runs[0].name: '\\x1b[2Jgotcha' holds a control"),
    ("escape-in-variant", _doc(_set("results.0.variant", "v\x1b]0;x\x07")), "results[0].variant"),
    ("orphan-row", _doc(_set("results.2.run_id", "no-such-run")), "results[2].run_id: 'no-such-run' names no run"),
    ("in-flight-not-json", _doc(_set("runs.0.in_flight", "{oops")), "runs[0].in_flight"),
    ("samples-not-numbers", _doc(_set("results.0.samples_s", '["a", "b"]')), "results[0].samples_s"),
    ("message-too-long", _doc(_set("results.0.message", "m" * (2 << 20))), "results[0].message"),
]


@pytest.mark.parametrize("case", IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_import_bad_file(case, store, tmp_path, capsys):
    name, make, needle = case
    _export(store, tmp_path)
    path = make(tmp_path, f"{name}.json")
    before = snapshot(store)
    rc = main(["import", str(path), "--store", str(store)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert str(path) in err and needle in err, err
    assert "Traceback" not in err and len(err) < 1000, err[:2000]
    assert snapshot(store) == before
    assert main(["runs", "--store", str(store)]) == 0  # the store still lists


def test_import_missing_file_and_directory(store, tmp_path, capsys):
    before = snapshot(store)
    assert main(["import", str(tmp_path / "nope.json"), "--store", str(store)]) == 2
    assert "nope.json" in capsys.readouterr().err
    assert main(["import", str(tmp_path), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and "Traceback" not in err
    assert snapshot(store) == before


def test_a_bad_import_creates_no_store(store, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "workbench-results", "version": "1"}')
    assert main(["import", str(bad), "--store", str(tmp_path / "new.sqlite")]) == 2
    assert "version: '1' is not an integer" in capsys.readouterr().err
    assert not (tmp_path / "new.sqlite").exists()


def test_valid_export_still_imports(store, tmp_path):
    _export(store, tmp_path)
    fresh = Store(tmp_path / "fresh.sqlite")
    added = fresh.import_file(tmp_path / "good.json")
    assert added["runs"] == 2 and added["results"] == snapshot(store)[1]


# -- Python cases: (id, kind, call(store path), exception, text the message must contain) ------------------

def _bench(**kw):
    import workbench

    args = {"kernel": "saxpy", "backends": ["numpy"], "sizes": [1024], "progress": False, **kw}
    return lambda path: workbench.benchmark(store=str(path), **args)


def _sweep(**kw):
    from workbench.sweep.driver import SweepSpec, run_sweep

    args = {"kernels": ["saxpy"], "backends": ["numpy"], "sizes": [1024], **kw}
    return lambda path: run_sweep(SweepSpec(**args), store=str(path), progress=False)


def _verify(**kw):
    from workbench.sweep.verification import verify

    args = {"kernels": "saxpy", "backends": "numpy", **kw}
    return lambda path: verify(**args)


PY_CASES = [
    # 3: sizes
    ("py-size-float", 3, _bench(sizes=[1.5]), ValueError, "1.5"),
    ("py-size-bool", 3, _bench(sizes=[True]), ValueError, "True"),
    ("py-size-name", 3, _bench(sizes="abc"), ValueError, "'abc'"),
    ("py-size-huge", 3, _bench(sizes=[2**62]), ValueError, str(2**62)),
    ("py-size-dict-float", 3, _bench(kernel="softmax", sizes=[{"rows": 4, "cols": 2.5}]), ValueError, "2.5"),
    ("py-size-wrong-axes", 3, _bench(kernel="softmax", sizes=[{"n": 1024}]), ValueError, "n=1024"),
    ("py-size-scalar-float", 3, _bench(sizes=1.5), ValueError, "1.5"),
    ("py-sweep-size-negative", 3, _sweep(sizes=[-1]), ValueError, "-1"),
    # 4: numeric options
    ("py-budget-word", 4, _bench(budget_s="fast"), ValueError, "'fast'"),
    ("py-budget-nan", 4, _bench(budget_s=math.nan), ValueError, "nan"),
    ("py-min-samples-zero", 4, _bench(min_samples=0), ValueError, "min_samples"),
    ("py-max-below-min", 4, _bench(min_samples=10, max_samples=5), ValueError, "max_samples (5)"),
    ("py-timeout-inf", 4, _bench(timeout_s=math.inf), ValueError, "inf"),
    ("py-rounds-bool", 4, _bench(rounds=True), ValueError, "True"),
    ("py-seed-negative", 4, _bench(seed=-1), ValueError, "-1"),
    ("py-n-inputs-zero", 4, _bench(n_inputs=0), ValueError, "n_inputs"),
    ("py-target-spread-nan", 4, _bench(target_spread=math.nan), ValueError, "nan"),
    ("py-warmup-negative", 4, _bench(warmup_s=-1), ValueError, "warmup_s"),
    ("py-sweep-budget-nan", 4, _sweep(budget_s=math.nan), ValueError, "nan"),
    ("py-sweep-min-samples", 4, _sweep(min_samples=0), ValueError, "min_samples"),
    ("py-unknown-option", 4, _bench(budget=1.0), ValueError, "budget"),
    # 8: other
    ("py-verify-no-seeds", 8, _verify(seeds=[]), ValueError, "seeds"),
    ("py-verify-seeds-string", 8, _verify(seeds="abc"), ValueError, "'abc'"),
    ("py-verify-seed-float", 8, _verify(seeds=[1.5]), ValueError, "1.5"),
    ("py-verify-timeout-nan", 8, _verify(timeout_s=math.nan), ValueError, "nan"),
    ("py-verify-sizes-bool", 8, _verify(sizes=[{"n": True}]), ValueError, "True"),
    ("py-verify-size-list", 8, _verify(sizes="huge"), ValueError, "'huge'"),
    ("py-speedup-baseline", 8, lambda path: _results(path).speedup(baseline="nope @ numpy"), ValueError,
     "'nope @ numpy'"),
    ("py-plot-baseline", 8, lambda path: _results(path).plot(kind="speedup", baseline="@cupy"), ValueError,
     "numpy @ numpy"),
    ("py-write-baseline", 8, lambda path: _results(path).write(Path(path).parent / "r.md", baseline="nope"),
     ValueError, "'nope'"),
    ("py-write-pdf", 8, lambda path: _results(path).write(Path(path).parent / "r.pdf"), ValueError, "pdf"),
    ("py-plot-kind", 8, lambda path: _results(path).plot(kind="pie"), ValueError, "'pie'"),
]


def _results(path):
    from workbench.api import Results

    return Results.from_store(str(path), "latest")


@pytest.mark.parametrize("case", PY_CASES, ids=[c[0] for c in PY_CASES])
def test_python_bad_input(case, store):
    _, _kind, call, exc, needle = case
    before = snapshot(store)
    with pytest.raises(exc) as info:
        call(store)
    msg = str(info.value)
    assert needle in msg, msg
    assert len(msg.splitlines()) <= 2 and len(msg) < 1000, msg
    assert snapshot(store) == before


def test_one_name_where_a_list_is_expected_is_that_name():
    from workbench.sweep.driver import SweepSpec

    spec = SweepSpec(kernels="saxpy", backends="numpy", dtypes="float32", modes="eager", sizes=[1024])
    assert {c.kernel for c in spec.cells()} == {"saxpy"} and spec.dtypes == ["float32"]


def test_results_write_unknown_format(store, tmp_path):
    from workbench.api import Results

    res = Results.from_store(store, "latest")
    with pytest.raises(ValueError, match="pdf.*supported formats"):
        res.write(tmp_path / "r.pdf")
    assert not (tmp_path / "r.pdf").exists()


# -- 8: the environment's backend override ----------------------------------------------------------------

def test_backend_override_unknown(store, capsys, monkeypatch):
    monkeypatch.setenv("WORKBENCH_BACKEND", "nonsense")
    assert main(["info"]) == 2
    err = capsys.readouterr().err
    assert "WORKBENCH_BACKEND='nonsense'" in err and "numpy" in err and "Traceback" not in err


def test_debug_shows_the_traceback(store, capsys):
    assert main(["--debug", "report", "nope", "--out", "x.html"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "'nope'" in err


# -- 1: a run id never becomes a path ----------------------------------------------------------------------

@pytest.mark.parametrize("run_id", ["../../escaped", "/tmp/abs-escaped", "..", "a/b\\c", "-rf"])
def test_report_default_path_from_run_id(run_id, store, tmp_path, capsys):
    con = sqlite3.connect(store)  # a store written before ids were checked (imports refuse these now)
    con.execute("INSERT INTO runs (run_id, created_at, status) VALUES (?, '2099-01-01T00:00:00Z', 'finished')",
                (run_id,))
    con.commit()
    con.close()
    before = snapshot(store)
    work = tmp_path / "deep" / "work"
    work.mkdir(parents=True)
    os.chdir(work)
    assert main(["report", "--store", str(store), "--format", "md", "--", run_id]) == 0, capsys.readouterr().err
    written = [p for p in (work / "reports").iterdir()]
    assert len(written) == 1 and written[0].parent == work / "reports"
    assert "/" not in written[0].name and not written[0].name.startswith((".", "-"))
    assert not (tmp_path / "deep" / "escaped.md").exists() and not Path("/tmp/abs-escaped.md").exists()
    assert snapshot(store) == before


def test_safe_file_stem():
    from workbench.report.exporters import safe_file_stem

    assert safe_file_stem("20261122T015700Z-3f9a1c") == "20261122T015700Z-3f9a1c"
    assert safe_file_stem("../../x") == "x" and safe_file_stem("/") == "run"
    assert safe_file_stem("a" * 500) == "a" * 100


# -- 7: exports --------------------------------------------------------------------------------------------

HOSTILE = ["=HYPERLINK(\"http://evil\")", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rcmd", "a\rb", "c\nd"]


def _hostile_df():
    df = synthetic_results("run-x", with_failures=False).head(len(HOSTILE)).copy()
    df["message"] = HOSTILE
    df["variant"] = ["<script>alert(1)</script>"] * len(df)
    df["status"] = ["ok"] * (len(df) - 1) + ["<img src=x onerror=alert(1)>"]
    df["env_id"] = "<b>env|id</b>"
    return df


def test_csv_neutralises_formulas_and_quotes_line_breaks(tmp_path):
    from workbench.report import write_report

    path = write_report(_hostile_df(), None, tmp_path / "r.csv")
    raw = path.read_bytes().decode()
    rows = list(csv.DictReader(io.StringIO(raw, newline="")))
    assert len(rows) == len(HOSTILE)  # a bare CR split no row
    for row, text in zip(rows, HOSTILE, strict=True):
        expect = ("'" + text) if text[0] in "=+-@\t\r" else text
        assert row["message"] == expect
        assert row["message"][0] not in "=+-@\t\r"
    assert '"a\rb"' in raw and '"c\nd"' in raw


@pytest.mark.extras  # checks more where an optional runtime is installed: runs in both venvs
def test_markdown_escapes_every_value(tmp_path):
    from workbench.report import write_report

    md = write_report(_hostile_df(), None, tmp_path / "r.md").read_text(encoding="utf-8")
    for bad in ("<script>", "<img", "<b>", "env|id"):
        assert bad not in md
    assert "&lt;img src=x onerror=alert(1)&gt;" in md  # the status count, escaped
    try:  # rendered by a Markdown renderer that lets raw HTML through, nothing becomes a tag
        import mistune
    except ImportError:
        return
    html = mistune.html(md)
    for tag in ("<script", "<img", "<b>"):
        assert tag not in html


def test_html_escapes_every_value(tmp_path):
    from workbench.report import write_report

    text = write_report(_hostile_df(), None, tmp_path / "r.html").read_text(encoding="utf-8")
    for bad in ("<script>alert", "<img src=x", "<b>env"):
        assert bad not in text


# -- 8: bench prints the reasons and --strict fails on them -------------------------------------------------

def _fake_sweep(statuses):
    def fake(request):
        from workbench.sweep.driver import SweepOutcome

        store, name = request.options.store, request.options.name
        rid = store.new_run(name=name, env_id="env-demo")
        df = synthetic_results(rid, with_failures=False).head(len(statuses)).copy()
        df["status"] = statuses
        df["message"] = [f"reason {i}: {s}" for i, s in enumerate(statuses)]
        for row in df.to_dict("records"):
            store.record(row)
        store.set_run_status(rid, "finished", wall_s=0.1)
        return SweepOutcome(run_id=rid, store=store, wall_s=0.1)
    return fake


@pytest.mark.parametrize("statuses, strict, code", [
    (["ok", "incorrect", "error", "timeout", "crashed"], True, 1),
    (["ok", "incorrect"], False, 0),
    (["ok", "unsupported"], True, 0),
])
def test_bench_reasons_and_strict(statuses, strict, code, store, monkeypatch, capsys):
    from workbench.cli import cmd_bench

    monkeypatch.setattr(cmd_bench, "run_request", _fake_sweep(statuses))
    rc = main([*[a.format(store=store) for a in BENCH1], "--sizes", "1024", *(["--strict"] if strict else [])])
    out, err = capsys.readouterr()
    assert rc == code, err
    for i, s in enumerate(statuses):
        if s != "ok":
            assert f"reason {i}: {s}" in out
    assert "Traceback" not in err


# -- 8: make lab prints the token the server gets ---------------------------------------------------------

@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_token_is_drawn_once(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    jupyter = venv / "bin" / "jupyter"
    jupyter.write_text('#!/bin/sh\necho "ARGS $*"\necho "TOKEN $JUPYTER_TOKEN"\n')
    jupyter.chmod(0o755)
    marker = venv / ".installed-demo"
    marker.touch()
    later = (repo / "pyproject.toml").stat().st_mtime + 10
    os.utime(marker, (later, later))
    out = subprocess.run(["make", "-s", "-C", str(repo), "lab", f"VENV={venv}"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    url = next(line for line in out.stdout.splitlines() if "token=" in line)
    token = url.rsplit("token=", 1)[1].strip()
    # issue 24: the server gets the token in its environment, never on its command line (`ps` shows that)
    assert len(token) == 32 and f"TOKEN {token}" in out.stdout.splitlines()
    args = next(line for line in out.stdout.splitlines() if line.startswith("ARGS"))
    assert token not in args and "--port=8888" in args and "--ServerApp.port_retries=0" in args
