"""What code a run measured: the commit and dirty state of each catalog folder's git repository.

A history is only useful when a change can be tied to the code that made it, so every run records, for each
catalog folder it loaded (the built-in one and any user catalog), the repository's commit and whether the
folder had changes not committed. Outside a git repository, or without ``git``, the entry says why instead:
a run never fails for want of it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict

#: Seconds one ``git`` call may take: a run does not wait on a slow network file system for its provenance.
GIT_TIMEOUT_S = 5.0


class CodeCommit(TypedDict, total=False):
    """One catalog folder's code: ``commit`` and ``dirty`` inside a repository, ``reason`` outside one."""

    catalog: str
    repo: str
    commit: str
    dirty: bool
    reason: str


def _git(folder: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                         timeout=GIT_TIMEOUT_S, check=False)
    if out.returncode != 0:
        raise RuntimeError((out.stderr.strip().splitlines() or ["git failed"])[-1])
    return out.stdout.strip()


def folder_commit(folder: str | Path, paths: Iterable[str | Path] | None = None) -> CodeCommit:
    """The commit of ``folder``'s repository and whether ``paths`` (default: the folder) have changes not
    committed (tracked files changed, or files not yet added); ``reason`` instead when that cannot be said."""
    path = Path(folder).resolve()
    entry = CodeCommit(catalog=str(path))
    if shutil.which("git") is None:
        return CodeCommit(catalog=str(path), reason="git is not installed")
    if not path.is_dir():
        return CodeCommit(catalog=str(path), reason="the folder does not exist")
    try:
        top, head = _git(path, "rev-parse", "--show-toplevel", "HEAD").splitlines()[:2]
        entry.update(repo=top, commit=head)
        entry["dirty"] = bool(_git(path, "status", "--porcelain", "--", *[str(p) for p in (paths or [path])]))
    except subprocess.TimeoutExpired:
        return CodeCommit(catalog=str(path), reason=f"git took longer than {GIT_TIMEOUT_S:g} s")
    except (OSError, RuntimeError, ValueError) as exc:
        text = str(exc)
        reason = "not in a git repository" if "not a git repository" in text.lower() else f"git: {text[:200]}"
        return CodeCommit(catalog=str(path), reason=reason)
    return entry


def code_commits(kernel_folders: Iterable[str | Path]) -> list[CodeCommit]:
    """:func:`folder_commit` of each catalog (the folder holding kernel folders), dirty when one of its
    loaded kernel folders is: two ``git`` calls per catalog, not per kernel."""
    catalogs: dict[Path, list[Path]] = {}
    for f in kernel_folders:
        folder = Path(f).resolve()
        catalogs.setdefault(folder.parent, []).append(folder)
    return [folder_commit(root, kernels) for root, kernels in catalogs.items()]


def commit_label(commits: Iterable[CodeCommit]) -> str:
    """Short text of a run's commits: ``3f9a1c2`` (``3f9a1c2+`` when dirty), one per repository, or ""."""
    out: list[str] = []
    for c in commits:
        if c.get("commit"):
            text = str(c["commit"])[:10] + ("+" if c.get("dirty") else "")
            if text not in out:
                out.append(text)
    return " ".join(out)
