"""Rows of a pandas frame as plain dicts, fast: ``DataFrame.to_dict("records")`` boxes every value through
pandas' per-value conversion, and a report over 100,000 rows spent ~3 s in it at each of four places.
Columns go through ``Series.tolist`` (numpy's own conversion to Python values) and are zipped into dicts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def records(df: pd.DataFrame, columns: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """``df.to_dict("records")`` (the same keys and Python values; NaN stays NaN), of ``columns`` only when
    given (those ``df`` has)."""
    names = list(df.columns) if columns is None else [c for c in columns if c in df.columns]
    if len(set(names)) != len(names):  # duplicate column names: pandas' own rules
        return df[names].to_dict("records")
    values = [column_values(df[c]) for c in names]
    if not names:
        return [{} for _ in range(len(df))]
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def column_values(col: pd.Series) -> list[Any]:
    """A column as plain Python values, as ``to_dict("records")`` gives them (a nullable column's NA: None)."""
    import numpy as np
    import pandas as pd

    out = col.tolist()
    if isinstance(col.dtype, np.dtype):
        return out
    return [None if v is pd.NA else v for v in out]  # nullable (extension) columns: None, as to_dict gives


def split_by(df: pd.DataFrame, column: str) -> dict[Any, pd.DataFrame]:
    """``df``'s rows by their value of ``column`` (missing values too), in order of first appearance: each
    part found once, where a filter per value made a million-row report scan every row once per run."""
    if df.empty:
        return {}
    return {key: take_rows(df, positions) for key, positions in group_positions(df, column).items()}


def group_positions(df: pd.DataFrame, column: str) -> dict[Any, Any]:
    """The positions of ``df``'s rows by their value of ``column`` (missing values too), in order of first
    appearance: what :func:`split_by` splits, for a caller that takes one part at a time."""
    if df.empty:
        return {}
    groups = df.groupby(column, sort=False, dropna=False).indices
    return dict(sorted(groups.items(), key=lambda kv: kv[1][0]))


def take_rows(df: pd.DataFrame, positions: Any) -> pd.DataFrame:
    """``df.iloc[positions]``, where columns that share one array (a report's empty columns, see
    ``Store.results(share_empty=True)``) share one again: taken column by column they became a full copy
    each (28 of them, 8 MB per million rows apiece, at every split of a report's frame)."""
    import numpy as np
    import pandas as pd

    if not df.columns.is_unique:
        return df.iloc[positions]
    positions = np.asarray(positions, dtype=np.intp)
    index = df.index.take(positions)
    taken: dict[tuple[int, int], Any] = {}
    out: dict[Any, Any] = {}
    for name in df.columns:
        col = df[name]
        if isinstance(col.dtype, np.dtype):
            values = col.to_numpy()
            key = (values.__array_interface__["data"][0], values.strides[0]) if values.dtype == object else None
            if key is not None and key in taken:
                out[name] = taken[key]
                continue
            # a Series of the column's own dtype: a frame built from object arrays would infer text columns
            out[name] = pd.Series(values.take(positions), index=index, dtype=col.dtype, copy=False)
            if key is not None:
                taken[key] = out[name]
        else:
            out[name] = pd.Series(col.array.take(positions), index=index, dtype=col.dtype, copy=False)
    result = pd.DataFrame(out, index=index, copy=False)
    result.attrs = dict(df.attrs)
    return result


def none_columns(df: pd.DataFrame) -> set[str]:
    """The object columns of ``df`` that hold None in every row (a report's empty record columns): a row read
    as a dict can leave them out for readers that ``.get`` its values (a missing key reads None too)."""
    import numpy as np

    out: set[str] = set()
    if len(df) < 1000:  # not worth a look at every column (a report reads single rows this way too)
        return out
    for name in df.columns:
        col = df[name]
        if isinstance(col.dtype, np.dtype) and col.dtype == object:
            values = col.to_numpy()
            if values[0] is None and bool((values == None).all()):  # noqa: E711 — elementwise, None only
                out.add(name)
    return out


def where_rows(df: pd.DataFrame, mask: Any) -> pd.DataFrame:
    """The rows of ``df`` where the boolean ``mask`` holds, as :func:`take_rows` takes them (every row: a
    shallow copy, no rows copied)."""
    import numpy as np

    mask = np.asarray(mask, dtype=bool)
    return df.copy(deep=False) if mask.all() else take_rows(df, np.flatnonzero(mask))


def share_strings(df: pd.DataFrame, shared: dict[str, dict[Any, Any]]) -> pd.DataFrame:
    """``df`` with each text column's repeated values as one shared object (``shared``: a value cache per
    column, kept across the frames of one read). SQLite hands back a new string per cell: a million rows'
    kernel, backend, status and run columns held 60 bytes a cell, where a shared value costs a pointer.
    Columns with mostly distinct values (cell keys, samples) are left as they are."""
    import numpy as np
    import pandas as pd

    distinct = shared.setdefault("\0distinct", {})  # columns found mostly distinct: not factorized again
    for name in df.columns:
        col = df[name]
        if name in distinct or (col.dtype.kind not in "OT" and str(col.dtype) != "str"):
            continue
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        if len(uniques) * 2 > len(col) and len(uniques) > 64:  # mostly distinct (a small last chunk is not)
            distinct[name] = True
            continue
        cache = shared.setdefault(name, {})
        values = np.empty(len(uniques) + 1, dtype=object)
        values[:-1] = [cache.setdefault(u, u) for u in uniques.tolist()]
        values[-1] = col[codes == -1].iloc[0] if (codes == -1).any() else None  # a missing value as read
        df[name] = pd.Series(values[codes], index=df.index, dtype=col.dtype, name=name)
    return df
