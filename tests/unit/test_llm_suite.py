"""The llm suite: real model shapes × batch × sequence × KV length, and rows that say which model shape
their size came from."""

from __future__ import annotations

import pytest

from workbench.sweep.suites import llm_shapes, shape_label, suite_spec


def test_default_models_include_the_issue_s_models():
    models = {s["model"] for s in llm_shapes(batch_sizes=[1], seq_lengths=[1], kv_lengths=[64])}
    assert {"llama-3-8b", "llama-3-70b", "mistral-7b", "qwen2.5-7b", "qwen2.5-0.5b"} <= models


def test_kv_lengths_are_an_axis():
    shapes = llm_shapes(models=["llama-3-8b"], batch_sizes=[1, 4], seq_lengths=[1], kv_lengths=[512, 4096, 32768])
    assert sorted({(s["batch"], s["kv_len"]) for s in shapes}) == [(b, kv) for b in (1, 4) for kv in (512, 4096, 32768)]


def test_labels_name_the_kv_length_only_where_the_size_depends_on_it():
    spec = suite_spec("llm", kernels=["attention_decode", "mlp_block", "rmsnorm"], backends=["numpy"],
                      models=["qwen2.5-0.5b", "llama-3-70b"], batch_sizes=[1], seq_lengths=[1], kv_lengths=[64, 128])
    labels = spec.llm_labels()
    decode = {k: v for k, v in labels.items() if k[0] == "attention_decode"}
    assert sorted(decode.values()) == ["llama-3-70b b1 s1 kv128", "llama-3-70b b1 s1 kv64",
                                       "qwen2.5-0.5b b1 s1 kv128", "qwen2.5-0.5b b1 s1 kv64"]
    mlp = sorted(v for k, v in labels.items() if k[0] == "mlp_block")
    assert mlp == ["llama-3-70b b1 s1", "qwen2.5-0.5b b1 s1"]
    # every cell of the sweep has its label
    assert all((c.kernel, c.params) in labels for c in spec.cells() if not c.unsupported)


def test_models_sharing_a_size_share_its_label():
    spec = suite_spec("llm", kernels=["mlp_block"], backends=["numpy"], models=["llama-3-8b", "mistral-7b"],
                      batch_sizes=[1], seq_lengths=[1], kv_lengths=[64])
    (label,) = spec.llm_labels().values()  # same hidden and intermediate: one size
    assert label == "llama-3-8b b1 s1, mistral-7b b1 s1"


def test_shape_label_format():
    assert shape_label({"model": "m", "batch": 2, "seq": 9}) == "m b2 s9"
    assert shape_label({"model": "m", "batch": 2, "seq": 9, "kv_len": 7}) == "m b2 s9 kv7"


def test_other_sweeps_have_no_labels():
    assert suite_spec("quick", kernels=["relu"], backends=["numpy"]).llm_labels() == {}


def test_unknown_model_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown model.*llama-3-8b"):
        llm_shapes(models=["llama-9"])


def test_report_tables_show_the_model_shape_beside_the_size():
    import pandas as pd

    from workbench.report.tables import pivot

    rows = pd.DataFrame([{"kernel": "mlp_block", "variant": "numpy-eager", "backend": "numpy", "status": "ok",
                          "median_s": 1e-3, "size": 100, "params": '{"tokens":1}', "size_label": "tokens=1",
                          "llm_shape": "llama-3-8b b1 s1"},
                         {"kernel": "relu", "variant": "numpy", "backend": "numpy", "status": "ok", "median_s": 1e-3,
                          "size": 200, "params": '{"n":2}', "size_label": "n=2", "llm_shape": None}])
    index = [r["index"][-1] for r in pivot(rows)["rows"]]
    assert index == ["tokens=1 (llama-3-8b b1 s1)", "n=2"]
