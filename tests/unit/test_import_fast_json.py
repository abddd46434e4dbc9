"""Issue 38: the import decodes rows and JSON text columns with orjson where it is installed; what orjson reads
otherwise than the standard library (an integer beyond 64 bits as a float, nesting past the depth limit) is still
refused as before, and without orjson the standard library decodes the same files."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.store import fast_json
from workbench.store.database import Store


@pytest.fixture(autouse=True)
def streamed(monkeypatch):
    monkeypatch.setattr("workbench.store.import_stream.STREAM_FROM_BYTES", 0)


def _row(key: str, **kw) -> dict:
    row = {"run_id": "r1", "cell_key": key, "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
           "dtype": "float32", "params": json.dumps({"n": 8}), "size": 8, "status": "ok", "median_s": 1e-3,
           "samples_s": json.dumps([1e-3, 1.1e-3]), "round_medians_s": "[0.001, 0.0011]", "env_id": "envA"}
    row.update(kw)
    return row


def _import(tmp_path, rows: list[dict], capsys, raw: str | None = None) -> tuple[int, str]:
    doc = {"format": "workbench-results", "version": 1,
           "runs": [{"run_id": "r1", "created_at": "2026-01-01T00:00:00.000Z", "status": "finished",
                     "env_id": "envA"}],
           "environments": [{"env_id": "envA", "record": {"host": "A"}}], "results": rows, "peaks": []}
    text = json.dumps(doc)
    if raw is not None:
        text = text.replace('"@RAW@"', raw)
    f = tmp_path / "in.json"
    f.write_text(text)
    rc = main(["import", str(f), "--store", str(tmp_path / "s.sqlite")])
    return rc, capsys.readouterr().err


def test_orjson_is_the_decoder_here():
    assert fast_json.backend() == "orjson"


@pytest.mark.parametrize("raw", ["123456789012345678901234567890", "-123456789012345678901234567890"])
def test_an_integer_beyond_64_bits_in_a_row_is_refused_as_before(tmp_path, capsys, raw):
    rows = [_row(f"k{i}") for i in range(3)]
    rows[1]["median_s"] = "@RAW@"
    rc, err = _import(tmp_path, rows, capsys, raw)
    assert rc == 2 and "results[1].median_s" in err and "out of range" in err, err


def test_an_integer_beyond_64_bits_in_samples_is_refused_as_before(tmp_path, capsys):
    rows = [_row("a"), _row("b", samples_s="[0.001, 123456789012345678901234567890]")]
    rc, err = _import(tmp_path, rows, capsys)
    assert rc == 2 and "results[1].samples_s" in err, err


def test_a_row_nested_past_the_limit_is_refused_by_depth(tmp_path, capsys):
    rows = [_row("a"), _row("b", custom="@RAW@")]
    rc, err = _import(tmp_path, rows, capsys, "[" * 40 + "]" * 40)
    assert rc == 2 and "nested more than" in err, err


def test_without_orjson_the_standard_library_decodes_the_same_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fast_json, "_loads", None)
    monkeypatch.setattr(fast_json, "_backend", "")
    monkeypatch.setitem(__import__("sys").modules, "orjson", None)  # import orjson fails
    assert fast_json.backend() == "json"
    rows = [_row("a"), _row("b", samples_s="[0.002, 0.003]", note="x")]
    rc, err = _import(tmp_path, rows, capsys)
    assert rc == 0, err
    got = {r["cell_key"]: r for r in Store(tmp_path / "s.sqlite").rows("r1")}
    assert json.loads(got["b"]["samples_s"]) == [0.002, 0.003] and got["b"]["note"] == "x"
    rc, err = _import(tmp_path, [_row("c", samples_s="[NaN]")], capsys)
    assert rc == 2 and "results[0].samples_s" in err, err


@pytest.mark.parametrize("at", [0, 1, 1500, 2998])
@pytest.mark.parametrize("raw, needle", [("123456789012345678901234567890", "out of range"),
                                         ("[" * 40 + "]" * 40, "nested more than")])
def test_a_bad_row_among_rows_decoded_together_is_refused_by_its_place(tmp_path, capsys, at, raw, needle):
    """Rows are decoded by orjson a chunk of rows at a time (issue 38); a row orjson reads otherwise is decoded
    again from its place in its chunk, and named by its own index."""
    rows = [_row(f"k{i}", note="}, {" if i % 7 == 0 else None) for i in range(3000)]  # row ends inside strings
    rows[at]["custom"] = "@RAW@"
    rc, err = _import(tmp_path, rows, capsys, raw)
    assert rc == 2 and needle in err, err
    assert needle == "nested more than" or f"results[{at}].custom" in err, err


def test_rows_decoded_together_keep_every_value(tmp_path, capsys):
    rows = [_row(f"k{i}", note=("}, {" * (i % 3)) or None, median_s=1e-3 * (i + 1)) for i in range(5000)]
    rc, err = _import(tmp_path, rows, capsys)
    assert rc == 0, err
    got = Store(tmp_path / "s.sqlite").rows("r1")
    assert [r["cell_key"] for r in got] == [f"k{i}" for i in range(5000)]
    assert [r["median_s"] for r in got] == [1e-3 * (i + 1) for i in range(5000)]
    assert [r["note"] for r in got] == [("}, {" * (i % 3)) or None for i in range(5000)]
