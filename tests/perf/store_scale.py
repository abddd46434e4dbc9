"""Issue 24/38 scale target: 1,000,000 imported rows import in <= 30 s and report in <= 60 s, each within 1 GB.

Writes an export of N real-shaped rows (default 1,000,000 in 100 runs): the rows of a real export (default
tests/perf/data/quick-numpy.json, `workbench bench --suite quick --backends numpy` exported as stored: every
column, samples, host samples, round medians, round probes, notes, provenance; about 9.3 KB a row) again and
again, each copy with a run, cell key, start time and first numbers of its own; then times, each in a fresh
process so its peak memory (max RSS) is its own:

  import   `workbench import export.json --store s.sqlite`
  report   `workbench report <every run> --store s.sqlite --out r.csv`, and the same as .html (and .md)

Prints one line per step: wall and CPU seconds, peak MB, the load, and whether it met the target. Usage:

  .venv/bin/python tests/perf/store_scale.py [--rows N] [--runs N] [--formats csv,html,md] [--keep DIR]
      [--step-timeout S] [--templates EXPORT ...] [--synthetic]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"import": 30.0, "report csv": 60.0, "report html": 60.0, "report md": 60.0}
MEMORY_TARGET_MB = 1024.0
KERNELS = ("saxpy", "softmax", "gemm", "rmsnorm", "layernorm")
VARIANTS = ("numpy", "numba", "torch", "portable")


def write_export(path: Path, rows: int, runs: int) -> None:
    """An export in the store's format, streamed to disk (the document itself is never held in memory)."""
    per_run = rows // runs
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"format": "workbench-results", "version": 1, "exported_at": "2026-11-25T00:00:00.000Z", "runs": [')
        f.write(", ".join(json.dumps({"run_id": f"20261125T0000{r:02d}Z-scale{r:03d}", "status": "finished",
                                      "created_at": f"2026-11-25T00:{r // 60:02d}:{r % 60:02d}.000Z",
                                      "name": f"scale {r}", "suite": "quick", "env_id": "env-scale",
                                      "argv": ["workbench", "bench"], "spec": None, "wall_s": 10.0})
                          for r in range(runs)))
        f.write('], "environments": [{"env_id": "env-scale", "record": {"host": {"machine": "x86_64"}}}], '
                '"results": [')
        first = True
        for r in range(runs):
            run_id = f"20261125T0000{r:02d}Z-scale{r:03d}"
            for i in range(per_run):
                kernel, variant = KERNELS[i % len(KERNELS)], VARIANTS[(i // len(KERNELS)) % len(VARIANTS)]
                n = 1024 * (1 + i // (len(KERNELS) * len(VARIANTS)))
                median = 1e-6 * (1 + (i * 7919 + r) % 1000)
                row = {"run_id": run_id, "cell_key": f"{kernel}-{variant}-{n}-{i}", "kernel": kernel,
                       "variant": variant, "backend": variant if variant != "portable" else "pocl", "runtime": variant,
                       "device": "cpu", "dtype": "float32", "params": json.dumps({"n": n}), "size": n,
                       "size_label": str(n), "mode": "eager", "cache": "hot", "status": "ok",
                       "samples_s": json.dumps([median * (1 + k / 100) for k in range(5)]), "n_samples": 5,
                       "median_s": median, "mean_s": median * 1.01, "min_s": median * 0.99, "q1_s": median,
                       "q3_s": median * 1.02, "rel_spread": 0.02, "gbps": 12 * n / median / 1e9,
                       "gflops": 2 * n / median / 1e9, "env_id": "env-scale", "rounds": 3,
                       "started_at": "2026-11-25T00:00:00.000Z"}
                f.write(("" if first else ", ") + json.dumps(row))
                first = False
        f.write('], "peaks": []}')


#: Real rows: a quick suite on this project's CPU machine (`workbench bench --suite quick --backends numpy`,
#: 2026-12-07, exported as stored: samples, host samples, round medians and probes, notes, provenance). The
#: GPU quick-suite exports in docs/gpu-runs (5.9 KB rows, fewer host columns) can be given with --templates.
TEMPLATES = [ROOT / "tests" / "perf" / "data" / "quick-numpy.json"]


#: Text fields whose first number each copy of a template row varies (see :func:`_varied_template`): every list
#: of measured numbers a real row has its own of (round sizes and params repeat in real rows too).
VARIED = ("samples_s", "host_samples_s", "round_medians_s", "round_probes_s", "round_host_slowdowns",
          "round_bandwidth_gbs", "round_host_probes_s")
_FIRST_NUMBER = re.compile(r"\[\s*(-?[0-9][0-9.eE+-]*)")


def _varied_template(row: dict) -> tuple[dict, list[tuple[str, float]]]:
    """``row`` with the first number of each :data:`VARIED` text and its ``started_at`` as markers, and the
    (marker, number) pairs. Why: copies of 630 rows repeated every text 1,600 times in a million rows, and a
    reader that shares equal strings (a report does) then held 630 of them where real rows are all distinct:
    each copy gets its own numbers (scaled by a part in 10^12 per copy) and start time."""
    out, marks = {**row, "started_at": "@T@"}, []
    for k in VARIED:
        m = _FIRST_NUMBER.match(row.get(k) or "")
        if m:
            mark = f"@V{len(marks)}@"
            out[k] = row[k][:m.start(1)] + mark + row[k][m.end(1):]
            marks.append((mark, float(m.group(1))))
    return out, marks


def write_real_export(path: Path, rows: int, runs: int, templates: list[Path]) -> int:
    """An export of ``rows`` real-shaped rows: the rows of ``templates`` (real exports) again and again, each
    under a run of its own (``runs`` runs), a cell key, start time and the first number of each measured list of
    its own (:func:`_varied_template`), its environments and peaks once. Each template row is encoded once, with
    markers for what varies, so writing stays fast. Returns the number of template rows."""
    docs = [json.loads(t.read_text()) for t in templates]
    rows_t = [r for d in docs for r in d["results"]]
    if not rows_t:
        raise SystemExit(f"no rows in the templates {templates}")
    varied = [_varied_template(r) for r in rows_t]
    encoded = [(json.dumps({**r, "run_id": "@RUN@", "cell_key": f"{r['cell_key']}-@I@"}).split('"@RUN@"'), marks)
               for r, marks in varied]
    env_of_row = [str(r.get("env_id")) for r in rows_t]
    envs = {e["env_id"]: e for d in docs for e in d.get("environments") or []}
    peaks = {(p["env_id"], p["backend"], p["metric"], p["dtype"]): p for d in docs for p in d.get("peaks") or []}
    run_t = docs[0]["runs"][0]
    per_run = -(-rows // runs)
    ids = [f"20261125T0000{r:02d}Z-real{r:03d}" for r in range(runs)]
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"format": "workbench-results", "version": 1, "exported_at": "2026-11-25T00:00:00.000Z", "runs": [')
        f.write(", ".join(json.dumps({**run_t, "run_id": rid, "name": f"real {r}", "env_id": env_of_row[0]})
                          for r, rid in enumerate(ids)))
        f.write('], "environments": ' + json.dumps(list(envs.values())) + ', "results": [')
        for i in range(rows):
            (head, tail), marks = encoded[i % len(encoded)]
            copy = i // len(encoded)
            stamp = f"2026-11-25T{i // 3_600_000 % 24:02d}:{i // 60_000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z"
            tail = tail.replace("@I@", str(i), 1).replace("@T@", stamp, 1)
            for mark, x in marks:
                tail = tail.replace(mark, repr(x * (1 + copy * 1e-12)), 1)
            f.write(("" if i == 0 else ", ") + head + f'"{ids[i // per_run]}"' + tail)
        f.write('], "peaks": ' + json.dumps(list(peaks.values())) + "}")
    return len(rows_t)


def timed(argv: list[str], env: dict[str, str], timeout: float | None = None) -> tuple[float, float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS MB, exit status, stderr tail) of one command in a fresh process
    (via a wrapper that reports its own child's usage, so earlier steps do not count). CPU seconds say what
    the step costs on a busy machine, where wall time mostly measures the neighbours. Past ``timeout`` seconds
    the step is stopped (exit status -9, its usage unknown)."""
    wrapper = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
               "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
               "print(u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr); sys.exit(p.returncode)")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", wrapper, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the wrapper and the step it runs
        proc.communicate()
        return time.perf_counter() - t0, float("nan"), float("nan"), -9, f"stopped after {timeout:.0f} s"
    wall = time.perf_counter() - t0
    p = subprocess.CompletedProcess(argv, proc.returncode, "", stderr)
    lines = p.stderr.strip().splitlines()
    try:
        cpu, rss = (float(x) for x in lines[-1].split())
    except (IndexError, ValueError):
        cpu, rss = float("nan"), float("nan")
    return wall, cpu, rss / 1024, p.returncode, "\n".join(lines[-4:-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep the files (default: a temporary folder)")
    ap.add_argument("--formats", default="csv,html", help="report formats to time (default csv,html)")
    ap.add_argument("--synthetic", action="store_true",
                    help="one-shape synthetic rows (5 samples, no round medians or notes) instead of real ones")
    ap.add_argument("--templates", nargs="*", type=Path, default=TEMPLATES, metavar="EXPORT",
                    help="real exports whose rows are repeated (default: %(default)s)")
    ap.add_argument("--step-timeout", type=float, default=None, metavar="S",
                    help="stop a step after S seconds and report it as not met (default: no limit)")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="workbench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    export, store = work / "export.json", work / "s.sqlite"
    for p in (store, Path(f"{store}-wal"), Path(f"{store}-shm")):
        p.unlink(missing_ok=True)
    t0 = time.perf_counter()
    if args.synthetic:
        write_export(export, args.rows, args.runs)
        shape = "synthetic rows"
    else:
        shape = f"real-shaped rows (from {write_real_export(export, args.rows, args.runs, args.templates)} templates)"
    print(f"wrote {export} ({export.stat().st_size / 2**20:.0f} MB, {args.rows:,} {shape} in {args.runs} runs) in "
          f"{time.perf_counter() - t0:.1f} s; load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    env = {**os.environ, "WORKBENCH_AUTO_PEAKS": "0", "PYTHONPATH": str(ROOT)}
    wb = [sys.executable, "-m", "workbench"]
    steps = {"import": [*wb, "import", str(export), "--store", str(store)]}
    ids = [f"20261125T0000{r:02d}Z-{'scale' if args.synthetic else 'real'}{r:03d}" for r in range(args.runs)]
    for fmt in filter(None, args.formats.split(",")):
        steps[f"report {fmt}"] = [*wb, "report", *ids, "--store", str(store), "--out", str(work / f"r.{fmt}")]
    ok = True
    for name, argv in steps.items():
        load_before = os.getloadavg()[0]
        wall, cpu, rss, rc, tail = timed(argv, env, args.step_timeout)
        met = rc == 0 and wall <= TARGETS[name] and rss <= MEMORY_TARGET_MB
        ok &= met
        print(f"{name:12s} {wall:7.1f} s wall  {cpu:7.1f} s CPU  {rss:7.0f} MB peak  exit {rc}  load "
              f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}  target <= {TARGETS[name]:.0f} s and "
              f"<= {MEMORY_TARGET_MB:.0f} MB: {'met' if met else 'NOT met'}" + (f"\n  {tail}" if rc else ""))
    print(f"peak of this script: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; files in {work}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
