"""Judging many pairs at once (workbench.judge.many) gives exactly what judging each pair alone gives: the
same verdicts, intervals, hints and baselines, on random tables that reach every path (block effects, paired
rounds by id or by count, unpaired rounds, one stream, too few values, odd values, A/A twins, rounds the slow host
stretched set aside, leaving a pair too few rounds at speed)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from workbench.judge import compare as stats_compare
from workbench.judge import verdicts as vd
from workbench.judge.compare import RESULT_COLUMNS, _run_blocks, _speedups_one_by_one, speedup_vs_baseline
from workbench.judge.few_rounds import read_basis


def _times(rng: np.random.Generator, n: int, scale: float) -> list[float]:
    t = (scale * np.exp(rng.normal(0, rng.choice([0.01, 0.05, 0.3]), n))).tolist()
    if n and rng.random() < 0.05:  # an odd value: zero, negative, NaN or infinite
        t[int(rng.integers(n))] = float(rng.choice([0.0, -1.0, float("nan"), float("inf")]))
    return t


def random_table(seed: int, groups: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    aside = np.random.default_rng(seed + 7919)  # rounds taken while the host ran slow (apart: the draws above stay)
    rows = []
    for g in range(groups):
        slow_round = int(aside.integers(8))
        run, env = f"run{g % 3}", f"env{g % 2}" if rng.random() < 0.9 else None
        kernel, params = f"k{g % 4}", json.dumps({"n": int(rng.integers(1, 4)) * 1024})
        n_rounds = int(rng.choice([0, 1, 2, 3, 3, 4, 5, 6, 8]))
        ids = [f"r{i}" for i in range(n_rounds)]
        members = [("lib", "numpy", 1), ("fast", "numpy", 0), ("slow", "numpy", 0), ("lib", "torch", 1),
                   ("alt", "torch", 0)][: int(rng.integers(1, 6))]
        for m, (variant, backend, library) in enumerate(members):
            scale = 1e-4 * float(rng.choice([1.0, 0.5, 2.0, 0.97]))
            key = f"{kernel}-{variant}-{backend}-{g}"
            row = {"run_id": run, "env_id": env, "device": "cpu", "cell_key": key, "kernel": kernel,
                   "variant": variant, "backend": backend, "dtype": str(rng.choice(["float32", "float64"])),
                   "params": params, "size": 1024, "size_label": "1,024", "mode": "eager", "cache": "hot",
                   "status": "ok" if rng.random() < 0.93 else "failed", "library": library,
                   "noisy": rng.choice([True, False, None, float("nan")]),
                   "samples_s": json.dumps(_times(rng, int(rng.choice([0, 1, 2, 5, 7])), scale))
                   if rng.random() < 0.95 else None}
            k = n_rounds if rng.random() < 0.85 else max(n_rounds - 1, 0)
            if k:
                row["round_medians_s"] = json.dumps(_times(rng, k, scale))
                r = rng.random()
                if r < 0.5:
                    row[vd.ROUND_IDS] = json.dumps(ids[:k])
                elif r < 0.6:
                    row[vd.ROUND_IDS] = json.dumps(ids[1:k + 1] if len(ids) > k else ids[:k][::-1])
                elif r < 0.65 and k >= 2:
                    row[vd.ROUND_IDS] = json.dumps(["r0"] * k)  # duplicated ids
                if slow_round < k and aside.random() < 0.5:  # a round the host ran slow in, felt by the cell
                    medians = json.loads(row["round_medians_s"])
                    medians[slow_round] *= 1.5
                    row["round_medians_s"] = json.dumps(medians)
                    row["round_host_slowdowns"] = json.dumps([1.4 if i == slow_round else 1.0 for i in range(k)])
            if m and rng.random() < 0.4:  # timed beside its library variant in alternating blocks
                row[vd.PAIR_WITH] = f"{kernel}-lib-{backend}-{g}"
                row[vd.PAIR_D] = json.dumps(rng.normal(0, 0.05, int(rng.choice([2, 3, 4, 6]))).tolist())
            if library and rng.random() < 0.5:  # an A/A twin
                if rng.random() < 0.5:
                    row[vd.TWIN_PAIR_D] = json.dumps(rng.normal(0, 0.02, int(rng.choice([2, 3, 5]))).tolist())
                else:
                    row[vd.TWIN_MEDIANS] = json.dumps(_times(rng, k, scale))
                    row[vd.TWIN_IDS] = json.dumps(ids[:k])
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("baseline", [(None, None), ("lib", None), ("fast", None), (None, "torch"), ("lib", "numpy")])
@pytest.mark.parametrize("runs_apart", [False, True])
def test_many_at_once_equals_one_by_one(seed: int, baseline: tuple[str | None, str | None], runs_apart: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs interleaved (judged at once) and each run's rows together (judged run by run)."""
    df = random_table(seed)
    if runs_apart:
        df = df.sort_values("run_id", kind="stable")
    monkeypatch.setattr(stats_compare, "JUDGE_ROWS", 1)  # every run a block of its own
    assert len(_run_blocks(df[df["status"] == "ok"])) == (3 if runs_apart else 1)
    cols = list(speedup_vs_baseline(df.iloc[0:0]).columns)
    fast = speedup_vs_baseline(df, *baseline)
    slow = _speedups_one_by_one(df, *baseline, cols)
    assert len(fast) == len(slow) > 0
    assert set(fast["verdict"]) & {"faster", "slower", "same", "inconclusive"}
    pdt.assert_frame_equal(fast, slow, check_exact=True)


def test_every_path_is_reached() -> None:
    """The random tables reach each basis and verdict, so the equality above covers them."""
    t = pd.concat([speedup_vs_baseline(random_table(s)) for s in range(12)])
    assert {"paired blocks", "paired rounds", "rounds", "one stream"} <= set(t["basis"].dropna())
    few = t["basis"].dropna().map(read_basis).dropna()  # pairs the slow host left too few rounds at speed
    assert {True, False} <= {paired for paired, _, _ in few}
    assert {"faster", "slower", "same", "inconclusive", "insufficient samples", "baseline",
            "no baseline"} <= set(t["verdict"])
    assert t["settle"].map(lambda s: isinstance(s, str)).any()
    assert set(RESULT_COLUMNS) <= set(t.columns)


def test_noisy_mask_is_is_noisy_of_each_row() -> None:
    rng = np.random.default_rng(3)
    flags = [rng.choice([True, False, None, float("nan"), 0, 1, 1.0, "yes", ""]) for _ in range(400)]
    spreads = [rng.choice([None, float("nan"), 0.05, 0.2, 0.1, float("inf"), "0.3", "x", -1.0]) for _ in range(400)]
    want = [vd.is_noisy({"noisy": f, "rel_spread": s}) for f, s in zip(flags, spreads, strict=True)]
    assert vd.noisy_mask(flags, spreads).tolist() == want
    assert vd.noisy_mask(None, spreads).tolist() == [vd.is_noisy({"rel_spread": s}) for s in spreads]
    assert vd.noisy_mask(flags, None).tolist() == [vd.is_noisy({"noisy": f}) for f in flags]


def test_many_floats_reads_each_value_as_one_at_a_time_does() -> None:
    from workbench.judge.many import many_floats

    rng = np.random.default_rng(5)
    values: list = [None, float("nan"), "", "[]", "[ ]", " [1e-06, 2E+3] ", "[1e-06,2E+3]", "[0, 1]", "[-1, 2]",
                    "[NaN, 1]", "[Infinity]", [1.0, 2.0], "[3]", "[1.5, 2.5, 3.5]", '["1", 2]']
    values += [json.dumps(rng.exponential(1e-4, int(rng.integers(0, 7))).tolist()) for _ in range(300)]
    got, want = many_floats(values), [vd.parse_samples(v) for v in values]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == float and g.tolist() == w.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_default_baselines_are_paired_as_the_group_search_pairs_them(seed: int) -> None:
    """The two-pass pairing of the default baselines gives the pairs the per-group search gives, odd
    backends (missing, NaN, not text) and groups without a library row included."""
    df = random_table(seed)
    rng = np.random.default_rng(seed)
    odd = rng.random(len(df)) < 0.15
    df["backend"] = df["backend"].astype(object)
    df.loc[odd, "backend"] = [rng.choice([None, float("nan"), 7, "cupy"]) for _ in range(int(odd.sum()))]
    df.loc[rng.random(len(df)) < 0.1, "library"] = 0
    fast, _ = stats_compare.pair_positions(df)
    slow = _group_search(df)
    assert fast == slow and any(j is None for _, j in fast) and any(j not in (None, i) for i, j in fast)


def _group_search(df: pd.DataFrame) -> list[tuple[int, int | None]]:
    """pair_positions' per-group search with the default baselines (the reference implementation)."""
    ok = df[df["status"] == "ok"]
    group = ["run_id", "env_id", "kernel", "dtype", "params", "cache"]
    libs = {k: stats_compare.library_variants(df, k) for k in ok["kernel"].unique()}
    codes = ok.groupby(group, sort=False, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    variants, backends, kernels = ok["variant"].tolist(), ok["backend"].tolist(), ok["kernel"].tolist()
    out = []
    for members in np.split(order, np.flatnonzero(np.diff(codes[order])) + 1):
        members = members.tolist()
        for i in members:
            out.append((i, stats_compare._pick_baseline(members, variants, backends, i, None, None,
                                                        libs[kernels[i]])))
    return out
