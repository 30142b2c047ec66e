"""mlax: JAX's composable function transformations built as an MLIR compiler.

``import mlax as jax`` style: ``mlax.jit``, ``mlax.numpy``, ``mlax.lax``, ``mlax.nn``,
``mlax.tree_util``, ``mlax.config``. Traced programs are IR in the ``mlax`` MLIR dialect.
"""

from mlax import lax, nn, numpy, scipy, tree_util
from mlax.array import Array
from mlax.config import config
from mlax.devices import block_until_ready, default_backend, device_count, devices, local_devices
from mlax.errors import ConcretizationTypeError, UnexpectedTracerError
from mlax.jit import jit, make_mlir
from mlax.lax.transforms import stop_gradient

__all__ = [
    "Array", "ConcretizationTypeError", "UnexpectedTracerError", "block_until_ready", "config",
    "default_backend", "device_count", "devices", "jit", "lax", "local_devices", "make_mlir", "nn",
    "numpy", "scipy", "stop_gradient", "tree_util",
]
