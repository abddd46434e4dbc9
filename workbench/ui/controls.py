"""What to run: backends, kernel, variants, sizes, dtype, modes, cache state, budget.

Each control is a small class owning its widgets and answering one question
(``selected``, ``sizes()`` ...). ipywidgets has no per-option disabling, so
backends and variants are columns of checkboxes: an unavailable backend is a
disabled checkbox whose label says why.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as w

from workbench.backends.base import KNOWN_DTYPES, Backend, Capabilities, Probe
from workbench.catalog.spec import MODES, KernelSpec, Variant


def css_name(name: str) -> str:
    """A backend or variant name as a CSS class suffix."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", name)


def _label(text: str, width: str = "110px") -> w.HTML:
    return w.HTML(f"<b>{html.escape(text)}</b>", layout=w.Layout(width=width))


class BackendPicker:
    """Every available backend as a checkbox, its device named beside it (CPUs said to be CPUs, whatever
    runtime emulates a device on them); the unavailable ones folded into one line that opens to their
    reasons, so a machine without GPUs does not push the kernel selector below the fold."""

    def __init__(self, backends: dict[str, Backend], default: Iterable[str] = ()) -> None:
        self.backends = backends
        #: Every known backend; unavailable ones are disabled and unticked (shown only in the folded line).
        self.checkboxes: dict[str, w.Checkbox] = {}
        rows = []
        default = set(default)
        probes = {name: _safe_probe(b) for name, b in backends.items()}
        order = sorted(backends, key=lambda n: (not probes[n].available, backends[n].priority, n))
        missing: list[tuple[str, str]] = []
        for name in order:
            backend, probe = backends[name], probes[name]
            short, full = device_label(backend) if probe.available else ("", f"unavailable: {probe.reason}")
            cb = w.Checkbox(value=probe.available and name in default, description=name,
                            disabled=not probe.available, indent=False, tooltip=full,
                            layout=w.Layout(width="130px"))
            cb.add_class(f"wb-backend-{css_name(name)}").add_class("wb-backend")
            cb.add_class("wb-available" if probe.available else "wb-unavailable")
            self.checkboxes[name] = cb
            if not probe.available:
                missing.append((name, str(probe.reason)))
                continue
            # One line, cut with an ellipsis; the device's whole name is in the hover title and the tooltip.
            reason = w.HTML(f'<span title="{html.escape(full, quote=True)}" style="color:#555;font-size:12px;'
                            "white-space:nowrap;overflow:hidden;text-overflow:ellipsis;display:inline-block;"
                            f'max-width:210px">{html.escape(short)}</span>').add_class("wb-backend-reason")
            rows.append(w.HBox([cb, reason]))
        if missing:
            rows.append(w.HTML(_unavailable_html(missing)).add_class("wb-backends-unavailable"))
        self.widget = w.VBox([_label("Backends"), *rows]).add_class("wb-backends")

    @property
    def selected(self) -> list[str]:
        return [n for n, cb in self.checkboxes.items() if cb.value and not cb.disabled]

    def runtimes(self) -> set[str]:
        return {self.backends[n].runtime for n in self.selected}

    def dtypes(self) -> list[str]:
        """Dtypes every selected backend supports (all known ones when none is selected)."""
        sets = [set(_safe_caps(self.backends[n]).dtypes) for n in self.selected]
        common = set.intersection(*sets) if sets else set(KNOWN_DTYPES)
        return [d for d in KNOWN_DTYPES if d in common]

    def observe(self, fn: Callable[[Any], None]) -> None:
        for cb in self.checkboxes.values():
            cb.observe(fn, names="value")


def _safe_probe(backend: Any) -> Any:
    try:
        return backend.probe()
    except Exception as exc:  # noqa: BLE001 - probe must not raise, but a buggy adapter must not hide the others
        return Probe.missing(f"probe failed: {exc}")


def _safe_caps(backend: Any) -> Any:
    try:
        return backend.capabilities()
    except Exception:  # noqa: BLE001 - a picker shows what it can; an adapter bug must not hide it
        return Capabilities()


#: Runtimes that stand in for a device on the CPU: their results are correctness results, not device speed.
#: Searched in order: wgpu without a Vulkan driver names Mesa's OpenGL llvmpipe "... via OpenGL" (not lavapipe).
CPU_STAND_INS = (("via opengl", "OpenGL llvmpipe"), ("llvmpipe", "lavapipe"), ("pocl", "PoCL"),
                 ("portable computing language", "PoCL"), ("interpreter", "Triton interpreter"))


def device_label(backend: Any) -> tuple[str, str]:
    """(short label, full description) of a backend's device: a CPU is ``CPU``, or ``CPU (PoCL)`` /
    ``CPU (lavapipe)`` / ``CPU (Triton interpreter)`` where a runtime emulates a device on it (an OpenCL
    or Vulkan device name such as ``pthread-skylake-avx512-...`` or ``llvmpipe ...`` does not say CPU)."""
    try:
        info = backend.device_info()
    except Exception:  # noqa: BLE001 - the device name is decoration
        return "", ""
    if info.kind != "cpu":
        return info.name, info.name
    text = " ".join([info.name, info.vendor, *map(str, info.versions.values()), *map(str, info.extra.values())])
    stand_in = next((label for key, label in CPU_STAND_INS if key in text.lower()), None)
    if stand_in is None:
        return "CPU", f"CPU: {info.name}"
    return f"CPU ({stand_in})", f"CPU: {info.name} through {stand_in} (correctness, not GPU speed)"


def _unavailable_html(missing: list[tuple[str, str]]) -> str:
    """One line naming the unavailable backends; opened, each one's reason (how to install it)."""
    items = "".join(f"<li><b>{html.escape(n)}</b>: {html.escape(r)}</li>" for n, r in missing)
    return (f'<details style="font-size:12px;color:#777;margin:2px 0"><summary style="cursor:pointer;'
            f'white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:340px">{len(missing)} '
            f"unavailable: {html.escape(', '.join(n for n, _ in missing))}</summary>"
            f'<ul style="margin:2px 0 2px 16px;padding:0;white-space:normal">{items}</ul></details>')


class KernelPicker:
    """A kernel dropdown and, below it, the kernel's variants that run on the selected backends."""

    def __init__(self, specs: dict[str, KernelSpec], variants_of: Callable[[str], dict[str, Variant]],
                 default: str | None = None) -> None:
        self.specs = specs
        self.variants_of = variants_of
        names = sorted(specs)
        self.kernel = w.Dropdown(options=names, value=default if default in specs else (names[0] if names else None),
                                 description="Kernel", layout=w.Layout(width="320px")).add_class("wb-kernel")
        self.about = w.HTML().add_class("wb-kernel-about")
        self.box = w.VBox().add_class("wb-variants")
        self.checkboxes: dict[str, w.Checkbox] = {}
        self._listeners: list[Callable[[Any], None]] = []
        self.widget = w.VBox([self.kernel, self.about, _label("Variants"), self.box])

    def refresh(self, runtimes: set[str], modes: Iterable[str] | None = None) -> None:
        """Show the variants of the current kernel that run on one of ``runtimes``.

        ``modes`` (the mode boxes) decide which variants can run: a variant of an unticked mode (a
        torch.compile variant while "compiled" is off) is shown unticked and disabled, so the mode box is
        the one control deciding whether it runs; ticking the mode enables and ticks it again.
        """
        name = self.kernel.value
        spec = self.specs.get(name)
        modes = set(MODES if modes is None else modes)
        self.about.value = (f'<span style="font-size:12px;color:#555">{html.escape(spec.description)} '
                            f"({html.escape(spec.bound)})</span>" if spec else "")
        # Same kernel: keep the user's ticks and tick variants that just appeared; new kernel: tick all.
        same_kernel = name == getattr(self, "_shown_kernel", None)
        previous = {n: (cb.value, cb.disabled) for n, cb in self.checkboxes.items()} if same_kernel else {}
        self._shown_kernel = name
        vs = self.variants_of(name) if name else {}
        shown = {n: v for n, v in sorted(vs.items()) if set(v.runtimes) & runtimes}
        self.checkboxes = {}
        rows = []
        for vname, v in shown.items():
            off = v.mode not in modes
            was_ticked, was_disabled = previous.get(vname, (True, True))
            tags = ", ".join([v.mode, *(["library"] if v.library else []), "/".join(v.runtimes)])
            if off:
                tags += f" (tick mode {v.mode!r} to run it)"
            cb = w.Checkbox(value=not off and (was_ticked or was_disabled), description=vname, indent=False,
                            disabled=off, tooltip=v.description or vname, layout=w.Layout(width="150px"))
            cb.add_class(f"wb-variant-{css_name(vname)}").add_class("wb-variant")
            cb.add_class(f"wb-mode-{v.mode}-variant")
            for fn in self._listeners:
                cb.observe(fn, names="value")
            self.checkboxes[vname] = cb
            color = "#999" if off else "#555"
            rows.append(w.HBox([cb, w.HTML(f'<span style="font-size:12px;color:{color}">{html.escape(tags)}'
                                           "</span>")]))
        if not rows:
            rows = [w.HTML('<i style="color:#999">no variant of this kernel runs on the selected backends</i>')]
        self.box.children = rows

    @property
    def selected_variants(self) -> list[str]:
        return [n for n, cb in self.checkboxes.items() if cb.value and not cb.disabled]

    @property
    def runnable_variants(self) -> list[str]:
        """Variants shown and enabled (their mode is ticked), ticked or not."""
        return [n for n, cb in self.checkboxes.items() if not cb.disabled]

    def observe_variants(self, fn: Callable[[Any], None]) -> None:
        self._listeners.append(fn)
        for cb in self.checkboxes.values():
            cb.observe(fn, names="value")


class SizeControls:
    """Sizes from one of the spec's named lists, or a geometric range on each axis."""

    def __init__(self) -> None:
        self.source = w.ToggleButtons(options=[("size list", "list"), ("range", "range")], value="list",
                                      style={"button_width": "80px"}).add_class("wb-size-source")
        self.suite = w.Dropdown(description="List", layout=w.Layout(width="220px")).add_class("wb-size-list")
        self.preview = w.HTML().add_class("wb-size-preview")
        self.steps = w.BoundedIntText(value=4, min=1, max=64, description="Steps",
                                      layout=w.Layout(width="160px")).add_class("wb-size-steps")
        self.axes_box = w.VBox()
        self.axis_min: dict[str, w.BoundedIntText] = {}
        self.axis_max: dict[str, w.BoundedIntText] = {}
        self.range_box = w.VBox([self.axes_box, self.steps])
        self.spec: KernelSpec | None = None
        self.widget = w.VBox([_label("Sizes"), self.source, self.suite, self.range_box, self.preview])
        self.source.observe(lambda _: self._update(), names="value")
        self.suite.observe(lambda _: self._update(), names="value")
        self.steps.observe(lambda _: self._update(), names="value")

    def set_kernel(self, spec: KernelSpec | None) -> None:
        self.spec = spec
        lists = list(spec.sizes) if spec else []
        # The quick list: sizes worth measuring. "verify" holds correctness edge cases (rows=1 cols=1).
        preferred = "quick" if "quick" in lists else next((s for s in lists if s != "verify"),
                                                          lists[0] if lists else None)
        self.suite.options = lists
        self.suite.value = preferred
        self.axis_min, self.axis_max, rows = {}, {}, []
        # The range starts on the quick list's span (the verify list holds edge cases such as rows=1 cols=1).
        default_list = spec.sizes.get("quick") or spec.sizes.get(preferred or "", []) if spec else []
        for axis in spec.axes if spec else ():
            values = [p[axis] for p in default_list if axis in p] or [1024]
            lo = w.BoundedIntText(value=min(values), min=1, max=2**40, description=f"{axis} min",
                                  layout=w.Layout(width="190px")).add_class(f"wb-size-min-{css_name(axis)}")
            hi = w.BoundedIntText(value=max(values), min=1, max=2**40, description="max",
                                  layout=w.Layout(width="160px"),
                                  style={"description_width": "40px"}).add_class(f"wb-size-max-{css_name(axis)}")
            lo.observe(lambda _: self._update(), names="value")
            hi.observe(lambda _: self._update(), names="value")
            self.axis_min[axis], self.axis_max[axis] = lo, hi
            rows.append(w.HBox([lo, hi]))
        self.axes_box.children = rows
        self._update()

    def sizes(self) -> list[dict[str, int]]:
        """The list of parameter dicts to sweep."""
        if self.spec is None:
            return []
        if self.source.value == "list":
            return [dict(p) for p in self.spec.sizes.get(self.suite.value, [])]
        return geometric_sizes({a: (self.axis_min[a].value, self.axis_max[a].value) for a in self.spec.axes},
                               self.steps.value)

    def _update(self) -> None:
        use_list = self.source.value == "list"
        self.suite.layout.display = None if use_list else "none"
        self.range_box.layout.display = "none" if use_list else None
        sizes = self.sizes()
        text = "; ".join(" ".join(f"{k}={v}" for k, v in p.items()) for p in sizes[:8])
        more = f" … ({len(sizes)} sizes)" if len(sizes) > 8 else f" ({len(sizes)} sizes)"
        self.preview.value = f'<span style="font-size:12px;color:#555">{html.escape(text)}{more}</span>'


def geometric_sizes(ranges: dict[str, tuple[int, int]], steps: int) -> list[dict[str, int]]:
    """``steps`` sizes from each axis' min to max, spaced geometrically, axes moving together."""
    out: list[dict[str, int]] = []
    for i in range(max(steps, 1)):
        t = i / (steps - 1) if steps > 1 else 1.0
        p = {}
        for axis, (lo, hi) in ranges.items():
            lo, hi = max(int(lo), 1), max(int(hi), 1)
            p[axis] = max(1, int(round(math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo))))))
        if p not in out:
            out.append(p)
    return out


class RunOptions:
    """Dtype, modes, cache state and time budget."""

    def __init__(self) -> None:
        self.dtype = w.Dropdown(options=["float32"], value="float32", description="Dtype",
                                layout=w.Layout(width="220px")).add_class("wb-dtype")
        # Compiled forms (torch.compile) spend seconds to minutes compiling on their first call: opt in.
        self.modes = {m: w.Checkbox(value=m != "compiled", description=m, indent=False,
                                    layout=w.Layout(width="90px")).add_class(f"wb-mode-{m}") for m in MODES}
        self.cache = w.ToggleButtons(options=["hot", "cold"], value="hot", description="Cache",
                                     style={"button_width": "60px"}).add_class("wb-cache")
        self.budget = w.BoundedFloatText(value=0.5, min=0.01, max=600.0, step=0.1, description="Budget s",
                                         tooltip="time budget per cell (warm-up + repeats)",
                                         layout=w.Layout(width="200px")).add_class("wb-budget")
        self.widget = w.VBox([self.dtype, w.HBox([_label("Modes", "60px"), *self.modes.values()]),
                              self.cache, self.budget])

    def set_dtypes(self, dtypes: list[str]) -> None:
        current = self.dtype.value
        options = dtypes or ["float32"]
        self.dtype.options = options
        self.dtype.value = current if current in options else ("float32" if "float32" in options else options[0])

    @property
    def selected_modes(self) -> tuple[str, ...]:
        return tuple(m for m, cb in self.modes.items() if cb.value)
