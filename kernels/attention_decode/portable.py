"""attention decode as a portable device kernel: one block per (batch, head), online softmax over key tiles."""
from workbench.catalog import kernel_here
from workbench.catalog.attention import check_head_dim
from workbench.portable import Launch, portable_here

DMAX, BLOCK = 256, 128
op = kernel_here(__file__)

portable_here(op, [Launch("attention_decode_flash", lambda s: (s["batch"] * s["heads"],), lambda s: (BLOCK,),
                          ("q", "k", "v", "out", "heads", "kv_heads", "kv_len", "head_dim"))],
              name="portable-flash", defines={"BLOCK": BLOCK, "DMAX": DMAX}, derived={"dmax": check_head_dim(DMAX)},
              description=f"one block of {BLOCK} per (batch, head); a key per thread per tile, block max/sum "
                          f"reductions, online softmax, output columns in registers; head_dim <= {DMAX}")
