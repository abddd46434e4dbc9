"""What every ``cmd_<name>.register`` repeats, written once: the subcommand with its run function, and the
``--store`` option that most commands take, with one help text."""

from __future__ import annotations

import argparse
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
