"""What every ``cmd_<name>.register`` repeats, written once: the subcommand with its run function, and the
``--store`` option that most commands take, with one help text."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

STORE_HELP = "results store (default $WORKBENCH_STORE or ./workbench-results.sqlite)"


def command(sub: Any, name: str, run: Callable[[argparse.Namespace], int], *, help: str,
            description: str | None) -> argparse.ArgumentParser:
    """The subcommand ``name`` that ``run`` carries out. ``description`` is the command module's docstring:
    what ``--help`` says about the command is what its module says, in one place."""
    parser = sub.add_parser(name, help=help, description=description)
    parser.set_defaults(func=run)
    return parser


def add_store(parser: argparse.ArgumentParser, help: str = STORE_HELP) -> None:
    """``--store PATH`` (None when not given: the commands open the default store)."""
    parser.add_argument("--store", metavar="PATH", default=None, help=help)


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]``, else argparse's usage error (exit 2) naming the option
    and the value (a bad value reached the library whose message named neither: optuna's for ``--seed -1``,
    the executor's "max_workers must be greater than 0" for ``--jobs -1``)."""
    span = f"from {low:,} to {high:,}" if high is not None else f"of {low:,} or more"

    def parse(text: str) -> int:
        digits = text.strip().lstrip("+-")
        try:
            n = int(text) if len(digits) <= 40 else None
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one {span}") from None
        if n is None or n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is out of range; give a whole number {span}")
        return n

    return parse


def seconds(maximum: float = 7 * 24 * 3600.0) -> Callable[[str], float]:
    """An argparse ``type``: a finite number of seconds above 0 and at most ``maximum`` (``--timeout 0`` was taken,
    and every compile "timed out after 0 s"; nan and inf ended in a conversion error)."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if not (math.isfinite(x) and 0 < x <= maximum):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a usable number of seconds; give a finite "
                                             f"number > 0 and <= {maximum:g}")
        return x

    return parse


def given_text(text: str) -> str:
    """An argparse ``type``: a value with at least one name in it (comma-separated names count each). An empty
    one (``--machine ''``, ``--kernel ','``, ``--baseline ''``) selected everything, or the default, unsaid."""
    if not any(part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give a value, or leave the option out")
    return text
