"""The configuration file holds the default backend, thread counts, the store path and tuned configurations. It is
$WORKBENCH_CONFIG, else $XDG_CONFIG_HOME/workbench/config.json. Its settings are defaults: an environment
variable set by hand wins."""

from __future__ import annotations

import argparse
import json
import os

from workbench import config as cfg
from workbench.cli.args_common import command
from workbench.core.terminal_text import terminal_safe


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "config", run, description=__doc__,
                help="show or change the configuration file ($WORKBENCH_CONFIG)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the configuration in force")
    show.add_argument("--json", action="store_true", help="the file's JSON")
    st = actions.add_parser("set", help=f"set one key: {', '.join(cfg.SETTABLE)}")
    st.add_argument("key", metavar="KEY", help=", ".join(cfg.SETTABLE))
    st.add_argument("value", metavar="VALUE")
    save = actions.add_parser("save", help="write the configuration in force to PATH")
    save.add_argument("path", metavar="PATH")
    load = actions.add_parser("load", help="check PATH and make it the configuration in force")
    load.add_argument("path", metavar="PATH")


def run(args: argparse.Namespace) -> int:
    path = cfg.config_path()
    if args.action == "show":
        current = cfg.read(path)
        print(json.dumps(current, indent=2) if args.json else describe(current, str(path), path.exists()))
    elif args.action == "set":
        written = cfg.write(cfg.set_value(cfg.read(path), args.key, args.value), path)
        print(f"{args.key} = {args.value} in {terminal_safe(written, one_line=True)}")
    elif args.action == "save":
        written = cfg.write(cfg.read(path), args.path)
        print(f"saved the configuration of {terminal_safe(path, one_line=True)} to "
              f"{terminal_safe(written, one_line=True)}")
    else:
        if not os.path.exists(args.path):  # one that is there but is no regular file is named as what it is
            raise ValueError(f"config load: {args.path}: no such file")
        print(f"loaded {args.path} into {cfg.write(cfg.read(args.path), path)}")
    return 0


def describe(config: cfg.WorkbenchConfig, path: str, exists: bool) -> str:
    lines = [f"configuration file: {path}" + ("" if exists else " (absent: every setting at its default)")]
    lines.append(f"default_backend: {config.get('default_backend', '(automatic choice)')}")
    lines.append(f"store: {config.get('store', '(default: $WORKBENCH_STORE or ./workbench-results.sqlite)')}")
    threads = config.get("threads") or {}
    lines.append("threads: " + (", ".join(f"{k}={v}" for k, v in threads.items()) or "(runtime defaults)"))
    tuned = cfg.tuned_entries(config)
    lines.append(f"tuned configurations: {len(tuned)}")
    for e in tuned:
        conf = ",".join(f"{k}={v}" for k, v in e["config"].items())
        took = f" {e['median_s'] * 1e3:.3f} ms" if e.get("median_s") else ""
        lines.append(f"  {e['kernel']}/{e['variant']} {e['dtype']} {e['shape_class']} on {e['device']}: {conf}{took}")
    return "\n".join(lines)
