"""Reading a file we were pointed at, bounded: only a regular file, and never more than a stated size.

Why: a path from a user or the environment may name anything. ``WORKBENCH_CONFIG=/dev/zero`` once read until
the OOM killer came (6.5 GB), a FIFO made every command wait for a writer that never came, and ``import
/dev/zero`` ended in a MemoryError. Every file the workbench reads whole goes through :func:`read_regular_bytes`:
it opens without blocking (a FIFO with no writer does not hang the open), refuses what is not a regular file
(naming what it is), and reads at most ``limit`` bytes, whatever the file's size claims to be.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: The default cap of a file read whole (configurations, caches, kernel sources): far above any real one.
DEFAULT_READ_LIMIT = 16 << 20
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a FIFO (named pipe)", "a regular file" ...)."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def read_regular_bytes(path: str | os.PathLike, limit: int = DEFAULT_READ_LIMIT, what: str = "file") -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; a ValueError naming ``what`` and the path
    otherwise (FileNotFoundError when it is missing). Symlinks are followed: their target must be regular."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {p}: no such file") from None
    except PermissionError:
        raise ValueError(f"{what} {p}: permission denied (cannot read it)") from None
    except OSError as exc:
        raise ValueError(f"{what} {p}: cannot open it ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{what} {p} is {file_kind(st.st_mode)}, not a regular file; give a regular file")
        if st.st_size > limit:
            raise ValueError(f"{what} {p}: {st.st_size:,} bytes is larger than such a file may be ({limit:,} bytes)")
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while got <= limit:  # a file may be larger than its size said (one that grows, or /proc's)
            data = os.read(fd, min(1 << 20, limit + 1 - got))
            if not data:
                break
            chunks.append(data)
            got += len(data)
        if got > limit:
            raise ValueError(f"{what} {p}: more than {limit:,} bytes, larger than such a file may be")
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"{what} {p}: cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_regular_text(path: str | os.PathLike, limit: int = DEFAULT_READ_LIMIT, what: str = "file") -> str:
    """:func:`read_regular_bytes` decoded as UTF-8 (a BOM dropped); a byte that is not UTF-8 is a ValueError
    naming it and its offset."""
    data = read_regular_bytes(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start:,})") from None


#: The most of a growing file's new part read back at once (a worker's output): its first and last halves.
NEW_PART_LIMIT = 64 << 10


def read_new_part(fd: int, start: int, limit: int = NEW_PART_LIMIT) -> tuple[bytes, int]:
    """What the file open on ``fd`` gained past offset ``start``, at most ``limit`` bytes of it (the first and last
    halves, a line between saying how much was left out), and the offset it ends at now. Read with ``pread``:
    the file's offset, which a child writing to the file shares, is never moved.

    Why: a worker's output was read back whole, however much a kernel printed, into the command's memory and
    echoed whole to its stderr (50 MB of one variant's prints reached the terminal)."""
    end = os.fstat(fd).st_size
    if end <= start:
        return b"", start
    if end - start <= limit:
        return os.pread(fd, end - start, start), end
    half = limit // 2
    left_out = f"\n[... {end - start - 2 * half:,} bytes of output left out ...]\n".encode()
    return os.pread(fd, half, start) + left_out + os.pread(fd, half, end - half), end
