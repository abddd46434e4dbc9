"""``op.torch``, ``op.torch_compile`` and ``op.torch_trio``, typed; their behaviour is
:mod:`workbench.authoring.torch_support`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.catalog.spec import DeviceArrays
from workbench.catalog.verbs.helpers import registered

#: An eager torch call: ``(torch, inputs, outputs) -> None | tensor | dict`` (what ``run`` may return).
TorchCall = Callable[[Any, DeviceArrays, DeviceArrays], Any]


class TorchVerbs:
    """The torch runtime's verbs."""

    def torch(self, name: str, call: TorchCall, description: str, *, library: bool = False,
              mode: str = "eager") -> TorchCall:
        """An eager torch variant running ``call(torch, inputs, outputs)``:
        :func:`workbench.authoring.torch_support.torch_variant`."""
        return registered("torch")(self, name, call, description, library=library, mode=mode)

    def torch_compile(self, fn: Callable[..., Any], description: str,
                      name: str = "torch-compile") -> Callable[..., Any]:
        """``torch.compile(fn)`` as a variant, compiled at build time for the run's shapes:
        :func:`workbench.authoring.torch_support.torch_compile_variant`."""
        return registered("torch_compile")(self, fn, description, name)

    def torch_trio(self, library: TorchCall, library_doc: str, *, out: TorchCall | None = None, out_doc: str = "",
                   compiled: Callable[..., Any] | None = None, compile_doc: str = "",
                   library_name: str = "torch") -> None:
        """The library call, its ``out=`` form and ``torch.compile``, in one call:
        :func:`workbench.authoring.torch_support.torch_trio`."""
        registered("torch_trio")(self, library, library_doc, out=out, out_doc=out_doc, compiled=compiled,
                                 compile_doc=compile_doc, library_name=library_name)
