"""The HTML report in headless Chromium at 1280 px: conclusions on the first screen, nothing wider than
the window, every figure drawn. Screenshots land in the test's folder and in $WORKBENCH_TEST_OUTPUT
(tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from browser_helpers import CHROMIUM, chromium_page, save_screenshot

from workbench.report import write_report
from workbench.report.sample_data import suite_results, synthetic_environment

pytestmark = [pytest.mark.browser]

try:
    import playwright.sync_api  # noqa: F401
    _skip = None if CHROMIUM.exists() else f"{CHROMIUM} is absent"
except ImportError:
    _skip = "playwright is not installed"
if _skip:
    pytest.skip(f"the report browser test needs Chromium and playwright: {_skip}", allow_module_level=True)

WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    from workbench.store.database import Store

    tmp = tmp_path_factory.mktemp("report")
    store = Store(tmp / "s.sqlite")
    rid = store.new_run(name="quick-like", env_id="env-demo")
    store.add_environment("env-demo", synthetic_environment())
    for row in suite_results(rid).to_dict("records"):
        store.record(row)
    store.set_run_status(rid, "finished", wall_s=40.0)
    return write_report(store, [rid], tmp / "quick-like.html")


def test_report_reads_at_1280(report, tmp_path):
    with chromium_page(tmp_path, width=WIDTH, height=HEIGHT) as page:
        page.goto(report.as_uri())
        heading = page.locator("h2#key-findings")
        box = heading.bounding_box()
        assert box and box["y"] < HEIGHT / 2, f"Key findings should open the first screen: {box}"
        first_rows = page.locator("table.findings tr").count()
        assert first_rows > 15  # a row per kernel and size class
        page.screenshot(path=str(tmp_path / "report-first-screen.png"))
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= WIDTH, f"the page is {width} px wide at a {WIDTH} px window"
        figures = page.locator("figure svg")
        n = figures.count()
        assert 15 <= n <= 40
        for i in range(n):
            b = figures.nth(i).bounding_box()
            assert b and 300 < b["width"] <= WIDTH and b["height"] > 100, (i, b)
        assert page.locator("nav#contents a").count() >= 20  # sections and one link per kernel
        page.locator("nav#contents a", has_text="kernel05").click()
        save_screenshot(page, tmp_path, "report-1280.png")
    if os.environ.get("WORKBENCH_TEST_OUTPUT"):  # a temporary folder unless set (tests/conftest.py)
        out = Path(os.environ["WORKBENCH_TEST_OUTPUT"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / "report-first-screen.png", out / "report-first-screen.png")


#: The quick suite's kernel names (a table of contents that must wrap) and its longest size label.
QUICK_KERNELS = ("saxpy", "gelu_tanh", "sum", "softmax", "bias_gelu", "transpose", "gemm", "attention_prefill",
                 "attention_decode", "attention_block", "mlp_block", "rmsnorm", "rope", "swiglu", "gemm_int8",
                 "gemm_fp8")
LONG_SIZE = {"batch": 1, "seq": 64, "past": 512, "hidden": 896, "heads": 14, "kv_heads": 2, "head_dim": 64}


@pytest.fixture(scope="module")
def quick_named_report(tmp_path_factory) -> Path:
    """Rows shaped like the quick suite's, with its kernel names and, for attention_block, its 7-parameter
    size label (before the fix the size column took the label's full width and the caveats ran off screen,
    and the contents line of kernel links did not wrap: 1350 px at a 1280 px window)."""
    import json

    from workbench.store.database import Store

    tmp = tmp_path_factory.mktemp("quick-named")
    store = Store(tmp / "s.sqlite")
    rid = store.new_run(name="quick-named", env_id="env-demo")
    store.add_environment("env-demo", synthetic_environment())
    rows = suite_results(rid, n_kernels=len(QUICK_KERNELS))
    names = {f"kernel{i:02d}": k for i, k in enumerate(QUICK_KERNELS)}
    rows["kernel"] = rows["kernel"].map(names)
    long = rows["kernel"] == "attention_block"
    for i in rows.index[long]:
        params = {**LONG_SIZE, "past": 512 + int(rows.at[i, "size"])}
        rows.at[i, "params"] = json.dumps(params)
        rows.at[i, "size_label"] = " ".join(f"{k}={v}" for k, v in params.items())
    for row in rows.to_dict("records"):
        store.record(row)
    store.set_run_status(rid, "finished", wall_s=40.0)
    return write_report(store, [rid], tmp / "quick-named.html")


def test_report_with_the_quick_suites_names_has_no_horizontal_scroll(quick_named_report, tmp_path):
    with chromium_page(tmp_path, width=WIDTH, height=HEIGHT) as page:
        page.goto(quick_named_report.as_uri())
        save_screenshot(page, tmp_path, "report-quick-names-1280.png")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= WIDTH, f"the page is {width} px wide at a {WIDTH} px window"
        header = page.locator("table.findings th", has_text="caveats").bounding_box()
        assert header and header["x"] + header["width"] <= WIDTH, f"the caveats column is off screen: {header}"
        assert page.locator("table.findings td.size", has_text="head_dim=64").count() >= 1
        # who wins, by how much and how sure, for every kernel, on the first screen
        entries = page.locator(".glance .g")
        assert entries.count() == len(QUICK_KERNELS)
        for i in range(entries.count()):
            box = entries.nth(i).bounding_box()
            assert box and box["y"] + box["height"] <= HEIGHT and box["x"] + box["width"] <= WIDTH, (i, box)
            text = entries.nth(i).inner_text()
            assert text.split()[0] in QUICK_KERNELS and ("×" in text or "reference" in text), text
            assert any(v in text for v in ("faster", "slower", "same", "inconclusive", "reference")), text
