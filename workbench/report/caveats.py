"""What a reader must know before trusting a number: noise, failed cells, CPU stand-ins, unfinished runs.

Kept apart from the findings so the same words appear in the report, the Markdown export and (later)
the dashboard. Status strings are compared as text, so statuses added to the record later (such as
``crashed``: a kernel that killed its worker process) are counted without importing anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from workbench.core.frames import records
from workbench.core.record import JsonObject
from workbench.core.status import FAILED_IN_ORDER, Status
from workbench.judge.compare import aa_summary
from workbench.judge.verdicts import noisy_mask
from workbench.roofs.ceilings import is_noisy, noise_text

#: Failed statuses that mean "not measured", in the order a reader cares about them.
FAILED_STATUSES = FAILED_IN_ORDER
#: The caveat attached to a row run on a CPU stand-in for a GPU runtime.
POCL_NOTE = "OpenCL on PoCL (a CPU): a correctness result, not GPU speed"
TRITON_NOTE = "Triton interpreter (a CPU): a correctness result, not GPU speed"
LAVAPIPE_NOTE = "Vulkan on lavapipe (a CPU): a correctness result, not GPU speed"


def wgpu_cpu_note(api: str) -> str:
    """The caveat of a wgpu row run on the CPU through ``api`` (no Vulkan driver: Mesa's OpenGL llvmpipe)."""
    return (f"wgpu on {api} (Mesa's llvmpipe, a CPU; not Vulkan: no Vulkan driver was found, install "
            "mesa-vulkan-drivers for lavapipe): a correctness result, not GPU speed")


#: The columns :func:`is_pocl`, :func:`is_lavapipe` and :func:`is_triton_interpreter` read.
STAND_IN_COLUMNS = ("backend", "runtime", "variant", "device", "message", "timer_kind", "env_id")


def _text(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)


def _env_backend(environments: Mapping[str, Any] | None, row: Mapping[str, Any]) -> JsonObject:
    """The environment record's entry of the row's backend ({} where it has none)."""
    env = (environments or {}).get(_text(row.get("env_id"))) or {}
    for b in env.get("backends") or []:
        if isinstance(b, dict) and b.get("name") == row.get("backend"):
            return b
    return {}


def is_pocl(row: Mapping[str, Any], environments: Mapping[str, Any] | None = None) -> bool:
    """An OpenCL row whose device is PoCL's CPU device (from the environment record where there is one,
    else from PoCL's device names: ``pthread-…``, ``cpu-…``)."""
    backend = _text(row.get("backend")).lower()
    if "opencl" not in backend and _text(row.get("runtime")).lower() != "opencl":
        return False
    rec = _env_backend(environments, row)
    if rec:
        dev = rec.get("device") or {}
        words = " ".join(str(x) for x in (dev.get("extra", {}).get("platform"), (dev.get("versions") or {}).get(
            "platform"), dev.get("name")) if x).lower()
        if "pocl" in words or "portable computing language" in words:
            return True
    device = _text(row.get("device")).lower()
    return "pocl" in device or device.startswith(("pthread", "cpu-", "basic"))


def _is_wgpu(row: Mapping[str, Any]) -> bool:
    words = " ".join(_text(row.get(c)) for c in ("backend", "runtime")).lower()
    return "vulkan" in words or "wgpu" in words


def wgpu_api(row: Mapping[str, Any], environments: Mapping[str, Any] | None = None) -> str | None:
    """The graphics API a wgpu row ran on: its device name's ``… via OpenGL``, else the environment record's
    (``extra.api``, or ``extra.backend`` as records before it named it), else ``Vulkan``; None for a row of
    another runtime."""
    if not _is_wgpu(row):
        return None
    device = _text(row.get("device"))
    if " via " in device:  # the row's own word first: one environment id holds runs before and after a driver
        return device.rsplit(" via ", 1)[1]
    extra = (_env_backend(environments, row).get("device") or {}).get("extra") or {}
    return str(extra.get("api") or extra.get("backend") or "Vulkan")


def is_lavapipe(row: Mapping[str, Any], environments: Mapping[str, Any] | None = None) -> bool:
    """A Vulkan (wgpu) row on mesa's lavapipe, the CPU Vulkan device (from the environment record where there
    is one, else from the device name: ``llvmpipe (LLVM …)``). A wgpu row on OpenGL (no Vulkan driver
    installed: the same llvmpipe through Mesa's OpenGL) is not: :func:`is_wgpu_on_cpu_api` names it."""
    if wgpu_api(row, environments) != "Vulkan":
        return False
    dev = _env_backend(environments, row).get("device") or {}
    if (dev.get("extra") or {}).get("lavapipe"):
        return True
    return any(w in _text(row.get("device")).lower() for w in ("llvmpipe", "lavapipe"))


def is_wgpu_on_cpu_api(row: Mapping[str, Any], environments: Mapping[str, Any] | None = None) -> str | None:
    """The API (``OpenGL``…) of a wgpu row that ran on a CPU through an API other than Vulkan; else None."""
    api = wgpu_api(row, environments)
    if api in (None, "Vulkan"):
        return None
    dev = _env_backend(environments, row).get("device") or {}
    on_cpu = dev.get("kind") == "cpu" or "llvmpipe" in _text(row.get("device")).lower()
    return api if on_cpu else None


def is_triton_interpreter(row: Mapping[str, Any]) -> bool:
    """A Triton row run by the interpreter on a CPU (``TRITON_INTERPRET``), not compiled for a GPU."""
    words = " ".join(_text(row.get(c)) for c in ("backend", "runtime", "variant")).lower()
    if "triton" not in words:
        return False
    where = " ".join(_text(row.get(c)) for c in ("backend", "device", "message", "timer_kind")).lower()
    return "interpret" in where or "cpu" in where


def caveat(text: str, detail: str = "") -> dict[str, str]:
    """A caveat as shown (a few words) and its detail (the tooltip, and the Markdown text)."""
    return {"text": text, "detail": detail or text}


def row_caveats(row: Mapping[str, Any], environments: Mapping[str, Any] | None = None,
                who: str = "") -> list[dict[str, str]]:
    """Caveats of one measured cell: noise, and CPU stand-ins (``who``: "reference " for the reference's)."""
    out = []
    if row.get("status") == Status.OK and is_noisy(dict(row)):
        out.append(caveat(f"~ {who}noisy", f"{who}noisy: {noise_text(row)}"))
    if is_pocl(row, environments):
        out.append(caveat(f"{who}PoCL: correctness, not GPU speed", POCL_NOTE))
    if is_lavapipe(row, environments):
        out.append(caveat(f"{who}lavapipe: correctness, not GPU speed", LAVAPIPE_NOTE))
    api = is_wgpu_on_cpu_api(row, environments)
    if api:
        out.append(caveat(f"{who}wgpu on {api}: correctness, not GPU speed", wgpu_cpu_note(api)))
    if is_triton_interpreter(row):
        out.append(caveat(f"{who}Triton interpreter: correctness, not GPU speed", TRITON_NOTE))
    return out


def failed_cells(rows: pd.DataFrame) -> list[str]:
    """"numba-tiled @ numba: timeout", one per failed cell (unsupported pairs are not failures)."""
    if rows.empty or "status" not in rows:
        return []
    failed = rows["status"].isin(FAILED_STATUSES)
    if not failed.any():
        return []
    bad = rows[failed]
    out = []
    for _, r in bad.iterrows():
        msg = _text(r.get("message"))
        out.append(f"{r.get('variant')} @ {r.get('backend')}: {r.get('status')}"
                   + (f" ({msg[:60]})" if msg and r.get("status") in (Status.CRASHED, Status.OOM) else ""))
    return out


def report_caveats(df: pd.DataFrame, runs: pd.DataFrame | None = None,
                   environments: Mapping[str, Any] | None = None,
                   run_names: Mapping[str, str] | None = None) -> list[str]:
    """Whole-report caveats, most serious first: unfinished runs, failed cells, stand-in devices, noise."""
    out = []
    if runs is not None and len(runs) and "status" in runs:
        for _, r in runs.iterrows():
            status = _text(r.get("status"))
            if status and status != "finished":
                name = (run_names or {}).get(_text(r.get("run_id")), _text(r.get("run_id")))
                what = "was cancelled or interrupted" if status == "interrupted" else f"has status '{status}'"
                out.append(f"Run {name} {what}: it is incomplete, and cells it never reached are missing "
                           "from every table below.")
    if "status" in df and len(df):
        counts = df["status"].value_counts()
        failed = [f"{int(counts[s])} {s}" for s in FAILED_STATUSES if s in counts]
        if failed:
            out.append("Cells that did not give a time: " + ", ".join(failed) + " (see “Cells that did not "
                       "pass”); a kernel's fastest variant may be among them.")
        # the stand-in checks read a few columns: each distinct combination once (a dict per row of every
        # column took gigabytes at a million rows)
        ok = df.loc[df["status"] == Status.OK, [c for c in (*STAND_IN_COLUMNS, "noisy", "rel_spread") if c in df]]
        rows = records(ok[[c for c in STAND_IN_COLUMNS if c in ok]].drop_duplicates())
        pocl = sorted({str(r["backend"]) for r in rows if is_pocl(r, environments)})
        if pocl:
            out.append(f"{', '.join(pocl)}: {POCL_NOTE}.")
        lavapipe = sorted({str(r["backend"]) for r in rows if is_lavapipe(r, environments)})
        if lavapipe:
            out.append(f"{', '.join(lavapipe)}: {LAVAPIPE_NOTE}.")
        triton = sorted({str(r["backend"]) for r in rows if is_triton_interpreter(r)})
        if triton:
            out.append(f"{', '.join(triton)}: {TRITON_NOTE}.")
        n_noisy = int(noisy_mask(ok["noisy"] if "noisy" in ok else None,
                                 ok["rel_spread"] if "rel_spread" in ok else None).sum())
        if n_noisy:
            out.append(f"{n_noisy} of {len(ok)} measured cells are noisy (marked ~): their times may not repeat, "
                       "and an “inconclusive” verdict is often why.")
        twins = aa_summary(df)  # the run's own A/A twins: how small a difference its verdicts could see
        if twins:
            out.append(twins + ".")
    return out
