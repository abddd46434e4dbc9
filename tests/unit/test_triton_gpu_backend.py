"""``triton-cuda`` / ``triton-xpu``: the catalog's Triton variants compiled on torch's GPU tensors.

No GPU here, so these check what can be checked without one: the backends exist, say why they are
unavailable, start their workers out of interpreter mode, and never win the automatic choice over torch.
"""

from __future__ import annotations

import sys

import pytest

from workbench.backends import registry, triton_backend


def test_gpu_backends_are_discovered_beside_the_interpreter():
    names = [b.name for b in triton_backend.discover()]
    assert names == ["triton-interp", "triton-cuda", "triton-xpu"]
    assert {registry.get(n).runtime for n in names} == {"triton"}


@pytest.mark.extras  # checks more where an optional runtime is installed: runs in both venvs
def test_unavailable_without_the_device_names_the_device_and_the_cause():
    probe = triton_backend.TritonGpuBackend("cuda").probe()
    if probe.available:
        pytest.skip("this machine has a CUDA device for Triton (the GPU machine): nothing unavailable to name")
    assert not probe.available
    assert "cuda" in probe.reason or "triton is not installed" in probe.reason


def test_workers_start_out_of_interpreter_mode():
    assert triton_backend.TritonGpuBackend("cuda").worker_env == {"TRITON_INTERPRET": "0"}
    assert triton_backend.TritonInterpreterBackend().worker_env == {"TRITON_INTERPRET": "1"}


def test_a_process_running_triton_interpreted_refuses_gpu_triton_in_process(monkeypatch):
    """Triton fixes interpreted or compiled at import: in a process running the interpreter, GPU Triton cells
    are refused with the reason (worker processes, the default, never mix them)."""
    b = triton_backend.TritonGpuBackend("cuda")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert "worker process" in b.in_process_problem()
    monkeypatch.delenv("TRITON_INTERPRET")
    monkeypatch.setattr(triton_backend, "imported_interpreted", lambda: None)
    assert b.in_process_problem() is None


def test_a_process_with_compiled_triton_refuses_the_interpreter_in_process(monkeypatch):
    b = triton_backend.TritonInterpreterBackend()
    monkeypatch.setattr(triton_backend, "imported_interpreted", lambda: False)
    assert "compiled mode" in b.in_process_problem()
    monkeypatch.setattr(triton_backend, "imported_interpreted", lambda: True)
    assert b.in_process_problem() is None


def test_in_process_cells_get_the_backend_environment_for_their_duration(monkeypatch):
    import os

    from workbench.measure.isolation import backend_environment

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with backend_environment("triton-interp"):
        assert os.environ["TRITON_INTERPRET"] == "1"
    assert "TRITON_INTERPRET" not in os.environ


def test_vulkan_and_torch_compile_share_a_process():
    """Importing triton after a lavapipe adapter is open segfaults; the Vulkan backend loads triton first, so
    a process that used Vulkan can still torch.compile (which imports triton). Run in a fresh process."""
    import subprocess

    import pytest

    pytest.importorskip("torch")
    pytest.importorskip("wgpu")
    code = ("from workbench.backends import registry\n"
            "b = registry.get('vulkan')\n"
            "import sys\n"
            "if not b.probe().available: print('no adapter'); sys.exit(0)\n"
            "b.device\n"
            "import torch\n"
            "print(torch.compile(lambda x: x * 2)(torch.ones(3)).tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "[2.0, 2.0, 2.0]" in done.stdout or "no adapter" in done.stdout


def test_ranks_right_after_torch_on_the_same_device():
    from workbench.backends.torch_backend import TorchBackend

    assert triton_backend.TritonGpuBackend("cuda").priority == TorchBackend("cuda").priority + 1
