"""attention prefill as a portable device kernel: flash-style tiles in shared memory (CUDA, HIP, OpenCL)."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import check_head_dim
from workbench.portable import Launch, cdiv, portable_here

BQ, BK, DMAX, BLOCK = 16, 16, 128, 128
op = kernel_here(__file__)

portable_here(op, [Launch("attention_prefill_flash", lambda s: (cdiv(s["seq"], BQ), s["batch"] * s["heads"]),
                          lambda s: (BLOCK, 1), ("q", "k", "v", "out", "heads", "kv_heads", "seq", "head_dim"))],
              name="portable-flash", defines={"BLOCK": BLOCK, "BQ": BQ, "BK": BK, "DMAX": DMAX},
              derived={"dmax": check_head_dim(DMAX)},
              description=f"one block of {BLOCK} per {BQ} queries x (batch, head); {BK}-key K/V tiles in shared "
                          f"memory, online softmax, output in registers; causal tiles only; head_dim <= {DMAX}")
