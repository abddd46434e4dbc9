"""Round-to-round noise of GPU cells in the quick suite, with and without CPU (numpy) cells between their rounds.
Prints, per run, how many GPU cells were marked noisy and how many had round 1 over 1.3x the later rounds."""

import json
import os
import statistics
import subprocess
import sys

RUNS = (("gpu-only", ["cupy", "torch-cuda", "triton-cuda"]),
        ("with-numpy", ["cupy", "torch-cuda", "triton-cuda", "numpy"]))


def main() -> None:
    out = os.environ.get("OUT", "/tmp")
    for label, backends in RUNS:
        path = f"{out}/noise-{label}.json"
        subprocess.run([sys.executable, "-m", "workbench", "bench", "--suite", "quick", "--backends", *backends,
                        "--quiet", "--json", path, "--store", f"{out}/noise-{label}.sqlite"], check=False, timeout=140)
        rows = [r for r in json.load(open(path))["results"] if r["backend"] != "numpy" and r["status"] == "ok"]
        spreads, slow1 = [], 0
        for r in rows:
            rm = r["round_medians_s"]
            rm = json.loads(rm) if isinstance(rm, str) else rm
            spreads.append(max(rm) / min(rm))
            slow1 += rm[0] > 1.3 * statistics.median(rm[1:])
        print(label, "gpu cells", len(rows), "noisy", sum(bool(r["noisy"]) for r in rows), "round1 slow", slow1,
              f"max/min round median: median {statistics.median(spreads):.2f} "
              f"p90 {sorted(spreads)[int(0.9 * len(spreads))]:.2f}", flush=True)


if __name__ == "__main__":
    main()
