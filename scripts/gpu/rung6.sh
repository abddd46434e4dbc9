#!/usr/bin/env bash
# Rung 6: run the workbench on a real GPU machine (no network there, so no install from a registry):
# the machine's own python3 (torch, cupy, triton, numba, pandas, matplotlib, jinja2, scipy) + this checkout on
# PYTHONPATH, + jsonschema and its needs carried as wheels in .whl/ (see docs/gpu-runs/README.md).
# Usage on the GPU machine, from the repo root:  OUT=/some/dir bash scripts/gpu/rung6.sh
# Each step has its own time limit, so one that hangs costs its limit, not the lease; everything lands in $OUT.
set -u
OUT=${OUT:-/tmp/rung6}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 WORKBENCH_STORE="$OUT/gpu.sqlite"
WB="python3 -m workbench"
GPU=${GPU:-"cupy torch-cuda triton-cuda"}
# STEPS="info quick ..." runs only the steps named (a rerun inside a lease); default: all.
step() { case " ${STEPS:-$1} " in *" $1 "*) ;; *) return 0;; esac
         echo; echo "=== $1 ($(date -u +%T), limit ${T:-60} s)"; shift; /usr/bin/time -f "[%e s]" timeout "${T:-60}" "$@"; echo "[rc $?]"; }
{
T=20 step nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
T=60 step versions python3 -c "import sys,torch,cupy,triton,numpy,jsonschema;print(sys.version.split()[0],'torch',torch.__version__,'cupy',cupy.__version__,'triton',triton.__version__,'numpy',numpy.__version__,'jsonschema',jsonschema.__version__, torch.cuda.get_device_name())"
T=60 step info $WB info --refresh
T=260 step verify $WB verify --backend $GPU --dtype float32 bfloat16 --details
T=150 step quick $WB bench --suite quick --backends $GPU numpy --name "gpu-quick" --json "$OUT/quick.json" \
    --report "$OUT/quick.html" --quiet
T=20 step runs $WB runs
T=30 step report-md $WB report latest --out "$OUT/quick.md"
T=20 step triton-smoke python3 scripts/gpu/triton_smoke.py
T=90 step timing-crosscheck python3 scripts/gpu/timing_crosscheck.py
T=120 step pytest python3 -m pytest -q -p no:cacheprovider -n 8 tests/backends/test_backends.py \
    tests/unit/test_device_backends.py tests/unit/test_gaming_gpu.py tests/unit/test_cupy_variants.py \
    tests/unit/test_triton_gpu_backend.py
T=150 step peaks $WB peaks --backend cupy torch-cuda
} 2>&1 | tee "$OUT/log.txt"
