"""The float64 reference held to what a variant's outputs are held to: a spec's reference that is NaN, of the
wrong shape or missing an output is refused, since every comparison with NaN is false and let any output pass
(a variant writing random numbers verified "ok, error 0"); an all-zero one, at sizes where no axis is 1, is
refused too, since a variant writing zeros would pass against it."""

from __future__ import annotations

import numpy as np

from workbench.catalog.spec import KernelSpec


class BadReference(ValueError):
    """The spec's float64 reference is not something an output can be held to (NaN/Inf, a wrong shape, a
    missing or unknown output): a fault of the spec, never a pass for whatever the variant wrote."""


def reference_problem(spec: KernelSpec, reference: dict[str, np.ndarray], params: dict[str, int]) -> str | None:
    """Why ``reference`` cannot be trusted, or None: every output the spec declares, each of its declared
    shape, none NaN or Inf. A NaN reference made every comparison false, so any output "passed" with error 0."""
    shapes = {k: tuple(int(d) for d in s) for k, s in spec.output_shapes(params).items()}
    missing, extra = sorted(set(shapes) - set(reference)), sorted(set(reference) - set(shapes))
    if shapes and (missing or extra):  # none declared (quick()'s callables): the reference's outputs are the shapes
        return f"it gives outputs {sorted(reference)}, output_shapes declares {sorted(shapes)}"
    for name, ref in reference.items():
        if shapes and ref.shape != shapes[name]:
            return f"output {name!r} has shape {ref.shape}, output_shapes says {shapes[name]}"
        if ref.dtype.kind == "c":  # compared as real, it failed every variant in numpy's words, naming no reference
            return f"output {name!r} has dtype {ref.dtype}: complex values, where outputs are real"
        if ref.dtype.kind in "fc" and ref.size:
            bad = int(ref.size - np.count_nonzero(np.isfinite(ref)))
            if bad:
                return f"output {name!r} has {bad} non-finite values (NaN/Inf) of {ref.size}"
            if ref.dtype.kind == "f" and _every_axis_at_least_2(params) and not np.any(ref):
                return (f"output {name!r} is all zeros for random inputs, so a variant that writes only zeros "
                        "would pass against it (a reference that zeroed its inputs did; if zeros are right for "
                        "this kernel, make_inputs must give inputs for which they are not)")
        elif ref.dtype.kind not in "biuf":
            return f"output {name!r} has dtype {ref.dtype}, not a number"
    return None


def _every_axis_at_least_2(params: dict[str, int]) -> bool:
    """No axis of 1 (or 0): there a true output may be all zeros (a layer norm over one column is)."""
    sizes = [v for v in params.values() if isinstance(v, int) and not isinstance(v, bool)]
    return bool(sizes) and min(sizes) >= 2


def checked_reference(spec: KernelSpec, reference: dict[str, np.ndarray],
                      params: dict[str, int]) -> dict[str, np.ndarray]:
    """``reference`` itself, once :func:`reference_problem` finds nothing; else :class:`BadReference`."""
    problem = reference_problem(spec, reference, params)
    if problem:
        raise BadReference(f"kernel {spec.name}'s reference at {dict(params)} is unusable: {problem};"
                           " a reference must give every declared output, finite, of its declared shape")
    return reference
