"""The quick suite on a machine with its runtimes installed: one device per runtime, about a hundred cells."""

from __future__ import annotations

from collections import Counter

from workbench.sweep.suites import QUICK_FAMILIES, QUICK_LLM_KERNELS, suite_spec

FAMILY_KERNELS = [k for _, k, _ in QUICK_FAMILIES]


def test_quick_is_one_device_per_runtime_and_about_a_hundred_cells():
    cells = suite_spec("quick").cells()
    runtimes = Counter()
    from workbench.backends import registry

    for name in {c.backend for c in cells}:
        runtimes[registry.get(name).runtime] += 1
    assert max(runtimes.values()) == 1, runtimes
    per_runtime = len(FAMILY_KERNELS) * 2 + len(QUICK_LLM_KERNELS)
    assert len(cells) <= 150 and len(cells) >= per_runtime  # 17 kernels x 5-6 runtimes on a full install
    assert len(cells) < len(suite_spec("standard").cells())
