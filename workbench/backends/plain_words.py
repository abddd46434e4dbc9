"""What a backend is, in words a reader can place: its runtime, its device and the driver under it.

A backend's name is an internal label ("opencl-1", "triton-interp") and an OpenCL device's name is its driver's
("pthread-skylake-avx512-AMD EPYC" is PoCL's threaded CPU device, built for Skylake's AVX-512 instructions): a
reader of a table of them met labels they could not place. :func:`what_it_is` says each in a sentence, from what
the backend reports (its device, its driver's platform), so an unavailable device is named too.
"""

from __future__ import annotations

import re
from typing import Any

#: The backends whose label alone says what they are, by name: the runtime and its device class.
_BY_NAME = {
    "numpy": "numpy's array operations on the CPU (its matrix products call the BLAS library it was built with)",
    "numba": "numba: Python loops compiled to CPU machine code (LLVM), run on the CPU's cores",
    "torch-cpu": "PyTorch's operators on the CPU",
    "torch-cuda": "PyTorch on an NVIDIA GPU (CUDA) or an AMD GPU (ROCm)",
    "torch-xpu": "PyTorch on an Intel GPU (XPU)",
    "torch-mps": "PyTorch on an Apple-silicon GPU (Metal)",
    "triton-cuda": "Triton kernels compiled for an NVIDIA or AMD GPU (through torch's CUDA/ROCm device)",
    "triton-xpu": "Triton kernels compiled for an Intel GPU (through torch's XPU device)",
    "triton-interp": ("Triton's interpreter: Triton kernels run by numpy on the CPU, a check that they are "
                      "correct (its times say nothing about a GPU)"),
}


def what_it_is(backend: Any) -> str:
    """``backend`` (an adapter) in one sentence: for OpenCL its driver and device, for Vulkan its driver; else by
    the adapter's own ``in_words``; else by name (:data:`_BY_NAME`), falling back to "<runtime> on <device class>"."""
    if backend.runtime == "opencl":
        return _opencl(backend)
    if backend.runtime == "wgpu":
        return _wgpu(backend)
    own = getattr(backend, "in_words", None)  # an adapter may say it itself (CuPy's, in its own module)
    if isinstance(own, str) and own:
        return own
    return _BY_NAME.get(backend.name, f"{backend.runtime} on {backend.device_class}")


def _opencl(backend: Any) -> str:
    device = getattr(backend, "device", None)
    index = backend.name.rsplit("-", 1)[-1]
    if device is None:
        return "OpenCL (no device found)"
    name, platform = device.name.strip(), device.platform.name.strip()
    version = device.platform.version.strip()
    pocl = re.search(r"PoCL\s+(\S+)", version)
    if "Portable Computing Language" in platform or pocl:
        llvm = re.search(r"LLVM\s+([\d.]+)", version)
        # PoCL's build string names the CPU it compiles for after the target triple ("...-linux-gnu-skylake-avx512")
        target = re.search(r"HSTR:\s*pthread-[^-\s]+-[^-\s]+-[^-\s]+-[^-\s]+-(\S+)", device.version)
        built = (f", compiled for the '{target.group(1)}' CPU model" if target and target.group(1) != "generic"
                 else ", compiled for a 'generic' CPU model" if target else "")
        release = f"PoCL {pocl.group(1)}" if pocl else "PoCL"
        return (f"OpenCL device {index}: {release}, an OpenCL driver that runs kernels on the CPU"
                f"{' (LLVM ' + llvm.group(1) + ')' if llvm else ''}; its device '{name}' is this CPU, work spread "
                f"over threads ('pthread'){built}")
    return f"OpenCL device {index}: {name} ({platform}, {version})"


def _wgpu(backend: Any) -> str:
    try:
        info = backend.device_info().to_dict()
    except Exception:  # noqa: BLE001 - an unavailable adapter says what the runtime is without its device
        return "wgpu (Vulkan, Metal or D3D12) on a GPU, or on the CPU through a software driver"
    extra, name = info.get("extra") or {}, str(info.get("name", ""))
    api = extra.get("api") or "Vulkan"
    driver = str((info.get("versions") or {}).get("driver", "")).strip()
    if extra.get("lavapipe"):
        return (f"{api} through wgpu on lavapipe, Mesa's software Vulkan driver (here {driver or 'Mesa'}), which "
                "runs shaders on the CPU: 'llvmpipe' is its device name (a check that they are correct, not GPU speed)")
    if info.get("kind") == "cpu":
        return f"{api} through wgpu on '{name}', a software driver on the CPU ({driver})"
    return f"{api} through wgpu on the GPU '{name}' ({driver})"
