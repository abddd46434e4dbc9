"""``triton-cuda`` / ``triton-xpu``: the catalog's Triton variants compiled on torch's GPU tensors.

No GPU here, so these check what can be checked without one: the backends exist, say why they are
unavailable, start their workers out of interpreter mode, and never win the automatic choice over torch.
"""

from __future__ import annotations

import sys

from workbench.backends import registry, triton_backend


def test_gpu_backends_are_discovered_beside_the_interpreter():
    names = [b.name for b in triton_backend.discover()]
    assert names == ["triton-interp", "triton-cuda", "triton-xpu"]
    assert {registry.get(n).runtime for n in names} == {"triton"}


def test_unavailable_without_the_device_names_the_device_and_the_cause():
    probe = triton_backend.TritonGpuBackend("cuda").probe()
    assert not probe.available
    assert "cuda" in probe.reason or "triton is not installed" in probe.reason


def test_workers_start_out_of_interpreter_mode():
    assert triton_backend.TritonGpuBackend("cuda").worker_env == {"TRITON_INTERPRET": "0"}
    assert triton_backend.TritonInterpreterBackend().worker_env == {"TRITON_INTERPRET": "1"}


def test_a_process_that_imported_triton_interpreted_refuses_gpu_triton(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", object())
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(triton_backend.importlib.util, "find_spec", lambda name: object())
    probe = triton_backend.TritonGpuBackend("cuda")._probe_uncached()
    assert not probe.available and "interpreter mode" in probe.reason


def test_ranks_right_after_torch_on_the_same_device():
    from workbench.backends.torch_backend import TorchBackend

    assert triton_backend.TritonGpuBackend("cuda").priority == TorchBackend("cuda").priority + 1
