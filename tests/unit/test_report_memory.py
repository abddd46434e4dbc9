"""A report's read of a large store holds its frame about once: each chunk's garbage handed back as it goes
(glibc kept it between the rows that stay), the chunks joined a column at a time, extra fields decoded per
chunk; and the report's summaries copy columns, not rows (issue 38, a million real-shaped rows)."""

from __future__ import annotations

import json

import pandas as pd

from workbench.report.model import _backends_of
from workbench.report.summary import noise_summary
from workbench.store.database import Store


def _store(tmp_path, n: int = 9) -> Store:
    st = Store(tmp_path / "s.sqlite")
    run_id = st.new_run(name="memory", env_id="env0")
    for i in range(n):
        st.record({"run_id": run_id, "cell_key": f"c{i}", "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
                   "dtype": "float32", "params": json.dumps({"n": 8 * (i + 1)}), "status": "ok",
                   "median_s": 1e-3 * (i + 1), "size": None if i == 1 else 8 * (i + 1),
                   "round_ids": f"[{i}, {i + 1}]", "precision": "highest" if i % 2 else "high", "tries": i})
    return st


def test_a_chunked_read_frees_each_chunk_and_joins_to_the_single_read(tmp_path, monkeypatch):
    import workbench.store.rows as rows_module

    st = _store(tmp_path)
    single = st.results()
    released: list[int] = []
    monkeypatch.setattr(rows_module, "release_free_memory", lambda: released.append(1))
    monkeypatch.setattr(rows_module, "RESULT_CHUNK_ROWS", 2)  # 5 chunks, each with every extra field
    chunked = st.results()
    assert len(released) >= 5  # once per chunk read (and once after the join)
    assert list(chunked.columns) == list(single.columns)
    for name in single.columns:
        assert chunked[name].dtype == single[name].dtype, name
        assert chunked[name].astype(object).fillna(-1).tolist() == single[name].astype(object).fillna(-1).tolist()
    assert chunked["tries"].tolist() == list(range(9)) and chunked["size"].isna().sum() == 1
    precision = chunked["precision"].tolist()
    assert precision[1] is precision[3]  # an extra field's repeated texts shared across chunks too
    # a report's read (some columns, empty ones shared) keeps the extra fields as well
    reduced = st.results(columns=["kernel", "median_s"], share_empty=True)
    assert reduced["round_ids"].tolist() == [f"[{i}, {i + 1}]" for i in range(9)]


def test_noise_summary_names_the_first_noisy_cells_and_counts_them_all():
    df = pd.DataFrame({"kernel": ["k"] * 8, "variant": [f"v{i}" for i in range(8)], "backend": "numpy",
                       "size_label": "n=8", "status": "ok"}, index=range(10, 18))
    notes = pd.DataFrame({"noisy": [True] * 7 + [False], "noise_note": ["spread 9%"] + [""] * 7}, index=df.index)
    line = noise_summary(df, notes, listed=2)
    assert line.startswith("7 of 8 measured cells were noisy")
    assert "k/v0 @ numpy n=8 (spread 9%); k/v1 @ numpy n=8, and 5 more" in line


def test_backends_of_an_environment_are_its_rows_backends_or_every_rows():
    df = pd.DataFrame({"env_id": ["a", "a", "b", None], "backend": ["numpy", "torch", "numba", None]})
    assert _backends_of(df, "a") == {"numpy", "torch"}
    assert _backends_of(df, "zzz") == {"numpy", "torch", "numba"}  # an environment with no rows: every row's
