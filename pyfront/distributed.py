"""mlax.distributed: one program over several processes, as ``jax.distributed``.

mlax's devices are jax's, so joining processes is jax's own ``jax.distributed.initialize``:
after it, ``mlax.devices()`` lists every process's devices (global ids, which are not 0..N-1:
meshes name devices by id), ``mlax.local_devices()`` this process's, and a program for a mesh
spanning processes runs with each process feeding and holding its own shards
(``mlax.make_array_from_process_local_data``, ``Array.addressable_shards``). On the CPU the
processes' collectives need an implementation: ``gloo`` is chosen unless the user chose one
(``mlax.config.update("jax_cpu_collectives_implementation", ...)``). Call it before anything
asks for devices, as jax requires.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax

__all__ = ["initialize", "is_initialized", "shutdown"]


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: int | Sequence[int] | None = None,
               **kwargs: Any) -> None:
    """Join the processes of one program: ``coordinator_address`` ("127.0.0.1:1234", served by
    process 0), how many processes there are, and this one's id (jax's keywords, passed on)."""
    if jax.config.jax_cpu_collectives_implementation in (None, "", "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address, num_processes, process_id, local_device_ids, **kwargs)


def is_initialized() -> bool:
    return jax.distributed.is_initialized()


def shutdown() -> None:
    """Leave the group (every process calls it; jax's barrier waits for all)."""
    jax.distributed.shutdown()
