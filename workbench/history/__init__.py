"""Every run on a timeline: series of one cell on one machine across runs, their change points, and the
regression gate of ``workbench history``.

A series is one cell identity on one machine fingerprint (:mod:`workbench.history.series`); its change
points come from ``ruptures`` on log medians with a penalty set from the series' own noise
(:mod:`workbench.history.changes`); :mod:`workbench.history.timeline` puts both together for the command,
the report and the dashboard. What each run records about the code it measured is
:mod:`workbench.history.provenance`.
"""
