"""rope with torch on any torch device: Hugging Face's apply_rotary_pos_emb (rotate_half), and its
torch.compile."""
from workbench.authoring.rope_variants import torch_half
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch_half(i["q"], i["k"], i["cos"], i["sin"]),
    "q * cos + rotate_half(q) * sin (and k) as Hugging Face's LLaMA: cat, chunk, negate, four products.",
    compiled=torch_half, compile_doc="torch.compile of the Hugging Face form: one fused kernel per output.")
