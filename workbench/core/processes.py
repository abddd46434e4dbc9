"""Whether a process still lives, by pid: the store asks it of a run's owner, the harness of the sweep that
made a shared input folder."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Process ``pid`` exists (one of another user's counts: signalling it is refused, not absent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
