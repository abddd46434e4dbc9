"""Round-to-round noise of GPU cells in the quick suite, with and without CPU (numpy) cells between their rounds.
Prints, per run, how many GPU cells were marked noisy and how many had round 1 over 1.3x the later rounds."""
import json, statistics, subprocess, sys, os
out = os.environ.get("OUT", "/tmp")
for label, backends in (("gpu-only", ["cupy", "torch-cuda", "triton-cuda"]), ("with-numpy", ["cupy", "torch-cuda", "triton-cuda", "numpy"])):
    path = f"{out}/noise-{label}.json"
    subprocess.run([sys.executable, "-m", "workbench", "bench", "--suite", "quick", "--backends", *backends, "--quiet",
                    "--json", path, "--store", f"{out}/noise-{label}.sqlite"], check=False, timeout=140)
    rows = [r for r in json.load(open(path))["results"] if r["backend"] != "numpy" and r["status"] == "ok"]
    spreads, slow1 = [], 0
    for r in rows:
        rm = r["round_medians_s"]; rm = json.loads(rm) if isinstance(rm, str) else rm
        spreads.append(max(rm) / min(rm))
        slow1 += rm[0] > 1.3 * statistics.median(rm[1:])
    print(label, "gpu cells", len(rows), "noisy", sum(bool(r["noisy"]) for r in rows), "round1 slow", slow1,
          "max/min round median: median %.2f p90 %.2f" % (statistics.median(spreads), sorted(spreads)[int(.9 * len(spreads))]), flush=True)
