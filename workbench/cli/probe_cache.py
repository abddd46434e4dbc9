"""Commands whose cells run in worker processes plan from ``workbench info``'s cached probe
(:mod:`workbench.backends.described`): their parent imports no runtime to learn what its workers will find."""

from __future__ import annotations


def describe_from_cache() -> bool:
    """Have the backend registry answer from the cached probe, when there is a valid one; returns whether it
    does. Only for a process that runs no cell itself."""
    from workbench.backends.described import described_backends, probe_fingerprint, read_cache
    from workbench.backends.registry import use_descriptions
    from workbench.store.environment import package_versions

    doc = read_cache(probe_fingerprint(package_versions()))
    by_module = described_backends(doc) if doc is not None else {}
    if by_module:
        use_descriptions(by_module)  # type: ignore[arg-type]
    return bool(by_module)
