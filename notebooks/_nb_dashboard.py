"""The dashboard notebook: pick, run, watch, export."""

from _cells import code, md, params

CELLS = [
    md("""
# Kernel Workbench dashboard

Pick backends (unavailable ones are greyed out, with the reason beside them), a kernel, its variants,
sizes, dtype, modes and cache state, then press **Run**. The sweep runs in the background: the plot and
the table update after every cell, the line under the progress bar names the running cell and its elapsed
time, **Cancel** stops the running cell at once (its worker process is ended) and keeps every finished row,
and the export buttons write the run as HTML, Markdown, CSV or JSON under the folder you choose.

Results are also stored in `workbench-results.sqlite` beside this notebook, so nothing is lost if the
kernel dies. The same dashboard works in JupyterLab and as a Voila app
(`voila notebooks/dashboard.ipynb`).
"""),
    params("""
EXPORT_DIR = "reports"
STORE = "workbench-results.sqlite"
"""),
    code("""
from workbench.ui import Dashboard

dashboard = Dashboard(store=STORE, export_dir=EXPORT_DIR)
dashboard
"""),
]
