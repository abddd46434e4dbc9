"""What the GPU machine's CPU counters say: cores seen by each API, and busy seconds over one idle second and one
second with a spinning child, whole-machine and per CPU (was: cells there read 'other processes used 100%')."""

import multiprocessing as mp
import os
import platform
import time

import psutil


def spin(seconds: float) -> None:
    t = time.time()
    while time.time() - t < seconds:
        pass


def busy(t: psutil._common.scputimes) -> float:
    idle = t.idle + getattr(t, "iowait", 0)
    return sum(t) - idle - getattr(t, "guest", 0) - getattr(t, "guest_nice", 0) - getattr(t, "steal", 0)


def main() -> None:
    print("uname", platform.uname())
    print("os.cpu_count", os.cpu_count(), "psutil.cpu_count", psutil.cpu_count(),
          "affinity", len(os.sched_getaffinity(0)))
    for f in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpuset.cpus.effective", "/proc/loadavg"):
        try:
            print(f, open(f).read().strip())
        except OSError as e:
            print(f, e)
    print("proc/stat cpu lines", sum(1 for line in open("/proc/stat") if line.startswith("cpu")))
    for label, child in (("idle", 0), ("one spinning child", 1)):
        p = mp.Process(target=spin, args=(1.5,)) if child else None
        if p:
            p.start()
            time.sleep(0.2)
        a, ap, t0 = psutil.cpu_times(), psutil.cpu_times(percpu=True), time.perf_counter()
        time.sleep(1.0)
        b, bp, t1 = psutil.cpu_times(), psutil.cpu_times(percpu=True), time.perf_counter()
        per = [round(busy(y) - busy(x), 2) for x, y in zip(ap, bp, strict=True)]
        print(label, "wall", round(t1 - t0, 3), "busy all", round(busy(b) - busy(a), 2), "per-cpu", len(per),
              "sum", round(sum(per), 2), "top", sorted(per)[-5:])
        print("  fields", {k: round(getattr(b, k) - getattr(a, k), 2) for k in b._fields})
        if p:
            p.join()


if __name__ == "__main__":
    main()
