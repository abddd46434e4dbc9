"""The ``workbench`` command. Each subcommand lives in ``cmd_<name>.py`` with ``register(subparsers)``.

Only the module of the command being run is imported: a subcommand's imports
(pandas, the harness, the report writers) are paid by that command alone. The
full set is registered for ``workbench --help`` and for a name that is no
command, so argparse lists every choice.
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import pkgutil
import sys


def command_modules() -> list[str]:
    """``cmd_bench``, ``cmd_compile_check`` ... (command ``compile-check``), found without importing them."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with only ``argv``'s command registered when it names one."""
    parser = argparse.ArgumentParser(prog="workbench",
                                     description="Compare compute kernels across hardware backends.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = command_modules()
    wanted = "cmd_" + argv[0].replace("-", "_") if argv else None
    for name in [wanted] if wanted in modules else modules:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if not faulthandler.is_enabled():  # a kernel crashing in-process prints the Python frame it died in
        faulthandler.enable()
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
