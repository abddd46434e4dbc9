"""The kernel catalog: specs, variants, loading by path."""

from workbench.catalog import sizes
from workbench.catalog.authoring import KernelFolder, kernel_here
from workbench.catalog.loader import builtin_catalog_path, load_catalog
from workbench.catalog.registry import (
    get_kernel,
    get_variant,
    kernels,
    register_kernel,
    register_variant,
    unload_catalog,
    unregister_kernel,
    unregister_variant,
    variant,
    variants,
)
from workbench.catalog.spec import BuildContext, KernelSpec, Tunable, Unsupported, Variant

__all__ = ["BuildContext", "KernelFolder", "KernelSpec", "Tunable", "Unsupported", "Variant", "builtin_catalog_path",
           "get_kernel", "get_variant", "kernel_here", "kernels", "load_catalog", "register_kernel", "register_variant",
           "sizes", "unload_catalog", "unregister_kernel", "unregister_variant", "variant", "variants"]
