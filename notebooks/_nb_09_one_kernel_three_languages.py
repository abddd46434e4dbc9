"""Tutorial: the same row softmax in portable C, Triton and WGSL, verified here and compiled for NVIDIA and AMD."""

from _cells import code, md, params

CELLS = [
    md("""
# One kernel, three languages

The same row softmax — `out[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max))` — written three ways:

- **portable C** (`kernels/softmax/softmax.cu`): one source compiled as CUDA, HIP and OpenCL C;
- **Triton** (`kernels/softmax/triton_variants.py`): a `@triton.jit` kernel, one program per row;
- **WGSL** (`kernels/softmax/softmax.wgsl`): a compute shader for Vulkan, Metal and D3D12 through wgpu.

Without a GPU each reaches rung 3 of the verification ladder (the README's "What is verified where"), and
portable C and Triton also rung 4 (WGSL has no GPU compiler here that reports registers, so it stops at 3):

- **rung 3, executed and checked here:** portable C on PoCL (OpenCL on the CPU), Triton in its interpreter
  on CPU tensors, WGSL on lavapipe (Mesa's CPU Vulkan driver). These rows are correctness results: their
  times say nothing about a GPU.
- **rung 4, compiled for real GPUs:** portable C with nvcc (NVIDIA) and hipcc (AMD); Triton with its own
  compilers for both. The compilers report registers, spills and shared memory per kernel.
"""),
    params("""
SMALL = False
ARCHS = ["sm_80", "sm_90", "gfx90a", "gfx942"]
"""),
    code("""
import pandas as pd
import workbench
from workbench import tutorial
from workbench.backends.registry import all_backends

from workbench.catalog.loader import builtin_catalog_path

tutorial.begin(small=SMALL, leaves_out="seed 2: it verifies with seeds 0 and 1; its compile tables are a full run's")

folder = builtin_catalog_path() / "softmax"
"""),
    md("""
## The three sources

The reduction structure is the same in all three; what differs is who spells out the threads. The portable C
and WGSL kernels give each row a block (workgroup) of threads and reduce in shared (workgroup) memory;
Triton's program holds the whole row as one block of lanes and lets the compiler lay it out.
"""),
    code("""
cu = (folder / "softmax.cu").read_text()
print(cu[cu.index("KERNEL"):])
"""),
    code("""
import textwrap

src = (folder / "triton_variants.py").read_text()
start = src.index("    @triton.jit")  # from the start of its line, so dedent lines it up
print(textwrap.dedent(src[start:src.index("return softmax_kernel")]))
"""),
    code("""
wgsl = (folder / "softmax.wgsl").read_text()
print(wgsl[wgsl.index("@compute"):])
"""),
    code("""
from workbench.portable.source import INCLUDE_DIR


def count(text):   # non-blank lines that are not comments, as printed above
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("//", "#", "/*", "*")))


# the portable C kernel calls block_max and block_sum from wb_reduce.h (not printed above); WGSL writes its two
# tree reductions out inline, and Triton's are its built-ins tl.max and tl.sum
reduce_h = (INCLUDE_DIR / "wb_reduce.h").read_text()
starts = [reduce_h.index(f"DEVICE_FN acc_t {f}") for f in ("block_sum", "block_max")]
helpers = chr(10).join(reduce_h[i:reduce_h.index(chr(10) + "}" + chr(10), i) + 2] for i in starts)
print(helpers, end=chr(10) * 2)
lines = {"portable C": cu[cu.index("KERNEL"):], "Triton": src[src.index("@triton.jit"):src.index("return softmax")],
         "WGSL": wgsl[wgsl.index("@compute"):]}
table = pd.DataFrame({"the kernel as printed": {k: count(v) for k, v in lines.items()},
                      "with the reductions it calls": {k: count(v) + (count(helpers) if k == "portable C" else 0)
                                                       for k, v in lines.items()}})
print(f"portable C's reductions: block_sum and block_max in wb_reduce.h, {count(helpers)} lines; WGSL's are inline in "
      "its kernel, Triton's are built in (tl.max, tl.sum)")
table
"""),
    md("""
## Rung 3: executed and checked against the float64 reference

`workbench.verify` runs each variant at the spec's verification sizes (1 row of 1 column, 37 rows of 1000
columns, 5 rows of 4097 columns) with three seeds (0, 1, 2; a `SMALL` run, the tests', with 0 and 1) and poisoned
outputs (`params` in the table is the size of
each variant's worst trial, the one its `max_error` comes from), in a worker process per backend. Each
language runs on the CPU runtime that executes it here; a runtime this machine lacks is listed with the reason.
"""),
    code("""
backends = all_backends()
runtime_of = {"portable C": "opencl", "Triton": "triton", "WGSL": "wgpu"}
variant_of = {"portable C": "portable", "Triton": "triton", "WGSL": "wgsl"}
chosen, missing = {}, {}
for language, runtime in runtime_of.items():
    usable = [n for n, b in sorted(backends.items(), key=lambda kv: kv[1].priority)
              if b.runtime == runtime and b.probe().available]
    if usable:
        chosen[language] = usable[0]
    else:
        missing[language] = "; ".join(f"{n}: {b.probe().reason}" for n, b in backends.items()
                                      if b.runtime == runtime) or f"no {runtime} backend"
print("executing on:", chosen)
for language, why in missing.items():
    print(f"not here: {language} ({why})")
"""),
    code("""
results = workbench.verify(kernels="softmax", backends=sorted(set(chosen.values())),
                           variants=sorted({variant_of[lang] for lang in chosen}), seeds=range(2 if SMALL else 3))
pairs = {(variant_of[lang], backend) for lang, backend in chosen.items()}  # each language on its own runtime
verified = pd.DataFrame([r.to_dict() for r in results if (r.variant, r.backend) in pairs])
verified[["variant", "backend", "status", "max_error", "tolerance", "params", "trials"]]
"""),
    code("""
by_pair = {(r.variant, r.backend): r for r in results}
for language, backend in chosen.items():
    r = by_pair[(variant_of[language], backend)]
    assert r.passed, (language, r.status, r.message)
    device = workbench.device_info(backend)   # what the backend's name stands for on this machine
    print(f"{language:10s} on {r.backend:13s} ({device.get('name', 'device unknown')}, {device.get('kind', '?')}): "
          f"{r.status}, worst error {r.max_error:.1e} (tolerance {r.tolerance:.0e}) over {r.trials} trials")
"""),
    md("""
## Rung 4: compiled for NVIDIA and AMD, side by side

`workbench compile-check` compiles the portable source with nvcc / hipcc and the Triton kernel with
Triton's compilers, for each target. Here it runs through the same functions the command uses.
`regs` is registers per thread (NVIDIA) or VGPRs per lane (AMD); `smem` is shared memory (LDS on AMD)
per block. A target a compiler on this machine cannot build (or a compiler that is not installed) is a skipped row
with its reason: the first table below lists them.
"""),
    code("""
from workbench.catalog.loader import loaded_folders
from workbench.portable import compile_check, triton_catalog

units = compile_check.units_from_catalog("softmax")
rows = compile_check.run_check(units, ARCHS, compile_check.find_compiler(), relative_to=folder.parent.parent)
rows += triton_catalog.check_catalog(ARCHS, loaded_folders(), "softmax", relative_to=folder.parent.parent)


def language(r):
    # only the source printed above is "portable C"; a CUDA/HIP-only variant compiled from the same folder
    # (softmax_rows_warp) is named as what it is, and rung 3 has no correctness result for it here
    if r.tool == "triton":
        return "Triton"
    return "portable C" if "softmax/portable" in r.variants else f"CUDA/HIP only ({', '.join(r.variants)})"


compiled = pd.DataFrame([{"language": language(r), "tool": r.tool,
                          "kernel": r.kernel, "arch": r.arch, "regs": r.registers, "smem": r.smem_bytes,
                          "spills": (r.spill_stores or 0) + (r.vgpr_spills or 0) + (r.sgpr_spills or 0),
                          "ok": r.ok, "skipped": r.skipped or ""} for r in rows])
compiled[compiled["skipped"] != ""][["tool", "arch", "skipped"]]
"""),
    code("""
done = compiled[compiled["skipped"] == ""]
# spills beside registers and shared memory; a cell left empty (NaN) is a target that compiler did not build
side_by_side = done.astype({"regs": "Int64", "smem": "Int64", "spills": "Int64"}).pivot(
    index=["language", "kernel"], columns="arch", values=["regs", "smem", "spills"])
for metric in ("regs", "smem", "spills"):   # one narrow table per figure, so none wraps into fragments
    print(f"{metric}:" + chr(10) + side_by_side[metric].to_string() + chr(10))
"""),
    code("""
assert done["ok"].all(), done[~done["ok"]]
assert (done["spills"] == 0).all()
built = done.groupby("language")["arch"].apply(lambda a: ", ".join(sorted(set(a))))
for language, archs in built.items():
    print(f"{language}: compiled for {archs}, 0 spills")
portable = done[(done["language"] == "portable C") & (done["kernel"] == "softmax_rows")].set_index("arch")
triton_rows = done[done["language"] == "Triton"].set_index("arch")
for arch in sorted(set(portable.index) & set(triton_rows.index)):
    p, t = portable.loc[arch], triton_rows.loc[arch]
    more = "more" if t["regs"] > p["regs"] else "fewer" if t["regs"] < p["regs"] else "as many"
    print(f"{arch}: Triton's {t['kernel']} uses {int(t['regs'])} registers, {more} than the portable C's "
          f"{int(p['regs'])}; shared memory {int(t['smem'])} vs {int(p['smem'])} bytes")
    # what the next paragraph says, checked on every target compiled here
    assert t["regs"] > p["regs"] and t["smem"] < p["smem"], (arch, dict(t), dict(p))
# which compiled build rung 3 ran: Triton picks BLOCK = next power of two of cols, so the verify sizes run builds
# other than the BLOCK=4096 one compiled here (4097 columns need BLOCK=8192): the line says so, so the compile
# figures are not read as those of the verified builds
cols = sorted({s["cols"] for s in workbench.get_kernel("softmax").sizes["verify"]})
ran = ", ".join(f"BLOCK={1 << max(c - 1, 0).bit_length()} for {c} column{'s' * (c != 1)}" for c in cols)
if "Triton" in chosen and "Triton" in set(done["language"]):
    print(f"Triton's compile figures are for BLOCK=4096 (a 4096-column row); rung 3 ran the builds its rows need "
          f"({ran}), so the figures above are of a build that was compiled, not verified, here")
for lang in sorted(set(done["language"]) - set(variant_of)):
    print(f"{lang}: compiled only; it runs under CuPy on a GPU, so rung 3 has no correctness result for it here")
"""),
    md("""
Why the numbers differ: the portable kernel keeps one value per thread and reduces through a 256-float
shared-memory tree (1 KiB of shared memory per block), while Triton keeps a whole row block in registers spread
over its warps (its figures are for the block size the catalog compiles, `BLOCK=4096`, named in the kernel
column; another block size would change them), so it needs more registers per thread and only a few bytes of
shared memory for the cross-warp step; rung 3 ran other builds of it (a block per row's power of two of
columns), as the line above says. The third row, `softmax_rows_warp` (the `cuda-warp-shuffle` variant, CUDA
and HIP only, from `softmax_warp.cu`, not the portable source printed above), reduces within each warp by shuffles
and keeps only one partial result per warp in shared memory, hence its few bytes; it runs only under CuPy on a GPU,
so it has no correctness result here. The `spills` table above gives each compiled target's spills; a target one
compiler refused while another built it keeps its column, with that compiler's cells empty (NaN), and the table
before it says why. Which one is faster on a GPU is a rung-6 question: run `workbench bench --kernels softmax` on a
machine with one.
"""),
]
