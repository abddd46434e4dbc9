"""A sweep's fixed cost (issue 25): worker processes start beside the parent's own set-up and import only what
their backend needs; the catalog names a folder's modules the same in every process."""

from __future__ import annotations

import json
import textwrap

from conftest import DOUBLE_SPEC

from workbench.measure.cell import Cell, CheckOnly
from workbench.measure.isolation import make_executor
from workbench.measure.process_worker import WorkerProcess

SPEC = DOUBLE_SPEC

VARIANT = """
import numpy as np
from workbench.catalog import variant

@variant("{name}", "numpy", "numpy")
def build(ctx):
    def run(inp, out):
        np.multiply(inp["x"], 2, out=out["out"])
    return run
"""


def _kernel(root, name, variant=VARIANT):
    d = root / name
    d.mkdir(parents=True)
    (d / "spec.py").write_text(textwrap.dedent(SPEC.format(name=name)))
    (d / "cpu.py").write_text(textwrap.dedent(variant.format(name=name)))
    return d


def test_warm_starts_workers_without_waiting_for_them(monkeypatch):
    """``warm`` returns once the workers are launched; the wait for one happens at its backend's ``prepare``,
    so the parent's own set-up (environment record, ceilings) runs while the workers import."""
    waits: list[str] = []
    real_wait = WorkerProcess.wait_ready

    def counted(self: WorkerProcess) -> None:
        waits.append(self.backend)
        real_wait(self)

    monkeypatch.setattr(WorkerProcess, "wait_ready", counted)
    ex = make_executor("process")
    try:
        ex.warm(["numpy"])
        assert waits == []
        assert ex._workers["numpy"].proc is not None  # launched, importing the workbench meanwhile
        assert ex.prepare("numpy") is None
        assert waits == ["numpy"]
        assert [b for b, _ in ex.starts] == ["numpy"]
        row = ex.execute(Cell.make("vector_add", "numpy", "numpy", "float32", {"n": 1001}), CheckOnly((0,)),
                         timeout_s=60, build_timeout_s=120)
        assert row["status"] == "ok", (row["message"], row.get("traceback"))
        assert waits == ["numpy"]  # the warmed worker ran the cell: no second start
    finally:
        ex.close()


def test_a_worker_builds_a_variant_that_imports_another_catalog_folder():
    """attention_block's variants import mlp_block's modules (``workbench_catalog.mlp_block...``) when built: the
    worker has the whole catalog loaded, not only the folders the cell ships (loading only those broke them)."""
    ex = make_executor("process")
    params = {"batch": 1, "seq": 1, "past": 7, "hidden": 20, "heads": 5, "kv_heads": 1, "head_dim": 4}
    try:
        row = ex.execute(Cell.make("attention_block", "numpy-graph", "numpy", "float32", params, "graph"),
                         CheckOnly((0,)), timeout_s=60, build_timeout_s=120)
    finally:
        ex.close()
    assert row["status"] == "ok", (row["message"], row.get("traceback"))


def test_a_builtin_folder_keeps_its_module_names_whatever_loads_first(run_python, tmp_path):
    """A user folder named like a built-in one (``softmax``) loaded first does not take the built-in's module
    names: a worker loading folders in its cells' order names modules as its parent does."""
    folder = _kernel(tmp_path / "cat", "softmax", variant=VARIANT.replace('"{name}", "numpy"',
                                                                              '"wb_startup_named", "numpy"'))
    (folder / "spec.py").write_text(textwrap.dedent(SPEC.format(name="wb_startup_named")))
    code = textwrap.dedent(f"""
        import sys
        from workbench.catalog import loader, registry
        loader.load_catalog({str(folder)!r})
        registry.kernels()
        names = sorted(m for m in sys.modules if m.startswith("workbench_catalog.softmax") and m.endswith(".spec"))
        assert names[0] == "workbench_catalog.softmax.spec", names
        assert sys.modules["workbench_catalog.softmax.spec"].SPEC.name == "softmax"
        assert len(names) == 2 and names[1].startswith("workbench_catalog.softmax__"), names
        print("ok")
    """)
    done = run_python(code=code)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_sweep_parent_reads_its_ceilings_without_pandas(run_python, tmp_path):
    """A bench without --report/--json loads no pandas (its stored ceilings are read as plain rows), and the
    ceilings still reach the cell: the stored roof is the row's ceiling."""
    store = str(tmp_path / "s.sqlite")
    code = textwrap.dedent(f"""
        import json, sys
        from workbench.store.database import Store, current_environment
        env_id, env = current_environment()
        st = Store({store!r})
        st.add_environment(env_id, env)
        st.set_peak(env_id, "numpy", "bandwidth_gbps", "float32", 12345.0, "GB/s", "given by the test", {{}})
        st.close()
        from workbench.cli import main
        rc = main(["bench", "--kernels", "vector_add", "--backends", "numpy", "--sizes", "4096", "--budget", "0.02",
                   "--rounds", "1", "--store", {store!r}, "--quiet"])
        (row,) = Store({store!r}).rows()
        print(json.dumps({{"rc": rc, "pandas": "pandas" in sys.modules, "status": row["status"],
                          "peak": row.get("ceiling_gbps")}}))
    """)
    done = run_python(code=code, env={"WORKBENCH_AUTO_PEAKS": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["rc"] == 0 and got["status"] == "ok" and got["pandas"] is False, got
    assert got["peak"] == 12345.0, got


def test_a_vulkan_worker_does_not_load_triton(run_python):
    """Outside workers the Vulkan backend loads triton before lavapipe's LLVM (the other order segfaults a later
    torch.compile); a worker process runs only WGSL, so its Vulkan worker skips triton's ~30 MB and ~1 s."""
    code = textwrap.dedent("""
        import sys
        from workbench.backends import registry
        b = registry.get("vulkan")
        print(b.probe().available, "triton" in sys.modules)
    """)
    inside = run_python(code=code, env={"WORKBENCH_IN_WORKER": "1"})
    assert inside.returncode == 0, inside.stderr[-2000:]
    available, triton = inside.stdout.split()[-2:]
    if available != "True":
        import pytest

        pytest.skip("no Vulkan adapter here")
    assert triton == "False"
    outside = run_python(code=code)
    assert outside.stdout.split()[-1] == "True"  # the notebook's order is kept outside workers


def test_a_spare_started_for_a_first_call_that_then_returns_is_stopped():
    """A slow first call past half its limit starts a spare worker; when the call returns after all, the spare
    (an idle interpreter) is stopped instead of being held to the sweep's end."""
    import time

    import numpy as np

    from workbench.catalog import register_variant, unregister_variant
    from workbench.catalog.spec import Variant
    from workbench.measure.timer import TimingConfig

    def build(ctx):
        first = [True]

        def run(i, o):
            if first[0]:
                first[0] = False
                time.sleep(3.5)  # past half of the 5 s first-call limit, within it
            np.add(i["a"], i["b"], out=o["out"])
        return run

    register_variant(Variant(kernel="vector_add", name="wb-slow-first", runtimes=("numpy",), build=build))
    ex = make_executor("process")
    started: list[str] = []
    start_spare = ex._start_spare
    ex._start_spare = lambda b: (started.append(b), start_spare(b))  # type: ignore[method-assign]
    try:
        cell = Cell.make("vector_add", "wb-slow-first", "numpy", "float32", {"n": 4099})
        row = ex.execute(cell, TimingConfig(warmup_s=0.01, budget_s=0.05), timeout_s=20)
        assert row["status"] == "ok", row["message"]
        assert started == ["numpy"]  # else this test proves nothing: the call never looked hung
        assert not ex._spares
        assert [b for b, _ in ex.starts] == ["numpy"]  # the cell's own worker, not replaced
    finally:
        ex.close()
        unregister_variant("vector_add", "wb-slow-first")
