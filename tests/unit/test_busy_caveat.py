"""workbench.report.busy_caveat: a shared machine's share said with what it is of, and advice for every
multi-threaded side (04 warned of the library's threads only; 06 printed the share with no advice)."""

from __future__ import annotations

import pandas as pd

from workbench.report.busy_caveat import row_threads, share_words, shared_machine_advice, threaded_sides

THREADS = "numba 2, blas:openblas 2, openmp:openmp 2; OpenMP wait: spin 10000 then sleep; malloc: default"


def rows(share: float) -> pd.DataFrame:
    return pd.DataFrame([
        {"variant": "numpy", "backend": "numpy", "runtime": "numpy", "bound": "compute-bound", "other_cpu_share": share,
         "threads": "blas:openblas 2; OpenMP wait: spin; malloc: default"},
        {"variant": "numba-naive", "backend": "numba", "runtime": "numba", "other_cpu_share": share,
         "threads": THREADS},
        {"variant": "portable-naive", "backend": "opencl-0", "runtime": "opencl", "other_cpu_share": share,
         "threads": THREADS},
    ])


def test_a_row_runs_on_its_runtimes_pool_and_numpy_on_its_blas():
    assert row_threads({"runtime": "numba", "threads": THREADS}) == ("numba", 2)
    assert row_threads({"runtime": "numpy", "bound": "compute-bound", "threads": "blas:openblas 4; x"}) == (
        "blas:openblas", 4)
    # numpy's element-wise ufuncs run on one thread, whatever BLAS pool is loaded (05's numpy-unfused)
    assert row_threads({"runtime": "numpy", "bound": "memory-bound", "threads": "blas:openblas 4; x"}) == ("numpy", 1)
    assert row_threads({"runtime": "opencl", "threads": THREADS}) is None   # not its pool: not said
    assert row_threads({"runtime": "numba", "threads": None}) is None


def test_every_multi_threaded_side_is_named_not_only_the_library():
    sides = threaded_sides(rows(0.76))
    assert sides == ["numpy @ numpy (blas:openblas, 2 threads)", "numba-naive @ numba (numba, 2 threads)"]
    one = rows(0.76).assign(threads="numba 1; x")
    assert threaded_sides(one) == []


def test_the_share_says_it_is_of_every_core_and_leaves_our_processes_out():
    text = share_words(0.76, cores=2)
    assert text == "76% of the CPU (all 2 cores together, this run's own processes not counted: about 1.5 cores)"
    assert "about 1.0 core)" in share_words(0.5, cores=2)


def test_advice_on_a_busy_machine_names_the_threaded_sides_and_the_rerun():
    text = shared_machine_advice(rows(0.73), cores=2)
    assert "73% of the CPU (all 2 cores together" in text
    assert "numba-naive @ numba (numba, 2 threads)" in text and "numpy @ numpy" in text
    assert "Rerun on an idle machine" in text   # its own sentence (issue 39: one was 90 words)
    # it says how it fits a settled verdict beside it, not that no order may be read (06: "before reading these
    # times or their order as the kernels' own" beneath verdicts settled past the noise the load added)
    assert "or their order" not in text and "interval already counts the noise" in text
    assert shared_machine_advice(rows(0.1), cores=2) == ""
    assert shared_machine_advice(pd.DataFrame({"variant": ["x"]}), cores=2) == ""


def test_advice_says_which_verdicts_stand_and_what_its_figure_is_the_largest_of():
    # 03/04/05's readers: the advice undercut settled verdicts alike and its load figure was not said as a maximum
    two = pd.concat([rows(0.73), pd.DataFrame([{"variant": "numpy-unfused", "backend": "numpy", "runtime": "numpy",
                                                "bound": "memory-bound", "other_cpu_share": 0.6,
                                                "threads": "blas:openblas 2; x"},
                                               {"variant": "numba-serial", "backend": "numba", "runtime": "numba",
                                                "other_cpu_share": 0.6, "threads": "numba 1; x"}])],
                    ignore_index=True)
    text = shared_machine_advice(two, cores=2)
    assert "the largest over the 5 rows" in text
    assert "single-threaded sides (of numpy-unfused @ numpy; numba-serial @ numba) stands as printed" in text
    # one single-threaded side alone makes no such pair (03: "between two single-threaded sides (numpy @ numpy)")
    assert "stands as printed" not in shared_machine_advice(two.iloc[:-1], cores=2)
    assert "stands as printed" not in shared_machine_advice(rows(0.73), cores=2)   # no single-threaded side here
