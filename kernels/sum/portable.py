"""sum as a portable device kernel: two-pass block reduction (partials per block, then one block)."""
from workbench.catalog import kernel_here
from workbench.portable import Launch, Scratch, cdiv, portable_here

#: Blocks of the first pass: enough that each thread adds only a short run (error stays tree-like).
MAX_PARTIALS = 4096

portable_here(kernel_here(__file__),
              [Launch("sum_partials", lambda s: (s["partials"],), lambda s: (s["BLOCK"],), ("x", "partial", "n")),
               Launch("sum_final", lambda s: (1,), lambda s: (s["BLOCK"],), ("partial", "out", "partials"))],
              derived={"partials": lambda s: min(cdiv(s["n"], s["BLOCK"]), MAX_PARTIALS)},
              scratch={"partial": Scratch(lambda s: (s["partials"],), dtype="acc")},
              description=f"pass 1: up to {MAX_PARTIALS} blocks tree-reduce to partial sums (accumulator "
                          "dtype); pass 2: one block reduces the partials")
