"""Turn a portable ``.cu`` file into the exact text a compiler sees.

The rendered text is: the build-time ``#define``s, the target's prelude, then
the source with its ``#include "..."`` lines expanded in place. ``#line``
directives keep every compiler's diagnostics pointing at the real file and
line (the prelude would otherwise shift them), on CUDA, HIP and OpenCL alike.
The same :func:`render` feeds the runtime builders and the compile check, so
the check compiles exactly what runs.

Includes are textual and self-contained (no ``-I`` flags to differ between
NVRTC, hipRTC, nvcc and OpenCL): a quoted include is looked up beside the
including file, then in :data:`INCLUDE_DIR` (``workbench/portable/include``,
shared helpers such as block reductions). Angle-bracket includes are left to
the compiler. Included files need include guards if they may be reached twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from workbench.core.regular_files import read_regular_text
from workbench.portable.prelude import prelude

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_KERNEL_DECL = re.compile(r"\bKERNEL\s+void\s+([A-Za-z_]\w*)\s*\(")

#: A build-time constant's value, written as ``#define NAME value``: a size, or a literal's text (``repr(EPS)``).
DefineValue = int | float | str
#: Build-time constants by name.
Defines = dict[str, DefineValue]


def _quote(path: Path | str) -> str:
    return str(path).replace("\\", "\\\\").replace('"', '\\"')


def expand_includes(path: Path, _stack: tuple[Path, ...] = ()) -> str:
    """``path``'s text with quoted includes expanded, framed by ``#line`` directives."""
    path = path.resolve()
    if path in _stack:
        raise ValueError(f"{path}: include cycle through {' -> '.join(map(str, _stack))}")
    out = [f'#line 1 "{_quote(path)}"']
    for lineno, line in enumerate(read_regular_text(path, what="kernel source").splitlines(), start=1):
        m = _INCLUDE.match(line)
        if not m:
            out.append(line)
            continue
        target = next((c for c in (path.parent / m.group(1), INCLUDE_DIR / m.group(1)) if c.is_file()), None)
        if target is None:
            raise FileNotFoundError(f'{path}:{lineno}: include "{m.group(1)}" not found beside the file '
                                    f"or in {INCLUDE_DIR}")
        out.append(expand_includes(target, _stack + (path,)))
        out.append(f'#line {lineno + 1} "{_quote(path)}"')
    return "\n".join(out) + "\n"


def define_block(defines: Mapping[str, DefineValue]) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in sorted(defines.items()))


def render(path: str | Path, target: str, dtype: str, defines: Mapping[str, DefineValue] | None = None) -> str:
    """The full compilation unit for ``path`` on ``target`` in ``dtype``."""
    return (f'#line 1 "<workbench defines>"\n{define_block(defines or {})}'
            f'#line 1 "<workbench prelude {target}>"\n{prelude(target, dtype)}'
            + expand_includes(Path(path)))


def kernel_names(text: str) -> list[str]:
    """Entry points declared with ``KERNEL void name(`` in a (rendered or raw) source text."""
    return _KERNEL_DECL.findall(text)
