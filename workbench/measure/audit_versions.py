"""Changed versions of an input set: what an audited call is given, so a stale or memoized answer shows.

A version copies values from random positions of each input to other random positions (so they stay in
range), never to a :func:`landmarks` position: a cheap fingerprint of a few fixed elements stays the same,
the answer does not. Versions are drawn once per process (from a generator no cell's seed predicts) and
shared by every cell and round of the same inputs, so each version's reference is computed once per group,
not per audit; references are kept sealed (:func:`seal`), so a kernel searching the heap for a float64 array
of its output's shape does not find one.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.catalog.spec import Arrays
from workbench.measure.case import Case

#: Positions changed in each input before a sample: this share of its elements, within the bounds below.
CHANGE_SHARE = 1 / 256
MIN_CHANGES, MAX_CHANGES = 4, 256


@dataclass
class Version:
    """One changed version of an input set: per input, the flat positions changed and their new values; its
    compare copy once an audit needed it (and its float64 reference where the spec compares in its own way)."""

    changes: dict[str, tuple[np.ndarray, np.ndarray]]
    #: Kept sealed (:func:`seal`): a kernel searching the heap for a float64 array of its output's shape
    #: does not find it.
    reference: dict[str, Sealed] | None = None
    #: The reference as audits compare with it (:class:`Expected`), sealed too.
    expected: dict[str, Expected] | None = None
    #: The float64 reference made with the version when it came from a sweep's shared arrays (every worker of
    #: the sweep uses that one version of the set; the reference was made once, by the first to need it).
    shared_reference: Arrays | None = None

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes + v.nbytes for p, v in self.changes.values()) + sum(
            r.data.nbytes for r in (self.reference or {}).values()) + sum(
            e.ref.data.nbytes for e in (self.expected or {}).values())


@dataclass(frozen=True)
class Sealed:
    """An array's bytes XORed with a per-process random key: no longer an array of its dtype and shape."""

    data: np.ndarray
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class Expected:
    """One output's reference as an audit compares with it: in the compare dtype (float32, float64 for float64
    runs), with the reference's magnitude, so a check is one subtraction and one maximum."""

    ref: Sealed
    scale: float


def expected_from(reference: Mapping[str, np.ndarray], dtype: str) -> dict[str, Expected]:
    """Each output's :class:`Expected`, sealed."""
    cmp = np.float64 if dtype == "float64" else np.float32
    out = {}
    for k, r in reference.items():
        r = np.asarray(r)
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        out[k] = Expected(seal({k: r.astype(cmp)})[k], scale or 1.0)
    return out


_SEAL_KEY = np.frombuffer(secrets.token_bytes(8), np.uint64)[0]


def seal(arrays: Mapping[str, np.ndarray]) -> dict[str, Sealed]:
    """Each array's bytes XORed with :data:`_SEAL_KEY` (:class:`Sealed`)."""
    out = {}
    for k, a in arrays.items():
        a = np.ascontiguousarray(a)
        raw = a.reshape(-1).view(np.uint8)
        data = raw.view(np.uint64) ^ _SEAL_KEY if raw.size % 8 == 0 else raw ^ np.uint8(_SEAL_KEY & 0xFF)
        out[k] = Sealed(data, a.shape, a.dtype)
    return out


def unseal(sealed: Mapping[str, Sealed]) -> Arrays:
    """The arrays :func:`seal` sealed."""
    out = {}
    for k, s in sealed.items():
        raw = s.data ^ (_SEAL_KEY if s.data.dtype == np.uint64 else np.uint8(_SEAL_KEY & 0xFF))
        out[k] = raw.view(np.uint8).view(s.dtype).reshape(s.shape)
    return out


#: Changed versions of each input set, per process: drawn once (from an unseeded generator), shared by every
#: cell and round of the same inputs, so each version's reference is computed once per group, not per audit
#: (the cost target). Least recently used versions go first past :data:`VERSION_CACHE_BYTES`.
VERSIONS_PER_SET = 1
#: 64 MiB: one version of a large group holds its sealed float64 reference and its compare copy (~96 MiB for a
#: 32 MiB output, two input sets a group), so 256 MiB kept one or two large groups per worker process, which the
#: next round's shuffled order seldom came back to first (most of a quick suite's worker memory, issue 25).
#: The group in use always stays, every input set of it (eviction runs before a new set is added and passes over
#: the group's own sets: evicting them made each audited set of a large group recompute its version's reference
#: for every cell and round), and small groups stay between rounds. A version keeps only its compare copy
#: (:class:`Expected`), not the float64 reference it came from, unless the spec compares in its own way.
VERSION_CACHE_BYTES = 64 << 20
_versions: OrderedDict[tuple[Any, ...], list[Version]] = OrderedDict()
_version_rng = np.random.default_rng(secrets.randbits(128))
#: Positions an input set's identity is read at (with its kernel, size, dtype, shapes): drawn per process.
_PROBES = _version_rng.integers(1 << 62, size=32)


def _set_key(case: Case, host: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
    """An input set's identity: its kernel, size and dtype, and each input's shape and values at
    :data:`_PROBES` (seeded sets differ everywhere; reading all of a large input would cost a pass over it)."""
    def probe(v: np.ndarray) -> bytes:
        flat = v.reshape(-1)
        return flat[_PROBES % flat.size].tobytes() if flat.size else b""
    return (case.spec.name, tuple(sorted(case.params.items())), case.dtype,
            tuple((k, v.shape, str(v.dtype), probe(v)) for k, v in sorted(host.items())))


def versions_of(case: Case, host: Mapping[str, np.ndarray]) -> list[Version]:
    """The versions of input set ``host`` of ``case``'s group, drawn the first time it is seen."""
    key = _set_key(case, host)
    found = _versions.get(key)
    if found is None:
        group = key[:3]  # kernel, size, dtype: its other input sets' versions stay while it is in use
        total = sum(v.nbytes for vs in _versions.values() for v in vs)
        for old in [k for k in _versions if k[:3] != group]:
            if total <= VERSION_CACHE_BYTES:
                break
            total -= sum(v.nbytes for v in _versions.pop(old))
        found = _versions[key] = [new_version(host) for _ in range(VERSIONS_PER_SET)]
    _versions.move_to_end(key)
    return found


def landmarks(shape: tuple[int, ...]) -> np.ndarray:
    """Flat positions a cheap fingerprint of an array would read: the first and last few elements, those
    around the middle and the quarters, and a matrix's corners and the ends of its middle row. A version
    never changes them, so a memoizer keyed on them always meets a changed input under an old key (one whose
    random changes hit a[0], a[n // 2] or a[-1] computed the changed answer afresh, and passed a verify run in
    about 40)."""
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        return np.empty(0, np.int64)
    around = [0, size // 4, size // 2, (3 * size) // 4, size - 1]
    pos = [p + d for p in around for d in range(-LANDMARK_REACH, LANDMARK_REACH + 1)]
    if len(shape) >= 2:
        cols = int(shape[-1])
        rows = size // cols if cols else 0
        for r in (0, rows // 2, rows - 1):
            pos += [r * cols + c for c in (0, 1, cols // 2, cols - 2, cols - 1)]
    return np.unique(np.clip(np.asarray(pos, np.int64), 0, size - 1))


#: Elements on either side of each landmark position that a version leaves alone too.
LANDMARK_REACH = 3


def _change_positions(shape: tuple[int, ...], m: int) -> np.ndarray:
    """``m`` (or fewer, for a small array) distinct random flat positions, none of them a :func:`landmarks`
    position where the array has enough others."""
    size = int(np.prod(shape))
    marks = landmarks(shape)
    if size - len(marks) < 2 * m:  # a tiny array: any position
        return np.unique(_version_rng.integers(size, size=m))
    pos = np.empty(0, np.int64)
    while len(pos) < m:
        draw = _version_rng.integers(size, size=2 * m)
        pos = np.unique(np.concatenate([pos, draw[~np.isin(draw, marks)]]))
    return np.sort(_version_rng.permutation(pos)[:m])


def new_version(host: Mapping[str, np.ndarray]) -> Version:
    """Values copied from random positions of each input to other random positions (so they stay in range),
    never to a :func:`landmarks` position: a cheap fingerprint of a few fixed elements stays the same; the
    answer does not."""
    changes = {}
    for name, values in host.items():
        arr = np.asarray(values)
        flat = arr.reshape(-1)
        if flat.size < 2:
            continue
        m = int(min(MAX_CHANGES, max(MIN_CHANGES, flat.size * CHANGE_SHARE)))
        pos = _change_positions(arr.shape, m)
        src = _version_rng.integers(flat.size, size=pos.size)
        changes[name] = (pos, flat[src].copy())
    return Version(changes)


def apply_version(host: Mapping[str, np.ndarray], version: Version | None) -> Arrays:
    """A copy of ``host`` with ``version``'s changes (``host`` itself when none)."""
    if version is None:
        return dict(host)
    out = {k: np.array(v, copy=True) for k, v in host.items()}
    for name, (pos, values) in version.changes.items():
        out[name].reshape(-1)[pos] = values
    return out

