"""gemm_int8: weight-only int8 GEMM, out[m, n] = x[m, k] @ (scale[n] * w[n, k]).T with int8 codes
(symmetric, per-output-channel scales: scale[n] = max|W[n, :]| / 127, w = rint(W / scale)), as
gpt-fast / torchao's int8 weight-only and llama.cpp's Q8 store a layer. See ``workbench.catalog.quantized``.

FLOPs 2mnk + mn (the per-channel scaling). Bytes: x, scale and out in the run dtype, the weights one byte
each: at decode (m = 1) the weight bytes dominate, which is the point of weight-only quantisation (a 4x
smaller stream than float32 weights), hence memory-bound.

Tolerances, in units of the quantisation-step mass ``scale[n] * sum_k |x[m,k]| |w[n,k]|`` (per element:
a channel with a 100x smaller scale is held to the same standard). The int8 codes are exact in every run
dtype (|w| <= 127 < 2^8), so the only errors are roundings of x * scale * w and of the sums:
- any summation order obeys |err| <= gamma_k * mass, gamma_k = k u / (1 - k u); the probabilistic bound
  (Higham & Mary 2019) is ~ lambda sqrt(k) u for the worst of the mn elements. Measured in float32
  (u = 6e-8; 2026-11-22, seed 0): sequential sums <= 1.8e-7 (3 u) for k = 17 .. 28672
  (Llama-3-70B's down projection), BLAS <= 1.6e-7. float32 2e-6 (~34 u) leaves 10x for that and is below
  each bug it must catch: weights dequantised through float16 (1.2e-5 at k = 28672, 4e-4 at k = 17),
  codes off by half a step (a rounding/offset bug: 1.6e-4 at k = 28672, 1.4e-2 at k = 17), the scales
  ignored (> 19).
- float64: 1e-13 (u = 1.1e-16; gamma_k at k = 32768 is 3.6e-12, the typical ~ u growth stays below 1e-13).
- float16 and bfloat16: x and scale arrive rounded, the product rounds once more to the output (u_out <= 1
  in these units since |out| <= mass) and libraries dequantise the weights into the run dtype
  (scale * w rounded: one more u); accumulation in float32 as torch does: 2 u_out + 16 u_32: float16 1.5e-3
  (u = 4.9e-4; numpy's float16 matmul measured 5.8e-4 at k = 17), bfloat16 1e-2 (u = 3.9e-3). Half a
  quantisation step (1.6e-4 .. 1.4e-2, above) is under these: only float32/float64 runs catch rounding bugs.
"""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.quantized import mlp_weight_params, weight_only_gemm_spec

QMAX = 127


def quantize_int8(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-channel int8: scale = max|w_n| / 127 (a zero channel gets scale 1), codes rint(w/scale)."""
    amax = np.abs(w).max(axis=1)
    scale = np.where(amax > 0, amax / QMAX, 1.0)
    return np.clip(np.rint(w / scale[:, None]), -QMAX, QMAX).astype(np.int8), scale


SPEC = kernel_here(__file__).register(
    weight_only_gemm_spec, "out = x @ (scale * w_int8).T; weight-only int8 with per-channel scales (decode-bound)",
    weight_dtype="int8", quantize=quantize_int8, decode=lambda w: np.asarray(w, dtype=np.float64),
    tolerances={"float64": 1e-13, "float32": 2e-6, "float16": 1.5e-3, "bfloat16": 1e-2},
    llm_params=mlp_weight_params)
