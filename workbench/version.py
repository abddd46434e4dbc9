"""The workbench's version, in a module of its own so that reports and the environment record can name it
without importing the package's façade (``workbench/__init__.py``, which loads the entry points)."""

__version__ = "0.1.0"
