"""Every run on a timeline: series of one cell on one machine across runs, their change points, and the
regression gate of ``workbench history``.

A series is one cell identity on one machine fingerprint (:mod:`workbench.history.series`); its change
points come from a weighted search on log medians, each run weighted and the penalty set by the series'
own noise (:mod:`workbench.history.changes`, :mod:`workbench.history.segment`);
:mod:`workbench.history.timeline` puts both together for the command, the report and the dashboard. What
each run records about the code it measured is :mod:`workbench.history.provenance`.
"""
