"""mlax.numpy: the NumPy API on mlax arrays (as jax.numpy)."""

from mlax.numpy.elementwise import *  # noqa: F403
from mlax.numpy.elementwise import add, exp, multiply, negative, subtract, tanh  # noqa: F401
from mlax.numpy.util import array, asarray  # noqa: F401
