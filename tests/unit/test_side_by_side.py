"""scripts/gpu/side_by_side.py (issue 37, point 9) imports and parses its arguments on any machine, refuses bad
ones naming the valid choices, and without a GPU exits 1 saying so (the timing itself needs an NVIDIA GPU)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu" / "side_by_side.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("side_by_side", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_it_parses_its_arguments(script, tmp_path):
    args = script.parse_args(["--kernels", "saxpy,softmax", "--sizes", "l2,hbm", "--out", str(tmp_path / "o.json")])
    assert args.kernels == ["saxpy", "softmax"] and args.sizes == ["l2", "hbm"] and args.repeats == 3
    every = script.parse_args([])
    assert every.kernels == list(script.KERNELS) and every.sizes == ["launch", "l2", "hbm"]


@pytest.mark.parametrize("argv, words", [(["--kernels", "gemm"], "unknown 'gemm'; valid: saxpy, sum"),
                                         (["--sizes", "dram"], "unknown 'dram'; valid: launch, l2, hbm"),
                                         (["--repeats", "0"], "--repeats must be >= 1")])
def test_bad_arguments_are_refused_naming_the_valid_ones(script, capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        script.parse_args(argv)
    assert exc.value.code == 2 and words in capsys.readouterr().err


def test_without_a_gpu_it_exits_1_saying_so(script, tmp_path, capsys):
    if script.gpu_problem() is None:
        pytest.skip("a GPU is here: the script would time")
    out = tmp_path / "o.json"
    assert script.main(["--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "nothing to time; run it on a machine with an NVIDIA GPU" in err and not out.exists()
