"""Deliberately bad numpy variants of wb_bad, one per way a kernel can take a process down or cheat,
beside an honest one that must stay ok. Each misbehaves only when called on real inputs (n > 1)."""
import ctypes
import os
import time

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
    """The honest add."""
    return lambda i, o: np.add(i["a"], i["b"], out=o["out"])


@_numpy("segfault")
def segfault():
    """Reads address 0 through ctypes: SIGSEGV."""
    def run(i, o):
        np.add(i["a"], i["b"], out=o["out"])
        ctypes.string_at(0)
    return run


@_numpy("abort")
def abort():
    """Calls abort(): SIGABRT, as glibc does on a corrupted heap."""
    def run(i, o):
        np.add(i["a"], i["b"], out=o["out"])
        os.abort()
    return run


@_numpy("exit")
def exit_():
    """Ends the process with exit code 3 (a library calling exit())."""
    def run(i, o):
        os._exit(3)
    return run


@_numpy("hang")
def hang():
    """Never returns (holds the GIL most of the time: a pure-Python spin)."""
    def run(i, o):
        while True:
            pass
    return run


@_numpy("sleep-hang")
def sleep_hang():
    """Never returns, sleeping (the easy hang)."""
    def run(i, o):
        while True:
            time.sleep(0.01)
    return run


@_numpy("runaway")
def runaway():
    """Grows memory 256 MiB at a time, touching every page, without end."""
    def run(i, o):
        hoard = []
        while True:
            hoard.append(np.ones(1 << 25))  # 256 MiB of float64, touched
    return run


@_numpy("replay")
def replay():
    """Computes once, then returns the cached answer whatever the inputs."""
    cached = {}

    def run(i, o):
        if "out" not in cached:
            cached["out"] = i["a"] + i["b"]
        o["out"][...] = cached["out"]
    return run


@_numpy("mutates-input")
def mutates_input():
    """Right answer, but changes its input `a`."""
    def run(i, o):
        np.add(i["a"], i["b"], out=o["out"])
        i["a"][0] += 1.0
    return run
