#!/usr/bin/env bash
# System packages the workbench uses where Debian/Ubuntu apt is available and we are root.
#   demo: pocl-opencl-icd — PoCL 3.1 built against Debian's LLVM 15. The PoCL bundled in the pyopencl
#         wheel (LLVM 14) cannot build kernels on CPUs its LLVM does not know (e.g. AMD Zen 5:
#         "unknown target CPU 'generic'"); Debian's build targets a fixed kernel-library CPU and works.
#   test: the above plus chromium (browser tests of the dashboard in JupyterLab and Voila), hipcc with
#         the ROCm device libraries (HIP compile checks for gfx90a/gfx908/gfx1030, no GPU needed) and
#         mesa-vulkan-drivers (lavapipe: a Vulkan device on the CPU for the wgpu backend).
# Without root or apt this prints what to install and carries on: the tiers that need them skip and say so.
set -euo pipefail
want=(pocl-opencl-icd)
[[ "${1:-demo}" == "test" ]] && want+=(chromium fonts-dejavu-core hipcc libamdhip64-dev rocm-device-libs
                                      mesa-vulkan-drivers)
missing=()
for pkg in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "note: system packages not installed (need root + apt-get): ${missing[*]}" >&2
    echo "      OpenCL/PoCL kernels or browser tests may be unavailable; they will say why." >&2
fi
