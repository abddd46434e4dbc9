"""An ad-hoc comparison turned into a catalog kernel folder: ``spec.py`` plus one variants file.

What a comparison cannot know is left for the user and marked ``TODO``: the float64 reference (the
comparison checked against one of the callables, in the run dtype), the tolerances (those of the
comparison, not an analysis of the algorithm), output shapes, FLOPs and bytes where they were not given.
Until ``reference()`` is written it raises, so ``workbench verify`` reports every variant of the kernel
as an error saying so rather than passing it.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any

from workbench.adhoc.comparison import Comparison
from workbench.adhoc.inputs import takes_rng
from workbench.adhoc.source import Source, identifier, source_of

#: Sizes written for ``verify``: small and odd, as the catalog's are.
VERIFY_SIZES = (1, 7, 33, 1000)


def folder_name(name: str) -> str:
    """A catalog folder (= kernel) name from a comparison's name."""
    return re.sub(r"\W+", "_", name).strip("_") or "promoted"


def _access(kind: str, key: Any) -> str:
    return "value" if kind == "single" else f"value[{key!r}]"


def _block(sources: list[Source]) -> tuple[list[str], list[str], list[str]]:
    imports: list[str] = []
    defs: list[str] = []
    todos: list[str] = []
    for s in sources:
        imports += [i for i in s.imports if i not in imports]
        if s.definition and s.definition not in defs:
            defs.append(s.definition)
        todos += [t for t in s.todos if t not in todos]
    return imports, defs, todos


def _todo_lines(todos: list[str]) -> str:
    return "".join(f"# TODO: {t}\n" for t in todos)


def _docstring_text(c: Comparison, kernel: str, date: str) -> str:
    """The promoted ``spec.py``'s docstring: where it came from and the TODOs to fill in before trusting it."""
    return f'''"""{kernel}: promoted from workbench.quick() on {date} ({", ".join(c.callables)}).

Fill in every TODO before trusting `workbench verify --kernel {kernel}`:
1. reference(): the float64 truth. Until it is written every check of this kernel fails, saying so
   (the ad-hoc comparison checked against {c.reference_label!r} in {c.setup.dtype}, not against float64);
2. TOLERANCES: from the algorithm's known error, not the comparison's defaults;
3. output_shapes, and flops / bytes_moved where they say TODO.
"""'''


def _constants_text(c: Comparison, setup_expr: str, consts: dict[str, str]) -> str:
    """``constants(n)`` of the promoted spec: the setup values passed unchanged, by position or name."""
    return f'''

def constants(n):
    """The arguments of setup(n) the comparison passed unchanged (not rotated inputs), by position or name."""
    with seeded(n):
        value = {setup_expr}(n{", np.random.default_rng(n)" if _takes_rng(c) else ""})
    return {{{", ".join(f"{k!r}: {v}" for k, v in consts.items())}}}
'''


#: ``spec.py`` of a promoted kernel, filled by :func:`spec_text`.
_SPEC_TEMPLATE = '''{docstring}

from __future__ import annotations

import numpy as np

from workbench.adhoc.inputs import host_array, seeded
from workbench.catalog import kernel_here
from workbench.catalog.spec import KernelSpec
{imports}

{todos}{defs}

# TODO: tolerances used by the ad-hoc comparison ({dtype} against {reference_label!r}); set them from
# the algorithm's error against the float64 reference.
TOLERANCES = {tolerances!r}


def make_inputs(params, rng):
    """float64 inputs by name: the arrays of setup(n), drawn under a seeded random state."""
    with seeded(int(rng.integers(2**32))):
        value = {setup_call}
    return {{{arrays}}}
{const_fn}

def reference(inputs, params):
    """TODO: the float64 reference: outputs by name ("out", or "out0", "out1", ... for a tuple) computed in
    float64 from ``inputs``."""
    raise NotImplementedError("TODO: kernel {kernel!r} has no float64 reference yet: write reference() in "
                              + __file__)


def spec_shape(a):
    return tuple(np.shape(a))


def output_shapes(params):
    """TODO: assumed to be one output ("out") of the first input's shape: correct it."""
    return {{"out": {shape}}}


SPEC = kernel_here(__file__).register(
    KernelSpec, description="TODO: one line for tables (promoted from an ad-hoc comparison)", axes=("n",),
    make_inputs=make_inputs, reference=reference, output_shapes=output_shapes,
    flops={flops}
    bytes_moved={nbytes}
    sizes={{"verify": {verify!r},  # TODO: small and odd sizes the check runs on
           "quick": {quick!r}}},
    tolerances=TOLERANCES)
'''


def spec_text(c: Comparison, kernel: str) -> str:
    """``spec.py`` of the promoted kernel."""
    layout = c.setup.layouts[c.sizes[0]]
    setup_src = source_of(c.setup.setup, "setup")
    per_size = [source_of(f, identifier(w, "")) for f, w in ((c.flops, "flops_of_n"), (c.bytes, "bytes_of_n")) if f]
    imports, defs, todos = _block([setup_src, *per_size])
    imports = [i for i in imports if i != "import numpy as np"]  # the header imports it
    setup_call = (f"{setup_src.expr}(params['n'], rng)" if _takes_rng(c) else
                  f"{setup_src.expr}(params['n'])")
    arrays = ", ".join(f"{s.name!r}: host_array({_access(layout.kind, s.key)}).astype(np.float64)"
                       for s in layout.slots if s.name is not None)
    consts = {s.key: _access(layout.kind, s.key) for s in layout.slots if s.name is None}
    first = next((s.name for s in layout.slots if s.name is not None), None)
    flops = (f"lambda p: float({per_size[0].expr}(p['n']))," if c.flops else
             "lambda p: 0.0,  # TODO: floating-point operations per call")
    nbytes = (f"lambda p, itemsize: float({per_size[-1].expr}(p['n']))," if c.bytes else
              "lambda p, itemsize: 0.0,  # TODO: compulsory bytes per call (every input read, output written)")
    shape = (f"spec_shape(make_inputs(params, np.random.default_rng(0))[{first!r}])" if first else "(1,)")
    date = datetime.date.today().isoformat()
    return _SPEC_TEMPLATE.format(
        docstring=_docstring_text(c, kernel, date), imports="\n".join(imports), todos=_todo_lines(todos),
        defs="\n".join(defs), dtype=c.setup.dtype, reference_label=c.reference_label, tolerances=c.tolerances,
        setup_call=setup_call, arrays=arrays, const_fn=_constants_text(c, setup_src.expr, consts) if consts else "",
        kernel=kernel, shape=shape, flops=flops, nbytes=nbytes, verify=[{"n": n} for n in VERIFY_SIZES],
        quick=[{"n": n} for n in c.sizes]).replace("\n\n\n\n", "\n\n\n")


def _takes_rng(c: Comparison) -> bool:
    return takes_rng(c.setup.setup)


def variants_text(c: Comparison, kernel: str) -> str:
    """``<runtime>_variants.py``: each callable as a variant, called as the comparison called it."""
    layout = c.setup.layouts[c.sizes[0]]
    sources = {label: source_of(fn, identifier(label)) for label, fn in c.callables.items()}
    imports, defs, todos = _block(list(sources.values()))
    has_consts = any(s.name is None for s in layout.slots)
    args = [f"inputs[{s.name!r}]" if s.name is not None else f"const[{s.key!r}]" for s in layout.slots]
    keys = [s.key for s in layout.slots]
    call_args = (", ".join(f"{k}={a}" for k, a in zip(keys, args, strict=True)) if layout.kind == "dict"
                 else ", ".join(args))
    blocks = []
    for i, (label, src) in enumerate(sources.items()):
        const = '    const = constants(ctx.params["n"])\n' if has_consts else ""
        blocks.append(f'''
@op.variant({label!r}, ({c.setup.runtime!r},){", library=True" if i == 0 else ""},
            description="workbench.quick callable {label}")
def {identifier(label, "_build_")}(ctx):
{const}    return lambda inputs, outputs: {src.expr}({call_args})
''')
    return f'''"""Variants of {kernel}, promoted from workbench.quick(): each callable as it was compared, on the
{c.setup.runtime} runtime (the comparison ran on backend {c.setup.backend!r})."""

from __future__ import annotations

from workbench.catalog import kernel_here
{chr(10).join(imports)}
{"from .spec import constants" + chr(10) if has_consts else ""}
{_todo_lines(todos)}{(chr(10) + chr(10)).join(defs)}

op = kernel_here(__file__)
{"".join(blocks)}'''


def promote(c: Comparison, path: str | os.PathLike | None = None, name: str | None = None) -> Path | str:
    """Write the folder ``path/<name>/`` (returns its Path), or return both files' text when ``path`` is None.
    An existing folder is never overwritten."""
    kernel = folder_name(name or c.name)
    files = {"spec.py": spec_text(c, kernel), f"{c.setup.runtime}_variants.py": variants_text(c, kernel)}
    if path is None:
        return "\n".join(f"# ---- {kernel}/{f} ----\n{text}" for f, text in files.items())
    folder = Path(path) / kernel
    if folder.exists():
        raise FileExistsError(f"{folder} exists already; pass another path or name=")
    folder.mkdir(parents=True)
    for f, text in files.items():
        (folder / f).write_text(text)
    return folder
