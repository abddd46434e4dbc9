"""relu with numpy: the ufunc into the output buffer."""
import numpy as np

from workbench.catalog import kernel_here

kernel_here(__file__).numpy(lambda i, o: np.maximum(i["x"], 0, out=o["out"]),
                            "np.maximum(x, 0) into the output buffer.")
