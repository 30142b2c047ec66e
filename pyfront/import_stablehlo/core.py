"""The importer's engine: walk a StableHLO function, calling one converter per op.

A converter gets the op and its operands as front-end values (tracers while a trace runs,
`mlax.Array`s eagerly) and returns the values of the op's results, made with `mlax.lax`
(or `mlax.core.bind` where StableHLO's semantics are the primitive's and the lax wrapper
adds jax's conventions, e.g. dynamic_slice's negative indices). So the walk is itself
mlax front-end code: under `mlax.jit`/`grad`/`vmap` it emits mlax ops, eagerly it computes.

The module's ops are read only (names, attributes, regions), from whatever MLIR context
they live in: StableHLO is unregistered there, so ops are generic, inherent attributes are
looked up by name and StableHLO's own attributes (``#stablehlo.dot<...>``,
``#stablehlo<comparison_direction GT>``) are read from their text.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from mlax.core import Tracer, abstractify, to_numpy
from mlax.dialect.attrs import dense_attribute, dense_to_numpy
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.diagnostics import file_loc
from mlax.source_info import SourceInfo, user_frame_override

Values = Sequence[Any]


# --- errors ---------------------------------------------------------------------------------------


def describe_location(loc: ir.Location) -> str:
    """``file:line:col (in fn)`` for the user's line a location names (jax writes
    ``name("f"(file))`` inside call sites), or "an unknown location"."""
    found = file_loc(loc)
    if found is None:
        return "an unknown location"
    if found.file == "-":  # jaxlib's name for text it parsed (jax's pretty text without locations)
        return f"line {found.line}:{found.col} of the program text"
    function = _function_name(loc)
    return f"{found}" + (f" (in {function})" if function else "")


def _function_name(loc: ir.Location) -> str | None:
    """The name wrapping the innermost file location (jax's function name), if any."""
    if loc.is_a_name():
        child = loc.child_loc
        return loc.name_str if child.is_a_file() else _function_name(child)
    if loc.is_a_callsite():
        return _function_name(loc.callee)
    if loc.is_a_fused():
        return next((n for n in map(_function_name, loc.locations) if n), None)
    return None


class LocatedError(Exception):
    """Base of the importer's errors: a summary naming the op, and the op's location (which a
    pass turns into a located diagnostic); the message adds the user's line it points at."""

    summary: str
    location: ir.Location | None

    def _init(self, summary: str, location: ir.Location | None) -> str:
        self.summary, self.location = summary, location
        where = describe_location(location) if location is not None else "an unknown location"
        return f"{summary}\n  at {where}"


class UnsupportedStablehloError(LocatedError, NotImplementedError):
    """An op, attribute or body the importer has no mlax counterpart for."""

    def __init__(self, summary: str, location: ir.Location | None = None) -> None:
        super().__init__(self._init(summary, location))


class StablehloImportError(LocatedError, ValueError):
    """StableHLO the importer cannot read (malformed attributes, wrong operand counts...)."""

    def __init__(self, summary: str, location: ir.Location | None = None) -> None:
        super().__init__(self._init(summary, location))


class StablehloTypeError(LocatedError, TypeError):
    """Operands mlax's rule for the op rejects (an element type mlax lacks, mixed dtypes...)."""

    def __init__(self, summary: str, location: ir.Location | None = None) -> None:
        super().__init__(self._init(summary, location))


def unsupported(op: ir.Operation, what: str) -> UnsupportedStablehloError:
    return UnsupportedStablehloError(f"{op.name}: {what}", op.location)


def malformed(op: ir.Operation, what: str) -> StablehloImportError:
    return StablehloImportError(f"{op.name}: {what}", op.location)


# --- attributes -----------------------------------------------------------------------------------


def attribute(op: ir.Operation, name: str) -> ir.Attribute | None:
    """An inherent (property) or discardable attribute by name; None if absent."""
    if name not in op.attributes:
        return None
    try:
        return op.attributes[name]
    except TypeError:  # a dense attribute of complex elements, which the bindings cannot cast
        return dense_attribute(op, name)


def required(op: ir.Operation, name: str) -> ir.Attribute:
    found = attribute(op, name)
    if found is None:
        raise malformed(op, f"missing attribute '{name}'")
    return found


def ints(op: ir.Operation, name: str, default: Sequence[int] | None = None) -> list[int]:
    """An ``array<i64: ...>`` (or, as older StableHLO wrote them, a dense i64 tensor) as ints."""
    found = attribute(op, name)
    if found is None:
        if default is None:
            raise malformed(op, f"missing attribute '{name}'")
        return list(default)
    for kind in (ir.DenseI64ArrayAttr, ir.DenseBoolArrayAttr):
        try:
            return [int(v) for v in kind(found)]
        except ValueError:
            pass
    try:
        return [int(v) for v in dense_to_numpy(found).reshape(-1)]
    except (ValueError, TypeError):
        raise malformed(op, f"attribute '{name}' = {found} is not a list of integers") from None


def integer(op: ir.Operation, name: str, default: int | None = None) -> int:
    found = attribute(op, name)
    if found is None:
        if default is None:
            raise malformed(op, f"missing attribute '{name}'")
        return default
    try:
        return int(ir.IntegerAttr(found).value)
    except ValueError:
        raise malformed(op, f"attribute '{name}' = {found} is not an integer") from None


def pairs(op: ir.Operation, name: str, rank: int) -> list[tuple[int, int]]:
    """A ``dense<[[lo, hi], ...]> : tensor<Nx2xi64>`` padding attribute (zeros when absent)."""
    found = attribute(op, name)
    if found is None:
        return [(0, 0)] * rank
    try:
        values = dense_to_numpy(found).reshape(-1, 2)
    except (ValueError, TypeError):
        raise malformed(op, f"attribute '{name}' = {found} is not a list of (low, high) pairs") from None
    return [(int(lo), int(hi)) for lo, hi in values]


def enum(op: ir.Operation, name: str, default: str | None = None) -> str:
    """The member of a StableHLO enum attribute, ``#stablehlo<comparison_direction GT>`` -> "GT"."""
    found = attribute(op, name)
    if found is None:
        if default is None:
            raise malformed(op, f"missing attribute '{name}'")
        return default
    match = re.fullmatch(r"#stablehlo<\s*\w+\s+(\w+)\s*>", str(found))
    if match is None:
        raise malformed(op, f"attribute '{name}' = {found} is not a StableHLO enum")
    return match.group(1)


_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|[-\w]+)")


def struct(op: ir.Operation, name: str) -> dict[str, Any]:
    """The fields of a StableHLO struct attribute (``#stablehlo.gather<offset_dims = [1],
    index_vector_dim = 1>``): lists of ints, ints, or words (booleans, enum members)."""
    text = str(required(op, name))
    match = re.fullmatch(r"#stablehlo\.\w+<(.*)>", text, re.DOTALL)
    if match is None:
        raise malformed(op, f"attribute '{name}' = {text} is not a StableHLO struct attribute")
    fields: dict[str, Any] = {}
    for key, value in _FIELD.findall(match.group(1)):
        if value.startswith("["):
            fields[key] = [int(v) for v in value[1:-1].split(",") if v.strip()]
        elif re.fullmatch(r"-?\d+", value):
            fields[key] = int(value)
        else:
            fields[key] = value
    return fields


def symbol(op: ir.Operation, name: str) -> str:
    found = required(op, name)
    try:
        return ir.FlatSymbolRefAttr(found).value
    except ValueError:
        raise malformed(op, f"attribute '{name}' = {found} is not a symbol reference") from None


def result_spec(op: ir.Operation, index: int = 0) -> TensorSpec:
    """The declared type of result ``index`` as a TensorSpec (StableHLO types are mlax's)."""
    return value_spec(op, op.results[index])


def value_spec(op: ir.Operation, value: ir.Value) -> TensorSpec:
    try:
        spec_type = ir.RankedTensorType(value.type)
    except ValueError:
        raise unsupported(op, f"values of type {value.type} (mlax values are ranked tensors)") from None
    if not spec_type.has_static_shape:
        raise unsupported(op, f"the dynamic shape {value.type} (mlax shapes are static; export with "
                              "concrete shapes)")
    try:
        return TensorSpec.from_mlir(spec_type)
    except TypeError as error:
        raise unsupported(op, str(error)) from None


# --- IR shapes the converters look at ---------------------------------------------------------------


def producer(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value``, or None for a block argument."""
    if isinstance(value, ir.BlockArgument):
        return None
    return value.owner.operation


def argument_number(value: ir.Value, block: ir.Block) -> int | None:
    """``value``'s position among ``block``'s arguments, or None if it is not one of them."""
    if isinstance(value, ir.BlockArgument) and value.owner == block:
        return value.arg_number
    return None


def single_block(op: ir.Operation, region_index: int) -> ir.Block:
    region = op.regions[region_index]
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise unsupported(op, f"region {region_index} has {len(blocks)} blocks (one is supported)")
    return blocks[0]


def terminator_operands(block: ir.Block) -> list[ir.Value]:
    ops = list(block.operations)
    return list(ops[-1].operation.operands) if ops else []


# --- the walk ---------------------------------------------------------------------------------------


Converter = Callable[["Importer", ir.Operation, list[Any]], Values]


@dataclass(frozen=True)
class Entry:
    """One row of the converter table: how to import the op, and what it becomes in mlax."""

    convert: Converter
    target: str


class Env:
    """The front-end value of each IR value in scope; a region sees its parents' values
    (StableHLO regions may use values defined above them)."""

    def __init__(self, parent: Env | None = None) -> None:
        self.parent = parent
        self.values: dict[ir.Value, Any] = {}

    def __getitem__(self, value: ir.Value) -> Any:
        env: Env | None = self
        while env is not None:
            if value in env.values:
                return env.values[value]
            env = env.parent
        raise StablehloImportError(f"the value {value.get_name()} is used outside its scope")


_TERMINATORS = ("func.return", "stablehlo.return")


class Importer:
    """Runs the functions of one StableHLO module on front-end values."""

    def __init__(self, module: ir.Operation, table: dict[str, Entry]) -> None:
        self.module = module.operation
        self.table = table
        self.functions: dict[str, ir.Operation] = {}
        for op in self.module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op.operation
        self.env = Env()
        self.calling: list[str] = []

    def function(self, name: str, where: ir.Operation | None = None) -> ir.Operation:
        if name not in self.functions:
            raise StablehloImportError(f"no function @{name} in the module",
                                       where.location if where is not None else None)
        return self.functions[name]

    def call(self, name: str, args: Values, where: ir.Operation | None = None) -> list[Any]:
        """The results of function @name on ``args`` (its body is walked in a fresh scope)."""
        func_op = self.function(name, where)
        body = single_block(func_op, 0)
        location = (where or func_op).location
        if len(body.arguments) != len(args):
            raise StablehloImportError(f"@{name} takes {len(body.arguments)} arguments, got {len(args)}",
                                       location)
        if name in self.calling:  # StableHLO has no recursion; it would never end here
            raise StablehloImportError(f"a recursive call of @{name} (through @{' -> @'.join(self.calling)})",
                                       location)
        self.calling.append(name)
        try:
            return self.run_block(body, args, Env())
        finally:
            self.calling.pop()

    def run_region(self, op: ir.Operation, region_index: int, args: Values) -> list[Any]:
        """The values a region of ``op`` returns for block arguments ``args``, in the current scope."""
        return self.run_block(single_block(op, region_index), args, Env(self.env))

    def run_block(self, block: ir.Block, args: Values, env: Env) -> list[Any]:
        saved, self.env = self.env, env
        try:
            for value, arg in zip(block.arguments, args, strict=True):
                env.values[value] = arg
            results: list[Any] = []
            for op in block.operations:
                op = op.operation
                if op.name in _TERMINATORS:
                    results = [env[v] for v in op.operands]
                    break
                outs = self.convert(op, [env[v] for v in op.operands])
                for value, out in zip(op.results, outs, strict=True):
                    env.values[value] = out
            return results
        finally:
            self.env = saved

    def convert(self, op: ir.Operation, operands: list[Any]) -> Values:
        entry = self.table.get(op.name)
        if entry is None:
            raise unsupported(op, "mlax has no counterpart of this op")
        with located(op):
            try:
                outs = list(entry.convert(self, op, operands))
            except LocatedError:
                raise
            except (TypeError, ValueError, IndexError, NotImplementedError) as error:
                raise _relocated(error, op) from None
        if len(outs) != len(op.results):
            raise malformed(op, f"imported with {len(outs)} results, declared with {len(op.results)}")
        for index, (out, value) in enumerate(zip(outs, op.results, strict=True)):
            _check_type(op, index, out, value_spec(op, value))
        return outs

    # Concrete values: constants seen through the shape ops jax puts between them and their use.

    def concrete(self, value: ir.Value) -> np.ndarray | None:
        """The value of ``value`` if it is known without running the program, else None."""
        try:
            current = self.env[value]
        except StablehloImportError:
            current = None
        if current is not None and not isinstance(current, Tracer):
            return np.asarray(to_numpy(current))
        op = producer(value)
        if op is None:
            return None
        if op.name == "stablehlo.constant":
            return dense_to_numpy(required(op, "value"))
        if op.name in ("stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert"):
            inner = self.concrete(op.operands[0])
            if inner is None:
                return None
            spec = result_spec(op)
            if op.name == "stablehlo.convert":
                return inner.astype(spec.dtype)
            if op.name == "stablehlo.reshape":
                return inner.reshape(spec.shape)
            dims = ints(op, "broadcast_dimensions")
            expanded = [1] * len(spec.shape)
            for d, n in zip(dims, inner.shape, strict=True):
                expanded[d] = n
            return np.broadcast_to(inner.reshape(expanded), spec.shape)
        return None


def _check_type(op: ir.Operation, index: int, out: Any, declared: TensorSpec) -> None:
    got = abstractify(out)
    if got.shape != declared.shape or got.dtype != declared.dtype:
        hint = ""
        if declared.dtype.itemsize == 8 and got.dtype.itemsize == 4:
            hint = " (the program uses 64-bit types: enable them with mlax.config.update('x64', True))"
        raise malformed(op, f"result {index} imported as {got.dtype.name}{list(got.shape)} but declared "
                            f"{declared}{hint}")


def _relocated(error: Exception, op: ir.Operation) -> Exception:
    """``error`` (raised by mlax while importing ``op``) as the importer's error of the same
    kind, naming the op and its location instead of the front end's "at <caller>" line."""
    message = str(error).split("\n  at ")[0]
    kind = (StablehloTypeError if isinstance(error, TypeError) else
            UnsupportedStablehloError if isinstance(error, NotImplementedError) else StablehloImportError)
    return kind(f"{op.name}: {message}", op.location)


@contextlib.contextmanager
def located(op: ir.Operation) -> Iterator[None]:
    """Make the mlax ops emitted for ``op`` (and errors mlax raises) name the user's line jax
    recorded in ``op``'s location."""
    info = _source_info(op.location)
    if info is None:
        yield
        return
    with user_frame_override(info):
        yield


def _source_info(loc: ir.Location) -> Any:
    found = file_loc(loc)
    if found is None:
        return None
    return SourceInfo(found.file, found.line, found.col, _function_name(loc) or "<stablehlo>")


def value_of_constant(attr: ir.Attribute, op: ir.Operation) -> np.ndarray:
    try:
        return dense_to_numpy(attr)
    except (ValueError, TypeError) as error:
        raise unsupported(op, f"the constant {str(attr)[:80]} ({error})") from None
