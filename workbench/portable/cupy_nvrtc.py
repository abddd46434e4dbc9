"""NVRTC through CuPy's binding (``cupy_backends``) for the compile check: its version, and one CUDA source
compiled to a cubin with ``ptxas -v``, each asked in a subprocess.

``python -m workbench.portable.cupy_nvrtc ARCH SOURCE PTX_OUT``: prints the
NVRTC log (front-end diagnostics and ptxas resource lines), writes the PTX, and
exits 1 when the compile fails. NVRTC needs no driver, but it runs out of
process anyway so a hang can be timed out.
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.core.regular_files import read_regular_text

#: ``python -c`` code that prints NVRTC's version (``13.0``), and fails where CuPy's binding is not loadable.
VERSION_CODE = "from cupy_backends.cuda.libs import nvrtc; print('%d.%d' % nvrtc.getVersion())"


def main(argv: list[str]) -> int:
    arch, source, ptx_out = argv
    from cupy_backends.cuda.libs import nvrtc

    text = read_regular_text(source, what="kernel source")
    prog = nvrtc.createProgram(text, source, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, ["-std=c++17", f"--gpu-architecture={arch}", "--ptxas-options=-v"])
            ok = True
        except nvrtc.NVRTCError:
            ok = False
        log = nvrtc.getProgramLog(prog)
        print(log.replace("ptxas         .", "ptxas info    :"))
        if ok:
            ptx = nvrtc.getPTX(prog)
            Path(ptx_out).write_bytes(ptx.rstrip(b"\0") if isinstance(ptx, bytes) else ptx.encode())
    finally:
        nvrtc.destroyProgram(prog)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
