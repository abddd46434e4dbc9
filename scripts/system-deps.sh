#!/usr/bin/env bash
# System packages the workbench uses where Debian/Ubuntu apt is available and we are root.
#   demo: pocl-opencl-icd — PoCL 3.1 built against Debian's LLVM 15. The PoCL bundled in the pyopencl
#         wheel (LLVM 14) cannot build kernels on CPUs its LLVM does not know (e.g. AMD Zen 5:
#         "unknown target CPU 'generic'"); Debian's build targets a fixed kernel-library CPU and works.
#         mesa-vulkan-drivers — lavapipe, a Vulkan device on the CPU for the wgpu backend (the demo measures
#         it). Without it wgpu falls back to Mesa's OpenGL, which the workbench names as such ("via OpenGL").
#   test: the above plus chromium (browser tests of the dashboard in JupyterLab and Voila) and hipcc with
#         the ROCm device libraries (HIP compile checks for gfx90a/gfx908/gfx1030, no GPU needed).
# It says what it will install before it does (and on a terminal waits WAIT_S seconds, so Ctrl-C stops it);
# WORKBENCH_SYSTEM_DEPS=skip installs nothing (only names what is missing). Without root or apt this prints
# what to install and carries on: the tiers that need them skip and say so.
set -euo pipefail
WAIT_S=10
want=(pocl-opencl-icd mesa-vulkan-drivers)
[[ "${1:-demo}" == "test" ]] && want+=(chromium fonts-dejavu-core hipcc libamdhip64-dev rocm-device-libs)
missing=()
for pkg in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ "${WORKBENCH_SYSTEM_DEPS:-}" == "skip" ]]; then
    echo "note: WORKBENCH_SYSTEM_DEPS=skip: system packages not installed: ${missing[*]}" >&2
    echo "      OpenCL/PoCL, Vulkan (lavapipe) or browser tests may be unavailable; they will say why." >&2
    exit 0
fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "system packages: installing with apt-get (as root): ${missing[*]}"
    echo "  (to install nothing: WORKBENCH_SYSTEM_DEPS=skip make ${1:-demo}; what needs them then skips, saying why)"
    if [[ -t 0 || -t 1 ]]; then
        echo "  starting in ${WAIT_S} s; Ctrl-C stops here"
        sleep "$WAIT_S"
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "note: system packages not installed (need root + apt-get): ${missing[*]}" >&2
    echo "      OpenCL/PoCL, Vulkan (lavapipe) or browser tests may be unavailable; they will say why." >&2
fi
