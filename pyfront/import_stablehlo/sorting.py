"""sort and chlo.top_k -> mlax.lax.sort / top_k.

A sort imports when its comparator is an ascending lexicographic less-than over some of its
operands (patterns.sort_keys): what jax writes for sort, argsort (values and an iota) and
sort with num_keys. mlax's sort is stable and orders floats as jax's comparator does (-0.0
equal to 0.0, NaN last); the key operands go first, as mlax.lax.sort's num_keys takes them.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

import mlax.lax as lax
from mlax.import_stablehlo.core import Entry, Importer, integer, single_block, unsupported, value_spec
from mlax.import_stablehlo.patterns import sort_keys

CONVERTERS: dict[str, Entry] = {}


def sort(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    keys = sort_keys(single_block(op, 0))
    if keys is None:
        raise unsupported(op, "a comparator that is not an ascending (lexicographic) less-than of its "
                              "operands, as jax writes for sort and argsort")
    rank = len(value_spec(op, op.operands[0]).shape)
    dimension = integer(op, "dimension", -1)
    order = keys + [i for i in range(len(args)) if i not in keys]
    outs = lax.sort([args[i] for i in order], dimension=dimension % rank if rank else 0, num_keys=len(keys))
    results: list[Any] = [None] * len(args)
    for position, out in zip(order, outs, strict=True):
        results[position] = out
    return results


def top_k(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    values, indices = lax.top_k(args[0], integer(op, "k"))
    index_dtype = value_spec(op, op.results[1]).dtype
    return [values, lax.convert_element_type(indices, index_dtype)]


CONVERTERS.update({
    "stablehlo.sort": Entry(sort, "mlax.sort_permutation + mlax.apply_permutation"),
    "chlo.top_k": Entry(top_k, "mlax.top_k"),
})
