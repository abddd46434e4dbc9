"""Preludes: the C text that turns one portable kernel source into CUDA C, HIP or OpenCL C.

A portable ``.cu`` file is written in a CUDA-C subset against these macros, so
the same text compiles under NVRTC/nvcc (``cuda``), hipRTC (``hip``) and an
OpenCL C compiler such as PoCL's (``opencl``):

=================  ==========================  ================================
macro              CUDA / HIP                  OpenCL C
=================  ==========================  ================================
KERNEL             ``extern "C" __global__``   ``__kernel``
DEVICE_FN          ``static __device__ inline``  ``static inline``
GLOBAL             (empty)                     ``__global``
SHARED             ``__shared__``              ``__local``
SHARED_PTR         (empty)                     ``__local``
RESTRICT           ``__restrict__``            ``restrict``
BARRIER            ``__syncthreads()``         ``barrier(CLK_LOCAL_MEM_FENCE)``
THREAD_X / _Y      ``threadIdx.x``             ``get_local_id(0)``
BLOCK_X / _Y       ``blockIdx.x``              ``get_group_id(0)``
BLOCK_DIM_X / _Y   ``blockDim.x``              ``get_local_size(0)``
GRID_DIM_X / _Y    ``gridDim.x``               ``get_num_groups(0)``
=================  ==========================  ================================

``SHARED`` declares a shared array; ``SHARED_PTR`` qualifies a pointer to one in
a helper's parameter list. They differ on CUDA, where a pointer parameter
carries no address space but a declaration without ``__shared__`` silently
becomes thread-private local memory (the compile check looks for that).

Dtypes. ``real`` is the storage type of arrays and ``acc_t`` the type kernels
compute in: float/float, double/double, and for float16 half storage with
float accumulation. Kernels read and write arrays only through
``LOAD(p, i)`` and ``STORE(p, i, v)``, which convert between the two; on
OpenCL half goes through ``vload_half``/``vstore_half``, which are core
OpenCL and need no ``cl_khr_fp16``. On CUDA ``real`` is a two-line struct over
the PTX ``cvt`` instructions, so no toolkit header (``cuda_fp16.h``, absent
from NVRTC's built-in set) is needed. Floating literals go through ``LIT(x)``
(``LIT(0.5)`` is ``0.5f`` for a float accumulator, ``0.5`` for double; it pastes
a suffix, so give it a literal with a decimal point, never a macro). Math goes through upper-case names on ``acc_t``:
``EXP LOG SQRT RSQRT TANH ERF FABS FMAX FMIN`` (``expf`` would silently round
a double kernel to float on CUDA, and OpenCL C has no ``f``-suffixed names at
all; the OpenCL prelude also maps ``expf``-style names for code written in
CUDA style). ``i64`` is a 64-bit signed integer (``long long`` / ``long``).

Warp-level macros (``FULL_MASK``, ``SHFL_XOR``) exist only on CUDA and HIP and
only when ``WARP_SIZE`` is defined at build time from the device; the mask type
is 32-bit on CUDA and 64-bit on HIP (wavefronts are 64 lanes on gfx9/CDNA, 32 on
gfx10+ by default). On HIP a ``WARP_SIZE`` that differs from the compiler's
``__AMDGCN_WAVEFRONT_SIZE`` is a build error, not a silently wrong reduction.
"""

from __future__ import annotations

TARGETS = ("cuda", "hip", "opencl")
#: The targets with CUDA's launch model: warps of WARP_SIZE, and at most 65535 blocks in grid y and z.
CUDA_TARGETS = ("cuda", "hip")
DTYPES = ("float16", "float32", "float64")

#: dtype -> (acc_t on every target, literal suffix)
_ACC = {"float16": ("float", "f"), "float32": ("float", "f"), "float64": ("double", "")}

_MATH = ("exp", "log", "sqrt", "rsqrt", "tanh", "erf", "fabs", "fmax", "fmin")

_COMMON_CUDA = """\
#define KERNEL extern "C" __global__
#define DEVICE_FN static __device__ __forceinline__
#define GLOBAL
#define SHARED __shared__
#define SHARED_PTR
#define RESTRICT __restrict__
#define BARRIER __syncthreads()
#define THREAD_X ((int)threadIdx.x)
#define THREAD_Y ((int)threadIdx.y)
#define BLOCK_X ((int)blockIdx.x)
#define BLOCK_Y ((int)blockIdx.y)
#define BLOCK_DIM_X ((int)blockDim.x)
#define BLOCK_DIM_Y ((int)blockDim.y)
#define GRID_DIM_X ((int)gridDim.x)
#define GRID_DIM_Y ((int)gridDim.y)
typedef long long i64;
"""

_OPENCL = """\
#define KERNEL __kernel
#define DEVICE_FN static inline
#define GLOBAL __global
#define SHARED __local
#define SHARED_PTR __local
#define RESTRICT restrict
#define BARRIER barrier(CLK_LOCAL_MEM_FENCE)
#define THREAD_X ((int)get_local_id(0))
#define THREAD_Y ((int)get_local_id(1))
#define BLOCK_X ((int)get_group_id(0))
#define BLOCK_Y ((int)get_group_id(1))
#define BLOCK_DIM_X ((int)get_local_size(0))
#define BLOCK_DIM_Y ((int)get_local_size(1))
#define GRID_DIM_X ((int)get_num_groups(0))
#define GRID_DIM_Y ((int)get_num_groups(1))
typedef long i64;
/* CUDA-style single-precision names, for code written the CUDA way. */
#define expf exp
#define logf log
#define sqrtf sqrt
#define rsqrtf rsqrt
#define tanhf tanh
#define erff erf
#define fabsf fabs
#define fmaxf fmax
#define fminf fmin
#define powf pow
#define __expf native_exp
"""

_CUDA_HALF = """\
/* float16 storage without cuda_fp16.h: conversions are single PTX instructions. */
struct wb_half {
  unsigned short bits;
  __device__ wb_half() {}
  __device__ wb_half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits)); return f; }
};
typedef wb_half real;
"""

_CUDA_WARP = """\
#ifdef WARP_SIZE
typedef unsigned int lane_mask_t;
#define FULL_MASK (~(lane_mask_t)0 >> (8 * (int)sizeof(lane_mask_t) - (WARP_SIZE)))
#define SHFL_XOR(v, lane) __shfl_xor_sync(FULL_MASK, (v), (lane), WARP_SIZE)
#endif
"""

_HIP_WARP = """\
#ifdef WARP_SIZE
#if defined(__AMDGCN_WAVEFRONT_SIZE) && WARP_SIZE != __AMDGCN_WAVEFRONT_SIZE
#error "WARP_SIZE differs from this target's wavefront size (__AMDGCN_WAVEFRONT_SIZE)"
#endif
typedef unsigned long long lane_mask_t;
#define FULL_MASK (~(lane_mask_t)0 >> (8 * (int)sizeof(lane_mask_t) - (WARP_SIZE)))
#define SHFL_XOR(v, lane) __shfl_xor((v), (lane), WARP_SIZE)
#endif
"""


def _math_macros(target: str, acc: str) -> str:
    """``EXP(x)`` etc. on acc_t: f-suffixed CUDA names for float, generic names for double and on OpenCL."""
    suffix = "f" if target != "opencl" and acc == "float" else ""
    lines = []
    for m in _MATH:
        params, args = ("x, y", "(x), (y)") if m in ("fmax", "fmin") else ("x", "(x)")
        lines.append(f"#define {m.upper()}({params}) {m}{suffix}({args})")
    return "\n".join(lines) + "\n"


def _dtype_block(target: str, dtype: str) -> str:
    acc, suffix = _ACC[dtype]
    lines = []
    if target == "opencl" and dtype == "float64":
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if dtype == "float16":
        if target == "cuda":
            lines.append(_CUDA_HALF.rstrip("\n"))
        elif target == "hip":
            lines.append("typedef _Float16 real;")
        else:
            lines.append("typedef half real;  /* storage only: vload_half/vstore_half need no cl_khr_fp16 */")
    else:
        lines.append(f"typedef {acc} real;")
    lines.append(f"typedef {acc} acc_t;")
    lines.append(f"#define LIT(x) x##{suffix}" if suffix else "#define LIT(x) x")
    if target == "opencl" and dtype == "float16":
        lines.append("#define LOAD(p, i) vload_half((i), (p))")
        lines.append("#define STORE(p, i, v) vstore_half((float)(v), (i), (p))")
    else:
        lines.append("#define LOAD(p, i) ((acc_t)(p)[i])")
        lines.append("#define STORE(p, i, v) ((p)[i] = (real)(v))")
    return "\n".join(lines) + "\n" + _math_macros(target, acc)


def prelude(target: str, dtype: str) -> str:
    """The prelude text for ``target`` (cuda, hip, opencl) and ``dtype`` (float16, float32, float64)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; valid targets: {', '.join(TARGETS)}")
    if dtype not in DTYPES:
        raise ValueError(f"portable kernels implement {', '.join(DTYPES)}, not {dtype!r}")
    head = f"/* workbench portable prelude: target {target}, dtype {dtype} */\n"
    head += f"#define WB_TARGET_{target.upper()} 1\n"
    if target == "opencl":
        body = _OPENCL
    else:
        body = _COMMON_CUDA + (_CUDA_WARP if target == "cuda" else _HIP_WARP)
    return head + body + _dtype_block(target, dtype)
