"""workbench.timeit and workbench.quick on real torch tensors and PyOpenCL arrays: the backend (and so the
synchronisation and timer) comes from the arguments, and torch callables are checked and timed as numpy's are."""

from __future__ import annotations

import numpy as np
import pytest

import workbench
from workbench.catalog import registry


def _available(name: str) -> None:
    from workbench.backends.registry import get

    probe = get(name).probe()
    if not probe.available:
        pytest.skip(f"{name}: {probe.reason}")


def test_timeit_on_a_torch_tensor_uses_the_torch_backend():
    torch = pytest.importorskip("torch")
    _available("torch-cpu")
    m = workbench.timeit(torch.softmax, torch.rand(64, 128), dim=1, budget_s=0.02, rounds=2)
    assert m.backend == "torch-cpu" and m.median_s > 0 and m.label == "softmax"


def test_quick_with_torch_tensors_checks_and_times_torch_callables(tmp_path):
    torch = pytest.importorskip("torch")
    _available("torch-cpu")
    name = "adhoc-torch-test"
    try:
        res = workbench.quick({"softmax": lambda x: torch.softmax(x, dim=1),
                               "by-hand": lambda x: (e := (x - x.amax(1, keepdim=True)).exp()) / e.sum(1, keepdim=True),
                               "wrong": lambda x: x.exp()},
                              setup=lambda n: torch.rand(n, 33, dtype=torch.float64), sizes=[5, 40], name=name,
                              budget_s=0.02, rounds=2, warmup_s=0.0, store=tmp_path / "s.sqlite", progress=False,
                              isolation="in-process")
    finally:
        registry.unregister_kernel(name)
    assert set(res.df["backend"]) == {"torch-cpu"} and set(res.df["dtype"]) == {"float64"}
    status = {(r["variant"], r["size"]): r["status"] for _, r in res.df.iterrows()}
    assert status == {("softmax", 5): "ok", ("by-hand", 5): "ok", ("wrong", 5): "incorrect",
                      ("softmax", 40): "ok", ("by-hand", 40): "ok", ("wrong", 40): "incorrect"}
    assert (res.df[res.df["status"] == "ok"]["max_error"] < 1e-9).all()


def test_opencl_arrays_pick_their_device_backend():
    cl_array = pytest.importorskip("pyopencl.array")
    from workbench.adhoc.devices import backend_for
    from workbench.backends.registry import all_backends

    usable = [b for b in all_backends().values() if b.runtime == "opencl" and b.probe().available]
    if not usable:
        pytest.skip("no OpenCL device available")
    b = usable[0]
    import pyopencl as cl

    ctx = cl.Context([b.device])
    queue = cl.CommandQueue(ctx)
    a = cl_array.to_device(queue, np.ones(8, np.float32))
    assert backend_for([a]) == b.name
    assert backend_for([a.data]) == b.name  # a bare buffer, by its context's device
