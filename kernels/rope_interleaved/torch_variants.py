"""rope_interleaved with torch on any torch device: Meta's LLaMA reference (pairs as complex numbers times
freqs_cis), and its torch.compile."""
from workbench.authoring.rope_variants import torch_interleaved
from workbench.catalog import kernel_here

kernel_here(__file__).torch_trio(
    lambda torch, i, o: torch_interleaved(i["q"], i["k"], i["cos"], i["sin"]),
    "view_as_complex(q) * freqs_cis as Meta's LLaMA code (float32 complex, cast back to the run dtype).",
    compiled=torch_interleaved, compile_doc="torch.compile of the complex form.")
