"""gemm_fp8: fp8 (e4m3fn) storage GEMM, out[m, n] = x[m, k] @ (scale[n] * decode(w[n, k])).T, the weights
stored as the bytes of float8_e4m3fn numbers (1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no
infinities, 0x7f/0xff NaN; largest 448) with per-output-channel scales scale[n] = max|W[n, :]| / 448, and
upcast for the product (as FP8 checkpoints of Llama-3 / Qwen are served on GPUs without FP8 tensor cores).
See ``workbench.catalog.quantized``.

The bytes travel as uint8 (``input_dtypes``; numpy has no float8): torch reinterprets them with
``w.view(torch.float8_e4m3fn)``, free, and upcasts (the library form); where torch cannot convert
float8_e4m3fn on a device the torch variants are unsupported with torch's reason (torch 2.13 CPU converts:
measured). numpy and numba have no float8 type: their variants decode the bytes through a 256-entry table
(software upcast). The reference decodes the same bytes in float64 with the formula
below, so the quantisation itself (3 mantissa bits) is not counted as error.

FLOPs 2mnk + mn; bytes: x, scale, out in the run dtype, weights one byte each (memory-bound at decode).

Tolerances: as gemm_int8's (same mass units, same derivation), since every e4m3 value is exact in every
run dtype (3 mantissa bits, exponents -9 .. 8: float16 and bfloat16 hold them all), so again only the
roundings of x * scale * w and of the sums count: float64 1e-13, float32 2e-6, float16 1.5e-3, bfloat16
1e-2.
"""
import numpy as np

from workbench.catalog import kernel_here
from workbench.catalog.quantized import mlp_weight_params, weight_only_gemm_spec

E4M3_MAX = 448.0


def decode_e4m3(codes: np.ndarray) -> np.ndarray:
    """float8_e4m3fn bytes -> float64: (-1)^s * 2^(e-7) * (1 + m/8), subnormals 2^-6 * m/8, 0x7f/0xff NaN."""
    c = np.asarray(codes, dtype=np.uint8).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    e, m = (c >> 3) & 0xF, c & 0x7
    mag = np.where(e == 0, np.ldexp(m / 8.0, -6), np.ldexp(1.0 + m / 8.0, e - 7))
    return np.where((c & 0x7F) == 0x7F, np.nan, sign * mag)


#: The 127 non-negative finite values, ascending with their code (0x00 .. 0x7e).
_POSITIVE = decode_e4m3(np.arange(0x7F, dtype=np.uint8))


#: All 256 byte values decoded (NaN for 0x7f/0xff, which quantize_fp8 never produces): the lookup table of
#: the software decoders (numpy-table, numba-table).
DECODE_TABLE = decode_e4m3(np.arange(256, dtype=np.uint8))


def encode_e4m3(v: np.ndarray) -> np.ndarray:
    """float64 -> the nearest float8_e4m3fn bytes (ties to the smaller magnitude; |v| > 448 saturates)."""
    a = np.minimum(np.abs(v), E4M3_MAX)
    hi = np.clip(np.searchsorted(_POSITIVE, a), 1, len(_POSITIVE) - 1)
    code = np.where(a - _POSITIVE[hi - 1] <= _POSITIVE[hi] - a, hi - 1, hi)
    return (code | np.where(v < 0, 0x80, 0)).astype(np.uint8)


def quantize_fp8(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel scale = max|w_n| / 448 (a zero channel gets 1), codes = nearest e4m3 of w / scale."""
    amax = np.abs(w).max(axis=1)
    scale = np.where(amax > 0, amax / E4M3_MAX, 1.0)
    return encode_e4m3(w / scale[:, None]), scale


SPEC = kernel_here(__file__).register(
    weight_only_gemm_spec, "out = x @ (scale * fp8_e4m3(w)).T; fp8 weights upcast for the product (torch)",
    weight_dtype="uint8", quantize=quantize_fp8, decode=decode_e4m3, table_decode=True,
    tolerances={"float64": 1e-13, "float32": 2e-6, "float16": 1.5e-3, "bfloat16": 1e-2},
    llm_params=mlp_weight_params)
