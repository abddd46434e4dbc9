"""The ``workbench`` command. Each subcommand lives in ``cmd_<name>.py`` with ``register(subparsers)``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench",
                                     description="Compare compute kernels across hardware backends.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("cmd_"):
            importlib.import_module(f"{__name__}.{mod.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as exc:  # bad input: a clear message, not a traceback
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
