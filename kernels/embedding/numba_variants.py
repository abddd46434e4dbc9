"""embedding with numba: tokens over the cores, each row copied as one contiguous loop."""
from workbench.catalog import kernel_here


@kernel_here(__file__).numba()
def embedding_kernel(t):
    """Tokens over the cores (prange); each gathered row is one contiguous copy."""
    from numba import njit, prange

    @njit(parallel=True)
    def embedding(ids, table, out):
        tokens, hidden = out.shape
        for r in prange(tokens):
            row, o = table[ids[r]], out[r]
            for j in range(hidden):
                o[j] = row[j]
    return embedding
