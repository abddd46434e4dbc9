"""The ipywidgets dashboard (``workbench.ui.Dashboard()``); imports ipywidgets, so load it on demand."""

from workbench.ui.dashboard import Dashboard

__all__ = ["Dashboard"]
