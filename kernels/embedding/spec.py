"""embedding: out[t, :] = table[ids[t], :] — the token embedding lookup at the bottom of every LLM.

Inputs: ``ids[tokens]`` (int64, whatever the run dtype: ``input_dtypes``), ``table[vocab, hidden]``.
FLOPs: 0 (a gather). Bytes: the compulsory traffic is the rows gathered, not the table: each id read once
(8 bytes), ``tokens * hidden`` elements read and written; a repeated id is counted each time it is
gathered (a kernel re-reads it unless it deduplicates). ids are uniform over the vocabulary and always in
range: an id outside ``[0, vocab)`` is the caller's bug (torch raises, the C kernels would read out of
bounds), so no variant is asked to handle one.

Tolerance 0 for every dtype: a gather copies elements, so the output must equal the table's rows bit for
bit (the reference sees the table rounded to the run dtype).
"""
import numpy as np

from workbench.catalog import kernel_here

ID_BYTES = 8


def make_inputs(p, rng: np.random.Generator):
    return {"ids": rng.integers(0, p["vocab"], p["tokens"], dtype=np.int64),
            "table": rng.standard_normal((p["vocab"], p["hidden"]))}


def llm_params(s):
    """Every model embeds its tokens: tokens = batch * seq, the model's vocabulary and width."""
    if "vocab" not in s:
        return None
    return {"tokens": s["batch"] * s["seq"], "vocab": s["vocab"], "hidden": s["hidden"]}


SPEC = kernel_here(__file__).register(
    description="out = table[ids]; a row gather, memory-bound on the rows gathered (not the table)",
    axes=("tokens", "vocab", "hidden"),
    make_inputs=make_inputs,
    reference=lambda i, p: {"out": i["table"][i["ids"].astype(np.int64)]},
    output_shapes=lambda p: {"out": (p["tokens"], p["hidden"])},
    flops=lambda p: 0,
    bytes_moved=lambda p, itemsize: p["tokens"] * (ID_BYTES + 2 * p["hidden"] * itemsize),
    input_dtypes={"ids": "int64"},
    sizes={
        "verify": [{"tokens": 1, "vocab": 1, "hidden": 1}, {"tokens": 37, "vocab": 1001, "hidden": 65},
                   {"tokens": 300, "vocab": 97, "hidden": 1027}],
        # quick: tables of 8-16M elements, past the caches (a gather's cost is the rows, not the table's size,
        # as long as the table does not fit in cache) yet quick to make
        "quick": [{"tokens": 512, "vocab": 8192, "hidden": 1024}, {"tokens": 2048, "vocab": 8192, "hidden": 2048}],
        "full": [{"tokens": 1, "vocab": 128256, "hidden": 4096}, {"tokens": 4096, "vocab": 32000, "hidden": 4096},
                 {"tokens": 8192, "vocab": 128256, "hidden": 4096}],
    },
    tolerances={"float64": 0.0, "float32": 0.0, "float16": 0.0, "bfloat16": 0.0},
    llm_params=llm_params,
)
