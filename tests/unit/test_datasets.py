"""The shipped reference tables load and hold the published values."""

import math

import pytest

from workbench.core import datasets


def test_llm_shapes_hold_published_config_values():
    df = datasets.llm_shapes().set_index("model")
    assert list(datasets.SHAPE_COLUMNS[1:]) == [c for c in df.columns if c in datasets.SHAPE_COLUMNS]
    expect = {
        "gpt2": (768, 3072, 12, 12, 12, 50257),
        "gpt2-xl": (1600, 6400, 25, 25, 48, 50257),
        "bert-base": (768, 3072, 12, 12, 12, 30522),
        "bert-large": (1024, 4096, 16, 16, 24, 30522),
        "llama-2-7b": (4096, 11008, 32, 32, 32, 32000),
        "llama-2-70b": (8192, 28672, 64, 8, 80, 32000),
        "llama-3-8b": (4096, 14336, 32, 8, 32, 128256),
        "mistral-7b": (4096, 14336, 32, 8, 32, 32000),
        "qwen2.5-7b": (3584, 18944, 28, 4, 28, 152064),
        "qwen2.5-0.5b": (896, 4864, 14, 2, 24, 151936),
    }
    for model, vals in expect.items():
        got = tuple(int(df.loc[model, c]) for c in ("hidden", "intermediate", "heads", "kv_heads", "layers", "vocab"))
        assert got == vals, model
    assert len(df) == 18
    assert (df["hidden"] % df["heads"] == 0).all()
    assert (df["heads"] % df["kv_heads"] == 0).all()


def test_llm_shapes_subset_and_unknown_model():
    assert list(datasets.llm_shapes(["mistral-7b", "gpt2"])["model"]) == ["mistral-7b", "gpt2"]
    with pytest.raises(ValueError, match="gpt2"):
        datasets.llm_shapes(["gpt-5"])


def test_llm_sweep_defaults():
    d = datasets.llm_sweep_defaults()
    assert d["batch_sizes"] and d["seq_lens"] and all(isinstance(x, int) for x in d["batch_sizes"] + d["seq_lens"])
    assert set(d["models"]) <= set(datasets.llm_shapes()["model"])


@pytest.mark.parametrize("name, expected", [
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe 80GB"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"),
    ("nvidia l4", "NVIDIA L4"),
    ("NVIDIA L40S", "NVIDIA L40S"),
    ("Tesla T4", "NVIDIA T4"),
    ("AMD Instinct MI300X", "AMD Instinct MI300X"),
    ("Apple M1 Max", "Apple M1 Max"),
    ("Apple M2", "Apple M2"),
    ("Intel(R) Xeon(R) CPU", None),
    ("", None),
])
def test_match_published(name, expected):
    row = datasets.match_published(name)
    assert (None if row is None else row["name"]) == expected


def test_published_values():
    h100 = datasets.match_published("NVIDIA H100 80GB HBM3")
    assert h100["mem_bw_gbps"] == 3350 and h100["fp32_tflops"] == 67
    # DGEMM runs on the FP64 tensor cores (an H200 read 60 TFLOP/s): the fp64 roof is their rate, not the 34 of
    # the CUDA cores, which called a correct cuBLAS DGEMM implausible
    assert h100["fp64_tflops"] == 67 and h100["tf32_tflops"] == 494
    assert datasets.published_peak("NVIDIA H200", "float64") == (67000.0, 4800.0)
    a100 = datasets.match_published("NVIDIA A100-SXM4-80GB")
    assert a100["mem_bw_gbps"] == 2039 and a100["bf16_tflops"] == 312
    assert datasets.match_published("NVIDIA H200")["mem_bw_gbps"] == 4800
    t4 = datasets.match_published("Tesla T4")
    assert math.isnan(t4["bf16_tflops"])  # unknown cells stay empty
    assert datasets.published_peak("NVIDIA L4", "float32") == (30300.0, 300.0)
    assert datasets.published_peak("NVIDIA L4", "float64") == (None, 300.0)
    assert datasets.published_peak("my cpu", "float32") == (None, None)
    df = datasets.published_peaks()
    for col in datasets.PEAK_FIGURES:
        assert col in df.columns
