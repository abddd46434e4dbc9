"""Notebook magics, as CuPy's ``%gpu_timeit`` offers: ``%wb_timeit`` / ``%%wb_timeit`` time a statement with
:func:`workbench.timeit` (the harness's timer, rounds and noise flag) and ``%wb_quick`` runs
:func:`workbench.quick` on a dict of callables. ``%load_ext workbench.magics`` registers them.

IPython is imported only inside :func:`load_ipython_extension` and the magics, so ``import workbench`` (and
this module) never loads it. A statement is timed as a function compiled in the notebook's namespace, so a
call costs a function call, not an ``exec``; its backend (which device to synchronise) comes from the arrays
the statement names, as :func:`workbench.timeit` reads it from its arguments.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import re
import shlex
import textwrap
from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from workbench import adhoc
from workbench.adhoc.devices import backend_for
from workbench.adhoc.timing import Measurement
from workbench.backends import registry
from workbench.sweep.driver import SweepSpec

#: One token of a magic's option part: a run of non-blanks, quoted stretches may hold blanks.
TOKEN = re.compile(r"""(?:"[^"]*"|'[^']*'|\S)+""")
#: Name the timed function gets in the notebook's namespace while it is compiled (removed afterwards).
STATEMENT_FN = "_wb_timed_statement"
#: The file name the statement is compiled under: a traceback frame of it is the user's code.
STATEMENT_FILE = "<wb_timeit>"


class _TimingOptions(TypedDict, total=False):
    """The ``-r`` / ``-b`` options a magic was given, as :func:`workbench.adhoc.timeit` and ``quick`` take them."""

    rounds: int
    budget_s: float


class MagicInputError(ValueError):
    """A magic's bad input, shown as IPython's one-line ``UsageError`` rather than a traceback."""


class _Parser(argparse.ArgumentParser):
    def one_line_usage(self) -> str:
        """The usage line without its ``usage:`` prefix, on one line."""
        return " ".join(self.format_usage().split()[1:])

    def error(self, message: str) -> Any:  # argparse would print usage and exit the kernel's process
        raise MagicInputError(f"%{self.prog}: {message} (valid: {self.one_line_usage()})")


def _timeit_parser() -> _Parser:
    p = _Parser(prog="wb_timeit", add_help=False)
    p.add_argument("-r", "--rounds", type=int, default=None, help="rounds (default workbench.timeit's)")
    p.add_argument("-b", "--budget", type=float, default=None, help="timing budget in seconds, all rounds")
    p.add_argument("--backend", default=None, help="backend to synchronise with (default: from the arrays)")
    p.add_argument("-o", "--output", action="store_true", help="return the Measurement")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    return p


def _quick_parser() -> _Parser:
    p = _Parser(prog="wb_quick", add_help=False)
    p.add_argument("-s", "--setup", required=True, help="expression: setup(n) -> the arguments")
    p.add_argument("-n", "--sizes", required=True, help="expression: the sizes")
    p.add_argument("-b", "--budget", type=float, default=None, help="timing budget per cell, in seconds")
    p.add_argument("-r", "--rounds", type=int, default=None)
    p.add_argument("--name", default=None, help="run name in the store")
    p.add_argument("--backend", default=None)
    p.add_argument("--no-check", action="store_true", help="do not compare outputs with the first callable's")
    p.add_argument("-o", "--output", action="store_true", help="return the QuickResults")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    return p


def split_options(line: str, parser: _Parser) -> tuple[argparse.Namespace, str]:
    """``line``'s leading options parsed by ``parser`` (quotes allow blanks in a value), and the rest of the
    line exactly as typed. Options end at the first token that is not one, or at ``--``."""
    known = {s for a in parser._actions for s in a.option_strings}
    takes_value = {s for a in parser._actions if a.nargs != 0 for s in a.option_strings}
    tokens: list[str] = []
    pos, expect_value = 0, False
    while (m := TOKEN.search(line, pos)) is not None:
        tok = m.group()
        if not expect_value and (tok == "--" or not re.match(r"--?[A-Za-z]", tok)):
            if tok == "--":
                pos = m.end()
            break
        if not expect_value and tok.split("=", 1)[0] not in known and tok[:2] not in known:
            parser.error(f"unrecognized arguments: {tok}")  # before its value is taken for the statement
        try:
            tokens.extend(shlex.split(tok) or [""])
        except ValueError as exc:
            raise MagicInputError(f"%{parser.prog}: cannot read {tok!r}: {exc}") from None
        expect_value = not expect_value and tok in takes_value
        pos = m.end()
    return parser.parse_args(tokens), line[pos:].strip()


def _number(parser: _Parser, option: str, value: Any, flag: str) -> Any:
    if value is None:
        return None
    try:
        return SweepSpec.check_option(option, value, flag)
    except ValueError as exc:
        raise MagicInputError(f"%{parser.prog}: {exc}") from None


def _backend(parser: _Parser, name: str | None) -> str | None:
    if name is None:
        return None
    try:
        return registry.get(name).name
    except ValueError as exc:
        raise MagicInputError(f"%{parser.prog}: --backend {name!r}: {exc}") from None


def _names(source: str) -> list[str]:
    """Names a statement reads, in order (a statement that does not parse gets Python's own SyntaxError later)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return list(dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)))


def statement_function(stmt: str, namespace: dict[str, Any], setup: str = "") -> tuple[Callable[[], Any], list[Any]]:
    """``stmt`` as a function of no arguments whose globals are ``namespace``; ``setup`` runs once before, its
    names visible to ``stmt`` (as ``%%timeit``'s setup line). Returns the function and the values the
    statement names (the arrays among them say which device to synchronise)."""
    body = textwrap.indent(textwrap.dedent(setup), "    ") + "\n" if setup.strip() else ""
    source = (f"def {STATEMENT_FN}():\n{body}    def run():\n{textwrap.indent(textwrap.dedent(stmt), '        ')}\n"
              f"        pass\n    return run\n")
    code = compile(source, STATEMENT_FILE, "exec")
    scratch: dict[str, Any] = {}
    exec(code, namespace, scratch)  # the user's own notebook statement, compiled as %timeit compiles it
    run = scratch[STATEMENT_FN]()
    closure = dict(zip(run.__code__.co_freevars, (c.cell_contents for c in run.__closure__ or ()), strict=True))
    values = [closure[n] if n in closure else namespace[n] for n in _names(stmt) if n in closure or n in namespace]
    run.__name__ = run.__qualname__ = "statement"
    return run, values


def statement_error(exc: BaseException, prog: str) -> MagicInputError | None:
    """One line for an error raised in the user's statement or setup (a frame of :data:`STATEMENT_FILE` on its
    traceback, or a SyntaxError in it): ``%wb_timeit: the statement raised NameError: name 'x' is not
    defined``; None for an error of the workbench's own, which keeps its traceback."""
    if isinstance(exc, SyntaxError) and exc.filename == STATEMENT_FILE:
        return MagicInputError(f"%{prog}: the statement is not valid Python: {exc.msg} (line {exc.lineno})")
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == STATEMENT_FILE:
            return MagicInputError(f"%{prog}: the statement raised {type(exc).__name__}: {exc}")
        tb = tb.tb_next
    return None


def measurement_line(m: Measurement) -> str:
    """One line: median, quartiles, rounds and samples, the noise flag, timer, backend and threads."""
    calls = f"{m.calls_per_sample} call{'s' * (m.calls_per_sample != 1)}"
    return (f"{m.spread_text()}; {m.noise_text()}; {m.rounds} rounds, {m.n_samples} samples of {calls}; "
            f"timing mode {m.timing_mode}, timer {m.timer_kind} on {m.backend}; threads: {m.threads}")


def wb_timeit(shell: Any, line: str, cell: str | None = None) -> Measurement | None:
    """``%wb_timeit [-r ROUNDS] [-b BUDGET_S] [--backend NAME] [-o] [-q] statement``, or as a cell magic the
    cell is the statement and the rest of the first line a setup statement run once."""
    parser = _timeit_parser()
    args, rest = split_options(line, parser)
    stmt, setup = (cell, rest) if cell is not None else (rest, "")
    if not stmt.strip():
        raise MagicInputError(f"%{parser.prog}: no statement to time (usage: {parser.one_line_usage()} "
                              "statement)")
    options: _TimingOptions = {}
    if (r := _number(parser, "rounds", args.rounds, "-r")) is not None:
        options["rounds"] = r
    if (b := _number(parser, "budget_s", args.budget, "-b")) is not None:
        options["budget_s"] = b
    transform = getattr(shell, "transform_cell", lambda s: s)
    try:
        run, values = statement_function(transform(stmt), shell.user_ns, transform(setup) if setup.strip() else "")
    except Exception as exc:  # noqa: BLE001 - the user's setup or syntax: one line; ours re-raised
        raise statement_error(exc, parser.prog) or exc from None
    backend = _backend(parser, args.backend)
    if backend is None:
        try:
            backend = backend_for(values)
        except ValueError as exc:  # arrays on two devices: say which to wait for
            raise MagicInputError(f"%{parser.prog}: {exc} (--backend NAME)") from None
    try:
        m = adhoc.timeit(run, backend=backend, **options)
    except Exception as exc:  # noqa: BLE001 - the statement's own error: one line; ours re-raised
        raise statement_error(exc, parser.prog) or exc from None
    m = dataclasses.replace(m, label=" ".join(stmt.split())[:60])
    if not args.quiet:
        print(measurement_line(m))
    return m if args.output else None


def _evaluate(shell: Any, parser: _Parser, what: str, expr: str) -> Any:
    try:
        return shell.ev(expr)
    except Exception as exc:  # noqa: BLE001 - any error of the user's expression becomes one line naming it
        raise MagicInputError(f"%{parser.prog}: {what} `{expr}` could not be evaluated: "
                              f"{type(exc).__name__}: {exc}") from None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def wb_quick(shell: Any, line: str) -> Any:
    """``%wb_quick -s SETUP -n SIZES [-b BUDGET_S] [-r ROUNDS] [--name NAME] [--backend NAME] [--no-check] [-o]
    [-q] callables``: ``callables`` an expression giving a dict name -> callable; displays the summary."""
    parser = _quick_parser()
    args, expr = split_options(line, parser)
    if not expr:
        raise MagicInputError(f"%{parser.prog}: no callables (usage: {parser.one_line_usage()} "
                              "callables)")
    fns = _evaluate(shell, parser, "callables", expr)
    if not isinstance(fns, Mapping) or not fns:
        raise MagicInputError(f"%{parser.prog}: `{expr}` must be a non-empty dict of name -> callable, got "
                              f"{type(fns).__name__} {_show(fns)}")
    bad = {k: v for k, v in fns.items() if not callable(v)}
    if bad:
        name, value = next(iter(bad.items()))
        raise MagicInputError(f"%{parser.prog}: `{expr}` must map names to callables; {name!r} maps to "
                              f"{type(value).__name__} {_show(value)}")
    options: _TimingOptions = {}
    if (r := _number(parser, "rounds", args.rounds, "-r")) is not None:
        options["rounds"] = r
    if (b := _number(parser, "budget_s", args.budget, "-b")) is not None:
        options["budget_s"] = b
    setup = _evaluate(shell, parser, "setup", args.setup)
    sizes = _evaluate(shell, parser, "sizes", args.sizes)
    try:
        res = adhoc.quick(dict(fns), setup, sizes, check=not args.no_check, name=args.name,
                          backend=_backend(parser, args.backend), progress=not args.quiet, **options)
    except (TypeError, ValueError) as exc:  # quick's own checks of setup, sizes and name: one line each
        raise MagicInputError(f"%{parser.prog}: {exc}") from None
    if not args.quiet:
        table = res.summary()
        shown = [c for c in table.columns if c != "kernel" and table[c].astype(bool).any()]  # no empty column
        print(repr(res))
        if in_terminal(shell):  # a terminal would show a frame cut to its width ("variant ... notes")
            print(summary_text(table[shown]))
        else:
            from IPython.display import display

            display(table[shown])
    return res if args.output else None


def in_terminal(shell: Any) -> bool:
    """Whether ``shell`` is terminal IPython (no kernel, so no rich display of a frame)."""
    return getattr(shell, "kernel", None) is None


#: Columns that say which cell a line is: they open the line; every other column follows as "name value".
_CELL_COLUMNS = ("variant", "backend", "dtype", "size", "status")


def summary_text(table: Any) -> str:
    """The summary as text a terminal shows whole: one line per cell (its variant, backend, dtype, size and
    status, then every other non-empty column by name), its notes on an indented line below."""
    lines = []
    for _, row in table.iterrows():
        cell = " ".join(str(row[c]) for c in _CELL_COLUMNS if c in row and str(row[c]))
        rest = [f"{c} {row[c]}" for c in table.columns
                if c not in _CELL_COLUMNS and c != "notes" and str(row[c]).strip() and str(row[c]) != "nan"]
        lines.append(f"{cell}: {', '.join(rest)}" if rest else cell)
        if "notes" in row and str(row["notes"]).strip():
            lines.append(f"    notes: {row['notes']}")
    return "\n".join(lines)


def _as_magic(fn: Callable[..., Any], shell: Any) -> Callable[..., Any]:
    """``fn(shell, ...)`` as a magic of ``shell``, with :class:`MagicInputError` shown as a ``UsageError``."""
    from IPython.core.error import UsageError

    def magic(*args: Any) -> Any:
        try:
            return fn(shell, *args)
        except MagicInputError as exc:
            raise UsageError(str(exc)) from None

    magic.__name__, magic.__doc__ = fn.__name__, fn.__doc__
    return magic


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext workbench.magics``: register ``%wb_timeit``, ``%%wb_timeit`` and ``%wb_quick``."""
    ip.register_magic_function(_as_magic(wb_timeit, ip), magic_kind="line_cell", magic_name="wb_timeit")
    ip.register_magic_function(_as_magic(wb_quick, ip), magic_kind="line", magic_name="wb_quick")
