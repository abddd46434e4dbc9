"""What the package knows about a runtime besides its adapter class, stated once in the runtime's own module.

Every layer that treats runtimes differently (the report's markers, the environment record's versions and
variables, the audits' in-place edits of device arrays, the ad-hoc timer's reading of arrays and callables,
a case's guard zones, what an execution mode means, how portable device code compiles, launches and records a
graph) reads a :class:`Runtime`; none of them names a runtime.
A built-in adapter module declares its runtimes as ``RUNTIMES = (Runtime(...),)`` and the registry reads them
(:func:`workbench.backends.registry.runtime`, :func:`~workbench.backends.registry.runtimes`); a runtime defined
elsewhere (a plugin, a test) declares the same with :func:`~workbench.backends.registry.register_runtime`.

Hooks read a runtime only where its package is already loaded: nothing here imports one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A runtime's settings as the environment record or a row stores them (flag or variable -> value).
Settings = Mapping[str, Any]
#: ``launch(entry, grid, block, args)``: one launch of a compiled kernel, the grid in blocks and the block in
#: threads (CUDA's convention).
Launcher = Callable[[str, tuple[int, ...], tuple[int, ...], Sequence[Any]], None]
#: ``capture(launch_all)``: the launches ``launch_all()`` makes, recorded once as a device graph; returns its replay.
GraphCapture = Callable[[Callable[[], None]], Callable[[], None]]


@dataclass(frozen=True)
class ArrayEdits:
    """How audits change a few elements of one of the runtime's device arrays in place, so a kernel that
    bound its arguments once still reads the new values."""

    #: Whether the array takes in-place edits (contiguous, and of this runtime's array type).
    writable: Callable[[Any], bool]
    #: ``write(dev, pos, values)``: ``dev.flat[pos] = values`` on the device.
    write: Callable[[Any, np.ndarray, np.ndarray], None]
    #: ``move(dev, pos, src)``: ``dev.flat[pos] = dev.flat[src]`` on the device.
    move: Callable[[Any, np.ndarray, np.ndarray], None]


@dataclass(frozen=True)
class DeviceCode:
    """How the runtime runs the package's portable device sources (``.cu`` files written against the prelude's
    macros, :mod:`workbench.portable`): the prelude target it compiles them for, the compile and its launcher,
    and where it has one, the device graph a block's launches are recorded in."""

    #: Every prelude target it may compile for (``cuda``, ``hip``, ``opencl``): the compile check's choice.
    targets: tuple[str, ...]
    #: ``target(backend)``: the one its backend's device takes.
    target: Callable[[Any], str]
    #: ``compile(backend, text, entries, max_block)``: the rendered ``text`` built for the backend's device (once
    #: per text and device), each of ``entries`` checked to allow ``max_block`` threads per block.
    compile: Callable[[Any, str, Sequence[str], int], Launcher]
    #: ``refusal(backend, dtype)``: why the backend's device cannot run ``dtype`` (no float64), or None.
    refusal: Callable[[Any, str], str | None] = lambda backend, dtype: None
    #: ``new_capture()``: a capture (:data:`GraphCapture`) with a capturing stream of its own, made once per plan;
    #: None: a recorded plan is a launch list with one synchronisation at the end.
    new_capture: Callable[[], GraphCapture] | None = None
    #: An array's device address: a captured graph replays the addresses it was captured on.
    address: Callable[[Any], int] | None = None


@dataclass(frozen=True)
class Runtime:
    """One runtime's declaration: what the layers above the adapters need to know about it."""

    #: The runtime's name, as variants and rows name it (``wgpu``, not the ``vulkan`` backend).
    name: str
    #: Its place wherever runtimes are listed (the environment record, the report's environment line), lowest
    #: first; a runtime that gives none comes after the built-in ones.
    rank: int = 1000
    #: Backend-name families (a backend's name up to its first '-') that are this runtime's besides its name.
    families: tuple[str, ...] = ()
    #: Top-level Python modules whose code and arrays are this runtime's (``scipy`` is numpy's).
    modules: tuple[str, ...] = ()
    #: The matplotlib marker of its series in every figure (None: one drawn from the name's hash).
    marker: str | None = None
    #: Outputs sit between guard zones: a window of a larger buffer reaches the kernel as its output
    #: (:meth:`Backend.window`), so a write past an output's end is seen.
    guards_outputs: bool = False
    #: The distributions that install it, a glob for a family of wheels: the environment record names their
    #: versions as the runtime's. None: the record names none.
    distribution: str | None = None
    #: The package whose version the report's one-line environment names for it (None: none).
    headline_package: str | None = None
    #: The device versions ``workbench info`` shows in its listing of one of its backends (every one is in
    #: ``--json``); none: the first three the device reports.
    key_versions: tuple[str, ...] = ()
    #: Further distributions whose versions decide its results, and name prefixes of wheel families
    #: (``nvidia-cuda-nvrtc``, ``torch-...``), read from package metadata.
    packages: tuple[str, ...] = ()
    package_prefixes: tuple[str, ...] = ()
    #: Environment variables that set its thread pools, recorded with every environment.
    thread_variables: tuple[str, ...] = ()
    #: Its thread pools as the environment record lists them (read only where it is loaded).
    thread_settings: Callable[[], Settings] | None = None
    #: Its settings for float32 math (TF32), recorded with every timed row (read only where it is loaded), named
    #: as :func:`workbench.core.dtypes.reduced_float32_flags` reads them.
    precision_settings: Callable[[], Settings] | None = None
    #: Timer kinds whose time is between events on one stream (work on another stream escapes them).
    event_timers: tuple[str, ...] = ()
    #: What each execution mode (``graph``, ``fused``) means on it, where it has one.
    mode_meanings: Mapping[str, str] = field(default_factory=dict)
    #: The backend one of its array objects lives on (None: a host array); given objects of its :attr:`modules`.
    array_backend: Callable[[Any], str | None] | None = None
    #: Attributes that mark a callable as this runtime's compiled code (a ``torch.compile`` wrapper).
    compiled_marks: tuple[str, ...] = ()
    #: How audits edit its arrays in place (None: they copy whole arrays or replace them).
    array_edits: ArrayEdits | None = None
    #: How it runs portable device sources (None: it runs none).
    device_code: DeviceCode | None = None
    #: The driver files installed for it that decide what it runs on (names only, nothing loaded), part of the
    #: environment id: wgpu without a Vulkan driver runs on OpenGL under the same packages.
    drivers: Callable[[], list[str]] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The runtime's name and the backend families that are its."""
        return (self.name, *self.families)
