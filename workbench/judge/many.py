"""Many within-run verdicts at once: the same answers as judging each pair alone
(:func:`workbench.judge.compare.judge_pair` with :func:`~workbench.judge.compare.typical_spreads`), computed on
arrays of pairs with equal round counts.

Why: a report of a million rows judges a million pairs. One at a time, each took ~40 µs of small numpy calls
on arrays of three to ten values (a 1M-row report spent 40 s there); here the arithmetic runs once per batch
of pairs that share a shape, and only what is per pair by nature (parsing a row's JSON, aligning rounds by id,
the words of a "settle" hint) stays per pair. Pairs outside the common shapes (fewer than
:data:`~workbench.judge.verdicts.MIN_ROUNDS` values) are judged one at a time by the same functions as before.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from workbench.judge import verdicts as vd
from workbench.judge.dips import many_ids_at_speed, set_aside_out
from workbench.judge.few_rounds import (
    MIN_AT_SPEED,
    FewRounds,
    few_rounds,
    few_verdict,
    paired_basis_text,
    too_few_basis_text,
    too_few_settle,
)

#: The verdict fields a judged pair gets, in :data:`workbench.judge.compare.RESULT_COLUMNS` order.
FIELDS = ("speedup", "ci_low", "ci_high", "coverage", "floor", "noise", "verdict", "settle", "basis",
          "n_a", "n_b", "median_a", "median_b", "noisy")
PAIRED = "paired rounds"
#: The kind of a pair left with fewer than MIN_ROUNDS shared rounds at speed (:mod:`workbench.judge.few_rounds`).
FEW = "few rounds at speed"


class Rows:
    """The per-row facts a verdict reads, parsed once per row from a table's columns (lists, one value per
    row): its times and whether they are round medians, its round ids, block effects and A/A twin."""

    def __init__(self, column: Callable[[str], Sequence[Any]]) -> None:
        medians = many_floats(column("round_medians_s"))
        samples = many_floats(column("samples_s"))
        self.times: list[np.ndarray] = []
        self.is_rounds: list[bool] = []
        for m, s in zip(medians, samples, strict=True):
            if len(m) >= vd.MIN_ROUNDS:
                self.times.append(m)
                self.is_rounds.append(True)
            else:
                self.times.append(s)
                self.is_rounds.append(False)
        slowdowns = many_floats(column("round_host_slowdowns"))
        self.round_ids = many_ids_at_speed([vd.round_ids(v) for v in column(vd.ROUND_IDS)], medians,
                                           slowdowns)  # set-aside rounds pair with none
        self.cell_key = list(column("cell_key"))
        self.pair_with = list(column(vd.PAIR_WITH))
        self._pair_d = column(vd.PAIR_D)
        self._twin = column(vd.TWIN_MEDIANS)
        self._twin_ids = column(vd.TWIN_IDS)
        self._twin_d = column(vd.TWIN_PAIR_D)
        self.noisy = [vd.flag(v) for v in column("noisy")]
        self._at_speed: dict[int, tuple[np.ndarray, list[str] | None]] = {}

    def block_effects(self, base: int, row: int) -> np.ndarray | None:
        """As :func:`workbench.judge.compare.block_effects`."""
        key = self.cell_key[base]
        if key is None or self.pair_with[row] != key:
            return None
        d = vd.effects(self._pair_d[row])
        return d if len(d) >= vd.MIN_ROUNDS else None

    def paired_rounds(self, base: int, row: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """As :func:`workbench.judge.compare._paired_rounds`."""
        a, b = self.times[base], self.times[row]
        ra, rb = self.is_rounds[base], self.is_rounds[row]
        if ra and rb:
            (kept_a, ids_a), (kept_b, ids_b) = self.at_speed(base), self.at_speed(row)  # rounds the slow host
            # stretched: paired with none
            if ids_a and ids_b and ids_a == ids_b and len(ids_a) == len(kept_a) == len(kept_b) \
                    and len(set(ids_a)) == len(ids_a):  # the same rounds, once each: aligned as they are
                return kept_a, kept_b, len(kept_a) >= vd.MIN_ROUNDS
            both = vd.aligned(kept_a, ids_a, kept_b, ids_b)
            if both is not None:
                return both[0], both[1], True
            if len(kept_a) < len(a) or len(kept_b) < len(b):  # too few rounds at speed to pair: judged unpaired
                return kept_a, kept_b, False
        return a, b, ra and rb and len(a) == len(b)

    def at_speed(self, i: int) -> tuple[np.ndarray, list[str] | None]:
        """Row ``i``'s times and round ids without the rounds set aside (:func:`set_aside_out`), once per row: a
        reference row is in every pair of its group."""
        got = self._at_speed.get(i)
        if got is None:
            got = self._at_speed[i] = set_aside_out(self.times[i], self.round_ids[i])
        return got

    def few_rounds(self, base: int, row: int) -> FewRounds | None:
        """As :func:`workbench.judge.pair_rows._few_rounds`."""
        if not (self.is_rounds[base] and self.is_rounds[row]):
            return None
        return few_rounds(self.times[base], self.round_ids[base], self.times[row], self.round_ids[row],
                          kept=(self.at_speed(base), self.at_speed(row)))

    def twin_effects(self, row: int) -> tuple[str, np.ndarray] | None:
        """The A/A twin's paired spread source as :func:`workbench.judge.compare.typical_spreads` adds it."""
        d = vd.effects(self._twin_d[row])
        if len(d) >= vd.MIN_ROUNDS:
            return vd.BLOCKS, d
        twin = vd.parse_samples(self._twin[row])
        if len(twin) < vd.MIN_ROUNDS or not self.is_rounds[row]:
            return None
        both = vd.aligned(self.times[row], self.round_ids[row], twin, vd.round_ids(self._twin_ids[row]))
        return None if both is None else (PAIRED, np.log(both[0]) - np.log(both[1]))


#: A row's (group, kernel, run) scope keys, without the basis (see :func:`judge`).
ScopeKeys = tuple[tuple, tuple, tuple]
#: (basis, *scope key) -> the spreads of the pairs in that scope.
Scopes = dict[tuple, list[np.ndarray]]


def judge(rows: Rows, pairs: Sequence[tuple[int, int | None]], scope_keys: Sequence[ScopeKeys],
          labels: Sequence[Any]) -> dict[str, list[Any]]:
    """The verdict fields (:data:`FIELDS`) of each ``(row, base)`` position pair (base None: left out, the
    caller fills "no baseline"), as lists in ``pairs`` order for the pairs with a base. ``scope_keys[i]``: row
    i's (group, kernel, run) scope keys without the basis, as :func:`~workbench.judge.compare.typical_spreads`
    builds them; ``labels``: the rows' index labels (a row paired with itself, or with a row of the same label,
    is its group's baseline and gives no spread)."""
    judged = [(r, b) for r, b in pairs if b is not None]
    m = len(judged)
    out: dict[str, list[Any]] = {f: [None] * m for f in FIELDS}
    kind, values, scopes = _evidence(rows, judged, scope_keys, labels, out)
    for r, _ in pairs:  # every row's A/A twin, judged or not (typical_spreads walks every pair)
        twin = rows.twin_effects(r)
        if twin is not None:
            for key in scope_keys[r]:
                scopes[(twin[0], *key)].append(twin[1])
    batches = _into_batches(rows, judged, scope_keys, kind, values, _typicals(scopes), out)
    hints: dict[str, str] = {}  # each distinct "settle" hint held once (a 1M-row report had 300,000 of a few)
    for (what, *shape), ks in batches.items():
        if what == "unpaired":
            _unpaired_batch(out, ks, [values[k] for k in ks], rounds=shape[2], hints=hints)
        elif what in (FEW_PAIRED, FEW_UNPAIRED):
            _few_batch(out, what, shape, ks, values, hints)
        else:
            _effects_batch(out, ks, [values[k] for k in ks], basis=shape[1], has_typical=shape[2], hints=hints)
    return out


def _evidence(rows: Rows, judged: list[tuple[int, int]], scope_keys: Sequence[ScopeKeys], labels: Sequence[Any],
              out: dict[str, list[Any]]) -> tuple[list[str], list[Any], Scopes]:
    """Each pair's evidence: its kind (block effects, paired round differences, or both sides' times unpaired)
    and values, and the spreads it adds to its scopes; fills the pairs' ``noisy`` and both sides' medians."""
    kind: list[str] = []
    values: list[Any] = []
    scopes: Scopes = defaultdict(list)
    sides: list[tuple[np.ndarray, np.ndarray]] = []  # the times each pair compares
    for k, (r, b) in enumerate(judged):
        a_t, b_t, paired = rows.paired_rounds(b, r)
        d = rows.block_effects(b, r)
        same = r == b or labels[r] == labels[b]
        if d is not None:
            kind.append(vd.BLOCKS)
            values.append(d)
            if not same:
                for key in scope_keys[r]:
                    scopes[(vd.BLOCKS, *key)].append(d)
        elif paired:
            kind.append(PAIRED)
            values.append((a_t, b_t))
            if not same:
                diff = np.log(a_t) - np.log(b_t)
                for key in scope_keys[r]:
                    scopes[(PAIRED, *key)].append(diff)
        elif (few := rows.few_rounds(b, r)) is not None:  # judged once the scopes' typical spreads are known
            kind.append(FEW)
            values.append(few)
        else:
            kind.append("unpaired")
            values.append((a_t, b_t))
        sides.append((a_t, b_t))
        out["noisy"][k] = rows.noisy[b] or rows.noisy[r]
    out["median_a"] = _medians([a for a, _ in sides])
    out["median_b"] = _medians([b for _, b in sides])
    return kind, values, scopes


def _into_batches(rows: Rows, judged: list[tuple[int, int]], scope_keys: Sequence[ScopeKeys], kind: list[str],
                  values: list[Any], typical: Callable[[ScopeKeys, str], float | None],
                  out: dict[str, list[Any]]) -> dict[tuple, list[int]]:
    """The pairs of a common shape, by batch (their ``values`` made what the batch reads); the others (too few
    or unreadable values) are judged here one at a time, into ``out``."""
    batches: dict[tuple, list[int]] = defaultdict(list)
    for k, (r, _) in enumerate(judged):
        if kind[k] == "unpaired":
            a_t, b_t = values[k]
            rounds = rows.is_rounds[judged[k][1]] and rows.is_rounds[r]
            if len(a_t) == 0 or len(b_t) == 0:
                _put(out, k, vd.unpaired_verdict(a_t, b_t, rounds=rounds))
                continue
            batches[("unpaired", len(a_t), len(b_t), rounds)].append(k)
            continue
        if kind[k] == FEW:  # in a batch as few_verdict judges it, else one at a time by few_verdict itself
            t_few = typical(scope_keys[r], PAIRED)
            if not _few_batched(batches, values, k, t_few):
                v, a_t, b_t = few_verdict(values[k], t_few)
                _put(out, k, v)
                out["median_a"][k] = vd.median(a_t) if len(a_t) else float("nan")
                out["median_b"][k] = vd.median(b_t) if len(b_t) else float("nan")
            continue
        t = typical(scope_keys[r], kind[k])
        if kind[k] == PAIRED:
            a_t, b_t = values[k]
            ok = np.isfinite(a_t) & np.isfinite(b_t) & (a_t > 0) & (b_t > 0)
            if not ok.all() or len(a_t) < vd.MIN_ROUNDS:
                _put(out, k, vd.paired_verdict(a_t, b_t, typical=t))
                continue
            values[k] = np.log(a_t) - np.log(b_t)
        d = values[k]
        if not np.isfinite(d).all() or len(d) < vd.MIN_ROUNDS:
            _put(out, k, vd.effects_verdict(d, typical=t, basis=kind[k]))
            continue
        has_typical = t is not None and math.isfinite(t)
        batches[("effects", len(d), kind[k], has_typical)].append(k)
        values[k] = (d, t if has_typical else float("nan"))
    return batches


#: Batches of pairs with few rounds at speed (:func:`_few_batched`): paired on their shared rounds, or unpaired.
FEW_PAIRED, FEW_UNPAIRED = "few paired", "few unpaired"


def _few_batched(batches: dict[tuple, list[int]], values: list[Any], k: int, typical: float | None) -> bool:
    """Whether pair ``k`` (few rounds at speed, ``values[k]`` its :class:`FewRounds`) went into a batch, judged as
    :func:`few_verdict` judges it: paired on its shared rounds where its scope has a typical spread, else unpaired
    on each side's rounds at speed (``values[k]`` made what the batch reads). Why: on a busy host most real rows
    have a round set aside, and one verdict at a time was a fifth of a report's judging. False where a batch
    would not read the values as the one-pair path does (a value not finite and positive, a side empty)."""
    few: FewRounds = values[k]
    n, aside = len(few.a), few.set_aside
    if n >= MIN_AT_SPEED and typical is not None and math.isfinite(typical):
        d = np.log(few.a) - np.log(few.b)
        if not np.isfinite(d).all():
            return False
        batches[(FEW_PAIRED, n, aside)].append(k)
        values[k] = (d, typical, few.a, few.b)
        return True
    a, b = few.kept_a, few.kept_b
    if not (len(a) and len(b) and (np.isfinite(a) & (a > 0)).all() and (np.isfinite(b) & (b > 0)).all()):
        return False
    batches[(FEW_UNPAIRED, len(a), len(b), n, aside)].append(k)
    values[k] = (a, b)
    return True


def _few_batch(out: dict[str, list[Any]], what: str, shape: list[Any], ks: list[int], values: list[Any],
               hints: dict[str, str]) -> None:
    """:func:`few_verdict` of a batch of :func:`_few_batched` pairs, at once: their basis says how many rounds were
    shared and set aside, their advice counts the rounds set aside, each side is quoted by the times judged."""
    if what == FEW_PAIRED:
        n, aside = shape
        _effects_batch(out, ks, [values[k][:2] for k in ks], basis=PAIRED, has_typical=True, hints=hints,
                       shown_basis=paired_basis_text(n, aside), settle_rounds=aside)
    else:
        na, nb, n, aside = shape
        stream = na < vd.MIN_ROUNDS or nb < vd.MIN_ROUNDS  # judged on one stream: said so, with its own advice
        _unpaired_batch(out, ks, [values[k] for k in ks], rounds=True, hints=hints,
                        shown_basis=too_few_basis_text(n, aside) if stream else None,
                        settle_text=too_few_settle(aside) if stream else None)
    for side, medians in (("median_a", _medians([values[k][-2] for k in ks])),
                          ("median_b", _medians([values[k][-1] for k in ks]))):
        for k, m in zip(ks, medians, strict=True):
            out[side][k] = m


def _medians(arrays: list[np.ndarray]) -> list[float]:
    """The median of each array (NaN for an empty one), per batch of equal length: the values
    :func:`workbench.judge.verdicts.median` gives (the middle value, or the mean of the two middle ones)."""
    out = [float("nan")] * len(arrays)
    by_len: dict[int, list[int]] = defaultdict(list)
    for i, x in enumerate(arrays):
        if len(x):
            by_len[len(x)].append(i)
    for members in by_len.values():
        values = np.median(np.array([arrays[i] for i in members], dtype=float), axis=1).tolist()
        for i, v in zip(members, values, strict=True):
            out[i] = v
    return out


def _typicals(scopes: Scopes) -> Callable[[ScopeKeys, str], float | None]:
    """As the ``typical`` of :func:`~workbench.judge.compare.typical_spreads`, on scope keys: each scope's
    prior (:func:`workbench.judge.verdicts.prior_noise`) from its pairs' variances, computed per batch of equal
    length."""
    by_len: dict[int, list[tuple[tuple, int]]] = defaultdict(list)
    for key, arrays in scopes.items():
        for i, x in enumerate(arrays):
            by_len[len(x)].append((key, i))
    variances: dict[tuple, list[float]] = defaultdict(list)
    for n, members in by_len.items():
        if n < 2:
            continue
        x = np.array([scopes[key][i] for key, i in members], dtype=float)
        v = np.var(x, axis=1, ddof=1) / vd._variance_median_ratio(n - 1)
        for (key, _), value in zip(members, v.tolist(), strict=True):
            if math.isfinite(value):
                variances[key].append(value)
    priors = {key: (math.sqrt(float(np.median(variances[key]))) if variances.get(key) else None) for key in scopes}
    memo: dict[tuple, float | None] = {}

    def typical(keys: ScopeKeys, basis: str) -> float | None:
        memo_key = (basis, keys)
        if memo_key not in memo:
            found = [(basis, *k) for k in keys if (basis, *k) in scopes]
            enough = [p for k in found if len(scopes[k]) >= 3 and (p := priors[k]) is not None]
            if basis == vd.BLOCKS and enough:
                memo[memo_key] = enough[0]
            else:
                memo[memo_key] = min(enough) if enough else (priors[found[-1]] if found else None)
        return memo[memo_key]

    return typical


def _effects_batch(out: dict[str, list[Any]], ks: list[int], items: list[tuple[np.ndarray, float]], basis: str,
                   has_typical: bool, hints: dict[str, str], **shown: Any) -> None:
    """:func:`workbench.judge.verdicts.effects_verdict` of equal-length effects, at once."""
    d = np.array([x for x, _ in items], dtype=float)
    n = d.shape[1]
    effect = np.median(d, axis=1)
    if not has_typical:
        noise = np.std(d, axis=1, ddof=1)
        df: float = n - 1
    else:
        t = np.array([x for _, x in items], dtype=float)
        if n >= vd.ROBUST_FROM:
            own = 1.4826 * np.median(np.abs(d - np.median(d, axis=1, keepdims=True)), axis=1)
        else:
            dev = np.sort(np.abs(d - effect[:, None]), axis=1)
            dev[:, -1] = np.minimum(dev[:, -1], np.maximum(vd.CLIP * t, dev[:, -2]))
            own = np.sqrt(np.sum(dev ** 2, axis=1) / (n - 1))
        noise = np.sqrt((vd.PRIOR_DF * t ** 2 + (n - 1) * own ** 2) / (vd.PRIOR_DF + n - 1))
        df = vd.PRIOR_DF + n - 1
    half = vd._quantile(vd.CONFIDENCE, df) * vd.MEDIAN_EFFICIENCY * noise / math.sqrt(n)
    _verdicts(out, ks, effect, effect - half, effect + half, noise, [n] * len(ks), [n] * len(ks), basis,
              vd.CONFIDENCE, hints, **shown)


def _unpaired_batch(out: dict[str, list[Any]], ks: list[int], items: list[tuple[np.ndarray, np.ndarray]],
                    rounds: bool, hints: dict[str, str], **shown: Any) -> None:
    """:func:`workbench.judge.verdicts.unpaired_verdict` (no run-to-run noise) of pairs of equal lengths, at once."""
    la = np.log(np.array([a for a, _ in items], dtype=float))
    lb = np.log(np.array([b for _, b in items], dtype=float))
    na, nb = la.shape[1], lb.shape[1]
    effect = np.median(la, axis=1) - np.median(lb, axis=1)
    if not rounds or na < vd.MIN_ROUNDS or nb < vd.MIN_ROUNDS:
        noise = np.full(len(ks), math.hypot(vd.STREAM_NOISE, 0.0))
        basis = "one stream"
    else:
        noise = np.array([math.hypot(math.hypot(x, y), 0.0)
                          for x, y in zip(_round_sigma(la).tolist(), _round_sigma(lb).tolist(), strict=True)])
        basis = "rounds"
    q = vd._quantile(vd.BETWEEN_COVERAGE, None)
    half = vd.K_BETWEEN * noise * q / q  # as the verdict writes it (x * q / q is not always x, to the last bit)
    _verdicts(out, ks, effect, effect - half, effect + half, noise, [na] * len(ks), [nb] * len(ks), basis,
              vd.BETWEEN_COVERAGE, hints, **shown)


def _round_sigma(x: np.ndarray) -> np.ndarray:
    """:func:`workbench.judge.verdicts.round_sigma` of each row (at least 3 values)."""
    n = x.shape[1]
    if n < vd.ROBUST_FROM:
        s = np.std(x, axis=1, ddof=1)
    else:
        return 1.4826 * np.median(np.abs(x - np.median(x, axis=1, keepdims=True)), axis=1)
    return s


def _verdicts(out: dict[str, list[Any]], ks: list[int], effect: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              noise: np.ndarray, n_a: list[int], n_b: list[int], basis: str, coverage: float,
              hints: dict[str, str], shown_basis: str | None = None, settle_rounds: int = 0,
              settle_text: str | None = None) -> None:
    """:func:`workbench.judge.verdicts.decide` and the verdict's fields, for a batch (settle hints per pair, only
    for the inconclusive). ``shown_basis``: the basis written in place of ``basis``; ``settle_rounds``: rounds
    the advice counts on top of those judged; ``settle_text``: the advice in place of the computed one."""
    margin = math.log1p(vd.MIN_EFFECT)
    half = np.maximum(np.maximum(effect - lo, hi - effect), margin)
    bound = np.maximum(np.maximum(-lo, hi), margin)
    faster = (lo > 0) & (effect > margin)
    slower = ~faster & (hi < 0) & (effect < -margin)
    same = ~faster & ~slower & (bound <= math.log1p(vd.SAME_WITHIN))
    verdict = np.where(faster, "faster", np.where(slower, "slower", np.where(same, "same", "inconclusive")))
    # exp and expm1 per value by Python's math, as one verdict at a time computes them (numpy's may differ
    # in the last bit)
    exp, expm1 = math.exp, math.expm1
    speedup, ci_low, ci_high = ([exp(x) for x in v.tolist()] for v in (effect, lo, hi))
    floor_l = [expm1(x) for x in np.where(same, bound, half).tolist()]
    noise_l, effect_l = noise.tolist(), effect.tolist()
    words = {w: w for w in ("faster", "slower", "same", "inconclusive")}  # one object per word, per hint
    for i, k in enumerate(ks):
        v = words[str(verdict[i])]
        out["speedup"][k], out["ci_low"][k], out["ci_high"][k] = speedup[i], ci_low[i], ci_high[i]
        out["coverage"][k], out["floor"][k], out["noise"][k] = coverage, floor_l[i], noise_l[i]
        out["verdict"][k], out["basis"][k], out["n_a"][k], out["n_b"][k] = v, shown_basis or basis, n_a[i], n_b[i]
        if v == "inconclusive":
            hint = settle_text or vd.settle_advice(effect_l[i], noise_l[i], min(n_a[i], n_b[i]) + settle_rounds,
                                                   basis, coverage, 0.0, vd.MIN_EFFECT)
            out["settle"][k] = hints.setdefault(hint, hint)
        else:
            out["settle"][k] = None


def _put(out: dict[str, list[Any]], k: int, v: vd.Verdict) -> None:
    for name, value in v.to_dict().items():
        out[name][k] = value


#: A JSON list of plain numbers (no NaN or Infinity, nothing nested): read by numpy's number parser.
_PLAIN_LIST = re.compile(r"\[[0-9eE.+\-, ]*\]\Z")


def many_floats(values: Sequence[Any]) -> list[np.ndarray]:
    """:func:`workbench.judge.verdicts.parse_samples` of each value, at once: lists of plain numbers through numpy's
    parser into one array (each row's times a view of it), anything else (NaN, nested, missing) one by one as
    before (per value, parsing and checking a million rows' samples took 6 s)."""
    out: list[np.ndarray] = [np.empty(0)] * len(values)
    plain: list[tuple[int, str]] = []
    for i, v in enumerate(values):
        if isinstance(v, str) and _PLAIN_LIST.match(v):
            plain.append((i, v))
        elif v is not None:
            out[i] = vd.parse_samples(v)
    bodies = [(i, t[1:-1]) for i, t in plain if t[1:-1].strip()]
    counts = [b.count(",") + 1 for _, b in bodies]
    try:
        flat = np.fromstring(",".join(b for _, b in bodies), sep=",") if bodies else np.empty(0)  # noqa: NPY201
    except ValueError:
        flat = None
    if flat is None or len(flat) != sum(counts):  # a list numpy reads otherwise than JSON: each as before
        for i, t in plain:
            out[i] = vd.parse_samples(t)
        return out
    ends = np.cumsum(counts).tolist()
    bad = ~(np.isfinite(flat) & (flat > 0))
    starts = [e - c for e, c in zip(ends, counts, strict=True)]
    any_bad = np.add.reduceat(bad, starts).tolist() if starts else []
    for (i, _), a, e, b in zip(bodies, starts, ends, any_bad, strict=True):
        out[i] = vd.clean(flat[a:e]) if b else flat[a:e]
    return out
