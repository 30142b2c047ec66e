"""Transformation declarations: jvp, vjp, vmap, custom_jvp_call, custom_vjp_call, checkpoint.

DESIGN.md describes these transformations as ops, but their operands have different types
(primals and cotangents of every shape), and an IRDL variadic port binds ONE type for all
its operands. So each transformation is a body-less private function whose one
discardable attribute `mlax.<kind>` holds a dictionary of parameters; programs call it
with `func.call`:

    func.func private @f_vjp(tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
        attributes {mlax.vjp = {callee = @f, argnums = array<i64: 0>}}

The declared type is a function of the callee's type and the parameters; KINDS holds, per
kind, the fields and that rule. `mlax-autodiff` / `mlax-batch` give declarations a body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mlir import ir
from mlir.dialects import func

from mlax.dialect.attrs import from_attribute, to_attribute

ATTR_PREFIX = "mlax."
# Discardable attributes on the ops of a checkpointed function: the checkpoint's policy saves
# the results of ops marked SAVEABLE_ATTR for the backward pass (reverse mode recomputes the
# others); CHECKPOINT_NAMES_ATTR holds the names `checkpoint_name` gave an op's results.
SAVEABLE_ATTR = "mlax.saveable"
CHECKPOINT_NAMES_ATTR = "mlax.checkpoint_names"
# On the ops of a derivative program that recompute such values in the backward pass.
RECOMPUTED_ATTR = "mlax.recomputed"
# On the private function a nested jit traced into its caller's module (pyfront/nested_jit.py):
# the jitted Python function's name. The transformations derive such a function once per
# configuration (a shared callee), not in place at each call.
JIT_NAME_ATTR = "mlax.jit_name"

# Field kinds (attrs.py kinds) a declaration dictionary may hold: the attribute class and
# how diagnostics spell the expected form.
_FIELD_CLASSES: dict[str, tuple[type, str]] = {
    "symbol": (ir.FlatSymbolRefAttr, "a symbol reference (@f)"),
    "symbols": (ir.ArrayAttr, "an array of symbol references ([@f, @g])"),
    "bool": (ir.BoolAttr, "true or false"),
    "i64s": (ir.DenseI64ArrayAttr, "array<i64: ...>"),
    "i64": (ir.IntegerAttr, "an integer"),
    "str": (ir.StringAttr, "a string"),
    "strs": (ir.ArrayAttr, 'an array of strings (["x", "y"])'),
    "specs": (ir.ArrayAttr, 'an array of partition specs ([[["x"], []], [[]]])'),
}

Signature = tuple[list[ir.Type], list[ir.Type]]
FunctionTypes = Callable[[str], ir.FunctionType]
# A signature rule: (field values, types of the functions the symbol fields name) -> the
# expected signature of the declaration (key "") and of each auxiliary function it names
# (key: the field, or ``field[i]`` for the i-th function of a `symbols` field).
SignatureRule = Callable[[dict[str, Any], FunctionTypes], dict[str, Signature]]
# An extra check of the declaration's own type, run before it is compared with the expected
# one, for kinds that can say more than "the types differ" (shard_map: a size its spec does
# not divide). Raises DeclarationError.
DeclarationCheck = Callable[[dict[str, Any], ir.FunctionType], None]


class DeclarationError(ValueError):
    """A malformed transformation declaration (the message names the kind)."""


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    optional: bool = False


@dataclass(frozen=True)
class TransformKind:
    """One transformation: its dictionary fields and how its signature follows the callee's."""

    name: str
    fields: tuple[Field, ...]
    signature: SignatureRule
    summary: str
    check_declaration: DeclarationCheck | None = None

    @property
    def attr_name(self) -> str:
        return ATTR_PREFIX + self.name


@dataclass(frozen=True)
class Transform:
    """A declaration read back: its symbol, kind and field values (missing optional -> None)."""

    name: str
    kind: str
    fields: dict[str, Any]

    @property
    def callee(self) -> str:
        return self.fields["callee"]


def field_symbol(values: dict[str, Any], key: str) -> str:
    """The symbol a signature key names: ``"callee"`` or ``"branches[1]"``."""
    match = re.fullmatch(r"(\w+)\[(\d+)\]", key)
    return values[match[1]][int(match[2])] if match else values[key]


def symbol_keys(kind: str, values: dict[str, Any]) -> list[str]:
    """The signature key (``"callee"``, ``"branches[1]"``) of every function a declaration
    names, in field order."""
    keys: list[str] = []
    for field in get_kind(kind).fields:
        value = values.get(field.name)
        if field.kind == "symbol" and value is not None:
            keys.append(field.name)
        elif field.kind == "symbols" and value is not None:
            keys.extend(f"{field.name}[{i}]" for i in range(len(value)))
    return keys


def referenced_symbols(kind: str, values: dict[str, Any]) -> list[str]:
    """Every function a declaration names, in field order."""
    return [field_symbol(values, key) for key in symbol_keys(kind, values)]


def _ins(t: ir.FunctionType) -> list[ir.Type]:
    return list(t.inputs)


def _outs(t: ir.FunctionType) -> list[ir.Type]:
    return list(t.results)


def _jvp(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    callee = types("callee")
    return {"": (_ins(callee) * 2, _outs(callee) * 2)}


def _vjp(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    callee = types("callee")
    argnums, ins = values["argnums"], _ins(callee)
    if len(set(argnums)) != len(argnums) or any(not 0 <= a < len(ins) for a in argnums):
        raise DeclarationError(
            f"argnums {list(argnums)} must be distinct indices of the callee's "
            f"{len(ins)} argument(s)")
    return {"": (ins + _outs(callee), _outs(callee) + [ins[a] for a in argnums])}


def _batched(t: ir.Type, axis: int, size: int, what: str) -> ir.Type:
    """``t`` with a dimension of ``size`` inserted at ``axis`` (-1: not batched)."""
    if axis == -1:
        return t
    if not isinstance(t, ir.RankedTensorType):
        raise DeclarationError(f"{what} has type {t}, not a ranked tensor")
    shape = list(t.shape)
    if not 0 <= axis <= len(shape):
        raise DeclarationError(
            f"{what} = {axis} is out of range for {t} (a batch axis must be in "
            f"[0, {len(shape)}], or -1 for not batched)")
    return ir.RankedTensorType.get(shape[:axis] + [size] + shape[axis:], t.element_type)


def _vmap(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    callee, size = types("callee"), values["axis_size"]
    if size < 0:
        raise DeclarationError(f"axis_size must be >= 0, got {size}")
    sides = []
    for field, tys in (("in_axes", _ins(callee)), ("out_axes", _outs(callee))):
        axes = values[field]
        if len(axes) != len(tys):
            raise DeclarationError(
                f"{field} has length {len(axes)} but the callee has {len(tys)} "
                f"{'arguments' if field == 'in_axes' else 'results'}")
        pairs = enumerate(zip(tys, axes, strict=True))
        sides.append([_batched(t, a, size, f"{field}[{i}]") for i, (t, a) in pairs])
    return {"": (sides[0], sides[1])}


def _same_as_callee(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    callee = types("callee")
    return {"": (_ins(callee), _outs(callee))}


def _custom_jvp(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    return {**_same_as_callee(values, types), **{"jvp": _jvp(values, types)[""]}}


def _custom_vjp(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    ins, outs = _same_as_callee(values, types)[""]
    residuals = _outs(types("fwd"))[len(outs):]
    return {"": (ins, outs), "fwd": (ins, outs + residuals), "bwd": (residuals + outs, ins)}


def make_kind(name: str, fields: str, rule: SignatureRule, summary: str,
              check_declaration: DeclarationCheck | None = None) -> TransformKind:
    """A kind from a field spec like ``"callee: symbol, axis_name?: str"``."""
    parsed = []
    for item in fields.split(","):
        field, kind = (s.strip() for s in item.split(":"))
        parsed.append(Field(field.rstrip("?"), kind, optional=field.endswith("?")))
    return TransformKind(name, tuple(parsed), rule, summary, check_declaration)


KINDS: dict[str, TransformKind] = {k.name: k for k in (
    make_kind("jvp", "callee: symbol", _jvp,
          "(primals..., tangents...) -> (outs..., tangent outs...)"),
    # varying: inside a shard_map body that checks them, the mesh axes each primal varies over
    # (one one-entry spec per primal), which reverse mode types values by (autodiff/varying.py)
    make_kind("vjp", "callee: symbol, argnums: i64s, varying?: specs", _vjp,
          "(primals..., output cotangents...) -> (outs..., cotangents of the argnums arguments)"),
    make_kind("vmap", "callee: symbol, in_axes: i64s, out_axes: i64s, axis_size: i64, axis_name?: str",
          _vmap, "callee's types with a dimension of axis_size inserted at each axis (-1: unbatched)"),
    make_kind("custom_jvp_call", "callee: symbol, jvp: symbol", _custom_jvp,
          "the callee's type; @jvp has the type of the callee's jvp"),
    make_kind("custom_vjp_call", "callee: symbol, fwd: symbol, bwd: symbol", _custom_vjp,
          "the callee's type; @fwd: primals -> (outs..., residuals...), "
          "@bwd: (residuals..., output cotangents...) -> input cotangents"),
    # policy: the name of the jax policy that chose which values to save (for readers: the
    # choice itself is the SAVEABLE_ATTR marks on the callee's ops); prevent_cse: recomputed
    # values read the region's inputs through optimization barriers
    make_kind("checkpoint", "callee: symbol, policy?: str, prevent_cse?: bool", _same_as_callee,
          "the callee's type (rematerialised in the backward pass)"),
)}


def get_kind(kind: str) -> TransformKind:
    """The table entry of ``kind`` (``"vjp"``); DeclarationError naming the known kinds if none."""
    try:
        return KINDS[kind]
    except KeyError:
        raise DeclarationError(
            f"unknown transformation kind '{ATTR_PREFIX}{kind}' (known: {', '.join(KINDS)})") from None


def _symbol_table(module: ir.Module | ir.Operation) -> ir.SymbolTable:
    return ir.SymbolTable(module.operation)


def _body(module: ir.Module | ir.Operation) -> ir.Block:
    return module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]


def _transform_attrs(op: ir.Operation) -> list[str]:
    """Kinds named by the attributes of a func.func that claim to make it a declaration: a
    known kind, or any ``mlax.*`` dictionary (an unknown kind is an error, not ignored)."""
    kinds = []
    for name in op.attributes:
        short = name.removeprefix(ATTR_PREFIX)
        if name.startswith(ATTR_PREFIX) and (short in KINDS or isinstance(op.attributes[name], ir.DictAttr)):
            kinds.append(short)
    return kinds


def _read_fields(kind: TransformKind, attr: ir.Attribute) -> dict[str, Any]:
    if not isinstance(attr, ir.DictAttr):
        raise DeclarationError(f"the attribute must be a dictionary, got {attr}")
    known = {f.name for f in kind.fields}
    extra = sorted(attr[i].name for i in range(len(attr)) if attr[i].name not in known)
    if extra:
        raise DeclarationError(f"unknown field(s) {', '.join(extra)}")
    values: dict[str, Any] = {}
    for field in kind.fields:
        if field.name not in attr:
            if not field.optional:
                raise DeclarationError(f"missing field '{field.name}'")
            values[field.name] = None
            continue
        cls, spelled = _FIELD_CLASSES[field.kind]
        value = attr[field.name]
        if not isinstance(value, cls):
            raise DeclarationError(f"field '{field.name}' must be {spelled}, got {value}")
        try:
            values[field.name] = from_attribute(field.kind, value)
        except (ValueError, TypeError):  # e.g. a spec whose entries are not arrays of strings
            raise DeclarationError(f"field '{field.name}' must be {spelled}, got {value}") from None
    return values


def _where(kind: str, name: str) -> str:
    """How messages name a declaration: ``mlax.vjp declaration @f_vjp``."""
    return f"{ATTR_PREFIX}{kind} declaration @{name}"


def read_transform(op: ir.Operation | ir.OpView) -> Transform | None:
    """The transformation ``op`` declares, or None if it is not a declaration.

    Raises DeclarationError if it claims to be one but its attribute is malformed.
    """
    op = op.operation
    if op.name != "func.func":
        return None
    kinds = _transform_attrs(op)
    if not kinds:
        return None
    name = ir.StringAttr(op.attributes["sym_name"]).value
    if len(kinds) > 1:
        raise DeclarationError(f"declaration @{name} has several transformation attributes: "
                               f"{', '.join(ATTR_PREFIX + k for k in kinds)}")
    try:
        kind = get_kind(kinds[0])
        return Transform(name, kind.name, _read_fields(kind, op.attributes[kind.attr_name]))
    except DeclarationError as error:
        raise DeclarationError(f"{_where(kinds[0], name)}: {error}") from None


def read_kind(op: ir.Operation | ir.OpView | None, *kinds: str) -> Transform | None:
    """The declaration ``op`` makes if it is one of ``kinds`` (None for any other op, or none)."""
    transform = read_transform(op) if op is not None else None
    return transform if transform is not None and transform.kind in kinds else None


def transform_declarations(module: ir.Module | ir.Operation) -> Iterator[tuple[func.FuncOp, Transform]]:
    """Every declaration of ``module`` with what it declares (a malformed one raises)."""
    for op in _body(module).operations:
        transform = read_transform(op)
        if transform is not None:
            yield op.operation.opview, transform


def _function_types(module: ir.Module | ir.Operation, values: dict[str, Any]) -> FunctionTypes:
    """Look up the functions the symbol fields name (each must be transformable)."""
    table = _symbol_table(module)

    def types(field: str) -> ir.FunctionType:
        symbol = field_symbol(values, field)
        if symbol not in table or table[symbol].operation.name != "func.func":
            raise DeclarationError(f"{field} @{symbol} is not a function of this module")
        target = table[symbol]
        if target.is_external and read_transform(target) is None:
            raise DeclarationError(
                f"{field} @{symbol} is an external function without a body; it cannot be transformed")
        return target.type

    return types


def expected_signatures(module: ir.Module | ir.Operation, kind: str,
                        values: dict[str, Any]) -> dict[str, Signature]:
    """What the declaration (key "") and the functions its fields name must have as types.

    Raises DeclarationError (without naming the declaration) for bad field values.
    """
    with ir.Location.unknown(context=module.context):  # building types needs a location
        return get_kind(kind).signature(values, _function_types(module, values))


def _fn_type(sig: Signature) -> ir.FunctionType:
    return ir.FunctionType.get(*sig)


def declare_transform(module: ir.Module | ir.Operation, kind: str, name: str, *,
                      loc: ir.Location | None = None, **fields: Any) -> func.FuncOp:
    """Append ``func.func private @name`` declaring transformation ``kind`` to ``module``.

    Its type is derived from the callee's; fields are Python values (``callee="f"``,
    ``argnums=(0,)``). Raises DeclarationError for an unknown kind or bad fields.
    """
    info = get_kind(kind)
    known = {f.name: f for f in info.fields}
    unknown = sorted(set(fields) - set(known))
    missing = [f.name for f in info.fields if not f.optional and f.name not in fields]
    try:
        if unknown or missing:
            raise DeclarationError(f"unknown field(s) {unknown}, missing field(s) {missing}")
        values = {f: fields.get(f) for f in known}
        sig = expected_signatures(module, kind, values)[""]
    except DeclarationError as error:
        raise DeclarationError(f"{_where(kind, name)}: {error}") from None
    attr = ir.DictAttr.get({f: to_attribute(known[f].kind, v) for f, v in values.items() if v is not None})
    with ir.InsertionPoint(_body(module)), loc or ir.Location.unknown():
        op = func.FuncOp(name, _fn_type(sig), visibility="private")
    op.attributes[info.attr_name] = attr
    return op


def _problems(module: ir.Module | ir.Operation, op: func.FuncOp, transform: Transform,
              graph: dict[str, list[str]]) -> list[str]:
    """What is wrong with one well-formed declaration, given the module's call graph."""
    problems = []
    if not op.is_external:
        problems.append("must not have a body")
    attrs = op.operation.attributes
    if "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value != "private":
        problems.append("must be private")
    unresolved = _unresolved(module, transform)
    if unresolved:
        return problems + unresolved
    check = get_kind(transform.kind).check_declaration
    try:
        if check is not None:
            check(transform.fields, op.type)
    except DeclarationError as error:
        return problems + [str(error)]
    try:
        expected = expected_signatures(module, transform.kind, transform.fields)
    except DeclarationError as error:
        return problems + [str(error)]
    table = _symbol_table(module)
    for field, sig in expected.items():
        actual = table[field_symbol(transform.fields, field)].type if field else op.type
        if str(actual) != str(_fn_type(sig)):
            symbol = field_symbol(transform.fields, field) if field else ""
            whose = f"{field} function @{symbol}" if field else "the declaration"
            source = get_kind(transform.kind).fields[0]
            problems.append(f"{whose} has type {actual} but {source.name} "
                            f"{_describe_source(transform.fields[source.name])} requires {_fn_type(sig)}")
    recursion = _recursion(transform.name, graph)
    if recursion is not None:
        problems.append(recursion)
    return problems


def _unresolved(module: ir.Module | ir.Operation, transform: Transform) -> list[str]:
    """Why each function the declaration names cannot be used: all of them are checked, not
    only those its signature rule looks at (passes follow every one)."""
    lookup, problems = _function_types(module, transform.fields), []
    for key in symbol_keys(transform.kind, transform.fields):
        try:
            lookup(key)
        except DeclarationError as error:
            problems.append(str(error))
    return problems


def _describe_source(value: str | tuple[str, ...]) -> str:
    return f"@{value}" if isinstance(value, str) else "[" + ", ".join(f"@{v}" for v in value) + "]"


def _call_graph(module: ir.Module | ir.Operation, symbols: dict[str, Transform]) -> dict[str, list[str]]:
    """Function -> the functions it uses: a declaration's symbol fields, a body's calls."""
    graph: dict[str, list[str]] = {}
    for op in _body(module).operations:
        op = op.operation
        if op.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        transform = symbols.get(name)
        graph[name] = _callees(op) if transform is None else \
            referenced_symbols(transform.kind, transform.fields)
    return graph


def _callees(function: ir.Operation) -> list[str]:
    """The functions ``function``'s body calls."""
    callees: list[str] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call":
            callees.append(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    function.walk(collect)
    return callees


def _reaches(graph: dict[str, list[str]], starts: list[str], target: str) -> bool:
    todo, seen = list(starts), set()
    while todo:
        current = todo.pop()
        if current == target:
            return True
        if current not in seen:
            seen.add(current)
            todo += graph.get(current, [])
    return False


def _recursion(name: str, graph: dict[str, list[str]]) -> str | None:
    """Why declaration ``name`` meets a recursion through its callees, or None: the passes
    transform a function by walking into everything it calls, which would never end."""
    if _reaches(graph, graph[name], name):
        return "refers to itself through its callees"
    todo, seen = list(graph[name]), set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if _reaches(graph, graph.get(current, []), current):
            return f"reaches @{current}, which calls itself; a recursive function cannot be transformed"
        todo += graph.get(current, [])
    return None


def verify_transforms(module: ir.Module | ir.Operation) -> list[str]:
    """Check every transformation declaration of ``module``.

    Each problem (unknown kind, bad field, missing callee, a type that does not follow from
    the callee's) is emitted as an error diagnostic at the declaration's location; the
    messages are returned, so an empty list means the module is fine.
    """
    found: list[tuple[ir.Operation, Transform | str]] = []
    for op in _body(module).operations:
        try:
            transform = read_transform(op)
        except DeclarationError as error:
            found.append((op.operation, str(error)))
            continue
        if transform is not None:
            found.append((op.operation, transform))
    symbols = {t.name: t for _, t in found if isinstance(t, Transform)}
    graph = _call_graph(module, symbols) if symbols else {}
    messages = []
    for op, transform in found:
        if isinstance(transform, str):
            problems = [transform]
        else:
            where = _where(transform.kind, transform.name)
            problems = [f"{where}: {p}" for p in _problems(module, op.opview, transform, graph)]
        for problem in problems:
            op.location.emit_error(problem)
            messages.append(problem)
    return messages
