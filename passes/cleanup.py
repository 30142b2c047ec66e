"""`mlax-cleanup`: CSE, DCE, constant folding and algebraic simplification of mlax ops.

IRDL ops carry no traits, so upstream cse/canonicalize leave mlax ops alone; this pass
does the same jobs for them, relying on every mlax op being pure:

- simplification: per-op rules in RULES (keyed by op name) replace an op by one of its
  operands when that is exact: x + 0, x - 0, x * 1, neg(neg x), not(not x), and convert / reshape /
  broadcast_in_dim / transpose that do not change anything; a broadcast_in_dim of a
  broadcast_in_dim, or of a reshape that only inserts size-1 dims (keepdims), becomes one.
  "Exact" is bitwise: for floats the additive identity is -0.0 (x + +0.0 turns -0.0 into
  +0.0), so a float `x + 0.0` stays.
- constant folding: an op whose operands are all `mlax.constant`s is evaluated with the
  dialect's NumPy reference rule and replaced by a constant at the op's location; results
  or operands larger than `fold-limit` elements are left alone, so big splats are not
  materialised. Ops whose value depends on context (collectives) are never folded.
- CSE: an op identical to an earlier one in scope (same name, operands, attributes and
  result types) reuses its results. Values from above are visible inside mlax region ops
  (not isolated from above); other region ops start a fresh scope.
- DCE: mlax ops whose results are unused are erased, and so are calls whose results are unused
  of what has no effect: pure host callbacks, and functions and control-flow or shard_map
  declarations whose bodies call only such things (jax's DCE drops an unused cond or while
  whose branches hold a pure_callback); debug and io callbacks always stay: they are effects.

The steps repeat until nothing changes (at most `max-iterations` rounds).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from mlax.dialect import build, dtypes, get_op, read_attributes
from mlax.dialect.attrs import dense_attribute, dense_to_numpy
from mlax.dialect.callbacks import CALLBACK_KIND, callee_of
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.shard_map import SHARD_MAP_KIND
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import read_transform, referenced_symbols
from mlax.dialect.user_primitives import USER_PRIMITIVE_KIND
from mlax.passes.registry import ModulePass, option, register_pass
from mlax.passes.walk import is_mlax, nested_ops

# A simplification: (op, the splat value of each operand that is a splat constant, else
# None) -> the value that replaces the op's single result, or None to keep the op.
Simplifier = Callable[[ir.Operation, list["np.ndarray | None"]], "ir.Value | None"]


@dataclass(frozen=True)
class Rule:
    simplify: Simplifier | None = None
    fold: bool = True  # False: the op's value depends on more than its operands


def _float_aware(check: Callable[[np.ndarray, bool], bool]) -> Callable[[np.ndarray], bool]:
    """Call ``check(value, is_float)`` on a scalar widened to a type NumPy handles everywhere."""

    def test(c: np.ndarray) -> bool:
        is_float = dtypes.is_float(c.dtype)
        return bool(check(c.astype(np.float64 if is_float else c.dtype), is_float))

    return test


# Identity elements, bitwise: x op c == x for every x, -0.0 and NaN included.
_ADDITIVE_IDENTITY = _float_aware(lambda c, f: c == 0 and (np.signbit(c) if f else True))
_SUBTRAHEND_IDENTITY = _float_aware(lambda c, f: c == 0 and not (f and np.signbit(c)))
_MULTIPLICATIVE_IDENTITY = _float_aware(lambda c, f: c == 1)


def drop_identity(is_identity: Callable[[np.ndarray], bool], sides: tuple[int, ...]) -> Simplifier:
    """``x op c -> x`` for a binary op when the constant operand at one of ``sides`` is an
    identity element (sides: 1 for rhs only, as in x - 0; (0, 1) when it commutes)."""

    def simplify(op: ir.Operation, splats: list[np.ndarray | None]) -> ir.Value | None:
        for side in sides:
            if splats[side] is not None and is_identity(splats[side]):
                return op.operands[1 - side]
        return None

    return simplify


def involution(op: ir.Operation, splats: list[np.ndarray | None]) -> ir.Value | None:
    """``f(f(x)) -> x`` (neg: exact for floats, and for integers where it wraps; bitwise not)."""
    (operand,) = op.operands
    inner = operand.owner
    if isinstance(inner, ir.Operation | ir.OpView) and inner.operation.name == op.name:
        return inner.operation.operands[0]
    return None


def same_type(op: ir.Operation, splats: list[np.ndarray | None]) -> ir.Value | None:
    """An op that maps its operand to the same type without moving elements is the identity
    (convert to the same dtype, reshape/broadcast_in_dim to the same shape)."""
    operand = op.operands[0]
    return operand if operand.type == op.results[0].type else None


def _unit_dim_insertion(source: tuple[int, ...], target: tuple[int, ...]) -> list[int] | None:
    """Where each dim of ``source`` lands in ``target`` when ``target`` only inserts size-1 dims
    (``(5,) -> (5, 1)``: [0]); None for any other reshape."""
    positions, j = [], 0
    for size in source:
        while j < len(target) and target[j] != size:
            if target[j] != 1:
                return None
            j += 1
        if j == len(target):
            return None
        positions.append(j)
        j += 1
    return positions if all(d == 1 for d in target[j:]) else None


def _producer(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Operation | ir.OpView) and owner.operation.name == name:
        return owner.operation
    return None


def compose_broadcast(op: ir.Operation, splats: list[np.ndarray | None]) -> ir.Value | None:
    """``broadcast_in_dim(broadcast_in_dim(x))`` and ``broadcast_in_dim(reshape(x))`` where the
    reshape only inserts size-1 dims (keepdims) become one ``broadcast_in_dim(x)``: x's dim i goes
    where its image in the middle value goes."""
    (middle,) = op.operands
    outer = read_attributes(op)
    if (inner := _producer(middle, "mlax.broadcast_in_dim")) is not None:
        inner_dims = read_attributes(inner)["broadcast_dimensions"]
    elif (inner := _producer(middle, "mlax.reshape")) is not None:
        source = TensorSpec.from_mlir(inner.operands[0].type).shape
        inner_dims = _unit_dim_insertion(source, TensorSpec.from_mlir(middle.type).shape)
        if inner_dims is None:
            return None
    else:
        return None
    dims = [outer["broadcast_dimensions"][d] for d in inner_dims]
    with ir.InsertionPoint(op):
        (value,) = build("broadcast_in_dim", [inner.operands[0]],
                         {"shape": outer["shape"], "broadcast_dimensions": dims}, loc=op.location)
    return value


def first_of(*simplifiers: Simplifier) -> Simplifier:
    """Try each simplifier in turn; the first answer wins."""

    def simplify(op: ir.Operation, splats: list[np.ndarray | None]) -> ir.Value | None:
        return next((v for f in simplifiers if (v := f(op, splats)) is not None), None)

    return simplify


def identity_permutation(op: ir.Operation, splats: list[np.ndarray | None]) -> ir.Value | None:
    permutation = read_attributes(op)["permutation"]
    return op.operands[0] if tuple(permutation) == tuple(range(len(permutation))) else None


# One table for the pass, keyed by op name; ops missing here fold and have no simplification.
RULES: dict[str, Rule] = {
    "add": Rule(drop_identity(_ADDITIVE_IDENTITY, (0, 1))),
    "sub": Rule(drop_identity(_SUBTRAHEND_IDENTITY, (1,))),
    "mul": Rule(drop_identity(_MULTIPLICATIVE_IDENTITY, (0, 1))),
    "neg": Rule(involution),
    "not": Rule(involution),
    "convert": Rule(same_type),
    "reshape": Rule(same_type),
    "broadcast_in_dim": Rule(first_of(same_type, compose_broadcast)),
    "transpose": Rule(identity_permutation),
    # Collectives reduce over a named axis that only batching or sharding gives a size to.
    **{name: Rule(fold=False) for name in (
        "psum", "pmax", "pmin", "pmean", "all_gather", "all_to_all", "ppermute", "axis_index")},
}

_DEFAULT_RULE = Rule()


def _constant_attr(value: ir.Value) -> ir.DenseElementsAttr | None:
    owner = value.owner
    if isinstance(owner, ir.Operation | ir.OpView) and owner.operation.name == "mlax.constant":
        return dense_attribute(owner.operation, "value")
    return None


def _splat(value: ir.Value) -> np.ndarray | None:
    """The scalar a splat constant holds, read without materialising the tensor."""
    attr = _constant_attr(value)
    if attr is None or not attr.is_splat:
        return None
    element = ir.RankedTensorType(attr.type).element_type
    if isinstance(element, ir.ComplexType):  # get_splat takes no complex element
        real, imag = (ir.FloatAttr(part).value for part in ir.ArrayAttr(attr.get_splat_value()))
        return np.array(complex(real, imag), dtypes.from_mlir(element))
    scalar_type = ir.RankedTensorType.get([], element)
    return dense_to_numpy(ir.DenseElementsAttr.get_splat(scalar_type, attr.get_splat_value()))


def _size(t: ir.Type) -> int:
    return TensorSpec.from_mlir(t).size


@register_pass
@dataclass
class Cleanup(ModulePass):
    """CSE, DCE, constant folding and algebraic simplification of mlax ops."""

    argument = "mlax-cleanup"
    summary = "CSE, DCE, constant folding and algebraic simplification of mlax ops"

    fold_limit: int = option(1 << 16, "largest operand or result (in elements) that constant folding "
                                      "reads or creates")
    max_iterations: int = option(10, "rounds of rewriting before stopping short of a fixpoint")
    fold: bool = option(True, "fold ops whose operands are all constants")
    simplify: bool = option(True, "apply the algebraic simplifications")
    cse: bool = option(True, "eliminate common subexpressions")
    dce: bool = option(True, "erase unused mlax ops and unused calls of what has no effect")

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():  # new types need a location; new ops get theirs
            for _ in range(self.max_iterations):
                changed = (self.fold or self.simplify) and self.rewrite(module)
                changed |= self.cse and eliminate_common_subexpressions(module)
                changed |= self.dce and eliminate_dead_code(module)
                if not changed:
                    return

    def rewrite(self, module: ir.Operation) -> bool:
        """Fold and simplify every mlax op, front to back, so results feed later rewrites."""
        changed = False
        for op in nested_ops(module):
            if not is_mlax(op) or op.regions or op.name == "mlax.constant":
                continue
            rule = RULES.get(op.name.removeprefix("mlax."), _DEFAULT_RULE)
            replacements = self.simplified(op, rule)
            if replacements is None and self.fold and rule.fold:
                replacements = self.folded(op)
            if replacements is not None:
                for old, new in zip(op.results, replacements, strict=True):
                    old.replace_all_uses_with(new)
                op.erase()
                changed = True
        return changed

    def simplified(self, op: ir.Operation, rule: Rule) -> list[ir.Value] | None:
        """The operand that ``op`` reduces to under its algebraic rule, if any."""
        if not (self.simplify and rule.simplify and len(op.results) == 1):
            return None
        value = rule.simplify(op, [_splat(v) for v in op.operands])
        return [value] if value is not None and value.type == op.results[0].type else None

    def folded(self, op: ir.Operation) -> list[ir.Value] | None:
        """Constants holding ``op``'s results, when its operands are all small constants."""
        attrs = [_constant_attr(v) for v in op.operands]
        if not attrs or any(a is None for a in attrs):
            return None
        if any(_size(v.type) > self.fold_limit for v in list(op.operands) + list(op.results)):
            return None
        try:
            outs = get_op(op.name).reference(*(dense_to_numpy(a) for a in attrs), **read_attributes(op))
        except Exception:  # a reference rule that rejects these values: the op stays for run time
            return None
        outs = outs if isinstance(outs, tuple | list) else (outs,)
        values = []
        with ir.InsertionPoint(op):
            for out, result in zip(outs, op.results, strict=True):
                spec = TensorSpec.from_mlir(result.type)
                array = np.asarray(out).astype(spec.dtype, copy=False).reshape(spec.shape)
                values += build("constant", [], {"value": array}, loc=op.location)
        return values


def _cse_key(op: ir.Operation) -> tuple[Any, ...]:
    # Attributes and types are uniqued by the context: equal means identical.
    attrs = tuple(sorted((name, _attribute_key(op, name)) for name in op.attributes))
    return op.name, tuple(op.operands), attrs, tuple(r.type for r in op.results)


def _attribute_key(op: ir.Operation, name: str) -> Any:
    try:
        return op.attributes[name]
    except TypeError:  # a complex constant, which the bindings cannot return (see dense_attribute)
        return str(dense_attribute(op, name))


def _cse_block(block: ir.Block, scope: ChainMap) -> bool:
    changed = False
    for child in list(block.operations):
        op = child.operation
        if op.regions:
            for region in op.regions:
                for inner in region.blocks:
                    changed |= _cse_block(inner, scope.new_child() if is_mlax(op) else ChainMap())
            continue
        if not is_mlax(op):
            continue
        key = _cse_key(op)
        if key in scope:
            for old, new in zip(op.results, scope[key].results, strict=True):
                old.replace_all_uses_with(new)
            op.erase()
            changed = True
        else:
            scope[key] = op
    return changed


def eliminate_common_subexpressions(module: ir.Operation) -> bool:
    """Reuse the results of an identical, dominating mlax op; True if anything changed."""
    return _cse_block(module.regions[0].blocks[0], ChainMap())


def eliminate_dead_code(module: ir.Operation) -> bool:
    """Erase mlax ops, and calls of what has no effect, none of whose results is used (users
    first, so chains go at once)."""
    changed = False
    pure = effect_free_symbols(module)
    for op in reversed(nested_ops(module)):
        droppable = is_mlax(op) or (op.name == "func.call" and callee_of(op) in pure)
        if droppable and all(not list(r.uses) for r in op.results):
            op.erase()
            changed = True
    return changed



# The DCE alone, as pipelines run it once transformations are expanded (jax drops unused calls
# of what has no effect before compiling).
DEAD_CODE_ONLY = "mlax-cleanup{fold=false simplify=false cse=false}"

# Declarations whose calls have no effect of their own: their bodies' calls decide.
_BODIES_DECIDE = (*CONTROL_FLOW_KINDS, SHARD_MAP_KIND)


def effect_free_symbols(module: ir.Operation) -> set[str]:
    """The module's functions and declarations a call of which only computes its results (mlax
    ops are pure): pure callbacks, user primitives, and functions, control flow and shard_map
    whose bodies call only such things. Anything else (debug and io callbacks, declarations
    not yet expanded) counts as an effect."""
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                 for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"}
    free: dict[str, bool] = {}

    def is_free(name: str) -> bool:
        if name not in free:
            free[name] = False  # until shown (programs do not recurse)
            free[name] = _effect_free(functions.get(name), is_free)
        return free[name]

    return {name for name in functions if is_free(name)}


def _effect_free(function: ir.Operation | None, is_free: Callable[[str], bool]) -> bool:
    if function is None:
        return False
    transform = read_transform(function)
    if transform is None:
        return bool(function.regions[0].blocks) and all(
            is_free(callee_of(op)) for op in nested_ops(function) if op.name == "func.call")
    if transform.kind == CALLBACK_KIND:
        return transform.fields["kind"] == "pure"
    if transform.kind in _BODIES_DECIDE:
        return all(is_free(symbol) for symbol in referenced_symbols(transform.kind, transform.fields))
    return transform.kind == USER_PRIMITIVE_KIND
