"""gemm with numpy: BLAS through np.matmul."""
import numpy as np

from workbench.catalog import kernel_here

kernel_here(__file__).numpy(lambda i, o: np.matmul(i["a"], i["b"], out=o["out"]),
                            "np.matmul into the output: BLAS sgemm/dgemm (numpy's own loops for float16).")
