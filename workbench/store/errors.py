"""What a store that cannot be opened or written means for the user, in words: the error and its messages.

Every command that opens a store says the same thing about the same failure (a damaged file, a full disk, a
read-only mount), so the words live here once.
"""

from __future__ import annotations

import os


class StoreError(ValueError):
    """A store that cannot be opened or written: the message names the file, what is wrong and what to do."""


def damaged_store_message(path: str | os.PathLike, detail: str) -> str:
    """The one message every command gives for a store it cannot read: what is wrong and what to do."""
    return (f"results store {path} is damaged or not a workbench results store ({detail}); nothing was written "
            f"to it. Run `workbench store check --store {path}` to see what is wrong, then restore it from an export "
            "(`workbench import FILE.json --store NEW.sqlite`) or give another --store")


def describe_sqlite_error(path: str | os.PathLike, exc: BaseException) -> str:
    """What an SQLite error on opening or writing ``path`` means for the user, in one or two lines."""
    text = str(exc)
    low = text.lower()
    # a text column SQLite cannot decode is as damaged as a malformed page: scribbled bytes land in either
    if ("file is not a database" in low or "malformed" in low or "not a database" in low
            or "could not decode to utf-8" in low):
        return damaged_store_message(path, text)
    if "disk is full" in low or "database or disk is full" in low:
        return (f"cannot write to store {path}: the disk is full; free some space (rows stored so far are kept) "
                "and resume with `workbench bench --resume`")
    if "readonly" in low or "read-only" in low or "attempt to write" in low:
        return (f"cannot write to store {path}: it is read-only ({text}); give a writable --store, or only read "
                "it (`workbench runs`, `report`, `export` open it read-only)")
    if "database is locked" in low:  # met outside a write transaction (those wait and say so: lock_wait)
        return (f"results store {path} is locked by another process, so nothing was written; run again when that "
                "process is done (or end it)")
    if "unable to open" in low or "disk i/o error" in low:
        folder = read_only_folder(path)
        if folder is not None:
            return (f"cannot write to store {path}: {folder}; give a writable --store, or only read it "
                    "(`workbench runs`, `report`, `export` open it read-only)")
    if "unable to open" in low:
        return f"cannot open store {path} ({text}): check that its folder exists and is readable"
    return f"store {path}: {text}"


def read_only_folder(path: str | os.PathLike) -> str | None:
    """Why a store at ``path`` cannot be written, in words, when its file or folder is read-only (a read-only
    mount, a folder or file without write permission); None when it can be (as far as we can tell)."""
    p = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(p)
    while folder and not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"it is on a read-only file system (the folder {folder} is mounted read-only)"
    except (OSError, AttributeError):
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable (permission denied; the store needs its -wal and -shm files there)"
    if os.path.exists(p) and not os.access(p, os.W_OK):
        return "the file is read-only (no write permission)"
    return None
