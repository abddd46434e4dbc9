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
    import workbench.verification  # noqa: F401

    assert callable(workbench.verify) and callable(workbench.benchmark) and callable(workbench.compare)
    assert callable(workbench.verify)  # a second access too (a submodule named `verify` used to shadow it)


def test_renamed_modules_remain_as_deprecated_re_exports():
    import importlib
    import sys
    import warnings

    import workbench.case

    sys.modules.pop("workbench.runner", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runner = importlib.import_module("workbench.runner")
    assert runner.Case is workbench.case.Case and runner.check is workbench.case.check
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
