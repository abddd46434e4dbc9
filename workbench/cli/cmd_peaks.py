"""One set of ceilings per physical device, shared by every runtime on it: the CPU's (numpy, numba, torch-cpu,
OpenCL on PoCL, Vulkan on lavapipe, the Triton interpreter) from a STREAM triad at DRAM, last-level, L2 and L1
working sets and BLAS GEMM per dtype; a GPU's from its own saxpy and library GEMM. Stored so results can say
'% of measured peak'; a ceiling that could not be measured says why. A sweep measures the same automatically
the first time it uses a device in an environment; this measurement replaces it."""

from __future__ import annotations

import argparse

from workbench.cli.args_common import add_store, command
from workbench.core.units import fmt_rate
from workbench.store.database import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "peaks", run, description=__doc__,
                help="measure this machine's bandwidth and FLOP ceilings, one set per device")
    p.add_argument("--backend", "--backends", dest="backends", nargs="+", metavar="B",
                   help="backends (default: every available one)")
    add_store(p)


def run(args: argparse.Namespace) -> int:
    from workbench.roofs.peaks import measure_peaks

    store = Store(args.store)
    peaks = measure_peaks(args.backends, store)
    rows = [("backend", "metric", "dtype", "value", "method")]
    for p in peaks:
        value = fmt_rate(p.value, p.unit)
        rows.append((p.backend, p.metric, p.dtype, value, p.method))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4])
        if i == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    print(f"\nstored in {store.path} (replacing any automatic probe of these backends in this environment)")
    return 0
