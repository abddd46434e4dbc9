"""The catalog's 'done' criteria, checked the way a user would: through the CLI, in a fresh process.

`workbench verify --json` must pass every kernel x variant on every available CPU-capable backend
(numpy, numba, torch-cpu, an OpenCL device), with unsupported ones carrying a reason; the portable
sources must compile for sm_80 and sm_90 without errors or spills (tested in detail in
test_compile_check.py, from the same run of the command: tests/conftest.py's catalog_compile_check; here the
command's exit code and summary).
"""

import json
import shutil

import pytest

from workbench.catalog import kernels, variants
from workbench.catalog.registry import _CONFIGURED


#: Variants that stand for something a CPU-only machine lacks, and the words their unsupported rows must
#: carry: SDPA backends torch's CPU build has no kernel of, and modes a runtime has no form of by design.
def configured_name_of(kernel: str, name: str) -> bool:
    """``name`` is a tunable variant fixed to a configuration (``numba-tiled[NB=64,...]``), made at run time."""
    found = _CONFIGURED.match(name)
    return bool(found) and found["base"] in variants(kernel) and bool(variants(kernel)[found["base"]].tunables)


ABSENT_HERE = {**{(k, f"torch-sdpa-{b}"): "has no kernel of it" for k in ("attention_prefill", "attention_decode")
                  for b in ("efficient", "cudnn", "overrideable")},
               **{(k, f"{rt}-fused"): "no fused" for k in ("mlp_block", "attention_block")
                  for rt in ("numpy", "portable")}}


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a hang guard as long as catalog_verify's: one busy core took its verify past 600 s
def test_verify_passes_every_variant_on_every_available_backend(catalog_verify):
    assert catalog_verify["returncode"] == 0, catalog_verify["stderr"][-2000:]
    rows = json.loads(catalog_verify["stdout"])["results"]
    bad = [r for r in rows if r["status"] not in ("ok", "unsupported")]
    assert not bad, bad
    assert all(r["message"] for r in rows if r["status"] == "unsupported")
    assert all(r["passed"] == (r["status"] == "ok") for r in rows)
    passed = {(r["kernel"], r["variant"], r["backend"]) for r in rows if r["status"] == "ok"}
    backends = {b for _, _, b in passed}
    assert {"numpy", "numba", "torch-cpu"} <= backends
    assert any(b.startswith("opencl-") for b in backends), "no OpenCL device ran the portable kernels"
    for name in kernels():  # every non-compiled variant of every kernel passed somewhere
        for vname, v in variants(name).items():
            if v.mode == "compiled" or v.runtimes == ("cupy",):
                continue
            if configured_name_of(name, vname):  # a configuration another test made in this process (test_tuning,
                continue  # in the same pytest-xdist worker): not a catalog variant the verify subprocess knows
            ran = any(k == name and vv == vname for k, vv, _ in passed)
            if (name, vname) in ABSENT_HERE and not ran:  # stands for what this machine lacks: unsupported, with why
                mine = [r for r in rows if (r["kernel"], r["variant"]) == (name, vname)]
                assert mine and all(r["status"] == "unsupported" and ABSENT_HERE[name, vname] in r["message"]
                                    for r in mine), (name, vname, [r["message"] for r in mine])
                continue
            assert ran, f"{name}/{vname} never passed"


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not on PATH (NVRTC path is covered in test_compile_check)")
def test_compile_check_cli_is_clean_for_sm80_sm90(catalog_compile_check):
    proc = catalog_compile_check  # `workbench compile-check --arch sm_80,sm_90 --json`, run once per test run
    assert proc["returncode"] == 0, proc["stdout"][-2000:] + proc["stderr"][-2000:]
    doc = json.loads(proc["stdout"])
    rows = doc["rows"] if isinstance(doc, dict) else doc
    assert rows and {r["arch"] for r in rows} == {"sm_80", "sm_90"}
