"""Issue 38: a report reads each row's ``extra`` fields by orjson where it decodes them as ``json`` does; the
rest (integers past 64 bits, NaN, lone surrogates, deep nesting) by ``json``, so what a row reads is unchanged."""

from __future__ import annotations

import json

import pytest

from workbench.store.rows import extra_fields


@pytest.mark.parametrize("text", [
    '{"round_ids": "[1, 2, 3]", "precision": "float32"}',
    '{"big": 123456789012345678901234567890}',  # orjson would read a float
    '{"edge": 18446744073709551616, "neg": -9223372036854775809}',
    '{"nan": NaN, "inf": Infinity}',  # json reads them; orjson refuses
    '{"s": "\\ud800"}',  # a lone surrogate: orjson refuses
    '{"a": 1, "a": 2, "f": 1E5, "z": -0.0}',
    '{"deep": ' + "[" * 500 + "]" * 500 + "}",
])
def test_extra_fields_read_as_json_reads_them(text):
    got, want = extra_fields(text), json.loads(text)
    assert repr(got) == repr(want)
    assert type(got.get("big", 0)) is type(want.get("big", 0))


def test_no_text_is_none_and_bad_json_still_raises():
    assert extra_fields(None) is None and extra_fields("") is None
    with pytest.raises(ValueError):
        extra_fields("{not json")


def test_repeated_extra_texts_are_one_shared_object_and_unhashable_fields_still_read(tmp_path):
    """A million rows' round ids and precision settings (a few values) held a string per row; now one each."""
    from workbench.store.database import Store

    store = Store(tmp_path / "s.sqlite")
    base = {"run_id": "r1", "kernel": "k", "variant": "v", "backend": "numpy", "status": "ok"}
    for i in range(6):
        store.record({**base, "cell_key": f"c{i}", "precision": '{"torch_allow_tf32": false}',
                      "round_ids": "[1, 2, 3]", "odd": {"x": i}})
    df = store.results()
    assert df["precision"].iloc[0] is df["precision"].iloc[5]
    assert df["round_ids"].iloc[1] is df["round_ids"].iloc[4]
    assert list(df["precision"]) == ['{"torch_allow_tf32": false}'] * 6
    assert [extra_fields(json.dumps({"odd": v}))["odd"] for v in df["odd"]] == list(df["odd"])
