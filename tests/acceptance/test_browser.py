"""The dashboard in a real browser: JupyterLab and Voila driven by headless Debian Chromium (playwright).

The JupyterLab tests share one server (a module fixture: starting JupyterLab is several seconds of a
busy core) on a free local port with a token, and each opens its own copy of notebooks/dashboard.ipynb
(in a folder of its own under the server's temporary root, so each has its own kernel, store and
workspace); the Voila test starts its own server. Each picks a backend and a kernel, runs a tiny sweep,
waits for the plot image and the results table, exports a report and checks the file on disk, then
saves a screenshot in the test's folder and in $WORKBENCH_TEST_OUTPUT (tests/conftest.py).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from browser_helpers import browser_skip_reason, chromium_page, jupyterlab, save_screenshot, stage_notebook, voila

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_skip = browser_skip_reason()
if _skip:
    pytest.skip(f"browser tests need Chromium and playwright: {_skip}", allow_module_level=True)

RUN_TIMEOUT_MS = 180_000


def drive_dashboard(page, scope: str, export_dir: Path) -> None:
    """Choose numpy + saxpy at three small sizes, run, check plot and table, export HTML."""
    root = page.locator(f"{scope} .wb-dashboard").first
    root.wait_for(state="visible", timeout=RUN_TIMEOUT_MS)

    unavailable = root.locator(".wb-backend.wb-unavailable input[type=checkbox]")
    for i in range(unavailable.count()):
        assert unavailable.nth(i).is_disabled()
    available = root.locator(".wb-backend.wb-available")
    for i in range(available.count()):
        box = available.nth(i)
        classes = box.get_attribute("class") or ""
        want = "wb-backend-numpy" in classes.split()
        checkbox = box.locator("input[type=checkbox]")
        if checkbox.is_checked() != want:
            checkbox.click()
    assert root.locator(".wb-backend-numpy input[type=checkbox]").is_checked()

    root.locator(".wb-kernel select").select_option("saxpy")
    root.locator(".wb-variant-numpy input[type=checkbox]").wait_for()
    root.locator(".wb-size-source button", has_text="range").click()
    for css, value in ((".wb-size-min-n", "1000"), (".wb-size-max-n", "100000"), (".wb-size-steps", "3"),
                       (".wb-budget", "0.02")):
        field = root.locator(f"{css} input")
        field.fill(value)
        field.press("Enter")
    root.locator(".wb-size-preview", has_text="3 sizes").wait_for()
    export_field = root.locator(".wb-export-dir input")
    export_field.fill(str(export_dir))
    export_field.press("Enter")

    root.locator("button.wb-run").click()
    root.locator(".wb-status", has_text=re.compile("finished|error|cancelled")).wait_for(timeout=RUN_TIMEOUT_MS)
    status = root.locator(".wb-status").inner_text()
    assert "finished" in status and "3 ok" in status, status
    root.locator(".wb-plot img").first.wait_for(state="visible")
    root.locator(".wb-table table").wait_for(state="visible")
    assert root.locator(".wb-table tbody tr").count() == 3
    assert root.locator(".wb-progress-label").inner_text().startswith("3/3")

    root.locator("button.wb-export-html").click()
    try:
        root.locator(".wb-export-path", has_text="wrote").wait_for(timeout=60_000)
    except Exception as exc:  # say what the dashboard said instead of a bare timeout
        raise AssertionError(f"no 'wrote' after the export; the dashboard's status: "
                             f"{root.locator('.wb-status').inner_text()!r}") from exc
    written = list(export_dir.glob("saxpy-*.html"))
    assert len(written) == 1 and written[0].stat().st_size > 1000, written
    assert written[0].name in root.locator(".wb-export-path").inner_text()
    box = root.locator(".wb-controls").bounding_box()
    assert box and box["width"] >= 300, f"the controls column collapsed next to the results: {box}"
    root.locator(".wb-plot img").first.scroll_into_view_if_needed()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One JupyterLab server for the module's JupyterLab tests; yields (its folder, server, token)."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    (tmp / "root").mkdir()
    with jupyterlab(tmp) as (server, token):
        yield tmp, server, token


def stage_in_lab(lab, tmp_path: Path) -> tuple[str, object, str]:
    """A copy of the dashboard notebook in a folder of this test's own under the shared server's root;
    returns its path under the root, the server and its token."""
    folder, server, token = lab
    sub = tmp_path.name
    stage_notebook("dashboard.ipynb", folder / "root" / sub)
    return f"{sub}/dashboard.ipynb", server, token


def open_in_jupyterlab(page, server, token, notebook: str = "dashboard.ipynb") -> str:
    """Open the staged dashboard notebook, run all cells; the CSS scope of the notebook panel."""
    page.goto(f"{server.url}/lab/tree/{notebook}?token={token}&reset")
    # The toolbar's indicator says idle while the kernel is still starting; the status bar does not.
    page.wait_for_function(
        "() => /Python 3 \\(ipykernel\\)\\s*\\|\\s*Idle/.test("
        "(document.querySelector('#jp-main-statusbar') || {}).innerText || '')", timeout=120_000)
    page.locator("li.lm-MenuBar-item", has_text="Run").first.click()
    page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()
    return ".jp-NotebookPanel:not(.lm-mod-hidden)"


def test_dashboard_in_jupyterlab(lab, tmp_path):
    notebook, server, token = stage_in_lab(lab, tmp_path)
    with chromium_page(tmp_path) as page:
        scope = open_in_jupyterlab(page, server, token, notebook)
        t0 = time.monotonic()
        drive_dashboard(page, scope, tmp_path / "exports")
        print(f"JupyterLab: dashboard driven in {time.monotonic() - t0:.1f} s")
        save_screenshot(page, tmp_path, "dashboard-jupyterlab.png")


def test_dashboard_in_voila(tmp_path):
    notebook = stage_notebook("dashboard.ipynb", tmp_path / "voila-root")
    with voila(notebook, tmp_path) as (server, token), chromium_page(tmp_path) as page:
        page.goto(f"{server.url}/?token={token}", timeout=120_000)
        t0 = time.monotonic()
        drive_dashboard(page, "body", tmp_path / "exports")
        print(f"Voila: dashboard driven in {time.monotonic() - t0:.1f} s")
        assert "Dashboard(store=" not in page.locator("body").inner_text()  # Voila shows outputs, not code
        save_screenshot(page, tmp_path, "dashboard-voila.png")


def test_dashboard_at_1280x800_with_the_file_browser_open(lab, tmp_path):
    """A laptop screen with JupyterLab's file browser open: the controls stay right of the cell prompt and
    inside the window, and nothing is cut off on the right (the results wrap below when both do not fit)."""
    notebook, server, token = stage_in_lab(lab, tmp_path)
    with chromium_page(tmp_path, width=1280, height=800) as page:
        scope = open_in_jupyterlab(page, server, token, notebook)
        browser = page.locator(".jp-FileBrowser").first
        if not browser.is_visible():
            page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='filebrowser']").first.click()
        browser.wait_for(state="visible")
        sidebar = browser.bounding_box()
        assert sidebar and sidebar["width"] >= 200, f"the file browser is not open: {sidebar}"

        root = page.locator(f"{scope} .wb-dashboard").first
        root.wait_for(state="visible", timeout=RUN_TIMEOUT_MS)
        root.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        save_screenshot(page, tmp_path, "dashboard-1280x800-sidebar.png")
        cell = page.locator(f"{scope} .jp-Cell", has=page.locator(".wb-dashboard")).first
        controls = root.locator(".wb-controls").bounding_box()
        prompt = cell.locator(".jp-InputArea-prompt").first.bounding_box()
        area = cell.locator(".jp-OutputArea-output", has=page.locator(".wb-dashboard")).first.bounding_box()
        assert controls and prompt and area, (controls, prompt, area)
        assert controls["x"] >= prompt["x"] + prompt["width"] - 1, (
            f"the controls column slides under the cell prompt: controls {controls}, prompt {prompt}")
        assert controls["x"] >= sidebar["x"] + sidebar["width"], f"controls under the sidebar: {controls}"
        assert controls["width"] >= 300, f"the controls column collapsed: {controls}"
        for css in (".wb-controls", ".wb-results-pane", ".wb-run", ".wb-metric", ".wb-export-html"):
            box = root.locator(css).first.bounding_box()
            assert box, css
            assert box["x"] >= area["x"] - 1 and box["x"] + box["width"] <= area["x"] + area["width"] + 1, (
                f"{css} overflows the output area: {box}, area {area}")
            assert box["x"] + box["width"] <= 1280, f"{css} runs off the window: {box}"

        drive_dashboard(page, scope, tmp_path / "exports")
        root.locator(".wb-results-pane").first.scroll_into_view_if_needed()
        for css in (".wb-plot img", ".wb-table table"):
            box = root.locator(css).first.bounding_box()
            assert box and box["x"] >= area["x"] - 1, f"{css} slides left of the output area: {box}"
        page.wait_for_timeout(300)
        save_screenshot(page, tmp_path, "dashboard-1280x800-sidebar-run.png")
        fit = page.evaluate("""() => {
          const q = s => document.querySelector(s), box = e => e.getBoundingClientRect();
          const pane = q('.wb-results-pane'), table = q('.wb-table'), scroll = q('.wb-table-scroll');
          return {pane: [pane.scrollWidth, pane.clientWidth], table: [table.scrollWidth, table.clientWidth],
                  scroll: [scroll.scrollWidth, scroll.clientWidth], tableBottom: box(table).bottom,
                  exportTop: box(q('.wb-export-dir')).top};
        }""")
        # the table scrolls inside its own box: nothing clipped by the pane, nothing under the export bar
        assert fit["pane"][0] <= fit["pane"][1] + 1 and fit["table"][0] <= fit["table"][1] + 1, fit
        assert fit["tableBottom"] <= fit["exportTop"] + 1, fit
        assert root.locator(".wb-cancel").is_disabled()
        assert "warning" not in (root.locator(".wb-cancel").get_attribute("class") or ""), "a disabled Cancel is orange"
        exports = root.locator(".wb-export-path").first
        exports.scroll_into_view_if_needed()
        for css in (".wb-table", ".wb-export-dir", ".wb-export-html", ".wb-export-json"):  # the table scrolls inside
            box = root.locator(css).first.bounding_box()
            assert box and box["x"] >= area["x"] - 1 and box["x"] + box["width"] <= 1280, f"{css}: {box}"
        page.wait_for_timeout(300)
        save_screenshot(page, tmp_path, "dashboard-1280x800-sidebar-exports.png")
