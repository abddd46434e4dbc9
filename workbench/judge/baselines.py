"""Which row each row of a run is judged against: its baseline, by default the kernel's library variant on
the row's own backend, as the rows themselves say (never this machine's catalog, so an imported run is judged
by what it recorded).

Choosing a pair is apart from judging it (:mod:`workbench.judge.compare`): the choice is the same whichever
way the pair is then judged (one at a time, or many at once by :mod:`workbench.judge.many`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.core.status import Status

if TYPE_CHECKING:  # pandas loads only for tables: a sweep pairs its rows on plain rows
    import pandas as pd


def library_variants(df: pd.DataFrame, kernel: str) -> list[str]:
    """Variants of ``kernel`` that its rows mark as the library baseline (column ``library``).

    Judged from the rows alone, never from this machine's catalog, so an imported
    run is judged by what it recorded. Rows stored before the column existed say
    nothing (None); then, as for a kernel without a library variant, the kernel's
    first variant in the rows stands in.
    """
    import pandas as pd

    rows = df.loc[df["kernel"] == kernel, [c for c in ("variant", "library") if c in df]]
    if rows.empty:
        return []
    flags = pd.to_numeric(rows["library"], errors="coerce") if "library" in rows else None
    libs = sorted(set(rows.loc[flags == 1, "variant"])) if flags is not None else []
    return libs or [str(rows["variant"].iloc[0])]


def pair_positions(df: pd.DataFrame, baseline_variant: str | None = None, baseline_backend: str | None = None,
                   libs: Mapping[Any, list[str]] | None = None) -> tuple[list[tuple[int, int | None]], list[str]]:
    """The positions, among ``df``'s ok rows, of every ok row and its baseline row (or None), in table order
    within groups of first appearance, and the columns that name a machine's run (``run_id``, ``env_id``).
    ``libs``: each kernel's library variants (default: as ``df``'s rows say, :func:`library_variants`)."""
    machine = [c for c in ("run_id", "env_id") if c in df]
    group = machine + [c for c in ("kernel", "dtype", "params", "cache") if c in df]
    ok = df.loc[df["status"] == Status.OK, list(dict.fromkeys(group + ["variant", "backend"]))]
    if ok.empty:
        return [], machine
    if libs is None:
        libs = {k: library_variants(df, k) for k in ok["kernel"].unique()}
    # groups in order of first appearance, rows in table order: one pass over plain lists (filtering a
    # group's frame per row took most of a large report's time)
    codes = ok.groupby(group, sort=False, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    variants, backends, kernels = ok["variant"].tolist(), ok["backend"].tolist(), ok["kernel"].tolist()
    if baseline_variant is None and baseline_backend is None:
        return _library_pairs(codes.tolist(), order.tolist(), variants, backends, kernels, libs), machine
    pairs: list[tuple[int, int | None]] = []
    for members in np.split(order, np.flatnonzero(np.diff(codes[order])) + 1):
        members = members.tolist()
        picked: dict[tuple, int | None] = {}  # the choice depends on the row's backend (and its
        for i in members:                      # variant where only a baseline backend is named)
            key = (variants[i] if baseline_variant is None and baseline_backend is not None else None, backends[i])
            if key not in picked:
                picked[key] = _pick_baseline(members, variants, backends, i, baseline_variant, baseline_backend,
                                             libs[kernels[i]])
            pairs.append((i, picked[key]))
    return pairs, machine


def _library_pairs(codes: list[int], order: list[int], variants: list[Any], backends: list[Any], kernels: list[Any],
                   libs: Mapping[Any, list[str]]) -> list[tuple[int, int | None]]:
    """:func:`pair_positions` with the default baselines, in two passes over the rows instead of a search
    per group (a third of a 1M-row report's pairing): each row's baseline is its group's first library
    row on the row's own backend, else the group's library row first by backend name (as
    :func:`_pick_baseline` picks), else None."""
    lib_sets = {k: set(v) for k, v in libs.items()}
    first_same: dict[tuple[int, Any], int] = {}
    first_named: dict[int, tuple[tuple[bool, str], int]] = {}
    for j in order:  # groups in turn, each in table order
        if variants[j] in lib_sets[kernels[j]]:
            c, b = codes[j], backends[j]
            if b == b:  # a NaN backend equals no row's, its own included
                first_same.setdefault((c, b), j)
            name = (not isinstance(b, str), str(b))
            if c not in first_named or name < first_named[c][0]:
                first_named[c] = (name, j)
    pairs: list[tuple[int, int | None]] = []
    for i in order:
        c, b = codes[i], backends[i]
        j = first_same.get((c, b))  # none under a NaN backend (see above)
        if j is None and c in first_named:
            j = first_named[c][1]
        pairs.append((i, j))
    return pairs


def _pick_baseline(members: list[int], variants: list[Any], backends: list[Any], i: int, variant: str | None,
                   backend: str | None, libs: list[str]) -> int | None:
    """The position (among ``members``, one group's rows) of row ``i``'s baseline, or None."""
    if variant is not None:
        cand = [j for j in members if variants[j] == variant]
    elif backend is not None:
        cand = [j for j in members if variants[j] == variants[i]]
        if not any(backends[j] == backend for j in cand):
            cand = [j for j in members if variants[j] in libs]
    else:
        cand = [j for j in members if variants[j] in libs]
    if backend is not None:
        cand = [j for j in cand if backends[j] == backend]
    if not cand:
        return None
    same = [j for j in cand if backends[j] == backends[i]]
    # else the first by backend name (a missing backend last, as pandas sorts)
    return same[0] if same else min(cand, key=lambda j: (not isinstance(backends[j], str), str(backends[j])))
