"""mlax.lax: the primitives of the mlax dialect, one wrapper per op (as jax.lax), plus the
composites jax.lax also offers (square, integer_pow, asin, sinh, ...)."""

import jax.lax as _jax_lax  # noqa: E402

from mlax.lax.approx_topk import *  # noqa: F403
from mlax.lax.bits import *  # noqa: F403
from mlax.lax.collectives import *  # noqa: F403
from mlax.lax.control_flow import *  # noqa: F403
from mlax.lax.convolution_extras import *  # noqa: F403
from mlax.lax.creation import *  # noqa: F403
from mlax.lax.dynamic_slicing import *  # noqa: F403
from mlax.lax.elementwise import *  # noqa: F403
from mlax.lax.fft import *  # noqa: F403
from mlax.lax.generic_reduce import *  # noqa: F403
from mlax.lax.indexing import *  # noqa: F403
from mlax.lax.integer_ops import *  # noqa: F403
from mlax.lax.joining import *  # noqa: F403
from mlax.lax.linalg import *  # noqa: F403
from mlax.lax.not_yet_random import *  # noqa: F403
from mlax.lax.platform import *  # noqa: F403
from mlax.lax.precision import *  # noqa: F403
from mlax.lax.ragged import *  # noqa: F403
from mlax.lax.reductions import *  # noqa: F403
from mlax.lax.scans import *  # noqa: F403
from mlax.lax.selection import *  # noqa: F403
from mlax.lax.shape import *  # noqa: F403
from mlax.lax.solvers import *  # noqa: F403
from mlax.lax.sorting import *  # noqa: F403
from mlax.lax.special import *  # noqa: F403
from mlax.lax.special_functions import *  # noqa: F403
from mlax.lax.transforms import *  # noqa: F403
from mlax.lax.windowed import *  # noqa: F403
from mlax.out_sharding import accept_out_sharding as _accept_out_sharding  # noqa: E402
from mlax.transfer import with_sharding_constraint  # noqa: E402, F401

_accept_out_sharding(globals(), _jax_lax, "mlax.lax")
