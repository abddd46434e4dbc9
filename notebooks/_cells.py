"""The three kinds of cell a tutorial source (``_nb_<stem>.py``) is written in; ``_build.py`` turns its
``CELLS`` into ``<stem>.ipynb``.

A source is plain Python holding the cells' text, so a tutorial lives in one file that a diff can read;
the notebook is generated, never edited by hand.
"""

from __future__ import annotations

import re

from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell

#: Heads every ``parameters`` cell. The defaults are the quick run (≤ 2 min on a busy 2-core machine); a larger
#: measurement is a parameter the reader sets (``FULL = True``); the tests override them (papermill style).
PARAMS_DOC = "# Parameters (papermill style): a run may override any of these"
#: Said only where the cell has a SMALL (the dashboard has none).
SMALL_DOC = "; the tests set SMALL = True"


def md(text: str) -> NotebookNode:
    """A Markdown cell (surrounding blank lines dropped, so sources can open and close on their own line)."""
    return new_markdown_cell(text.strip("\n"))


def code(text: str, *tags: str) -> NotebookNode:
    """A code cell; ``"figure"`` among ``tags`` makes the notebook tests require that it draws one."""
    cell = new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def params(text: str) -> NotebookNode:
    """The notebook's one ``parameters`` cell: the names a run may override (papermill, the tests)."""
    small = SMALL_DOC if re.search(r"^SMALL\s*=", text, re.MULTILINE) else ""
    return code(f"{PARAMS_DOC}{small}.\n" + text.strip("\n"), "parameters")
