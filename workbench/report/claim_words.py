"""Wording rules a claim follows beyond its verdict: a list of sizes that accounts for every size it covers, and a
busy machine said against the threshold the rows' own noisy mark uses. Split from :mod:`workbench.report.claims`,
which re-exports them (tutorials import them from there)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.core.units import fmt_bytes, parse_bytes
from workbench.report.pair_words import medians_source

#: How a sizes list names the sizes no reading covers.
UNSETTLED_SIZES = "not settled"


def sizes_said(by_reading: Mapping[str, Sequence[str]], every: Sequence[str]) -> str:
    """Where each reading held, accounting for every size in ``every``: "faster at n=2048; slower at n=64; not
    settled at n=512", or "faster at every size" / "faster at every size but n=64 (not settled there)". A sentence
    that lists only some sizes reads as if the rest went the other way or were not measured (08 printed "it ran
    faster at n=2048" where n=64 had also been measured, and read the other way). Sizes keep ``every``'s order."""
    order = {s: i for i, s in enumerate(every)}
    covered = {s for sizes in by_reading.values() for s in sizes}
    groups = {way: sorted(sizes, key=lambda s: order.get(s, len(order))) for way, sizes in by_reading.items() if sizes}
    rest = [s for s in every if s not in covered]
    if rest:
        groups[UNSETTLED_SIZES] = rest
    if not groups:
        return ""
    if len(groups) == 1:
        return f"{next(iter(groups))} at every size measured ({', '.join(every)})"
    main = max(groups, key=lambda w: len(groups[w]))
    if len(every) > 2 and len(groups[main]) == len(every) - 1 and main != UNSETTLED_SIZES:
        (way, sizes), = ((w, s) for w, s in groups.items() if w != main)
        return f"{main} at every size but {sizes[0]} ({way} there)"
    return "; ".join(f"{way} at {', '.join(sizes)}" for way, sizes in groups.items())


def busy_words(rows: pd.DataFrame, cores: int | None = None) -> str:
    """Why the rows count as a busy machine, against the threshold their noisy mark uses: "other processes took up
    to 52% of the CPU, past the 25% (half a core of 2) at which a row is marked busy"; "" where no row passed it.
    Said with any advice that blames a busy machine, so that "this busy" is never said of a load the library does
    not call busy (11 printed "on a machine this busy" at load 2.5 on 2 cores, citing floors seen at load 10)."""
    if "other_cpu_share" not in rows:
        return ""
    shares = pd.to_numeric(rows["other_cpu_share"], errors="coerce").dropna()
    if shares.empty or shares.max() <= BUSY_CPU_SHARE:
        return ""
    if cores is None:
        import psutil

        cores = psutil.cpu_count() or 1
    of_cores = BUSY_CPU_SHARE * cores
    core = "half a core" if abs(of_cores - 0.5) < 1e-9 else f"{of_cores:g} cores' worth"
    return (f"other processes took up to {shares.max():.0%} of the CPU, past the {BUSY_CPU_SHARE:.0%} ({core} of "
            f"{cores}) at which a row is marked busy")


#: How far from no change (log scale) each of two estimates must lie for their directions to count as opposite.
OPPOSITE_FROM = 0.01


def opposite_medians(v: Mapping[str, object], s: float, other: str) -> str:
    """An unsettled sentence's aside where the cells' own medians point the other way from the paired estimate
    ``s`` (each at least 1% from no change), though inside its interval: "measured 1.3× faster, within ±33%
    noise" beside medians giving 0.96× (11's readers) told one direction while the table beside it told the
    other. Empty where they agree on the direction."""
    import math

    try:
        m = float(v.get("median_a")) / float(v.get("median_b"))  # type: ignore[arg-type]
    except (TypeError, ValueError, ZeroDivisionError):
        return ""
    if not (math.isfinite(m) and m > 0 and math.isfinite(s) and s > 0):
        return ""
    if min(abs(math.log(m)), abs(math.log(s))) < OPPOSITE_FROM or (m > 1) == (s > 1):
        return ""
    way = f"{m:.2f}× faster" if m > 1 else f"took {1 / m:.2f}× the time"
    named = medians_source(v)   # the two medians divided, so the figure is found in the table (10)
    return (f" (the cells' own medians{f' ({named})' if named else ''} point the other way: {other} {way}; both lie "
            "in the interval, which settles neither direction)")


def inner_caches(llc: float | None) -> tuple[tuple[str, int], ...]:
    """This CPU's caches inside its last-level one, smallest first (("L1 data", 32768), ("per-core L2", 1048576)),
    where ``llc`` is this CPU's last-level cache (the device is this CPU); () for another device (a GPU's L2) or
    where the OS reports none."""
    from workbench.roofs.probe import cache_sizes

    sizes = cache_sizes()
    if not llc or sizes.llc != llc:
        return ()
    return tuple((name, int(c)) for name, c in (("L1 data", sizes.l1d), ("per-core L2", sizes.l2)) if c and c < llc)


def _levels(nbytes: float, llc: float, inner: Sequence[tuple[str, int]] | None) -> tuple[tuple[str, float] | None,
                                                                                        tuple[str, float] | None]:
    """(the smallest cache ``nbytes`` fits in, the largest it is past), each (name, bytes) or None."""
    levels = [*(inner_caches(llc) if inner is None else inner), ("last-level", llc)]
    fits = next(((n, c) for n, c in levels if nbytes <= c), None)
    past = [(n, c) for n, c in levels if nbytes > c]
    return fits, (past[-1] if past else None)


def cache_place(nbytes: float, llc: float | None, inner: Sequence[tuple[str, int]] | None = None) -> str:
    """Where a working set of ``nbytes`` lies among the caches, for a sentence that names the smallest cache level
    it fits ("within the 1 MiB per-core L2 cache" / "past the 32 MiB last-level cache"), or "last-level cache
    size unknown". ``inner``: the levels inside the last-level one (:func:`inner_caches`, the default where ``llc``
    is this CPU's). Taken from the bytes, never from a size's position: 01 printed "past the last-level cache
    (n=65536)" of a 768 KiB working set that its own line above said fits in the 32 MiB cache, and then "within
    the 32 MiB last-level cache" of a working set that fits the 1 MiB per-core cache it had printed."""
    if not llc or not nbytes or nbytes != nbytes:
        return "last-level cache size unknown"
    fits, past = _levels(nbytes, llc, inner)
    return f"within the {fmt_bytes(fits[1])} {fits[0]} cache" if fits else f"past the {fmt_bytes(llc)} last-level cache"


def cache_text(nbytes: float, llc: float | None, inner: Sequence[tuple[str, int]] | None = None) -> str:
    """Whether a working set fits in the caches, in words: the smallest level it fits in and the largest it is
    past ("working set 768 KiB fits in the 1 MiB per-core L2 cache, past the 32 KiB L1 data cache"), or "exceeds
    the 32 MiB last-level cache". ``inner`` as :func:`cache_place`'s. 01 printed "fits in the 32 MiB last-level
    cache" of 768 KiB beside "per-core cache: 1 MiB"."""
    if not llc:
        return f"working set {fmt_bytes(nbytes)} (last-level cache size unknown)"
    fits, past = _levels(nbytes, llc, inner)
    if not fits:
        return f"working set {fmt_bytes(nbytes)} exceeds the {fmt_bytes(llc)} last-level cache"
    beyond = f", past the {fmt_bytes(past[1])} {past[0]} cache" if past else ""
    return f"working set {fmt_bytes(nbytes)} fits in the {fmt_bytes(fits[1])} {fits[0]} cache{beyond}"


def bytes_share(part: float, whole: float) -> tuple[str, str, str]:
    """("21.5 GiB", "91.5%", "23.5 GiB"): two byte counts and the share of one in the other, printed so that the
    share follows from the two rounded figures beside it (02 printed "21.5 GiB ... 92% of the host's 23.5 GiB":
    21.5/23.5 is 91.5%). The share is taken of the printed figures, with a decimal more where that changes it."""
    a, b = fmt_bytes(part), fmt_bytes(whole)
    pa, pb = parse_bytes(a), parse_bytes(b)
    share = pa / pb if pa is not None and pb else part / whole
    pct = f"{share:.0%}" if abs(share * 100 - round(share * 100)) < 0.05 else f"{share:.1%}"
    return a, pct, b


def noisy_cells_text(rows: pd.DataFrame) -> str:
    """"both its cells are marked noisy (other processes used up to 90% of the CPU while they ran)" where every
    compared cell in ``rows`` is marked noisy, "" otherwise: said beside a cause a sentence states, so the cause is
    not read as if the cells were clean (04 said "what it adds cost more than its reuse saved" of two cells, both
    noisy, at load 8, and did not say so)."""
    if rows.empty or "noisy" not in rows:
        return ""
    noisy = pd.to_numeric(rows["noisy"], errors="coerce").fillna(0).astype(bool)
    if not noisy.all():
        return ""
    n = len(rows)
    who = "its cell is" if n == 1 else "both its cells are" if n == 2 else f"all {n} of its cells are"
    share = pd.to_numeric(rows.get("other_cpu_share", pd.Series(dtype=float)), errors="coerce").max()
    why = (f"other processes used up to {share:.0%} of the CPU while they ran" if share > BUSY_CPU_SHARE
           else "their rounds spread past the noise threshold")
    return f"{who} marked noisy ({why})"
