"""What compiled code and the runtimes agree on, stated once: the symbols a runtime looks up in
a compiled module, and the descriptor host-callback calls pass (backends/native/host_callbacks.py
reads it back).

Passes write these names and words; backends read them. Keeping them here lets a pass name a
runtime's symbol without importing the runtime (layers import downward only).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from mlax.dialect import dtypes
from mlax.dialect.callbacks import callback_declarations, check_results
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import DeclarationError, Transform
from mlax.passes.registry import PassFailure

# A public function ``@name`` becomes ``@jit.name`` in the native backends' buffer ABI.
ENTRY_PREFIX = "jit."
# A module's `void ()` function that frees what its library calls keep between executions (MKL's
# DFTI descriptors): the CPU runtime exports it next to the entry and calls it when it unlinks the
# code (backends/cpu/orc.py).
RELEASE_FUNCTION = "mlax_release_state"
# The host-callback entry: a C function ``void(int64_t *record)`` the CPU code calls, and the
# XLA custom-call target of the same name.
HOST_CALLBACK = "mlax_host_callback"
# Dtype codes of a callback descriptor.
CALLBACK_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64", "float16", "float32", "float64")
) + (np.dtype(dtypes.bfloat16),)


def entry_symbol(name: str) -> str:
    """The symbol a public function ``@name`` has in the native backends' buffer ABI."""
    return ENTRY_PREFIX + name


def encode_callback(callback_id: int, operands: Sequence[TensorSpec],
                    results: Sequence[TensorSpec]) -> list[int]:
    """The descriptor of one host-callback call:
    ``[id, n_in, n_out, (dtype code, rank, dims...) for every operand then result]``; the types
    are the call site's (batching changes them), so nothing else needs to know them."""
    words = [callback_id, len(operands), len(results)]
    for spec in (*operands, *results):
        words += [CALLBACK_DTYPES.index(spec.dtype), len(spec.shape), *spec.shape]
    return words


def checked_callback_declarations(module: ir.Operation) -> dict[str, tuple[ir.Operation, Transform]]:
    """The module's callback declarations by name, each checked against its result types (a
    mismatch fails the pass at the declaration); both lowerings of callbacks start here."""
    declarations = callback_declarations(module)
    for declaration, transform in declarations.values():
        try:
            function_type = ir.TypeAttr(declaration.attributes["function_type"]).value
            check_results(transform, ir.FunctionType(function_type))
        except DeclarationError as error:
            raise PassFailure(str(error), declaration.location) from None
    return declarations

# `mlax-profile-kernels` (mlax.profiler): the event buffer a profiled CPU program appends to,
# ``int64_t[PROFILE_CAPACITY][3]`` rows of (kernel index, start ns, end ns), and its ``int64_t``
# row count (events past the capacity are counted, not written); the runtime defines both.
PROFILE_EVENTS = "mlax_profile_events"
PROFILE_COUNT = "mlax_profile_count"
PROFILE_CAPACITY = 1 << 17
# The module attribute listing a profiled program's kernels, indexed as its events are.
PROFILE_KERNELS_ATTRIBUTE = "mlax.profile_kernels"
