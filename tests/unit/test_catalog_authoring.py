"""The authoring helpers (workbench.catalog.authoring): facts stated once, taken from the folder."""

import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import workbench
from workbench.catalog import builtin_catalog_path, kernel_here, loader, unregister_kernel, variants
from workbench.catalog.spec import BuildContext

NAMES = ("wb_twice", "wb_twice_copy", "wb_relu_copy")

SPEC = """
from workbench.catalog import kernel_here

SPEC = kernel_here(__file__).register(
    description="double x", axes=("n",),
    make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
    reference=lambda inp, p: {"out": 2 * inp["x"]},
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"], bytes_moved=lambda p, s: 2 * p["n"] * s,
    sizes={"verify": [{"n": 7}], "quick": [{"n": 1024}]})
"""

NUMPY = """
import numpy as np
from workbench.catalog import kernel_here

op = kernel_here()  # no __file__: the folder the loader is running
op.numpy(lambda i, o: np.multiply(i["x"], 2, out=o["out"]), "np.multiply(x, 2, out=out)")
"""


@pytest.fixture(autouse=True)
def _clean_registry():
    yield
    for name in NAMES:
        unregister_kernel(name)
    loader.load_errors.clear()


def _folder(root, name):
    d = root / name
    d.mkdir()
    (d / "spec.py").write_text(textwrap.dedent(SPEC))
    (d / "numpy_variants.py").write_text(textwrap.dedent(NUMPY))
    return d


def test_the_name_is_taken_from_the_folder(tmp_path):
    _folder(tmp_path, "wb_twice")
    assert loader.load_catalog(tmp_path) == ["wb_twice"]
    assert set(variants("wb_twice")) == {"numpy"}
    v = variants("wb_twice")["numpy"]
    assert v.kernel == "wb_twice" and v.library and v.description == "np.multiply(x, 2, out=out)"
    rows = workbench.verify(kernels=["wb_twice"], backends=["numpy"])
    assert rows and all(r.status == "ok" for r in rows)


def test_a_folder_loaded_under_another_name_registers_under_that_name(tmp_path):
    _folder(tmp_path, "wb_twice")
    shutil.copytree(tmp_path / "wb_twice", tmp_path / "wb_twice_copy")
    assert loader.load_catalog(tmp_path) == ["wb_twice", "wb_twice_copy"]
    assert workbench.catalog.get_kernel("wb_twice_copy").name == "wb_twice_copy"
    assert variants("wb_twice_copy")["numpy"].kernel == "wb_twice_copy"


def test_a_builtin_folder_copied_under_another_name_is_a_new_kernel(tmp_path):
    """relu's files name no kernel: a copy of the folder is a complete second kernel (spec, every variant, .cu)."""
    shutil.copytree(builtin_catalog_path() / "relu", tmp_path / "wb_relu_copy",
                    ignore=shutil.ignore_patterns("__pycache__"))
    workbench.catalog.kernels()
    assert loader.load_catalog(tmp_path) == ["wb_relu_copy"]
    assert not loader.load_errors
    assert set(variants("wb_relu_copy")) == set(variants("relu"))
    assert variants("wb_relu_copy")["portable"].source.endswith("wb_relu_copy/relu.cu")
    rows = workbench.verify(kernels=["wb_relu_copy"], backends=["numpy"])
    assert rows and all(r.status == "ok" for r in rows)


def test_kernel_here_outside_a_load_needs_a_file():
    with pytest.raises(RuntimeError, match="pass __file__"):
        kernel_here()
    op = kernel_here(str(builtin_catalog_path() / "softmax" / "spec.py"))
    assert op.name == "softmax" and op.path("softmax.cu").is_file()


class _Backend:
    """A backend stand-in with given capabilities."""

    def __init__(self, runtime, dtypes):
        self.name = self.runtime = runtime
        self._dtypes = dtypes

    def capabilities(self):
        from workbench.backends.base import Capabilities

        return Capabilities(dtypes=self._dtypes)


@pytest.mark.parametrize("runtime", ["numpy", "numba", "torch", "cupy"])
def test_dtypes_default_to_the_backend_capabilities(runtime):
    """No built-in numpy/numba/torch/cupy variant restates what its backend supports: the backend decides.
    A variant may only narrow it, to what its operation exists for (torch's int8 weight-only GEMM has no
    float64 form), never list every dtype."""
    from workbench.catalog import kernels
    from workbench.core.dtypes import KNOWN_DTYPES

    checked = 0
    for k in kernels():
        for v in variants(k).values():
            if v.runtimes != (runtime,) or v.source:  # portable sources implement the prelude's dtypes only
                continue
            if v.dtypes is not None:
                assert set(v.dtypes) < set(KNOWN_DTYPES), f"{k}/{v.name} restates dtypes {v.dtypes}"
                continue
            narrow, wide = _Backend(runtime, ("float32",)), _Backend(runtime, ("float16", "float32", "float64"))
            assert v.unsupported_reason(narrow, "float64") is not None
            assert v.unsupported_reason(wide, "float64") is None
            checked += 1
    assert checked >= 15


def test_numba_helper_passes_arrays_by_parameter_name():
    pytest.importorskip("numba")
    from workbench.backends import registry
    from workbench.catalog import get_variant

    run = get_variant("rmsnorm_residual", "numba-fused").build(
        BuildContext(backend=registry.get("numba"), params={"rows": 2, "cols": 3}, dtype="float32"))
    x, r, w = (np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32), np.ones(3, np.float32))
    out, res = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)
    run({"x": x, "residual": r, "weight": w}, {"out": out, "residual_out": res})
    np.testing.assert_array_equal(res, x + r)  # residual_out is the parameter named so, not the 4th array


def test_numba_kernels_are_cached_on_disk(tmp_path):
    """A second process loads the compiled kernel from numba's cache instead of compiling it."""
    pytest.importorskip("numba")
    code = textwrap.dedent("""
        import os
        from workbench.backends import registry
        from workbench.catalog import get_variant
        from workbench.catalog.spec import BuildContext
        get_variant("silu", "numba").build(BuildContext(backend=registry.get("numba"), params={"n": 5},
                                                        dtype="float32"))
    """)
    env = {**__import__("os").environ, "NUMBA_DEBUG_CACHE": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            for _ in range(2)]
    first, second = (r.stdout + r.stderr for r in runs)
    assert "data saved" in first
    assert "data loaded" in second and "data saved" not in second, second


def test_runtime_verbs_are_typed_methods_done_by_their_runtime_modules(monkeypatch):
    """op.numba, op.torch_trio, op.cupy, op.wgsl ... are methods editors and type checkers see (declared in
    workbench.catalog.verbs, with each helper's own signature), and each call is done by the function its
    runtime's authoring module registered (when workbench is imported), not by the catalog."""
    import inspect

    from workbench.authoring import cupy_support, numba_support, torch_support, wgsl_support
    from workbench.catalog.authoring import KernelFolder
    from workbench.catalog.verbs import helpers

    op = kernel_here(str(builtin_catalog_path() / "softmax" / "spec.py"))
    for name, helper in (("numba", numba_support.numba_variant), ("numba_map", numba_support.numba_map),
                         ("torch", torch_support.torch_variant), ("torch_trio", torch_support.torch_trio),
                         ("torch_compile", torch_support.torch_compile_variant),
                         ("cupy", cupy_support.cupy_variant), ("wgsl", wgsl_support.wgsl_variant)):
        assert helpers.verb(name) is helper, name
        declared = list(inspect.signature(getattr(KernelFolder, name)).parameters.values())[1:]
        assert declared == list(inspect.signature(helper).parameters.values())[1:], name
        assert (inspect.signature(getattr(KernelFolder, name)).return_annotation
                == inspect.signature(helper).return_annotation), name
        required = [p for p in declared if p.default is inspect.Parameter.empty]
        args = [object() for p in required if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        kwargs = {p.name: object() for p in required if p.kind is inspect.Parameter.KEYWORD_ONLY}
        calls: list = []
        monkeypatch.setitem(helpers._helpers, name, lambda folder, *a, calls=calls, **kw: calls.append((folder, a, kw)))
        getattr(op, name)(*args, **kwargs)
        assert len(calls) == 1 and calls[0][0] is op, name
        given = inspect.signature(helper).bind(op, *calls[0][1], **calls[0][2]).arguments
        assert all(given[p.name] is v for p, v in zip(declared[:len(args)], args, strict=True)), name
        assert all(given[k] is v for k, v in kwargs.items()), name
    with pytest.raises(AttributeError, match="no attribute or helper 'numbaa'; helpers: .*numba_map"):
        op.numbaa  # noqa: B018


def test_the_catalog_imports_no_runtime():
    """No module of workbench/catalog imports numba, torch, cupy, triton, wgpu or pyopencl, even lazily."""
    import ast
    from pathlib import Path

    runtimes = {"numba", "llvmlite", "torch", "cupy", "cupyx", "triton", "wgpu", "pyopencl"}
    found = []
    for path in (Path(workbench.__file__).parent / "catalog").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in runtimes]
    assert not found, found
