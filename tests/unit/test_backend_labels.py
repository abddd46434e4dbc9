"""A backend is labelled by what ran (issue 38): wgpu on OpenGL is not "Vulkan on lavapipe", its environment is
not the Vulkan one's, and compare says when a backend ran on another device or API in the two runs."""

from __future__ import annotations

import pandas as pd

from workbench.backends.vulkan_backend import device_name
from workbench.judge.between_runs import run_conditions
from workbench.report.caveats import LAVAPIPE_NOTE, is_lavapipe, row_caveats, wgpu_api
from workbench.store import environment

LLVMPIPE = "llvmpipe (LLVM 15.0.6, 256 bits)"


def _env(api: str, lavapipe: bool) -> dict:
    return {"e1": {"backends": [{"name": "vulkan", "device": {"kind": "cpu", "name": LLVMPIPE, "extra": {
        "backend": api, "lavapipe": lavapipe}}}]}}


def test_the_device_name_carries_an_api_other_than_vulkan():
    assert device_name(LLVMPIPE, "Vulkan") == LLVMPIPE
    assert device_name(LLVMPIPE, "OpenGL") == f"{LLVMPIPE} via OpenGL"


def test_an_opengl_row_is_not_lavapipe_and_says_what_it_is():
    gl = {"backend": "vulkan", "runtime": "wgpu", "device": device_name(LLVMPIPE, "OpenGL"), "env_id": "e1"}
    assert wgpu_api(gl) == "OpenGL" and not is_lavapipe(gl)
    notes = [c["detail"] for c in row_caveats(gl)]
    assert LAVAPIPE_NOTE not in notes and any(n.startswith("wgpu on OpenGL (Mesa's llvmpipe, a CPU") for n in notes)
    # a row stored before the device name said so: the environment record's adapter backend decides
    old = {**gl, "device": LLVMPIPE}
    assert wgpu_api(old, _env("OpenGL", True)) == "OpenGL" and not is_lavapipe(old, _env("OpenGL", True))
    vk = {**old}
    assert wgpu_api(vk, _env("Vulkan", True)) == "Vulkan" and is_lavapipe(vk, _env("Vulkan", True))
    assert LAVAPIPE_NOTE in [c["detail"] for c in row_caveats(vk, _env("Vulkan", True))]
    assert wgpu_api({"backend": "numpy", "runtime": "numpy"}) is None


def test_vulkan_drivers_are_part_of_the_environment_id(monkeypatch, tmp_path):
    icd = tmp_path / "lvp_icd.x86_64.json"
    icd.write_text("{}")
    monkeypatch.setenv("VK_ICD_FILENAMES", str(icd))
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    assert environment.runtime_drivers() == {"wgpu": ["lvp_icd.x86_64.json"]}  # from wgpu's declaration
    monkeypatch.setenv("VK_ICD_FILENAMES", str(tmp_path / "missing.json"))
    assert environment.runtime_drivers() == {}
    host = {"cpu_model": "x", "machine": "x86_64", "ram_bytes": 2**34}
    without = environment.environment_id({"host": host, "packages": {}})
    assert environment.environment_id({"host": {**host, "drivers": {}}, "packages": {}}) == without
    assert environment.environment_id({"host": {**host, "drivers": {"wgpu": ["lvp_icd.x86_64.json"]}},
                                       "packages": {}}) != without


def test_compare_says_when_a_backend_ran_on_another_device_or_api():
    def run(device: str) -> pd.DataFrame:
        return pd.DataFrame([{"backend": "vulkan", "device": device, "env_id": "e1"},
                             {"backend": "numpy", "device": "AMD EPYC", "env_id": "e1"}])

    notes = run_conditions(run(device_name(LLVMPIPE, "OpenGL")), run(LLVMPIPE))
    assert len(notes) == 1 and notes[0].startswith(f"vulkan ran on {LLVMPIPE} via OpenGL in the first run and on "
                                                   f"{LLVMPIPE} in the second")
    assert run_conditions(run(LLVMPIPE), run(LLVMPIPE)) == []
