"""A backend said in words a reader can place (issue 39, reader of 02: 'opencl-1', 'pthread-skylake-avx512-AMD
EPYC' and 'triton-interp' were shown as labels nobody could place)."""

from types import SimpleNamespace

from workbench.backends.plain_words import what_it_is


def _opencl(index, name, platform_version, device_version):
    platform = SimpleNamespace(name="Portable Computing Language", version=platform_version)
    device = SimpleNamespace(name=name, platform=platform, version=device_version)
    return SimpleNamespace(name=f"opencl-{index}", runtime="opencl", device_class="cpu", device=device)


def test_a_pocl_device_is_said_as_pocl_on_this_cpu_with_its_cpu_model():
    b = _opencl(0, "pthread-skylake-avx512-AMD EPYC", "OpenCL 3.0 PoCL 3.1+debian  Linux, LLVM 15.0.6, SLEEF",
                "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512")
    text = what_it_is(b)
    assert text.startswith("OpenCL device 0: PoCL 3.1+debian, an OpenCL driver that runs kernels on the CPU "
                           "(LLVM 15.0.6)")
    assert "compiled for the 'skylake-avx512' CPU model" in text and "'pthread'" in text


def test_a_second_pocl_install_is_told_apart_by_its_release_and_target():
    b = _opencl(1, "pthread-AMD EPYC", "OpenCL 3.0 PoCL 3.0-rc2  Linux, Release, LLVM 14.0.6",
                "OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-generic")
    text = what_it_is(b)
    assert "PoCL 3.0-rc2" in text and "LLVM 14.0.6" in text and "'generic' CPU model" in text


def test_other_backends_are_said_by_name_or_by_runtime_and_device_class():
    interp = SimpleNamespace(name="triton-interp", runtime="triton", device_class="cpu")
    assert "interpreter" in what_it_is(interp) and "CPU" in what_it_is(interp)
    assert what_it_is(SimpleNamespace(name="myrt-0", runtime="myrt", device_class="gpu")) == "myrt on gpu"
