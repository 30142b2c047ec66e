"""mlax-run: execute one function of an MLIR module and print its results for FileCheck.

    mlax-run [file|-] --entry NAME [--backend interpreter|cpu|xla] [--input VALUE ...]
             [--random-inputs SEED] [--precision N]

Each ``--input`` is JSON (``[[1, 2], [3, 4]]``, ``2.5``, ``NaN``, ``-Infinity``) or a Python
literal (``True``, tuples, ``[1+2j, -0.5j]`` for complex arguments), converted to the
argument's element type; a scalar fills the whole argument. ``--random-inputs SEED`` draws
every argument instead. Results print one per line as
``result[0]: tensor<2x3xf32> = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]``: floats in the shortest
form that reads back to the same value of their type (or N significant digits with
--precision), complex numbers as ``(real, imag)`` pairs of such floats, integers in decimal,
booleans as true/false.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from mlax.backends.memory_limits import NumpyRankError, ProgramTooLargeError, check_op_fits
from mlax.backends.registry import BACKENDS, get_backend
from mlax.configuration import enable_x64
from mlax.dialect import dtypes, make_context
from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import read_transform
from mlax.passes.diagnostics import Diagnostic, errors, file_loc, format_all
from mlax.passes.verify import verify_module
from mlax.tools.mlax_opt import Chunk, DiagnosedError, ToolArgumentParser, ToolError, parse_source, read_input


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ToolError(f"cannot read input '{text}': expected JSON or a Python literal") from None


def parse_input(text: str, spec: TensorSpec, index: int) -> np.ndarray:
    """One ``--input`` as an array of the argument's type (a scalar fills the shape)."""
    try:
        value = np.asarray(_value(text))
    except ValueError:  # ragged nesting
        value = np.asarray(None)
    if value.dtype == object or value.dtype.kind in "USV":
        raise ToolError(f"input {index} ('{text}') is not a rectangular array of numbers")
    if value.ndim == 0:
        value = np.broadcast_to(value, spec.shape)
    if value.shape != spec.shape:
        raise ToolError(f"input {index} has shape {value.shape} but the argument is {spec}")
    with np.errstate(all="ignore"):
        return value.astype(spec.dtype)


def random_input(rng: np.random.Generator, spec: TensorSpec) -> np.ndarray:
    """Normal floats (and parts of complex numbers), small integers (nonnegative when unsigned),
    fair booleans."""
    if dtypes.is_bool(spec.dtype):
        return rng.random(spec.shape) < 0.5
    if dtypes.is_float(spec.dtype):
        return rng.standard_normal(spec.shape).astype(spec.dtype)
    if dtypes.is_complex(spec.dtype):
        parts = rng.standard_normal((2, *spec.shape))
        return (parts[0] + 1j * parts[1]).astype(spec.dtype)
    low = 0 if dtypes.is_unsigned_int(spec.dtype) else -10
    return rng.integers(low, low + 21, spec.shape).astype(spec.dtype)


def format_scalar(x: Any, dtype: np.dtype, precision: int | None) -> str:
    if dtypes.is_bool(dtype):
        return "true" if x else "false"
    if dtypes.is_complex(dtype):  # (re, im), each part as a float of the parts' type
        part = dtypes.real_dtype(dtype)
        return f"({format_scalar(x.real, part, precision)}, {format_scalar(x.imag, part, precision)})"
    if not dtypes.is_float(dtype):
        return str(int(x))
    if precision is not None:
        return format(float(x), f".{precision}g")
    return str(np.asarray(x, dtype)[()])


def format_array(array: np.ndarray, precision: int | None = None) -> str:
    """Nested lists like ``[[1.0, 2.0], [3.0, 4.0]]``; a rank-0 array prints as its scalar."""
    if array.ndim == 0:
        return format_scalar(array[()], array.dtype, precision)
    return "[" + ", ".join(format_array(sub, precision) for sub in array) + "]"


def format_results(results: Sequence[np.ndarray], precision: int | None = None) -> str:
    lines = []
    for i, result in enumerate(results):
        spec = TensorSpec(result.shape, result.dtype)
        lines.append(f"result[{i}]: {spec} = {format_array(np.asarray(result), precision)}")
    return "".join(line + "\n" for line in lines)


def _entry(module: ir.Operation, name: str) -> ir.Operation:
    table = ir.SymbolTable(module)
    if name not in table or table[name].operation.name != "func.func":
        raise ToolError(f"no function @{name} in the module")
    return table[name].operation


def _symbols(fields: dict[str, Any]) -> list[str]:
    """The function names a control-flow declaration's fields hold (body, cond, branches)."""
    names: list[str] = []
    for value in fields.values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str):
                names.append(item)
    return names


def _unresolved(module: ir.Operation, entry: ir.Operation) -> list[str]:
    """Transformation declarations the entry reaches through calls (they need a pass first;
    control flow is run as it is, its bodies searched, and host callbacks are called)."""
    table = ir.SymbolTable(module)
    todo, seen, found = [entry], set(), []
    while todo:
        fn = todo.pop()
        transform = read_transform(fn)
        if transform is not None and transform.kind == CALLBACK_KIND:
            continue
        if transform is not None and transform.kind not in CONTROL_FLOW_KINDS:
            found.append(f"@{transform.name} (mlax.{transform.kind})")
            continue
        if transform is not None:
            todo += [table[name].operation for name in _symbols(transform.fields) if name not in seen]
            seen.update(_symbols(transform.fields))
            continue
        for region in fn.regions:
            for block in region.blocks:
                todo += _callees(block, table, seen)
    return found


def _callees(block: ir.Block, table: ir.SymbolTable, seen: set[str]) -> list[ir.Operation]:
    callees = []
    for op in block.operations:
        if op.operation.name == "func.call":
            name = ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value
            if name not in seen:
                seen.add(name)
                callees.append(table[name].operation)
        for region in op.operation.regions:
            for inner in region.blocks:
                callees += _callees(inner, table, seen)
    return callees


def _located(error: ProgramTooLargeError | NumpyRankError, what: str, filename: str, text: str) -> ToolError:
    """The error at the op it names (file:line:col and the source line), when it has a place."""
    where = file_loc(error.location)
    if where is None:
        return ToolError(f"{what}: {error}")
    return DiagnosedError(Diagnostic("error", f"{what}: {error}", where).format({filename: text}))


def execute(text: str, filename: str, args: argparse.Namespace) -> str:
    """Parse, verify and run; the printed results (ToolError with diagnostics on failure)."""
    # The xla backend lowers to StableHLO, an unregistered dialect in mlax's context.
    with make_context(allow_unregistered_dialects=args.backend == "xla") as context, ir.Location.unknown():
        module, diagnostics = parse_source(Chunk(text, 1), filename, context)
        if module is not None:
            diagnostics += verify_module(module)
        if module is None or errors(diagnostics):
            raise DiagnosedError(format_all(diagnostics, {filename: text}))
        entry = _entry(module, args.entry)
        pending = _unresolved(module, entry)
        if pending:
            raise ToolError(f"@{args.entry} calls transformation declarations {', '.join(pending)}; "
                            f"resolve them first (mlax-opt --mlax-expand-transforms, and for a shard_map "
                            f"--mlax-simulate-devices)")
        specs = [TensorSpec.from_mlir(t) for t in entry.opview.type.inputs]
        try:
            check_op_fits(entry)  # its arguments are made here
        except ProgramTooLargeError as error:
            raise _located(error, f"cannot make the arguments of @{args.entry}", filename, text) from None
        if args.random_inputs is not None:
            rng = np.random.default_rng(args.random_inputs)
            inputs = [random_input(rng, s) for s in specs]
        else:
            if len(args.input) != len(specs):
                raise ToolError(f"@{args.entry} takes {len(specs)} arguments, got {len(args.input)} --input")
            inputs = [parse_input(t, s, i) for i, (t, s) in enumerate(zip(args.input, specs, strict=True))]
        try:  # the module's types are explicit: 64-bit arguments must reach XLA as given, not narrowed
            with enable_x64(True):
                program = get_backend(args.backend).compile(module, args.entry)
                results = [np.asarray(r) for r in program(inputs)]
        except (ProgramTooLargeError, NumpyRankError) as error:
            raise _located(error, f"running @{args.entry} failed", filename, text) from None
        except Exception as error:  # the backend names the op and location it failed on
            raise ToolError(f"running @{args.entry} failed: {type(error).__name__}: {error}") from None
        return format_results(results, args.precision)


def build_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(prog="mlax-run",
                                description="Run one function of an mlax module; print its results.")
    parser.add_argument("input_file", nargs="?", default="-", help="input file ('-' for stdin)")
    parser.add_argument("--entry", required=True, help="name of the function to run")
    parser.add_argument("--backend", default="interpreter", choices=sorted(BACKENDS))
    inputs = parser.add_mutually_exclusive_group()
    inputs.add_argument("--input", action="append", default=[], help="one argument (JSON or Python literal)")
    inputs.add_argument("--random-inputs", type=int, metavar="SEED", help="draw every argument from SEED")
    parser.add_argument("--precision", type=int, help="print floats with this many significant digits")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    filename = "<stdin>" if args.input_file == "-" else args.input_file
    try:
        sys.stdout.write(execute(read_input(args.input_file), filename, args))
        return 0
    except DiagnosedError as error:
        print(error, file=sys.stderr)
    except ToolError as error:
        print(f"mlax-run: error: {error}", file=sys.stderr)
    except Exception as error:  # a bug in mlax, not bad input: one line, no traceback
        print(f"mlax-run: internal error: {type(error).__name__}: {error}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
