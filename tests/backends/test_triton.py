"""The triton-interp backend: Triton's interpreter on CPU torch tensors, in its own worker process.

Probe reason without triton, the worker environment (TRITON_INTERPRET=1), every Triton variant verified
at the spec's odd sizes, argmax's first-index tie rule, rows marked as interpreter (correctness) results,
and every ``COMPILE`` entry of every ``triton_variants.py`` compiled for sm_80, sm_90, gfx90a and gfx942
with no spills. Without triton or torch the tests that need them skip with the probe's reason.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from workbench.backends import registry, triton_backend
from workbench.catalog import kernels, variants
from workbench.report.caveats import is_triton_interpreter

TRITON_KERNELS = ("vector_add", "saxpy", "relu", "gelu_erf", "gelu_tanh", "silu", "bias_gelu", "softmax",
                  "layernorm", "rmsnorm", "rmsnorm_residual", "sum", "argmax", "transpose", "gemm",
                  "attention_prefill", "attention_decode", "swiglu", "geglu", "rope", "rope_interleaved")


@pytest.fixture(scope="module")
def tb():
    b = registry.get("triton-interp")
    if not b.probe().available:
        pytest.skip(f"triton-interp unavailable: {b.probe().reason}")
    return b


def test_probe_reason_without_triton(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    p = triton_backend.TritonInterpreterBackend().probe()
    assert not p.available and "triton is not installed" in p.reason and "kernel-workbench[triton]" in p.reason


def test_registered_with_runtime_and_worker_env():
    b = registry.get("triton-interp")
    assert isinstance(b, triton_backend.TritonInterpreterBackend)
    assert registry.get("triton") is b or not b.probe().available
    assert b.runtime == "triton" and b.name == "triton-interp"
    assert dict(b.worker_env) == {"TRITON_INTERPRET": "1"}
    from workbench.measure.process_worker import _backend_env

    assert _backend_env("triton-interp").get("TRITON_INTERPRET") == "1"


def test_never_the_automatic_choice():
    b = registry.get("triton-interp")
    assert b.priority > registry.get("numpy").priority


def test_every_listed_kernel_has_a_float32_triton_variant():
    for k in TRITON_KERNELS:
        v = variants(k)["triton"]
        assert v.runtimes == ("triton",) and v.dtypes == ("float32",)
    catalog = {k for k in kernels() if any("triton" in v.runtimes for v in variants(k).values())}
    assert catalog == set(TRITON_KERNELS)  # a new Triton variant is verified and compiled below too


def test_device_named_as_interpreter(tb):
    info = tb.device_info()
    assert info.name == "Triton interpreter on CPU" and info.versions.get("triton")
    row = {"backend": tb.name, "runtime": tb.runtime, "variant": "triton", "device": info.name}
    assert is_triton_interpreter(row)


@pytest.mark.timeout(1800)  # a hang guard as long as catalog_verify's, which this test may run or wait for
def test_variants_verify_at_odd_sizes_in_worker(tb, catalog_verify):
    """The Triton variants' rows of the catalog's verify (`workbench verify`: worker processes, the default isolation:
    the worker gets TRITON_INTERPRET=1), run once for this and test_done_criteria."""
    seeds = 3  # the CLI's default: seeds 0, 1, 2 per size
    assert catalog_verify["stdout"].strip(), catalog_verify["stderr"][-2000:]
    rows = [r for r in json.loads(catalog_verify["stdout"])["results"]
            if r["backend"] == "triton-interp" and r["variant"] == "triton"]
    assert sorted(r["kernel"] for r in rows) == sorted(TRITON_KERNELS)
    for r in rows:
        assert r["status"] == "ok", \
            f"{r['kernel']}: {r['status']}: {r['message']} (params {r['params']}, seed {r['seed']})"
        assert r["trials"] == seeds * len(kernels()[r["kernel"]].sizes["verify"])


ARGMAX_TIES = '''
import numpy as np, torch
from workbench.catalog import variants
from workbench.catalog.spec import BuildContext
rows, cols = 37, 2500  # more columns than one 1024-lane chunk: ties across chunks and across lanes
run = variants("argmax")["triton"].build(BuildContext(backend=None, params={"rows": rows, "cols": cols},
                                                       dtype="float32"))
x = torch.randint(0, 3, (rows, cols), generator=torch.Generator().manual_seed(0)).float()
x[5] = 7.0  # a constant row: index 0
x[6, -1] = 9.0  # the maximum in the masked tail chunk
out = torch.full((rows,), -1, dtype=torch.int64)
run({"x": x}, {"out": out})
print(out.tolist() == np.argmax(x.numpy(), axis=1).tolist(), out[:8].tolist())
'''


def test_argmax_picks_the_first_maximum_like_numpy(tb):
    """The spec accepts any maximal index; the Triton variant promises numpy's first one (rows of 0/1/2 tie a lot)."""
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", ARGMAX_TIES], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("True"), out.stdout


def test_bench_row_reads_as_interpreter_result(tb):
    from workbench.api import benchmark

    res = benchmark("vector_add", variants="triton", backends="triton-interp", sizes=[4099], budget_s=0.2,
                    rounds=1, progress=False)
    rows = res.df.to_dict("records")
    assert rows and all(r["status"] == "ok" for r in rows), rows
    assert all(r["device"] == "Triton interpreter on CPU" and is_triton_interpreter(r) for r in rows)


def test_the_autotune_config_chosen_is_recorded_in_the_row(tb):
    from workbench.api import benchmark

    res = benchmark("gemm", variants="triton", backends="triton-interp", sizes=[(64, 48, 40)], budget_s=0.1,
                    rounds=1, progress=False)
    (row,) = res.df.to_dict("records")
    assert row["status"] == "ok" and "autotune chose BLOCK_M=" in row["message"], row["message"]


COMPILE_SCRIPT = '''
import json, sys
sys.path.insert(0, sys.argv[1])
from kmod import add
from workbench.portable.triton_check import compile_triton
sig = {"a": "*fp32", "b": "*fp32", "o": "*fp32", "n": "i32", "BLOCK": "constexpr"}
print(json.dumps([compile_triton(add, sig, {"BLOCK": 1024}, t).to_dict() for t in sys.argv[2:]]))
'''

KERNEL_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def add(a, b, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(a + offs, mask=m) + tl.load(b + offs, mask=m), mask=m)
'''


def test_compile_check_without_gpu(tmp_path):
    """Compiled, not interpreted: a fresh process without TRITON_INTERPRET (the probe may have set it here)."""
    import json
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed")
    (tmp_path / "kmod.py").write_text(KERNEL_SOURCE)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, str(tmp_path), "sm_80", "sm_90", "gfx90a", "sm_1"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = {r["target"]: r for r in json.loads(out.stdout.strip().splitlines()[-1])}
    for t in ("sm_80", "sm_90", "gfx90a"):
        r = rows[t]
        assert r["status"] == "ok", r
        assert r["n_regs"] and r["n_regs"] > 0 and r["n_spills"] == 0 and r["shared"] == 0
    assert rows["gfx90a"]["sgprs"] > 0
    assert rows["sm_1"]["status"] == "error" and rows["sm_1"]["message"]


CATALOG_COMPILE_SCRIPT = '''
import json, sys
from workbench.catalog.loader import ensure_default_catalog
from workbench.portable.triton_check import TARGETS, compile_triton
ensure_default_catalog()
rows = []
for name, mod in sorted(sys.modules.items()):
    if name.startswith("workbench_catalog.") and name.endswith(".triton_variants"):
        kernel = name.split(".")[1]
        entries = getattr(mod, "COMPILE", ())
        rows += [{"kernel": kernel, "label": None}] if not entries else []
        for c in entries:
            for t in TARGETS:
                r = compile_triton(c.kernel(), dict(c.signature), dict(c.constexprs), t, c.num_warps)
                rows.append({**r.to_dict(), "kernel": kernel, "label": c.label})
print(json.dumps(rows))
'''


def test_every_catalog_triton_kernel_compiles_for_gpus_without_spills():
    """Each ``COMPILE`` entry, as compile-check runs it, for sm_80, sm_90, gfx90a and gfx942: status ok,
    registers counted, 0 spills. One process without TRITON_INTERPRET (72 compiles: 15-25 s with an empty
    Triton cache, a few seconds with a warm one)."""
    import json
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", CATALOG_COMPILE_SCRIPT], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    assert not [r["kernel"] for r in rows if r["label"] is None], "triton_variants.py without COMPILE"
    assert {r["kernel"] for r in rows} == set(TRITON_KERNELS)
    assert {r["target"] for r in rows} == {"sm_80", "sm_90", "gfx90a", "gfx942"}
    for r in rows:
        where = f"{r['kernel']} {r['label']} on {r['target']}"
        assert r["status"] == "ok", f"{where}: {r['message']}"
        assert r["n_regs"] and r["n_regs"] > 0 and r["n_spills"] == 0, f"{where}: {r}"
        assert r["shared"] is not None and (r["sgprs"] > 0 if r["target"].startswith("gfx") else True), where
    labels = {r["label"] for r in rows if r["kernel"] == "gemm"}
    from workbench_catalog.gemm.triton_variants import CONFIGS  # loaded with the catalog (variants() above)

    assert labels == {f"{bm}x{bn}x{bk}/{w}w" for bm, bn, bk, w in CONFIGS}  # one entry per autotune config


def test_sweeps_time_the_interpreter_only_when_named():
    from workbench.sweep.driver import SweepSpec

    backends = {c.backend for c in SweepSpec(kernels=["vector_add"]).cells()}
    assert "triton-interp" not in backends  # the quick suite and make demo leave it out
    named = {c.backend for c in SweepSpec(kernels=["vector_add"], backends=["triton-interp"]).cells()}
    assert named == {"triton-interp"}
    from workbench.sweep.selection import select

    assert "triton-interp" in {b.name for b in select(["vector_add"]).backends}  # verify still checks it


def test_the_autotune_choice_is_recorded_in_its_own_field(tb, tmp_path):
    """gemm's ``triton.autotune`` choice reaches the stored row as ``tuned_config`` (and its message)."""
    import workbench

    res = workbench.benchmark("gemm", variants="triton", backends="triton-interp",
                              sizes=[{"m": 40, "n": 24, "k": 16}], budget_s=0.05, rounds=1, min_samples=2,
                              store=tmp_path / "t.sqlite", progress=False)
    (row,) = res.df.to_dict("records")
    assert row["status"] == "ok", row["message"]
    assert row["tuned_config"].startswith("BLOCK_M=") and "num_warps=" in row["tuned_config"]
    assert f"autotune chose {row['tuned_config']}" in row["message"]
