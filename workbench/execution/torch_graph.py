"""torch's ``graph`` mode: a CUDA graph of a block's out= plan on CUDA/HIP devices, the plan itself elsewhere.

A captured graph replays fixed addresses, so the plan is captured once per
set of input and output addresses (:class:`~workbench.execution.replay.ReplayTable`),
after a warm-up on a side stream as torch's documentation requires. Without a
GPU this code is imported and unit-checked, never run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.catalog.spec import DeviceArrays
from workbench.execution.replay import ReplayTable

if TYPE_CHECKING:
    from workbench.catalog.spec import BuildContext

#: A block's out= plan: ``plan(inputs, outputs)`` writes the outputs.
Plan = Callable[[DeviceArrays, DeviceArrays], None]


def graph_or_plan(ctx: BuildContext, plan: Plan) -> Plan:
    """``plan`` captured as a ``torch.cuda.CUDAGraph`` on a CUDA (or ROCm) device; ``plan`` itself elsewhere."""
    import torch

    if torch.device(ctx.backend.device).type != "cuda":
        return plan
    return cuda_graph(plan)  # pragma: no cover - needs a GPU


def cuda_graph(plan: Plan) -> Plan:  # pragma: no cover - needs a GPU
    import torch

    def capture(inp: DeviceArrays, out: DeviceArrays) -> Callable[[], None]:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            plan(inp, out)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            plan(inp, out)
        return graph.replay

    return ReplayTable(capture, lambda a: a.data_ptr())
