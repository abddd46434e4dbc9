#!/usr/bin/env bash
# Rung 6: run the workbench on a real GPU machine (no network there, so no install):
# the machine's own python3 (torch, cupy, triton, numba, pandas, matplotlib, jinja2) + this checkout on PYTHONPATH.
# Usage on the GPU machine, from the repo root:  OUT=/some/dir bash scripts/gpu/rung6.sh
set -u
OUT=${OUT:-/tmp/rung6}; mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
WB="python3 -m workbench.cli"
step() { echo; echo "=== $1"; shift; /usr/bin/time -f "[%e s]" timeout "${T:-240}" "$@"; echo "[rc $?]"; }
step nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
step versions python3 -c "import sys,torch,cupy,triton,numpy;print(sys.version.split()[0],'torch',torch.__version__,'cupy',cupy.__version__,'triton',triton.__version__,'numpy',numpy.__version__)"
step info $WB info
$WB info --json > "$OUT/info.json" 2>/dev/null
step verify bash -c "$WB verify --backend cupy --backend torch-cuda --backend triton-cuda --dtype float32 --dtype float16 --dtype bfloat16 --dtype float64 2>&1 | tee $OUT/verify.txt"
step peaks $WB peaks --backend cupy torch-cuda --store "$OUT/gpu.sqlite"
T=300 step quick-A $WB bench --suite quick --backends cupy torch-cuda triton-cuda --store "$OUT/gpu.sqlite" --name h100-quick-A \
    --report "$OUT/quick.html" --json "$OUT/quick.json" --quiet
T=300 step quick-B $WB bench --suite quick --backends cupy torch-cuda triton-cuda --store "$OUT/gpu.sqlite" --name h100-quick-B --quiet
step runs $WB runs --store "$OUT/gpu.sqlite"
ids=$(python3 -c "import sqlite3;print(*[r[0] for r in sqlite3.connect('$OUT/gpu.sqlite').execute('select run_id from runs where name like \'h100-quick-%\' order by rowid')])")
step compare-AA bash -c "$WB compare $ids --store $OUT/gpu.sqlite > $OUT/compare_aa.txt; tail -60 $OUT/compare_aa.txt"
step triton-smoke python3 scripts/gpu/triton_smoke.py
T=300 step pytest python3 -m pytest -q -x -p no:cacheprovider tests/unit tests/backends
