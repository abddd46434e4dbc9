"""``workbench import``: merge another machine's export into a results store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.core.terminal_text import terminal_safe
from workbench.store.connection import BULK_PAGE_SIZE
from workbench.store.database import EXPORT_FORMAT, EXPORT_VERSION, Store
from workbench.store.schema import default_store_path


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
    from workbench.store.import_schema import check_streamable, is_streamed, load_export

    if is_streamed(args.file):  # a large file is checked while its rows go in, in one transaction
        check_streamable(Path(args.file), args.file, EXPORT_FORMAT)
        added, store_path = _import_streamed(args.file, args.store)
    else:  # the file is read and validated before the store is opened: a bad file creates or changes nothing
        doc = load_export(args.file, export_format=EXPORT_FORMAT, export_version=EXPORT_VERSION)
        store = Store(args.store)
        added, store_path = store.import_file(args.file, validated=doc), store.path
    print(f"imported {terminal_safe(args.file, one_line=True)} into {terminal_safe(store_path, one_line=True)}: "
          + ", ".join(f"{v} new {k}" for k, v in added.items()))
    return 0


def _import_streamed(file: str, store_arg: str | None) -> tuple[dict[str, int], Path]:
    """Import a large file into the store, a new store with :data:`BULK_PAGE_SIZE` pages; when that fails and
    the store did not exist before, the store this created is removed again (a bad file creates nothing; its
    rows were rolled back)."""
    path = Path(store_arg) if store_arg else default_store_path()
    created = not path.exists() and not path.is_symlink()
    store = Store(store_arg, page_size=BULK_PAGE_SIZE if created else None)
    try:
        return store.import_file(file, new_store=created), store.path
    except BaseException:
        if created:
            store.close()
            for p in (store.path, Path(f"{store.path}-wal"), Path(f"{store.path}-shm")):
                p.unlink(missing_ok=True)
        raise
