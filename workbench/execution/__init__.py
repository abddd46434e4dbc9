"""Execution modes of multi-kernel blocks (eager, graph, fused) and the shape-keyed execution cache."""

from workbench.execution.cache import (
    CacheKey,
    ExecutionCache,
    clear_cache,
    execution_cache,
    execution_stats,
    row_stats,
)
from workbench.execution.modes import FUSED_MEANING, GRAPH_MEANING, cached_build, register_cached

__all__ = ["FUSED_MEANING", "GRAPH_MEANING", "CacheKey", "ExecutionCache", "cached_build", "clear_cache",
           "execution_cache", "execution_stats", "register_cached", "row_stats"]
