"""A pair that the slow host left with fewer than :data:`~workbench.judge.verdicts.MIN_ROUNDS` shared rounds at speed.

The tutorials run 3 rounds; where a round taken while the host ran slow is set aside
(:func:`workbench.judge.dips.ids_at_speed`), a pair keeps 2. Such pairs were judged unpaired on basis "one stream",
whose drift is assumed (±16%, one sigma), and read "disturbed" beside two clean rounds a side. Now 2 shared rounds
at speed are judged paired, their noise resting mostly on the typical paired spread of the pair's scope in the run
(:func:`workbench.judge.verdicts.paired_noise`, which counts it as :data:`~workbench.judge.verdicts.PRIOR_DF` rounds,
so the interval is a t interval on PRIOR_DF + 1 degrees of freedom); where no scope has a typical spread they are
judged as before, and the basis says that too few rounds were left at speed and how many were set aside.

One function judges them for both the batch path (:mod:`workbench.judge.many`) and the one-pair path
(:func:`workbench.judge.compare.judge_pair`), so that both give a pair one verdict.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np

from workbench.judge import verdicts as vd
from workbench.judge.dips import SET_ASIDE, set_aside_out
from workbench.judge.few_rounds_basis import paired_basis_text as paired_basis_text  # callers import these from here
from workbench.judge.few_rounds_basis import read_basis as read_basis
from workbench.judge.few_rounds_basis import too_few_basis_text as too_few_basis_text
from workbench.judge.few_rounds_basis import too_few_words as too_few_words

#: Fewest shared rounds at speed a pair is judged paired on where rounds were set aside and its scope's typical
#: paired spread stands in for the spread that so few rounds cannot show.
MIN_AT_SPEED = 2


class FewRounds(NamedTuple):
    """A pair's rounds at speed: the rounds both sides share (``a``, ``b``, in order), each side's own rounds
    (``kept_a``, ``kept_b``: what it is judged on unpaired) and how many rounds were set aside on either side."""

    a: np.ndarray
    b: np.ndarray
    kept_a: np.ndarray
    kept_b: np.ndarray
    set_aside: int


def few_rounds(a: np.ndarray, ids_a: list[str] | None, b: np.ndarray, ids_b: list[str] | None,
               kept: tuple[tuple[np.ndarray, list[str] | None], tuple[np.ndarray, list[str] | None]] | None = None
               ) -> FewRounds | None:
    """Both sides' round medians and their ids (rounds set aside marked :data:`~workbench.judge.dips.SET_ASIDE`) as
    a :class:`FewRounds` where rounds were set aside and fewer than MIN_ROUNDS shared rounds are left at speed;
    None otherwise (nothing set aside, ids missing, or enough rounds left to pair as usual). ``kept``: each side's
    :func:`~workbench.judge.dips.set_aside_out`, where the caller has them already."""
    if not ids_a or not ids_b or len(ids_a) != len(a) or len(ids_b) != len(b):
        return None
    aside = {k[: -len(SET_ASIDE)] for k in (*ids_a, *ids_b) if k.endswith(SET_ASIDE)}
    if not aside:
        return None
    (kept_a, kept_ids_a), (kept_b, kept_ids_b) = kept or (set_aside_out(a, ids_a), set_aside_out(b, ids_b))
    if vd.aligned(kept_a, kept_ids_a, kept_b, kept_ids_b) is not None:
        return None
    both = vd.aligned(kept_a, kept_ids_a, kept_b, kept_ids_b, min_rounds=0)
    shared = both if both is not None else (np.empty(0), np.empty(0))
    return FewRounds(shared[0], shared[1], kept_a, kept_b, len(aside))


def is_paired_basis(basis: Any) -> bool:
    """Whether a verdict's basis is paired: "paired rounds", "paired blocks", or a few paired rounds at speed."""
    if basis in ("paired rounds", vd.BLOCKS):
        return True
    read = read_basis(basis)
    return read is not None and read[0]


def few_verdict(few: FewRounds, typical: float | None, **kw: Any) -> tuple[vd.Verdict, np.ndarray, np.ndarray]:
    """The verdict of a pair with few rounds at speed, and the times each side is quoted by: paired on its
    :data:`MIN_AT_SPEED` or more shared rounds where ``typical`` (its scope's typical paired spread) is known;
    else unpaired on each side's rounds at speed, as before, its basis and advice saying why. ``kw`` goes to the
    verdict (``min_effect``, ``confidence``)."""
    n, k = len(few.a), few.set_aside
    if n >= MIN_AT_SPEED and typical is not None and math.isfinite(typical):
        d = np.log(few.a) - np.log(few.b)
        v = vd.effects_verdict(d, typical=typical, **{**kw, "min_rounds": MIN_AT_SPEED})
        settle = None if v.settle is None else vd.settle_advice(  # rounds to run: those set aside come on top
            vd.median(d), v.noise, n + k, "paired rounds", v.coverage, 0.0, kw.get("min_effect", vd.MIN_EFFECT))
        return dataclasses.replace(v, basis=paired_basis_text(n, k), settle=settle), few.a, few.b
    v = vd.unpaired_verdict(few.kept_a, few.kept_b, **kw)
    if v.basis != "one stream":  # each side kept MIN_ROUNDS rounds at speed: judged on their spread, as before
        return v, few.kept_a, few.kept_b
    settle = None if v.settle is None else too_few_settle(k)
    return dataclasses.replace(v, basis=too_few_basis_text(n, k), settle=settle), few.kept_a, few.kept_b


def too_few_settle(set_aside: int) -> str:
    """What would settle a pair judged unpaired because the slow host left too few shared rounds at speed."""
    return (f"more rounds, so that at least {vd.MIN_ROUNDS} are shared at speed (--rounds {vd.MIN_ROUNDS + set_aside} "
            "or more), on a host that keeps its speed")
