"""`make test` leaves nothing in the working tree (issue 38): the default store of every command a test runs,
and the screenshots and notebooks kept for inspection, are in temporary folders (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from workbench.store.schema import default_store_path

REPO = Path(__file__).resolve().parents[2]


def test_the_default_store_of_a_test_is_not_in_the_working_tree():
    store = default_store_path().resolve()
    assert not store.is_relative_to(REPO) and not store.is_relative_to(Path.cwd().resolve()), store
