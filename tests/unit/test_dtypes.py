"""Host dtypes, and what a precision record says of float32 math, whichever runtime wrote it."""

from __future__ import annotations

import json

from workbench.core.dtypes import reduced_float32_flags


def test_a_precision_record_is_read_by_the_names_of_its_settings():
    record = {"torch_matmul_allow_tf32": True, "torch_cudnn_allow_tf32": False,
              "torch_float32_matmul_precision": "high", "cupy_tf32": "1"}
    expected = ["torch_matmul_allow_tf32", "float32 matmul precision 'high'", "CUPY_TF32"]
    assert reduced_float32_flags(record) == expected
    assert reduced_float32_flags(json.dumps(record)) == expected  # as a row stores it
    full = {"torch_matmul_allow_tf32": False, "torch_cudnn_allow_tf32": False,
            "torch_float32_matmul_precision": "highest", "cupy_tf32": "0"}
    assert reduced_float32_flags(full) == []
    assert reduced_float32_flags(None) == reduced_float32_flags("not json") == reduced_float32_flags("[]") == []


def test_reduced_float32_flags_of_a_text_are_the_decoded_records_and_a_fresh_list_each_time():
    """Issue 38: a row's precision text is decoded once per distinct text (cached); callers get their own list."""
    import json

    from workbench.core.dtypes import reduced_float32_flags

    record = {"torch_allow_tf32": True, "torch_float32_matmul_precision": "high", "NVIDIA_TF32": "0"}
    text = json.dumps(record)
    first = reduced_float32_flags(text)
    assert first == reduced_float32_flags(record) == ["torch_allow_tf32", "float32 matmul precision 'high'"]
    first.append("changed")
    assert reduced_float32_flags(text) == reduced_float32_flags(record)
    assert reduced_float32_flags("{not json") == [] and reduced_float32_flags("[1]") == []
