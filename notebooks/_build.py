"""Generate the tutorial notebooks from their sources, without outputs: ``python notebooks/_build.py``.

Each notebook ``<stem>.ipynb`` is written from ``_nb_<stem>.py``, a module whose ``CELLS`` list is made with
:mod:`_cells` (``md``, ``code``, ``params``). Every notebook has one cell tagged ``parameters`` (papermill
style) whose knobs the tests override, and tags the cells that must draw a figure with ``figure`` so the
tests can check they did. ``--check`` compares what would be written with the committed notebooks.
"""

from __future__ import annotations

import argparse
import filecmp
import runpy
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_notebook

HERE = Path(__file__).resolve().parent
PREFIX = "_nb_"


def sources(folder: Path = HERE) -> dict[str, Path]:
    """Notebook stem -> its source file, in name order."""
    return {f.stem[len(PREFIX):]: f for f in sorted(folder.glob(f"{PREFIX}*.py"))}


def notebook(stem: str, source: Path) -> nbformat.NotebookNode:
    """The notebook ``source`` defines, with stable cell ids (a rebuild changes only what its source changed)."""
    cells = runpy.run_path(str(source))["CELLS"]
    nb = new_notebook(cells=cells)
    for i, cell in enumerate(nb.cells):
        cell.id = f"{stem.replace('_', '-')}-{i:02d}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def build(out: Path = HERE) -> list[Path]:
    """Write every notebook into ``out``; returns the paths written."""
    written = []
    for stem, source in sources().items():
        path = out / f"{stem}.ipynb"
        nbformat.write(notebook(stem, source), path)
        written.append(path)
    return written


def stale() -> list[str]:
    """Notebooks whose committed file differs from what their source builds (or that are missing)."""
    with tempfile.TemporaryDirectory() as tmp:
        return [p.name for p in build(Path(tmp))
                if not (HERE / p.name).exists() or not filecmp.cmp(p, HERE / p.name, shallow=False)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the tutorial notebooks from notebooks/_nb_*.py.")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write into (default: notebooks/)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook is stale")
    args = parser.parse_args(argv)
    if args.check:
        names = stale()
        print("\n".join(f"{n} differs from its source: run `python notebooks/_build.py`" for n in names)
              or "every notebook matches its source")
        return 1 if names else 0
    if not args.out.is_dir():
        parser.error(f"--out {args.out}: not a folder")
    for p in build(args.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
