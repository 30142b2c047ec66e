"""Collectives have no linalg lowering: an explicit, documented "unsupported" entry per op.

The native CPU backend runs one device, so there is nobody to communicate with. Under
``vmap(axis_name=...)`` `mlax-batch` has already turned every collective into ordinary ops
(reduce_sum over the batch, an iota, ...), and the `shard_map` of a one-device run is
simulated by `mlax-simulate-devices`; a collective that still reaches this pass is a
sharded program, which runs on the xla backend (``jit(..., backend="xla")``, mlax's
multi-device backend). The error names the op and that backend.
"""

from __future__ import annotations

from mlir import ir

from mlax.dialect.ops.collectives import COLLECTIVES
from mlax.passes.lower_to_linalg.common import Rule, fail


def _unsupported(op: ir.Operation) -> ir.Value:
    raise fail(op, f"{op.name} communicates between devices, which the one-device CPU backend does not "
                   "have: run sharded programs on the xla backend (jit(..., backend=\"xla\")); under "
                   "vmap(axis_name=...) mlax-batch resolves collectives before this pass")


RULES: dict[str, Rule] = {name: _unsupported for name in COLLECTIVES}
