"""Batching a shard_map call (jax's ``_shard_map_batch``): a shard_map of the vmapped callee.

The batch dimension is never split over the mesh: a batched operand's spec gets an
unsharded leading entry, so every device's block carries the whole batch at dimension 0, and
the callee is batched as a `mlax.vmap` declaration (with the vmap's axis_name, so the body's
collectives over it are resolved there; its collectives over mesh axes stay). Every result
comes back batched (an unbatched one is broadcast inside the callee).
"""

from __future__ import annotations

from mlir import ir

from mlax.dialect.shard_map import SHARD_MAP_KIND
from mlax.passes.batching.control_flow import OUT_FLAGS, RULES, Batched, Site


def _shard_map(at: Site, fields: dict, args: list[ir.Value], flags: list[bool], n: int) -> Batched:
    unsplit: tuple[tuple[str, ...], ...] = ((),)
    body = at.vmapped(fields["callee"], flags, [True] * n)
    in_specs = tuple(unsplit + s if f else s for s, f in zip(fields["in_specs"], flags, strict=True))
    out_specs = tuple(unsplit + s for s in fields["out_specs"])
    name = at.declare(SHARD_MAP_KIND, body, callee=body, axis_names=fields["axis_names"],
                      axis_sizes=fields["axis_sizes"], in_specs=in_specs, out_specs=out_specs)
    return at.call(name, args), [True] * n


RULES[SHARD_MAP_KIND] = _shard_map
OUT_FLAGS[SHARD_MAP_KIND] = lambda fields, flags, n, lookup, size, axis_name: [True] * n
