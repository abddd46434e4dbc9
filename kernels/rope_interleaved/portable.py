"""rope_interleaved as a portable device kernel: a grid-stride loop over every (token, head, pair) of q and k."""
from workbench.catalog import kernel_here
from workbench.portable import grid_stride, portable_here

portable_here(kernel_here(__file__),
              [grid_stride("rope_interleaved", ("q", "k", "cos", "sin", "q_out", "k_out", "heads", "kv_heads", "pairs", "n"),
                           n=lambda s: s["n"])],
              derived={"pairs": lambda s: s["head_dim"] // 2,
                       "n": lambda s: s["tokens"] * (s["heads"] + s["kv_heads"]) * (s["head_dim"] // 2)},
              description="one thread per pair (grid-stride, BLOCK=256); a pair's cos/sin read per thread")
