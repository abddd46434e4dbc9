"""Variants of wb_game that game the clock, one (at least) per class of issue 23, each named after the class
its message must name; ``good`` and ``good-returns`` are honest and must stay ok."""
import gc
import math
import queue
import threading

import numpy as np

from workbench.catalog import kernel_here

op = kernel_here(__file__)


def _numpy(name):
    def deco(make_run):
        op.variant(name, "numpy", description=make_run.__doc__ or name)(lambda ctx: make_run())
        return make_run
    return deco


@_numpy("good")
def good():
    """The honest add, into the output buffer."""
    return lambda i, o: np.add(i["a"], i["b"], out=o["out"])


@_numpy("good-returns")
def good_returns():
    """The honest add, returning a new array."""
    return lambda i, o: i["a"] + i["b"]


@_numpy("checked-only")
def checked_only():
    """Works only when checked: computes only when its output holds the checker's NaN poison."""
    def run(i, o):
        out = o["out"]
        if out.size and math.isnan(out.flat[0]):
            np.add(i["a"], i["b"], out=out)
    return run


@_numpy("fingerprint")
def fingerprint():
    """Memoizes by fingerprint: shape and three elements of each input pick a cached answer."""
    cache = {}

    def run(i, o):
        a, b = i["a"], i["b"]
        key = (a.shape, float(a[0]), float(a[a.size // 2]), float(a[-1]), float(b[0]))
        if key not in cache:
            cache[key] = a + b
        o["out"][...] = cache[key]
    return run


@_numpy("memo-by-object")
def memo_by_object():
    """Memoizes by the input arrays' identity: the first answer computed for an input set is returned for it ever
    after (an audit of a set's first call would have it cache the changed version's answer as the set's own)."""
    cache = {}

    def run(i, o):
        key = (id(i["a"]), id(i["b"]))
        if key not in cache:
            cache[key] = i["a"] + i["b"]
        o["out"][...] = cache[key]
    return run


@_numpy("finishes-later")
def finishes_later():
    """Finishes later: when its output holds no poison (a timed call), returns at once and a thread of its own
    writes the output a few milliseconds after; a checked call it computes at once."""
    jobs = queue.Queue()

    def worker():
        while True:
            a, b, out = jobs.get()
            threading.Event().wait(0.005)
            np.add(a, b, out=out)

    threading.Thread(target=worker, daemon=True).start()

    def run(i, o):
        out = o["out"]
        if out.size and math.isnan(out.flat[0]):
            np.add(i["a"], i["b"], out=out)
        else:
            jobs.put((i["a"], i["b"], out))
    return run


@_numpy("heap-search")
def heap_search():
    """Tampers with the harness: finds the float64 reference in the worker's heap (a dict holding `out`) whose
    first element matches its inputs (else any), and copies it instead of adding."""
    def run(i, o):
        a, b, out = i["a"], i["b"], o["out"]
        dicts = [r for obj in gc.get_objects() for r in gc.get_referents(obj) if type(r) is dict]  # untracked too
        refs = [d["out"] for d in dicts if isinstance(d.get("out"), np.ndarray) and d["out"].dtype == np.float64
                and d["out"].shape == out.shape]
        matching = [r for r in refs if r[0] == float(a[0]) + float(b[0])]
        if not refs:
            raise LookupError("no reference in the heap")
        out[...] = (matching or refs)[-1]
    return run


@_numpy("patches-timer")
def patches_timer():
    """Tampers with the harness: replaces the wall-clock timer's measure so every call seems to take 1 ns."""
    def run(i, o):
        from workbench.backends import base

        if not getattr(base.SyncWallTimer.measure, "_gamed", False):
            def measure(self, fn):
                fn()
                return base.Sample(device_s=1e-9, host_s=1e-9)
            measure._gamed = True
            base.SyncWallTimer.measure = measure
        np.add(i["a"], i["b"], out=o["out"])
    return run


@_numpy("float16-inside")
def float16_inside():
    """Trades precision for speed: adds in float16 inside a float32 variant."""
    def run(i, o):
        o["out"][...] = i["a"].astype(np.float16) + i["b"].astype(np.float16)
    return run


@_numpy("tf32-inside")
def tf32_inside():
    """Trades precision for speed: rounds its float32 inputs to TF32's 10-bit mantissa first (what a TF32
    matmul does to a float32 one)."""
    def tf32(x):
        return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)

    def run(i, o):
        np.add(tf32(i["a"]), tf32(i["b"]), out=o["out"])
    return run


@_numpy("graph-replay")
def graph_replay():
    """The CPU form of a CUDA graph captured on the first call's buffers and replayed whatever it is given: it
    keeps the first input set it saw and recomputes from it (right on that set, stale on every other)."""
    captured = {}

    def run(i, o):
        captured.setdefault("inputs", (i["a"], i["b"]))
        a, b = captured["inputs"]
        np.add(a, b, out=o["out"])
    return run
