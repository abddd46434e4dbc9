"""Every file the workbench writes (exports, reports, ``bench --json/--report``, ``config save``) goes
through here: it never replaces a results store, and it is written atomically.

Why by content and not only by name: ``export -o workbench-results.sqlite`` or ``report --out st.json
--store st.json`` once replaced a store with a JSON document. A path is refused when, after resolving
symlinks, it is

* the store in use, or one of its ``-wal`` / ``-shm`` / ``-journal`` files (same real path or same inode);
* any SQLite database (the first 16 bytes are SQLite's header): every workbench store is one, a damaged
  store may no longer show its tables, and no report or export is ever meant to replace a database;
* the ``-wal`` / ``-shm`` / ``-journal`` file of such a database;
* a workbench JSON export (``"format": "workbench-results"`` near its start), unless what is written is
  itself an export (re-exporting to the same file is an ordinary refresh; a CSV over a backup is not).

A path that exists and is not a regular file (a FIFO, a device such as ``/dev/full``, a socket, a symlink to
one) is refused: a rename over it would replace it with a regular file, and writing into it is not writing a
report. The one exception is the command's own stdout (``/dev/stdout``, ``/dev/fd/1``): written there
directly, as a stream (:func:`writes_to_stdout`).

The check runs before any work (``bench`` checks its outputs before the sweep) and again just before the
write. Writing goes to a temporary file in the same folder, flushed to disk and renamed over the target, so
a failed or interrupted write leaves any existing file as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from workbench.core.regular_files import file_kind

SQLITE_HEADER = b"SQLite format 3\x00"
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
#: How far into a file the export marker is looked for (the store writes it first).
EXPORT_PROBE_BYTES = 4096
EXPORT_MARKERS = (b'"format": "workbench-results"', b'"format":"workbench-results"')
#: Names of the command's own stdout: written to as a stream, never renamed over.
STDOUT_PATHS = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def writes_to_stdout(path: str | os.PathLike) -> bool:
    """``path`` names this process's stdout (``/dev/stdout`` ...): the output is streamed there, and a command
    says what it wrote on stderr instead."""
    return os.path.normpath(os.fspath(path)) in STDOUT_PATHS


def refuse_non_regular(path: str | os.PathLike, flag: str = "output") -> None:
    """A ValueError when ``path`` exists (after symlinks) and is not a regular file: never replaced, never
    written into."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # not there (yet): a new regular file will be made
    if not stat.S_ISREG(mode):
        real = os.path.realpath(path)
        shown = f" ({real})" if real != os.path.abspath(os.fspath(path)) else ""
        raise ValueError(f"{flag} {os.fspath(path)!r}{shown} is {file_kind(mode)}, not a regular file; the "
                         "workbench writes only regular files (or /dev/stdout): give a file name")


def _head(path: Path, n: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def is_sqlite_file(path: str | os.PathLike) -> bool:
    """``path`` is a regular file starting with SQLite's header (a store, healthy or damaged)."""
    p = Path(path)
    return p.is_file() and _head(p, len(SQLITE_HEADER)) == SQLITE_HEADER


def is_workbench_export(path: str | os.PathLike) -> bool:
    """``path`` is a JSON document in the store's export format (``workbench export`` wrote it)."""
    p = Path(path)
    if not p.is_file():
        return False
    head = _head(p, EXPORT_PROBE_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and any(m in head for m in EXPORT_MARKERS)


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _require_writable_folder(real: Path, text: str, flag: str) -> None:
    """A ValueError unless a new file can be made in ``real``'s folder (or its nearest existing ancestor, where
    the folder is still to be made): tried with a temporary file, removed at once. Permissions alone do not
    say it for root, nor under /proc or /sys: ``tune --config /proc/x.json`` measured first and failed after."""
    folder = real.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=".workbench-probe.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ValueError(f"{flag} {text!r}: the folder {folder} takes no new file ({exc.strerror or exc}); give a "
                         "path in a writable folder") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_output_path(path: str | os.PathLike, *, flag: str = "output",
                      stores: Iterable[str | os.PathLike | None] = (), export: bool = False) -> Path:
    """``path`` checked as a file to write: a ValueError naming it when it is empty, a folder, or would
    replace a results store (see the module's docstring). ``stores``: the store(s) in use (a store not yet
    created, or a 0-byte one, is only recognised this way). ``export``: what will be written is a workbench
    JSON export (it may then replace an earlier export). Returns the path."""
    text = os.fspath(path)
    if not str(text).strip():
        raise ValueError(f"{flag} needs a file name, got an empty one")
    p = Path(text)
    if writes_to_stdout(text):
        return p
    if p.is_dir():
        raise ValueError(f"{flag} {text!r} is a directory; give a file name")
    if text.endswith(("/", os.sep)) or os.path.basename(text) in (".", ".."):
        # `export -o out/` (no such folder) wrote a file named `out`: a name ending in `/` asks for a folder
        raise ValueError(f"{flag} {text!r} names a folder (it ends in {text[-1]!r}), and none is there; give a "
                         "file name, such as out/results.json")
    refuse_non_regular(p, flag)
    real = Path(os.path.realpath(p))
    _require_writable_folder(real, text, flag)
    for store in stores:
        if store is None or not str(store).strip():
            continue
        s = Path(store)
        for suffix in ("", *SIDE_SUFFIXES):
            if _same_file(real, Path(f"{s}{suffix}")):
                what = "the results store in use" if not suffix else f"the {suffix[1:]} file of the results store"
                raise ValueError(f"{flag} {text!r} is {what} ({s}); writing it would destroy the stored runs: "
                                 "choose another file")
    if is_sqlite_file(real):
        raise ValueError(f"{flag} {text!r} is an SQLite database (a workbench results store, or another "
                         "database); writing it would destroy it: choose another file")
    for suffix in SIDE_SUFFIXES:
        if real.name.endswith(suffix) and is_sqlite_file(real.with_name(real.name[: -len(suffix)])):
            raise ValueError(f"{flag} {text!r} is the {suffix[1:]} file of the database "
                             f"{real.name[: -len(suffix)]}; writing it would damage that store: choose another file")
    if not export and is_workbench_export(real):
        raise ValueError(f"{flag} {text!r} holds a workbench results export (runs that may exist nowhere "
                         "else); only another export may replace it: choose another file")
    return p


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """:func:`atomic_write_chunks` of one piece."""
    return atomic_write_chunks(path, (data,))


def atomic_write_chunks(path: str | os.PathLike, chunks: Iterable[bytes]) -> Path:
    """Write ``chunks`` one after another (a large file is never whole in memory) to ``path`` through a
    temporary file in the same folder renamed over it: a reader
    sees the old file or the new one, and a failed write (full disk, kill) leaves the old one whole.
    A symlink is written through (its target is replaced). New files get the usual umask permissions;
    a replaced file keeps its mode."""
    target = Path(os.path.realpath(path))
    refuse_non_regular(target)  # a FIFO or /dev/full is never renamed over (checked again at the write)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:  # /proc, /sys, a read-only folder: name the file asked for, not our temporary file
        refused = OSError(f"the folder of {os.fspath(path)} ({target.parent}) takes no new file "
                          f"({exc.strerror or exc}); give a path in a writable folder")
        refused.errno = exc.errno
        raise refused from None
    try:
        with os.fdopen(fd, "wb") as f:
            for data in chunks:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded (no newline translation)."""
    return atomic_write_bytes(path, text.encode(encoding))


def write_output(path: str | os.PathLike, text: str | Iterable[str], *, flag: str = "output",
                 stores: Iterable[str | os.PathLike | None] = (), export: bool = False) -> Path:
    """:func:`check_output_path` then :func:`atomic_write_text` (``text`` may come in pieces, written as
    they come): the one way a command writes a file."""
    check_output_path(path, flag=flag, stores=stores, export=export)
    if writes_to_stdout(path):
        return _write_stdout(path, [text] if isinstance(text, str) else text)
    if isinstance(text, str):
        return atomic_write_text(path, text)
    return atomic_write_chunks(path, (piece.encode("utf-8") for piece in text))


def _write_stdout(path: str | os.PathLike, pieces: Iterable[str]) -> Path:
    """``pieces`` written to stdout as UTF-8 bytes as they come (a report to ``/dev/stdout``)."""
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    try:
        for piece in pieces:
            if out is not None:
                out.write(piece.encode("utf-8"))
            else:
                sys.stdout.write(piece)
        (out or sys.stdout).flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # `> /dev/full`: named, not "[Errno 28] No space left on device" alone
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from None
    return Path(path)
