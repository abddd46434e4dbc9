"""The ipywidgets dashboard (``workbench.ui.Dashboard()``); imports ipywidgets, so load it on demand."""

from .dashboard import Dashboard

__all__ = ["Dashboard"]
