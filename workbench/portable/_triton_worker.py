"""Child process of :mod:`workbench.portable.triton_catalog`: compile one catalog folder's Triton kernels.

``python -m workbench.portable._triton_worker FOLDER ARCH[,ARCH...]`` loads the folder, compiles every
``COMPILE`` entry of its ``triton_variants.py`` for each arch, and prints one JSON line on stdout
(``{"rows": [...]}`` or ``{"error": "..."}``). Everything else the compilers print goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from workbench.catalog import registry
from workbench.catalog.loader import load_catalog, load_errors
from workbench.portable.triton_check import compile_triton

_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "fp8e4nv": "float8_e4m3fn"}


def _dtype(signature: dict[str, str]) -> str:
    """The element type of the first pointer argument, named like the workbench's dtypes."""
    for t in signature.values():
        if t.startswith("*"):
            return _DTYPES.get(t[1:], t[1:])
    return "-"


def main(folder: str, archs: list[str]) -> dict:
    os.environ.pop("TRITON_INTERPRET", None)

    load_catalog(folder)
    name = Path(folder).name
    module = sys.modules.get(f"workbench_catalog.{name}.triton_variants")
    if module is None and not (Path(folder) / "spec.py").is_file():
        return {"error": f"{folder} is not a catalog kernel folder (it has no spec.py)"}
    if module is None:
        return {"error": f"{name}/triton_variants.py did not load: "
                         f"{load_errors.get(f'{name}/triton_variants.py', 'unknown error')}"}
    entries = getattr(module, "COMPILE", None)
    if not entries:
        return {"error": f"{name}/triton_variants.py declares no COMPILE entries (see TritonCompile in "
                         "workbench/portable/triton_check.py), so its kernels cannot be compiled for GPUs"}
    variants = sorted(n for n, v in registry.variants(name).items() if "triton" in v.runtimes)
    rows = []
    for entry in entries:
        fn = entry.kernel()
        for arch in archs:
            t = time.perf_counter()
            row = compile_triton(fn, dict(entry.signature), dict(entry.constexprs), arch, entry.num_warps).to_dict()
            rows.append({**row, "label": entry.label, "constexprs": {**entry.constexprs, "num_warps": entry.num_warps},
                         "dtype": _dtype(dict(entry.signature)), "variants": variants,
                         "seconds": round(time.perf_counter() - t, 3)})
    return {"rows": rows}


if __name__ == "__main__":
    real_stdout = os.dup(1)
    os.dup2(2, 1)  # compilers print to fd 1 too; only the JSON line goes to the real stdout
    try:
        result = main(sys.argv[1], [a for a in sys.argv[2].split(",") if a])
    except Exception as exc:  # noqa: BLE001 - reported as the folder's failure, with its type
        result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.flush()
    os.write(real_stdout, (json.dumps(result) + "\n").encode())
