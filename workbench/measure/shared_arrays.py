"""Seeded inputs and references shared by the worker processes of one sweep, through a memory-backed folder."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from workbench.catalog.spec import Arrays

log = logging.getLogger(__name__)

#: What names an entry: (what it is, kernel, canonical params, dtype, seed) for an input cache's.
SharedKey = tuple[str | int, ...]


class SharedArrays:
    """Named arrays in a folder that every worker process of one sweep sees (``/dev/shm`` where it exists):
    the seeded inputs and float64 references of a group are made once, not once per backend's worker.

    Each entry is a folder of ``.npy`` files, written under a temporary name and renamed into place, so a
    reader sees it whole or not at all; readers map the files copy-on-write (never writing the shared
    pages). The folder holds at most ``max_bytes``: a new entry removes the least recently used ones (a
    process that mapped them keeps its pages; one that looks them up later makes its own). A quick suite
    filled 1 GiB a third of the way through, and every later group's inputs and references were then made
    once per backend's worker (17% of the workers' time was making inputs and references).
    """

    #: A put scans the folder (a stat per file) only when its own count says it may be full, when it adds a
    #: large entry, or when the last scan is this old: a verify's hundreds of small entries, each scanning all
    #: the others, spent 16% of its workers' time in stat.
    RESCAN_S = 0.5

    def __init__(self, root: str | Path, max_bytes: int = 1 << 30) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._used, self._scanned_at = 0, -math.inf

    def _dir(self, key: SharedKey) -> Path:
        return self.root / hashlib.sha1(repr(key).encode()).hexdigest()[:24]

    def get(self, key: SharedKey) -> Arrays | None:
        d = self._dir(key)
        if not d.is_dir():
            return None
        try:
            found = {f.stem: np.load(f, mmap_mode="c") for f in sorted(d.glob("*.npy"))}
            os.utime(d)  # used now: the last to be removed
            return found
        except (OSError, ValueError) as exc:
            log.debug("shared arrays %s unreadable: %s", d, exc)
            return None

    def put(self, key: SharedKey, arrays: Arrays) -> None:
        nbytes = sum(int(getattr(a, "nbytes", 0)) for a in arrays.values())
        try:
            if nbytes > self.max_bytes or any(a.dtype == object for a in arrays.values()):
                return
            self._make_room(nbytes)
            tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=".tmp-"))
            for name, a in arrays.items():
                np.save(tmp / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)
            try:
                os.rename(tmp, self._dir(key))
            except OSError:  # another process put it first
                shutil.rmtree(tmp, ignore_errors=True)
        except (OSError, ValueError) as exc:  # a full /dev/shm: each process makes its own
            log.debug("cannot share arrays in %s: %s", self.root, exc)

    def _make_room(self, nbytes: int) -> None:
        """Remove the least recently used entries until ``nbytes`` more fit in :attr:`max_bytes`."""
        now = time.monotonic()
        if (self._used + nbytes <= self.max_bytes and nbytes < self.max_bytes // 64
                and now - self._scanned_at < self.RESCAN_S):
            self._used += nbytes
            return
        entries = []
        for d in self.root.iterdir():
            if d.name.startswith(".tmp-") or not d.is_dir():
                continue
            try:
                entries.append((d.stat().st_mtime, sum(f.stat().st_size for f in d.glob("*.npy")), d))
            except OSError:  # removed by another process meanwhile
                continue
        used = sum(size for _, size, _ in entries)
        for _, size, d in sorted(entries, key=lambda e: e[0]):
            if used + nbytes <= self.max_bytes:
                break
            shutil.rmtree(d, ignore_errors=True)
            used -= size
        self._used, self._scanned_at = used + nbytes, now
