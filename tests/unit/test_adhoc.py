"""workbench.timeit and workbench.quick: ad-hoc callables through the harness, their rows, checks and store."""

from __future__ import annotations

import time

import numpy as np
import pytest

import workbench
from workbench.adhoc import quick
from workbench.adhoc.timing import fmt_seconds
from workbench.catalog import registry
from workbench.store.database import open_store

FAST = {"budget_s": 0.02, "rounds": 2, "warmup_s": 0.0, "min_samples": 2, "progress": False}


@pytest.fixture
def adhoc(tmp_path):
    """quick() with a private store, fast timing and in-process cells; its kernels unregistered afterwards."""
    names: list[str] = []

    def run(callables, setup, sizes, **kw):
        kw.setdefault("name", f"adhoc-test-{len(names)}")
        names.append(kw["name"])
        opts = {**FAST, "isolation": "in-process", "store": tmp_path / "s.sqlite", **kw}
        return quick(callables, setup, sizes, **opts)

    yield run
    for n in names:
        registry.unregister_kernel(n)


def rows(res):
    return {(r["variant"], r["size"]): r for _, r in res.df.iterrows()}


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_unstable(x):
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)


def softmax_axis(x, axis):
    return softmax(x) if axis == 1 else None


def rows_of(n):
    return np.random.rand(n, 33).astype(np.float32)


# -- units and timeit ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("s, text", [(3.2e-9, "3.2 ns"), (4.56e-6, "4.56 µs"), (0.0123, "12.3 ms"),
                                     (2.5, "2.5 s"), (None, "n/a"), (float("nan"), "n/a")])
def test_seconds_get_automatic_units(s, text):
    assert fmt_seconds(s) == text


def test_timeit_measures_in_rounds_with_quartiles_and_timer_kind():
    m = workbench.timeit(time.sleep, 0.002, budget_s=0.05, rounds=3)
    assert m.backend == "numpy" and m.timer_kind == "sync+perf_counter"
    assert m.rounds == 3 and len(m.round_medians_s) == 3 and m.n_samples >= 9
    assert m.median_s >= 0.002 and m.q1_s <= m.median_s <= m.q3_s  # a 2 ms sleep never takes less
    assert m.noise is not None and isinstance(m.noisy, bool)
    assert " ms median" in repr(m) and "timer sync+perf_counter on numpy" in repr(m)
    assert m.wall_s >= m.median_s


def test_timeit_passes_keywords_to_the_callable_and_lets_its_errors_through():
    seen = {}

    def f(a, *, scale):
        seen["args"] = (a, scale)
        return a * scale

    workbench.timeit(f, 3, scale=2, budget_s=0.01, rounds=1)
    assert seen["args"] == (3, 2)
    with pytest.raises(ZeroDivisionError):
        workbench.timeit(lambda: 1 / 0)


@pytest.mark.parametrize("kw, word", [({"rounds": 0}, "rounds"), ({"budget_s": float("nan")}, "budget_s"),
                                      ({"backend": "no-such"}, "valid backends")])
def test_timeit_refuses_bad_options_naming_them(kw, word):
    with pytest.raises(ValueError, match=word):
        workbench.timeit(abs, 1, **kw)


def test_timeit_needs_a_callable():
    with pytest.raises(TypeError, match="callable"):
        workbench.timeit(42)


def test_timeit_synchronises_with_the_backend_its_arguments_live_on(monkeypatch):
    """A CUDA tensor among the arguments: the torch-cuda backend's timer (its synchronise) times the call."""
    from workbench.adhoc import timing
    from workbench.backends.base import SyncWallTimer

    synced = []

    class Stub:
        name = "torch-cuda"

        def require(self):
            pass

        def timer(self):
            return SyncWallTimer(lambda: synced.append(1))

    from workbench.backends import registry as backends

    real_get = backends.get
    monkeypatch.setattr(backends, "get", lambda n: Stub() if n == "torch-cuda" else real_get(n))
    m = timing.timeit(lambda t: None, FakeTensor("cuda"), budget_s=0.01, rounds=1)
    assert m.backend == "torch-cuda" and synced  # the device was waited for around every sample


# -- the backend chosen from the arguments (fakes: no GPU here) ---------------------------------------------------

def _fake(module: str, cls_name: str, **attrs):
    cls = type(cls_name, (), {})
    cls.__module__ = module
    obj = cls()
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


class _Device:
    def __init__(self, kind):
        self.type = kind


def FakeTensor(kind):  # noqa: N802 - stands in for a class
    return _fake("torch", "Tensor", device=_Device(kind))


@pytest.mark.parametrize("arg, expected", [
    (np.zeros(3), "numpy"), (3, "numpy"), (FakeTensor("cuda"), "torch-cuda"), (FakeTensor("cpu"), "torch-cpu"),
    (FakeTensor("mps"), "torch-mps"), (FakeTensor("xpu"), "torch-xpu"),
    (_fake("cupy._core.core", "ndarray"), "cupy"), ([[FakeTensor("cuda")]], "torch-cuda"),
    ({"x": _fake("cupy", "ndarray")}, "cupy")])
def test_backend_is_chosen_from_the_arguments(arg, expected):
    from workbench.adhoc.devices import backend_for

    assert backend_for([1.0, arg]) == expected
    assert backend_for([], {"kw": arg}) == expected


def test_opencl_buffers_pick_the_backend_of_their_device(monkeypatch):
    from workbench.adhoc import devices
    from workbench.backends import registry as backends

    dev_a, dev_b = object(), object()
    fakes = {n: _fake("x", "B", name=n, runtime="opencl", device=d) for n, d in (("opencl-0", dev_a),
                                                                                 ("opencl-1", dev_b))}
    monkeypatch.setattr(backends, "all_backends", lambda refresh=False: fakes)
    array = _fake("pyopencl.array", "Array", queue=_fake("pyopencl", "CommandQueue", device=dev_b))
    buffer = _fake("pyopencl._cl", "Buffer", context=_fake("pyopencl", "Context", devices=[dev_a]))
    assert devices.backend_for([array]) == "opencl-1"
    assert devices.backend_for([buffer]) == "opencl-0"


def test_arrays_of_two_devices_need_backend_named():
    from workbench.adhoc.devices import backend_for

    with pytest.raises(ValueError, match="several devices.*backend="):
        backend_for([FakeTensor("cuda"), _fake("cupy", "ndarray")])
    assert backend_for([FakeTensor("cuda")], backend="numpy") == "numpy"


# -- quick --------------------------------------------------------------------------------------------------------

def test_quick_gives_every_callable_a_row_with_its_status(adhoc, tmp_path):
    res = adhoc({"np": softmax, "unstable": softmax_unstable, "wrong": lambda x: x * 2,
                 "raises": lambda x: 1 / 0, "shape": lambda x: x[:, :-1]},
                setup=rows_of, sizes=[7, 64], bytes=lambda n: 2 * 4 * 33 * n, name="adhoc-statuses")
    assert isinstance(res, workbench.api.Results) and len(res) == 10
    got = rows(res)
    for n in (7, 64):
        assert got["np", n]["status"] == "ok" and got["np", n]["max_error"] == 0.0
        assert got["unstable", n]["status"] == "ok" and 0 < got["unstable", n]["max_error"] < 1e-4
        assert got["np", n]["median_s"] > 0 and got["np", n]["rounds"] == 2
        assert got["np", n]["gbps"] == pytest.approx(2 * 4 * 33 * n / got["np", n]["median_s"] / 1e9)
        assert got["np", n]["gflops"] is None or np.isnan(got["np", n]["gflops"])  # no flops= given
        assert got["wrong", n]["status"] == "incorrect" and "against 'np'" in got["wrong", n]["message"]
        assert got["wrong", n]["median_s"] is None or np.isnan(got["wrong", n]["median_s"])  # untimed
        assert got["raises", n]["status"] == "error" and "ZeroDivisionError" in got["raises", n]["message"]
        assert got["shape", n]["status"] == "incorrect" and "shape" in got["shape", n]["message"]
        assert got["np", n]["dtype"] == "float32" and got["np", n]["backend"] == "numpy"
    # the same Results as the spec-based API: tables, verdicts, exports, and the store under the name
    assert set(res.summary()["variant"]) == {"np", "unstable", "wrong", "raises", "shape"}
    sp = res.speedup()
    assert set(sp["baseline_variant"]) == {"np"} and set(sp["verdict"]) <= {
        "baseline", "faster", "slower", "same", "inconclusive", "insufficient samples"}
    assert res.to_markdown(tmp_path / "r.md").read_text().count("unstable") >= 1
    store = open_store(tmp_path / "s.sqlite", must_exist=True)
    assert store.run(res.run_id)["name"] == "adhoc-statuses"
    assert len(workbench.api.Results.from_store(store, res.run_id)) == 10


def test_quick_checks_against_reference_when_given(adhoc):
    def ref(x):
        return softmax(x.astype(np.float64)).astype(np.float32)

    res = adhoc({"half": lambda x: softmax(x) / 2, "np": softmax}, setup=rows_of, sizes=[5], reference=ref)
    got = rows(res)
    assert got["np", 5]["status"] == "ok" and got["half", 5]["status"] == "incorrect"
    assert "against 'reference'" in got["half", 5]["message"]


def test_quick_without_check_times_whatever_comes_back(adhoc):
    res = adhoc({"np": softmax, "wrong": lambda x: x * 2}, setup=rows_of, sizes=[5], check=False)
    assert set(res.df["status"]) == {"ok"}
    assert not np.isfinite(res.df["max_error"].astype(float)).any()  # nothing was compared: no error figure
    assert set(res.summary()["max error"]) == {""}


def test_tolerance_decides_what_counts_as_the_same_answer(adhoc):
    close = {"np": softmax, "close": lambda x: softmax(x) * (1 + 1e-3)}
    assert rows(adhoc(close, setup=rows_of, sizes=[5]))["close", 5]["status"] == "incorrect"
    assert rows(adhoc(close, setup=rows_of, sizes=[5], tolerance=1e-2))["close", 5]["status"] == "ok"


def test_setup_arguments_rotate_and_constants_pass_unchanged(adhoc):
    """A tuple's float arrays are fresh per input set; an int argument and an index array are constants."""
    seen = []

    def take(x, idx, k):
        seen.append((id(x), float(x[0]), idx.tobytes(), k))
        return x[idx] * k

    res = adhoc({"take": take, "take2": lambda x, idx, k: np.take(x, idx) * k},
                setup=lambda n: (np.random.rand(n), np.random.randint(0, n, size=5), 3), sizes=[11], rounds=1)
    assert set(res.df["status"]) == {"ok"}
    assert len({v for _, v, _, _ in seen}) >= 2  # rotated input sets: different data
    assert len({(i, k) for _, _, i, k in seen}) == 1  # the constants: one value throughout


def test_setup_dict_gives_keyword_arguments_and_rng_setups_get_the_seeded_generator(adhoc):
    def setup(n, rng):
        return {"a": rng.random(n), "b": rng.random(n)}

    res = adhoc({"add": lambda a, b: a + b, "np.add": lambda *, a, b: np.add(a, b)}, setup=setup, sizes=[9, 10])
    assert set(res.df["status"]) == {"ok"} and set(res.df["dtype"]) == {"float64"}


def test_a_callable_that_modifies_its_input_is_incorrect(adhoc):
    def in_place(x):
        x *= 2
        return x

    res = adhoc({"np": lambda x: x * 2, "in-place": in_place}, setup=lambda n: np.random.rand(n), sizes=[8])
    row = rows(res)["in-place", 8]
    assert row["status"] == "incorrect" and "modified its input" in row["message"]


def test_a_reference_that_raises_says_so_in_every_row(adhoc):
    res = adhoc({"bad": lambda x: 1 / 0, "np": softmax}, setup=rows_of, sizes=[5])
    assert set(res.df["status"]) == {"error"}
    assert all("the reference 'bad' raised ZeroDivisionError" in m for m in res.df["message"])


@pytest.mark.parametrize("call, match", [
    (lambda q: q({"a": abs}, rows_of, [0]), "positive integers"),
    (lambda q: q({"a": abs}, rows_of, "big"), "sizes"),
    (lambda q: q({"a": 3}, rows_of, [4]), "not callable"),
    (lambda q: q({}, rows_of, [4]), "at least one"),
    (lambda q: q({"a": abs}, 5, [4]), "setup must be a callable"),
    (lambda q: q({"a": abs}, lambda n: 1 / 0, [4]), r"setup\(4\) raised ZeroDivisionError"),
    (lambda q: q({"a": abs}, rows_of, [4], name="softmax"), "catalog kernel"),
    (lambda q: q({"a": abs}, rows_of, [4], budget=1), "unknown option.*budget_s"),
    (lambda q: q({"a": abs}, rows_of, [4], rounds=0), "rounds"),
    (lambda q: q({"a": abs}, rows_of, [4], flops=3), "flops= must be a callable"),
    (lambda q: q({"a": abs}, rows_of, [4], tolerance={"float8": 1}), "valid dtypes"),
])
def test_quick_refuses_bad_input_with_a_clear_error(call, match, tmp_path):
    def q(c, s, n, **kw):
        return quick(c, s, n, store=tmp_path / "s.sqlite", progress=False, isolation="in-process", **kw)

    with pytest.raises((ValueError, TypeError), match=match):
        call(q)


def test_crashing_and_hanging_callables_end_in_their_own_rows(tmp_path):
    """Worker processes (the default): a segfault is ``crashed``, a call that never returns ``timeout``,
    and the callables beside them are measured."""
    def segfault(x):
        import ctypes

        return ctypes.string_at(0)

    def hang(x):
        time.sleep(3600)

    def double(x):
        return x * 2

    try:
        res = quick({"double": double, "segfault": segfault, "hang": hang}, setup=lambda n: np.random.rand(n),
                    sizes=[16, 32], timeout_s=2, store=tmp_path / "s.sqlite", name="adhoc-isolation",
                    **{**FAST, "rounds": 1})
    finally:
        registry.unregister_kernel("adhoc-isolation")
    got = rows(res)
    assert got["double", 16]["status"] == got["double", 32]["status"] == "ok"
    assert got["segfault", 16]["status"] == "crashed"
    assert got["hang", 16]["status"] == "timeout"
    for label, status in (("segfault", "crashed"), ("hang", "timeout")):  # not tried again at larger sizes
        assert got[label, 32]["status"] == "unsupported"
        assert f"ended as {status} at n=16, so larger sizes are skipped" in got[label, 32]["message"]


# -- promote ------------------------------------------------------------------------------------------------------

def test_promote_writes_a_catalog_folder_whose_reference_is_marked_unfilled(adhoc, tmp_path):
    from workbench.catalog import load_catalog, unload_catalog
    from workbench.sweep.verification import verify

    def local_softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    res = adhoc({"local": local_softmax, "lam": lambda x, axis: softmax(x), "lib": softmax_axis},
                setup=lambda n: (rows_of(n), 1), sizes=[6], bytes=lambda n: 8 * 33 * n, name="adhoc promoted!")
    assert set(res.df["status"]) == {"ok"}
    text = res.promote()
    assert "TODO" in text and "fn_lam = lambda x, axis: softmax(x)" in text
    assert "def local_softmax(x, axis):" in text  # a notebook's function is copied
    assert "test_adhoc.softmax_axis(" in text  # a function of an importable module is imported, not copied
    folder = res.promote(tmp_path / "catalog")
    assert folder.name == "adhoc_promoted" and {p.name for p in folder.iterdir()} >= {"spec.py",
                                                                                        "numpy_variants.py"}
    with pytest.raises(FileExistsError):
        res.promote(tmp_path / "catalog")
    try:
        assert load_catalog(tmp_path / "catalog") == ["adhoc_promoted"]
        spec = workbench.get_kernel("adhoc_promoted")
        assert set(workbench.variants("adhoc_promoted")) == {"local", "lam", "lib"}
        assert spec.bytes_moved({"n": 6}, 4) == 8 * 33 * 6
        assert "TODO" in (tmp_path / "catalog" / "adhoc_promoted" / "spec.py").read_text()
        out = verify(kernels="adhoc_promoted", backends="numpy", isolation="in-process", seeds=(0,))
        assert len(out) == 3 and not out.ok and {r.status for r in out} == {"error"}  # never passes silently
        assert all("no float64 reference yet" in r.message for r in out)
    finally:
        unload_catalog(str(tmp_path / "catalog"))


def test_results_not_from_quick_have_nothing_to_promote():
    from workbench.adhoc import QuickResults

    with pytest.raises(ValueError, match="nothing to promote"):
        QuickResults(__import__("pandas").DataFrame()).promote()
