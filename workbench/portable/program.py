"""Portable variants: one device source, its launches, registered for every runtime that runs device sources.

A :class:`PortableProgram` describes everything needed to run a ``.cu`` file
for one variant: the build-time ``#define``s, the kernel launches in order
(several for a two-pass reduction or an unfused pair), the temporaries they
pass between them, and how arguments map to arrays, sizes and scalars. The
same description drives the runtime builder and the compile check, so the
check compiles the text that runs.

Arguments of a :class:`Launch` are names, resolved per call in this order:
the variant's temporaries (``scratch``), the inputs and outputs handed to the
kernel call, the sizes (the spec's params, the ``#define``s and ``derived``
values; passed as ``np.int32``) and ``scalars`` (passed in the accumulator
dtype: float32 for float16/float32, float64 for float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.catalog import BuildContext, Unsupported, registry, variant
from workbench.portable.prelude import CUDA_TARGETS, DTYPES
from workbench.portable.runtimes import device_code, device_runtimes
from workbench.portable.source import Defines, DefineValue, expand_includes, kernel_names, render

if TYPE_CHECKING:
    from workbench.catalog.authoring import KernelFolder
    from workbench.catalog.spec import DeviceArrays

Sizes = Mapping[str, int]

#: Threads per block of 1-D kernels unless a variant says otherwise.
DEFAULT_BLOCK = 256
#: Grid-stride kernels launch at most this many blocks; the loop covers the rest.
MAX_GRID = 65536
#: Kernels index with int: arrays must stay below this (leaving room for a grid stride).
INDEX_LIMIT = 2**31 - 1 - MAX_GRID * 1024
#: CUDA's limit on gridDim.y / gridDim.z.
CUDA_MAX_GRID_YZ = 65535

_registry: dict[tuple[str, str], PortableProgram] = {}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Launch:
    """One kernel launch: entry name, grid (in blocks) and block (in threads) from sizes, argument names."""

    entry: str
    grid: Callable[[Sizes], tuple[int, ...]]
    block: Callable[[Sizes], tuple[int, ...]]
    args: tuple[str, ...]


@dataclass(frozen=True)
class Scratch:
    """A temporary array the variant allocates once per build (e.g. partial sums, an unfused intermediate)."""

    shape: Callable[[Sizes], tuple[int, ...]]
    #: "real" (the run dtype), "acc" (the accumulator dtype) or a numpy dtype name.
    dtype: str = "real"


def grid_stride(entry: str, args: Iterable[str], n: Callable[[Sizes], int] = lambda s: s["n"]) -> Launch:
    """A 1-D grid-stride launch over ``n`` elements: BLOCK threads, at most MAX_GRID blocks."""
    return Launch(entry, lambda s: (max(1, min(cdiv(n(s), s["BLOCK"]), MAX_GRID)),),
                  lambda s: (s["BLOCK"],), tuple(args))


def per_row(entry: str, args: Iterable[str]) -> Launch:
    """One block of BLOCK threads per row."""
    return Launch(entry, lambda s: (s["rows"],), lambda s: (s["BLOCK"],), tuple(args))


def grid_2d(entry: str, args: Iterable[str], extent: tuple[str, str], block: tuple[str, str],
            cover: tuple[str, str] | None = None) -> Launch:
    """A 2-D launch: ``block`` threads (x, y) per block, blocks enough to cover ``extent`` (x, y).

    All four are size names (axes, ``#define``s or derived values). Each block
    covers ``cover`` elements (defaults to ``block``: one thread per element);
    a tile kernel whose threads loop over several rows covers more than it has
    threads, e.g. ``block=("TILE", "TILE_ROWS"), cover=("TILE", "TILE")``.
    x is the fastest-varying (column) axis, as in CUDA.
    """
    cx, cy = cover or block
    return Launch(entry, lambda s: (cdiv(s[extent[0]], s[cx]), cdiv(s[extent[1]], s[cy])),
                  lambda s: (s[block[0]], s[block[1]]), tuple(args))


def _acc_dtype(dtype: str) -> np.dtype:
    return np.dtype(np.float64 if dtype == "float64" else np.float32)


def _default_elements(params: Sizes) -> int:
    """Largest array an op with these axes indexes: n; rows*cols; max(mk, kn, mn)."""
    vals = list(params.values())
    pairs = [a * b for i, a in enumerate(vals) for b in vals[i + 1:]]
    return max(vals + pairs)


@dataclass
class PortableProgram:
    kernel: str
    variant: str
    source: Path
    launches: tuple[Launch, ...]
    defines: Defines = field(default_factory=dict)
    derived: dict[str, Callable[[Sizes], int]] = field(default_factory=dict)
    scratch: dict[str, Scratch] = field(default_factory=dict)
    scalars: dict[str, float] = field(default_factory=dict)
    #: The runtimes it is registered for: every one that runs portable sources unless a variant says.
    runtimes: tuple[str, ...] = field(default_factory=device_runtimes)
    #: Needs WARP_SIZE from the device (warp-shuffle code; CUDA/HIP only).
    needs_warp: bool = False

    @property
    def entries(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(launch.entry for launch in self.launches))

    def render(self, target: str, dtype: str, warp_size: int | None = None) -> str:
        defines = dict(self.defines)
        if warp_size and target in CUDA_TARGETS:
            defines["WARP_SIZE"] = warp_size
        return render(self.source, target, dtype, defines)

    def sizes(self, params: Sizes) -> dict[str, int]:
        s = {**{k: v for k, v in self.defines.items() if isinstance(v, int)}, **params}
        for name, fn in self.derived.items():
            s[name] = int(fn(s))
        return s

    def build(self, ctx: BuildContext):
        """The catalog builder: compile once (cached), allocate temporaries, return ``run(inputs, outputs)``."""
        backend, dtype = ctx.backend, ctx.dtype
        if dtype not in DTYPES:
            raise Unsupported(f"portable kernels implement {', '.join(DTYPES)}, not {dtype}")
        code = device_code(backend)
        target = code.target(backend)
        caps = backend.capabilities()
        if not caps.compiles_device_code:
            raise Unsupported(f"backend {backend.name} cannot compile device code here"
                              + (f": {backend.compile_error}" if getattr(backend, "compile_error", None) else ""))
        refusal = code.refusal(backend, dtype)
        if refusal:
            raise Unsupported(refusal)
        if self.needs_warp and not caps.warp_size:
            raise Unsupported(f"{self.variant} needs the device's warp size; backend {backend.name} reports none")
        sizes = self.sizes(ctx.params)
        if _default_elements(ctx.params) > INDEX_LIMIT or any(v > INDEX_LIMIT for v in sizes.values()):
            raise Unsupported(f"sizes {ctx.params} overflow the kernels' int32 indexing")
        steps = [(ln.entry, tuple(ln.grid(sizes)), tuple(ln.block(sizes)), ln.args) for ln in self.launches]
        max_block = max(math.prod(b) for _, _, b, _ in steps)
        if caps.max_threads_per_block and max_block > caps.max_threads_per_block:
            raise Unsupported(f"{self.variant} launches {max_block} threads per block; "
                              f"{backend.name} allows {caps.max_threads_per_block}")
        if target in CUDA_TARGETS and any(g > CUDA_MAX_GRID_YZ for _, grid, _, _ in steps for g in grid[1:]):
            raise Unsupported(f"sizes {ctx.params} need more than {CUDA_MAX_GRID_YZ} blocks in grid y/z")

        launch = code.compile(backend, self.render(target, dtype, caps.warp_size), self.entries, max_block)
        scratch = {name: backend.empty(tuple(s.shape(sizes)), _scratch_dtype(s.dtype, dtype))
                   for name, s in self.scratch.items()}
        acc = _acc_dtype(dtype).type
        consts = {**{k: np.int32(v) for k, v in sizes.items()}, **{k: acc(v) for k, v in self.scalars.items()}}

        def run(inputs: DeviceArrays, outputs: DeviceArrays) -> None:
            arrays = {**inputs, **outputs, **scratch}
            for entry, grid, block, names in steps:
                launch(entry, grid, block, [_resolve(n, arrays, consts, entry) for n in names])

        return run

    def register(self, *, mode: str = "eager", description: str = "") -> PortableProgram:
        description = description or f"portable device kernel {self.source.name}: {' + '.join(self.entries)}"
        variant(self.kernel, self.variant, self.runtimes, mode=mode, dtypes=DTYPES, description=description,
                source=str(self.source))(self.build)
        _registry[(self.kernel, self.variant)] = self
        return self


def _scratch_dtype(kind: str, dtype: str) -> str:
    if kind == "real":
        return dtype
    if kind == "acc":
        return _acc_dtype(dtype).name
    return kind


def _resolve(name: str, arrays: DeviceArrays, consts: Mapping[str, np.generic], entry: str) -> Any:
    if name in arrays:
        return arrays[name]
    if name in consts:
        return consts[name]
    raise KeyError(f"{entry}: argument {name!r} is not an input, output, temporary, size or scalar "
                   f"(arrays: {', '.join(arrays)}; values: {', '.join(consts)})")


def portable_variant(kernel: str, name: str, source: str | Path, launches: Iterable[Launch], *,
                     defines: Mapping[str, DefineValue] | None = None, derived: Mapping[str, Callable] | None = None,
                     scratch: Mapping[str, Scratch] | None = None, scalars: Mapping[str, float] | None = None,
                     runtimes: Iterable[str] | None = None, needs_warp: bool = False,
                     mode: str = "eager", description: str = "") -> PortableProgram:
    """Register ``source`` as variant ``name`` of ``kernel``. ``defines`` default to ``BLOCK=256``; ``runtimes``
    to every runtime that runs portable sources."""
    program = PortableProgram(kernel=kernel, variant=name, source=Path(source).resolve(),
                              launches=tuple(launches), defines={"BLOCK": DEFAULT_BLOCK, **(defines or {})},
                              derived=dict(derived or {}), scratch=dict(scratch or {}),
                              scalars=dict(scalars or {}), needs_warp=needs_warp,
                              runtimes=device_runtimes() if runtimes is None else tuple(runtimes))
    if not program.source.is_file():
        raise FileNotFoundError(f"{kernel}/{name}: device source {program.source} does not exist")
    return program.register(mode=mode, description=description)


def portable_here(op: KernelFolder, launches: Iterable[Launch], *, name: str = "portable",
                  source: str | None = None, **kwargs: Any) -> PortableProgram:
    """:func:`portable_variant` for the kernel of folder ``op`` (from ``kernel_here(__file__)``).

    ``source`` is a file name in the folder; by default the one ``.cu`` file
    there that declares every entry the launches name, so a folder needs no
    literal for it. Other keywords as for :func:`portable_variant`.
    """
    launches = tuple(launches)
    if source is None:
        wanted = {launch.entry for launch in launches}
        found = [p for p in sorted(op.folder.glob("*.cu")) if wanted <= set(kernel_names(expand_includes(p)))]
        if len(found) != 1:
            raise FileNotFoundError(f"{op.name}/{name}: {len(found)} .cu files in {op.folder} declare "
                                    f"{', '.join(sorted(wanted))}; pass source=")
        path = found[0]
    else:
        path = op.path(source)
    return portable_variant(op.name, name, path, launches, **kwargs)


def programs() -> list[PortableProgram]:
    """Every portable program registered so far (load the catalog first)."""
    return [p for p in _registry.values() if _still_registered(p)]


def _still_registered(p: PortableProgram) -> bool:
    """A program whose variant was unregistered (an unloaded catalog folder) is no longer in the catalog."""
    try:
        return p.variant in registry.variants(p.kernel)
    except ValueError:
        return False
