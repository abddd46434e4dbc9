"""Which configuration a tunable variant is built with, and the keys tuned configurations are kept under.

A tuning holds for one device (:func:`device_fingerprint`: the backend, the device's name and, on CPUs, its
vector ISA and core count: a tile size tuned on an AVX-512 machine is not the one for an AVX2 one), one
dtype and one shape class (:func:`shape_class`: the work rounded to a power of two, so a tuning at 1024^3
serves sizes of about that work and not 64^3).

Importing this module installs :func:`resolve_config` as the catalog's configuration resolver
(:func:`workbench.catalog.registry.set_config_resolver`); ``import workbench`` does so.
"""

from __future__ import annotations

import functools
import logging
import math
import platform
from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench import config as config_file
from workbench.catalog.registry import given_or_default, set_config_resolver
from workbench.catalog.spec import BuildContext, KernelSpec, TunableConfig, Variant, format_config
from workbench.core.dtypes import itemsize
from workbench.core.env_values import env_flag

if TYPE_CHECKING:
    from workbench.backends.base import Backend

log = logging.getLogger(__name__)

#: ``WORKBENCH_TUNED=0`` (``workbench bench --no-tuned``): builds ignore tuned configurations.
ENV_TUNED = "WORKBENCH_TUNED"


def tuned_enabled() -> bool:
    """Builds use tuned configurations (``WORKBENCH_TUNED``: 1/0, yes/no...; a value not understood raises)."""
    return env_flag(ENV_TUNED, True)


@functools.cache
def cpu_isa() -> str:
    """The widest x86 vector extension of this CPU (avx512 / avx2 / avx / sse), else the machine name."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    for flag, isa in (("avx512f", "avx512"), ("avx2", "avx2"), ("avx", "avx"), ("sse2", "sse")):
        if flag in flags:
            return isa
    return platform.machine() or "unknown"


def device_fingerprint(backend: Backend) -> str:
    """``numba|AMD EPYC|avx2|2 cores``: the backend and what of its device decides the best configuration."""
    info = backend.device_info()
    parts = [backend.name, info.name]
    if info.kind == "cpu":
        parts += [cpu_isa(), f"{info.compute_units} cores"]
    return "|".join(str(p) for p in parts)


def shape_class(spec: KernelSpec, params: Mapping[str, int], dtype: str) -> str:
    """``work 2^25``: log2 of the FLOPs (bytes for a kernel doing none), rounded."""
    flops = float(spec.flops(params))
    work = flops if flops > 0 else float(spec.bytes_moved(params, itemsize(dtype)))
    return f"work 2^{round(math.log2(max(work, 1.0)))}"


def lookup(variant: Variant, spec: KernelSpec, backend: Backend, dtype: str, params: Mapping[str, int],
           config: config_file.WorkbenchConfig | None = None) -> config_file.TunedEntry | None:
    """The tuned entry for this variant (of kernel ``spec``), device, dtype and shape class in ``config``
    (default: the configuration file), or None."""
    cfg = config_file.read() if config is None else config
    key = (variant.kernel, variant.name, device_fingerprint(backend), dtype, shape_class(spec, params, dtype))
    for entry in config_file.tuned_entries(cfg):
        if (entry["kernel"], entry["variant"], entry["device"], entry["dtype"], entry["shape_class"]) == key:
            return entry
    return None


def tuned_label(config: TunableConfig, entry: config_file.TunedEntry, default: TunableConfig) -> str:
    """The row's ``tuned_config``: the configuration, and whether a search chose it ("tuned for ...") or the
    search's confirmation found nothing faster so the hand-picked one was kept (not to be read as tuned)."""
    by = f" by run {entry['run_id']}" if entry.get("run_id") else ""
    if config == default and entry.get("verdict") not in (None, "faster", "unconfirmed"):
        return (f"{format_config(config)} (hand-picked, kept{by} for {entry['shape_class']}: "
                "no candidate was confirmed faster)")
    return f"{format_config(config)} (tuned for {entry['shape_class']}{by})"


def resolve_config(variant: Variant, spec: KernelSpec, ctx: BuildContext) -> tuple[TunableConfig, str | None]:
    """(configuration, label): the one given in ``ctx.config``; else the tuned one for this device, dtype
    and shape class (unless :func:`tuned_enabled` is off); else the variant's defaults (label None)."""
    if ctx.config:
        return given_or_default(variant, spec, ctx)
    if tuned_enabled():
        try:
            entry = lookup(variant, spec, ctx.backend, ctx.dtype, ctx.params)
        except ValueError as exc:  # a broken configuration file: say so in the log, build the defaults
            log.warning("tuned configurations not used: %s", exc)
            entry = None
        if entry is not None:
            try:
                full = variant.check_config(entry["config"])
            except ValueError as exc:  # the variant changed since the tuning
                log.warning("tuned configuration of %s/%s ignored: %s", variant.kernel, variant.name, exc)
            else:
                return full, tuned_label(full, entry, variant.default_config())
    return variant.default_config(), None


set_config_resolver(resolve_config)
