"""The ``workbench`` command. Each subcommand lives in ``cmd_<name>.py`` with ``register(subparsers)``.

Only the module of the command being run is imported: a subcommand's imports
(pandas, the harness, the report writers) are paid by that command alone. The
full set is registered for ``workbench --help`` and for a name that is no
command, so argparse lists every choice.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import os
import pkgutil
import sqlite3
import sys
import traceback
from typing import NoReturn

from workbench.cli.termination import Terminated, stop_signals_ignored_from_now, termination_as_interrupt
from workbench.cli.threads_note import say_threads_left
from workbench.core.env_values import env_flag
from workbench.core.threads_left import exit_now, recording_origins, status_kept_at_exit, threads_left


def command_modules() -> list[str]:
    """``cmd_bench``, ``cmd_compile_check`` ... (command ``compile-check``), found without importing them."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("cmd_"))


class _Parser(argparse.ArgumentParser):
    """argparse with errors in two lines (the problem, then where the options are) instead of the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\nrun `{self.prog} --help` for the options\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with only ``argv``'s command registered when it names one."""
    parser = _Parser(prog="workbench", description="Compare compute kernels across hardware backends.",
                     epilog="Exit codes: 0 ok; 1 cells failed (bench --strict), verification failed or a gate "
                            "failed; 2 a usage or input error; 130 interrupted. --debug shows the traceback "
                            "of an error.")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, show the Python traceback too (also $WORKBENCH_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = command_modules()
    wanted = "cmd_" + argv[0].replace("-", "_") if argv else None
    for name in [wanted] if wanted in modules else modules:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


#: Exit status of a usage or input error (argparse's own), of an interrupted command, and of one whose
#: output pipe closed (128 + SIGPIPE, as a shell tool killed by it).
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
#: Commands that only read or write stores and files: they never load the kernel catalog.
STORE_ONLY_COMMANDS = ("config", "runs", "export", "import", "store", "report", "history")
#: Commands that read stored result rows: a value they cannot parse is looked for in the store and named.
STORE_READING_COMMANDS = ("report", "compare", "history", "export", "bench", "tune")
#: Shows the traceback of an error, as --debug does.
ENV_DEBUG = "WORKBENCH_DEBUG"


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush does not fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _reserve_std_fds() -> list[str]:
    """Descriptors 0-2 that were closed (``workbench runs >&-``), each opened on /dev/null, so that no file the
    command opens (a store) gets their number and receives what is printed; their names are returned."""
    closed = []
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(name)
            try:
                devnull = os.open(os.devnull, os.O_RDWR)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)
            except OSError:
                pass
    if sys.stderr is None:  # nowhere to say anything: the exit status still does
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process
    return closed


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit status (never raises for bad input: a message on stderr instead,
    with the traceback only under ``--debug``). Everything printed goes through one terminal-safe stream
    (:mod:`workbench.core.terminal_text`): no control sequence from a kernel or a user reaches the terminal,
    no locale makes printing fail, and a reader that leaves (``| head``) stops the printing, not the work."""
    from workbench.core.terminal_text import safe_std_streams

    closed = _reserve_std_fds()
    if sys.stdout is None or "stdout" in closed:
        print("workbench: error: stdout is closed, so nothing could be printed; run it with stdout open (to "
              "discard the output: > /dev/null)", file=sys.stderr)
        return EXIT_USAGE
    left = []
    with safe_std_streams() as (out, _err), termination_as_interrupt(), recording_origins():
        try:
            rc = _main(argv)
        except KeyboardInterrupt as exc:  # while the command's module loads or its arguments are read
            rc = _interrupted(exc)
        left = threads_left()
        if left:  # a kernel's thread (--in-process): the interpreter would wait for it at exit
            say_threads_left(left)
        with contextlib.suppress(OSError, ValueError):
            out.flush()
        if out.failed is not None:  # `> /dev/full`: said, never "[Errno 28]" naming nothing, never exit 0
            print(f"workbench: error: could not write to stdout ({out.failed.strerror or out.failed}); what it "
                  "printed is incomplete", file=sys.stderr)
            rc = rc or EXIT_USAGE
        elif out.broken:
            rc = EXIT_BROKEN_PIPE
    if argv is None:  # the command itself (not a library call)
        stop_signals_ignored_from_now()  # done: a stop signal during the interpreter's shutdown changes nothing
        status_kept_at_exit(rc)  # nor does code a catalog file left to run at exit
        if left:  # exit without joining them
            exit_now(rc)
    return rc


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Say that the command was stopped (by Ctrl-C, or by the signal named) and give its exit status: 130,
    whichever stop signal it was (docs/cli.md). SIGTERM while the command's module loaded gave a traceback and
    exit 1, and before a sweep had begun exit 143."""
    print(f"interrupted ({exc})" if isinstance(exc, Terminated) else "interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    """:func:`main` inside its streams."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:  # read as every switch is (WORKBENCH_DEBUG=maybe, or =false, turned tracebacks on)
        debug = "--debug" in argv or env_flag(ENV_DEBUG, False)
    except ValueError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    argv = [a for a in argv if a != "--debug"]  # accepted anywhere on the line
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    if not faulthandler.is_enabled():  # a kernel crashing in-process prints the Python frame it died in
        faulthandler.enable()
    try:
        _before_command(args)
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below, not at interpreter exit
        return rc
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (workbench.cli.termination)
        return _interrupted(exc)
    except BrokenPipeError:  # `workbench runs | head`: the reader left; nothing to say, and nothing more to print
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except sqlite3.DatabaseError as exc:  # a damaged (or locked, full ...) store met while reading it: what to do
        if debug:
            traceback.print_exc()
        from workbench.store.database import default_store_path, describe_sqlite_error

        store = getattr(args, "store", None) or default_store_path()
        print(f"workbench {args.command}: error: {describe_sqlite_error(store, exc)}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, LookupError, OSError, RecursionError) as exc:  # bad input: a clear message
        if debug:
            traceback.print_exc()
        damaged = _damaged_store(args) if isinstance(exc, ValueError) else None
        print(f"workbench {args.command}: error: {damaged or _one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - a bug: still no traceback unless asked for
        if debug:
            traceback.print_exc()
        # unless a stored value of the wrong kind (bytes where a number belongs) caused it: then that is named
        damaged = _damaged_store(args) if isinstance(exc, TypeError) else None
        if damaged is not None:
            print(f"workbench {args.command}: error: {damaged}", file=sys.stderr)
            return EXIT_USAGE
        print(f"workbench {args.command}: internal error: {type(exc).__name__}: {_one_line(exc)}\n"
              "run again with --debug for the traceback, and please report it", file=sys.stderr)
        return 1


def _before_command(args: argparse.Namespace) -> None:
    """The configuration file applied and the catalog and environment values checked, before a command runs (its
    errors are the command's: :func:`_main` words them)."""
    if args.command != "config":  # `config` must be able to show and repair a broken file
        from workbench import config

        config.apply_to_environment(config.read())
    if args.command not in STORE_ONLY_COMMANDS:  # a catalog folder that is not there fails now, not per cell
        from workbench.cli.checks import check_catalog_env, check_env_values

        check_catalog_env()
        check_env_values()


def _damaged_store(args: argparse.Namespace) -> str | None:
    """Where a command that reads stored rows failed on a value: the damaged field named (store, run, cell,
    column, value), in place of the parser's words ("could not convert string to float: 'abc'", "Expecting
    value: line 1 column 4"), which named none of them; None when the store's values are all readable."""
    if args.command not in STORE_READING_COMMANDS:
        return None
    try:
        from workbench.store.database import default_store_path, open_store

        path = getattr(args, "store", None) or default_store_path()
        store = open_store(path, must_exist=True)
        try:
            found = store.damaged_values(limit=1)
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - the diagnosis is a courtesy: the command's own message stands
        return None
    if not found:
        return None
    where, what = found[0]
    return (f"results store {path} is damaged: {where} holds {what}; `workbench store check --store {path}` "
            "lists such fields; restore the store from an export (`workbench import FILE.json`) or drop the run "
            "(`workbench store drop RUN`)")


def _one_line(exc: BaseException) -> str:
    """The exception's message (a KeyError's without its quotes), at most a few hundred characters."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    text = text.strip() or type(exc).__name__
    return text if len(text) <= 2000 else text[:2000] + "…"


if __name__ == "__main__":
    sys.exit(main())
