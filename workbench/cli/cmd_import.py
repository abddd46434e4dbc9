"""``workbench import``: merge another machine's export into a results store."""

from __future__ import annotations

import argparse
import sys

from workbench.store.database import EXPORT_FORMAT, EXPORT_VERSION, Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="merge a results export (from `workbench export`) into a store",
                       description="Adds runs, environments, results and peaks that the store does not have yet; "
                                   "importing the same file twice adds nothing.")
    p.add_argument("file", help="a workbench-results JSON export")
    p.add_argument("--store", metavar="PATH", help="results store (default $WORKBENCH_STORE or "
                                                   "./workbench-results.sqlite)")
    p.set_defaults(func=run)


#: jsonschema imports this optional package for its "iri" formats, which builds a grammar (1.5 s, 5% of a
#: million-row import); no workbench schema has a format and no format checker runs, so the CLI goes without.
SKIPPED_OPTIONAL_MODULES = ("rfc3987_syntax",)


def run(args: argparse.Namespace) -> int:
    for name in SKIPPED_OPTIONAL_MODULES:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None: "import name" raises ImportError
    from workbench.store.import_schema import load_export

    # the file is read and validated before the store is opened: a bad file creates or changes nothing
    doc = load_export(args.file, export_format=EXPORT_FORMAT, export_version=EXPORT_VERSION)
    store = Store(args.store)
    added = store.import_file(args.file, validated=doc)
    print(f"imported {args.file} into {store.path}: " + ", ".join(f"{v} new {k}" for k, v in added.items()))
    return 0
