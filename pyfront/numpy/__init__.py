"""mlax.numpy: the NumPy API on mlax arrays (as jax.numpy)."""

import jax.numpy as _jax_numpy  # noqa: E402

from mlax.array import Array as ndarray  # noqa: F401
from mlax.numpy.creation import *  # noqa: F403
from mlax.numpy.dtypes import *  # noqa: F403
from mlax.numpy.elementwise import *  # noqa: F403
from mlax.numpy.indexing import *  # noqa: F403
from mlax.numpy.linalg import *  # noqa: F403
from mlax.numpy.manipulation import *  # noqa: F403
from mlax.numpy.math_extra import *  # noqa: F403
from mlax.numpy.reductions import *  # noqa: F403
from mlax.numpy.sorting import *  # noqa: F403
from mlax.numpy.util import array, asarray  # noqa: F401
from mlax.numpy.vectorize import vectorize  # noqa: F401
from mlax.out_sharding import accept_out_sharding as _accept_out_sharding  # noqa: E402

_accept_out_sharding(globals(), _jax_numpy, "mlax.numpy")
