"""vector_add with numpy: the ufunc into the output buffer."""
import numpy as np

from workbench.catalog import kernel_here

kernel_here(__file__).numpy(lambda i, o: np.add(i["a"], i["b"], out=o["out"]),
                            "np.add into the output buffer (single-threaded ufunc).")
