"""A run named the way a user names it: its id, ``latest``, its name (``bench --name``), or a unique prefix of
either, so ``workbench compare before after`` works for runs made with ``--name before`` and ``--name after``.

Why one function: every command that takes a run (report, compare, export, store drop, bench --resume) reads
it here, so each accepts the same words and an ambiguous one is refused the same way, listing the runs it
could mean with their ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: How many candidates an ambiguous or unknown run lists.
LISTED = 12


def run_table(store_or_df: Any) -> list[tuple[str, str | None]]:
    """(run id, name) of every run, oldest first, from a store or a frame of rows / runs."""
    if hasattr(store_or_df, "_query"):
        rows = store_or_df._query("SELECT run_id, name FROM runs ORDER BY created_at, run_id")
        return [(str(r["run_id"]), r["name"]) for r in rows]
    df = store_or_df
    if "run_id" not in getattr(df, "columns", ()):
        return []
    names = df["run_name"] if "run_name" in df.columns else (df["name"] if "name" in df.columns else None)
    pairs = zip(df["run_id"], names if names is not None else [None] * len(df), strict=True)
    return list(dict.fromkeys((str(i), n if isinstance(n, str) else None) for i, n in pairs))


def _listed(runs: Sequence[tuple[str, str | None]]) -> str:
    shown = [f"{i} ({n})" if n else i for i, n in runs[-LISTED:]]
    return ", ".join(shown) + (f" and {len(runs) - LISTED} older" if len(runs) > LISTED else "") or "(none)"


def resolve_run(store_or_df: Any, text: str, *, latest: str | None = None) -> str:
    """The id of the run ``text`` names: an id; ``latest`` (``latest``: its id, from the caller's meaning of
    it); a run's name; else a unique prefix of an id or a name. Unknown or ambiguous: ValueError listing the
    runs (with their ids) it could mean."""
    runs = run_table(store_or_df)
    ids = [i for i, _ in runs]
    if text in ids:
        return text
    if text == "latest":
        if latest is None and not ids:
            raise ValueError("no runs recorded yet, so there is no 'latest' run")
        return latest if latest is not None else ids[-1]
    for found in ([r for r in runs if r[1] == text], [r for r in runs if r[0].startswith(text)
                                                      or (r[1] or "").startswith(text)]):
        if len(found) == 1:
            return found[0][0]
        if len(found) > 1:
            raise ValueError(f"run {text!r} is ambiguous: it names {len(found)} runs: {_listed(found)}; give a "
                             "run id")
    raise ValueError(f"unknown run id {text!r}: no run has that id, name or prefix; runs (id and name): "
                     f"{_listed(runs)} (or 'latest')")
