"""A sweep sharded over Dask distributed workers: ``workbench bench ... --cluster local:N | tcp://HOST:8786``.

The client keeps the store: it expands the sweep into cells, submits each round's cells to the scheduler,
and commits every row as it comes back (:func:`workbench.sweep.driver.run_sweep` with a :class:`ClusterExecutor`).
Dask workers run cells as a local sweep does (a warm worker process per backend, :mod:`workbench.measure`),
and send back each cell's result with their machine's environment record.

- One Dask worker per device: a cell on a GPU or other accelerator backend asks for the worker resource
  ``GPU=1``, a cell on a CPU backend for ``CPU=1`` (:func:`resources_for`). Start one
  ``dask worker --resources GPU=1`` per device (``CUDA_VISIBLE_DEVICES`` per Dask worker), and one Dask worker with
  ``CPU=1`` per host: CPU timings taken side by side on one host disturb each other.
- Rows say where they ran (``machine``, ``worker``) and how many Dask workers shared that host
  (``cluster_workers_on_host``); a CPU cell measured beside other Dask workers is flagged noisy, with a note.
- A Dask worker lost mid-cell: Dask runs the cell again elsewhere; the client records each cell of a round
  once, whatever happened to the Dask workers. ``--resume`` resumes a run through any cluster.
- The scheduler lost mid-run: :class:`SchedulerLost`; the run is interrupted (the cells not back stay unstored,
  never ``crashed``) and ``--resume RUN --cluster ...`` finishes it.
- Who may talk to the cluster: TLS for ``local:N`` and ``tls://`` schedulers, a warning for ``tcp://``
  (:mod:`workbench.cluster.security`).
"""

from __future__ import annotations

from workbench.cluster.executor import ClusterExecutor, SchedulerLost, parse_cluster, resources_for
from workbench.cluster.security import tls_security

__all__ = ["ClusterExecutor", "SchedulerLost", "parse_cluster", "resources_for", "tls_security"]
