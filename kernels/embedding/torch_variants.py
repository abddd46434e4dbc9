"""embedding with torch on any torch device: F.embedding (what nn.Embedding calls), index_select into the
output, and torch.compile."""
from workbench.catalog import kernel_here


def _embedding(ids, table):
    import torch.nn.functional as F

    return F.embedding(ids, table)


kernel_here(__file__).torch_trio(
    lambda torch, i, o: _embedding(i["ids"], i["table"]), "F.embedding(ids, table) (nn.Embedding), a new tensor.",
    out=lambda torch, i, o: torch.index_select(i["table"], 0, i["ids"], out=o["out"]),
    out_doc="torch.index_select(table, 0, ids, out=out): the same gather, no allocation.",
    compiled=_embedding, compile_doc="torch.compile of F.embedding(ids, table).")
