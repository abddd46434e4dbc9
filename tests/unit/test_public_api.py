"""Every name the package advertises resolves (the API notebooks and README use)."""

import workbench


def test_every_public_name_resolves():
    missing = [n for n in workbench.__all__ if not hasattr(workbench, n)]
    assert not missing, missing


def test_api_basics():
    assert "numpy" in workbench.available_backends()
    assert workbench.set_backend("numpy").name == "numpy" == workbench.get_backend().name
    assert workbench.device_info("numpy")["kind"] == "cpu"
    assert workbench.memory_info("numpy")["method"]
    assert "saxpy" in workbench.kernels() and "numpy" in workbench.variants("saxpy")


def test_verify_and_benchmark_stay_functions_after_their_modules_load():
    import workbench.api  # noqa: F401
    import workbench.sweep.verification  # noqa: F401

    assert callable(workbench.verify) and callable(workbench.benchmark)
    assert callable(workbench.verify)  # a second access too (a submodule named `verify` used to shadow it)



def test_the_removed_shims_are_gone():
    """runner.py, harness/record.py and the workbench.compare alias were removed (README, Changelog)."""
    import importlib

    import pytest

    assert not hasattr(workbench, "compare") and "compare" not in workbench.__all__
    for name in ("workbench.runner", "workbench.measure.record"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_one_home_per_name():
    """Each of these names is one object, whichever module a caller imports it from."""
    import math

    from workbench.backends import base
    from workbench.core import timestamps
    from workbench.judge import verdicts
    from workbench.measure import cell
    from workbench.roofs import ceilings
    from workbench.store import database as store
    from workbench.sweep import selection

    assert selection.BackendUnavailable is base.BackendUnavailable
    assert issubclass(base.BackendUnavailable, ValueError) and issubclass(base.BackendUnavailable, RuntimeError)
    assert store.now_iso is timestamps.now_iso is cell.now_iso
    assert ceilings.is_noisy is verdicts.is_noisy
    assert verdicts.is_noisy({"noisy": True, "rel_spread": 0.0}) and not verdicts.is_noisy({"noisy": False})
    assert verdicts.is_noisy({"noisy": math.nan, "rel_spread": 0.9}) and not verdicts.is_noisy({"rel_spread": None})
    assert verdicts.is_noisy(0.9) and not verdicts.is_noisy(0.01) and not verdicts.is_noisy(math.nan)
