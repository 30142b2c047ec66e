"""mlax's devices are jax's: ``mlax.devices()`` and friends return jaxlib's real Device objects.

So ``jax.sharding.Mesh``/``NamedSharding`` (re-exported by mlax.sharding, not re-implemented)
take them, ``mlax.config.update("jax_num_cpu_devices", N)`` and
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` make N host devices as they do in jax, and
``mlax.distributed`` adds other processes' devices. mlax's own backend names ("xla", and the
native "cpu" and "interpreter", which run one-device programs on the host) mean jax's default
platform here; a jax platform name ("cpu", "gpu", "tpu") means that platform. A host array's
device is ``devices()[0]``. Asking for devices starts jax's backend (as in jax); mlax never does
it at import, so configuration updates made before first use still apply.
"""

from __future__ import annotations

from typing import Any

import jax

from mlax.array import Array

Device = jax.Device

_MLAX_BACKENDS = ("xla", "interpreter")


def _platform(backend: str | None) -> str | None:
    """jax's platform for a backend name (mlax's names: the default platform)."""
    if backend is None or backend in _MLAX_BACKENDS or backend.startswith("xla:"):
        return None
    return backend


def devices(backend: str | None = None) -> list[Device]:
    """Every device of ``backend`` (of every process), as ``jax.devices``."""
    return jax.devices(_platform(backend))


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of one process (this one by default), as ``jax.local_devices``."""
    return jax.local_devices(process_index if host_id is None else host_id, _platform(backend))


def device_count(backend: str | None = None) -> int:
    return jax.device_count(_platform(backend))


def local_device_count(backend: str | None = None) -> int:
    return jax.local_device_count(_platform(backend))


def process_index(backend: str | None = None) -> int:
    return jax.process_index(_platform(backend))


def process_count(backend: str | None = None) -> int:
    return jax.process_count(_platform(backend))


def default_backend() -> str:
    """jax's default platform ("cpu" here, "gpu" where one is present): where XLA programs and
    device_put go by default. mlax's default jit backend is ``mlax.config.backend``."""
    return jax.default_backend()


def block_until_ready(x: Any) -> Any:
    """Wait for every array in the pytree ``x`` (mlax runs synchronously) and return it."""
    from jax import tree_util

    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def device_get(x: Any) -> Any:
    """``x`` with every mlax (or jax) Array replaced by its host NumPy array, as
    ``jax.device_get``: read-only, without a copy where the array already lives on the host (a
    sharded one is gathered); other leaves (scalars, tracers) as they are."""
    from jax import tree_util

    def fetch(leaf: Any) -> Any:
        if type(leaf) is Array:
            return leaf._value
        if isinstance(leaf, jax.Array):
            return jax.device_get(leaf)
        return leaf

    return tree_util.tree_map(fetch, x)
