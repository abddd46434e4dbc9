"""Issue 41 in Chromium: the report's History section (a figure per series, the series with a change first,
the change marked, the run's commit on hover). Screenshots land in the test's folder and in
$WORKBENCH_TEST_OUTPUT (tests/conftest.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from browser_helpers import CHROMIUM, chromium_page, save_screenshot
from history_store import write_history

from workbench.report import write_report
from workbench.store.database import Store

pytestmark = [pytest.mark.browser]
try:
    import playwright.sync_api  # noqa: F401
    _skip = None if CHROMIUM.exists() else f"{CHROMIUM} is absent"
except ImportError:
    _skip = "playwright is not installed"
if _skip:
    pytest.skip(f"the history browser test needs Chromium and playwright: {_skip}", allow_module_level=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("history")
    store = Store(tmp / "h.sqlite")
    rng = np.random.default_rng(41)
    medians = {("saxpy", "numpy"): [1e-4 * math.exp(rng.normal(0, 0.02)) * (1.15 if i >= 6 else 1) for i in range(12)],
               ("saxpy", "numba"): [8e-5 * math.exp(rng.normal(0, 0.02)) for _ in range(12)]}
    write_history(store, medians, commits=[("a" * 8 if i < 6 else "b" * 8) + f"{i:032x}" for i in range(12)])
    return write_report(store, [store.latest_run_id()], tmp / "history.html")


def test_history_section_shows_the_change_first_with_commits_on_hover(report, tmp_path):
    with chromium_page(tmp_path, width=1280, height=900) as page:
        page.goto(report.as_uri())
        section = page.locator("h2#history")
        assert section.count() == 1
        figures = page.locator("figure.history")
        assert figures.count() == 2
        first = figures.nth(0)
        assert "saxpy numpy" in first.inner_text() and "slower +" in first.inner_text()
        assert "regressed" in (first.get_attribute("class") or "")
        box = first.locator("svg").bounding_box()
        assert box and box["width"] > 300 and box["height"] > 100
        titles = first.locator("svg .history-hover circle title")
        assert titles.count() == 12
        assert "commit bbbbbbbb00" in titles.nth(6).text_content()
        circle = first.locator("svg .history-hover circle").nth(6)
        circle.hover()  # the point is where the title is: it takes the pointer
        assert circle.bounding_box()["width"] > 3
        section.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "history-section.png"))
        save_screenshot(page, tmp_path, "history-report.png")


def test_dashboard_history_view_in_voila(tmp_path):
    """The dashboard's history view of the selected kernel, served by Voila, drawn in Chromium."""
    import nbformat
    from browser_helpers import voila

    root = tmp_path / "voila-root"
    root.mkdir()
    store = Store(root / "h.sqlite")
    rng = np.random.default_rng(7)
    write_history(store, {("saxpy", "numpy"): [1e-4 * math.exp(rng.normal(0, 0.02)) * (1.2 if i >= 5 else 1)
                                               for i in range(10)],
                          ("saxpy", "numba"): [8e-5 * math.exp(rng.normal(0, 0.02)) for _ in range(10)]})
    store.close()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from workbench.ui.dashboard import Dashboard\n"
        f"Dashboard(store={str(root / 'h.sqlite')!r}, kernel='saxpy', backends=['numpy'])")])
    notebook = root / "history.ipynb"
    nbformat.write(nb, notebook)
    with voila(notebook, tmp_path) as (server, token), chromium_page(tmp_path, width=1400, height=1000) as page:
        page.goto(f"{server.url}/?token={token}", timeout=120_000)
        view = page.locator(".wb-history")
        view.wait_for(state="visible", timeout=120_000)
        figures = view.locator("figure.wb-history-fig")
        assert figures.count() == 2
        assert "1 with a change" in view.inner_text() and "slower +" in figures.nth(0).inner_text()
        assert "commit" in figures.nth(0).locator("svg .history-hover circle title").nth(5).text_content()
        view.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        page.screenshot(path=str(tmp_path / "dashboard-history.png"))
        save_screenshot(page, tmp_path, "dashboard-history-full.png")
