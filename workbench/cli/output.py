"""Keep a command's stdout for its own output (tables, JSON) while runtimes are loaded."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send file descriptor 1 to stderr, C-level writes included, for the duration.

    Runtimes (PoCL, numba, CUDA libraries) may print while they are probed or
    compile; redirecting the descriptor, not just ``sys.stdout``, keeps that
    out of a table or a JSON document on stdout.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
