"""mlax.from_stablehlo: a program jax wrote (StableHLO) as an mlax function.

``mlax.from_stablehlo(jax.jit(f).lower(x).as_text())`` returns a callable that runs the
program's ``main`` eagerly and that `mlax.jit`, `grad`, `vmap` (every transformation) accept:
calling it walks the StableHLO ops and calls the matching `mlax.lax` function on each op's
operands (the converter table of `mlax.import_stablehlo`), so inside a trace it
emits mlax ops, and mlax's own passes (autodiff, batching, the backends) apply to jax's
program. The pass `mlax-import-stablehlo` is the same walk, rewriting a module in place.

Accepted programs: StableHLO text in generic form (as mlax's MLIR reads it) or jax's pretty
form (re-printed generically through jaxlib's MLIR, which knows the stablehlo dialect),
MLIR bytecode or a portable artifact (``jax.export``'s serialized module), a jaxlib
``ir.Module`` (``lowered.compiler_ir("stablehlo")``), a ``jax.stages.Lowered`` or a
``jax.export.Exported`` (whose argument and result pytrees are then kept). Otherwise the
callable takes and returns flat arrays, as ``main`` does: one result is returned as is,
several as a tuple.

The one private jax API used, ``jax._src.interpreters.mlir.make_ir_context`` (a context
with jax's dialects), lives with the others in mlax.backends.xla.pjrt (`jax_ir_context`).
"""

from __future__ import annotations

import contextlib
import inspect
import re
import threading
from typing import Any

import jax
import numpy as np
from jax import tree_util
from mlir import ir

from mlax.array import Array
from mlax.backends.xla import pjrt
from mlax.configuration import config
from mlax.core import abstractify, is_array_like
from mlax.dialect import get_context
from mlax.dialect.tensor_spec import TensorSpec
from mlax.errors import user_error
from mlax.import_stablehlo.core import Importer
from mlax.import_stablehlo.table import CONVERTERS, check_supported

_BYTECODE_MAGIC = b"ML\xefR"


def _generic_through_jaxlib(program: str | bytes) -> str:
    """``program`` (pretty text, bytecode or a portable artifact) printed in generic form by
    jaxlib's MLIR; ValueError with jaxlib's diagnostics if it does not parse there either."""
    from jax.extend.mlir import ir as jax_ir
    from jax.extend.mlir.dialects import stablehlo

    context = pjrt.jax_ir_context()
    with context:
        try:
            if isinstance(program, bytes):
                try:
                    module = stablehlo.deserialize_portable_artifact(context, program)
                except Exception:  # not a portable artifact: plain MLIR bytecode
                    module = jax_ir.Module.parse(program)
            else:
                module = jax_ir.Module.parse(program)
        except jax_ir.MLIRError as error:
            raise user_error(ValueError, f"mlax.from_stablehlo: the program does not parse: {error}",
                             "program of mlax.from_stablehlo") from None
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


def generic_text(program: Any) -> tuple[str, Any, Any]:
    """(generic StableHLO text that mlax's MLIR parses, in_tree, out_tree) for a program."""
    in_tree = out_tree = None
    if hasattr(program, "compiler_ir") and hasattr(program, "in_tree"):  # jax.stages.Lowered
        in_tree, out_tree = program.in_tree, program.out_tree
        program = program.compiler_ir("stablehlo")
    elif hasattr(program, "mlir_module") and hasattr(program, "in_tree"):  # jax.export.Exported
        in_tree, out_tree = program.in_tree, program.out_tree
        program = program.mlir_module()
    if hasattr(program, "operation") and hasattr(program.operation, "get_asm"):  # a jaxlib ir.Module
        program = program.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    if isinstance(program, (bytes, bytearray, memoryview)):
        data = bytes(program)
        if data.startswith(_BYTECODE_MAGIC):
            return _generic_through_jaxlib(data), in_tree, out_tree
        try:
            program = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise user_error(ValueError, f"mlax.from_stablehlo: the program is neither MLIR bytecode nor "
                             f"UTF-8 text ({error})", "program of mlax.from_stablehlo") from None
    if not isinstance(program, str):
        raise user_error(TypeError, "mlax.from_stablehlo expects StableHLO text, bytes, a jaxlib ir.Module, "
                         f"a jax Lowered or Exported; got {type(program).__name__}",
                         "program of mlax.from_stablehlo")
    try:
        ir.Module.parse(program, get_context())
        return program, in_tree, out_tree
    except ir.MLIRError:  # pretty form (or a real error, which jaxlib's parser reports best)
        return _generic_through_jaxlib(program), in_tree, out_tree


def entry_function(module: ir.Operation, entry: str) -> ir.Operation:
    """The func.func named ``entry``; ValueError naming the public functions otherwise."""
    functions = [op.operation for op in module.regions[0].blocks[0].operations
                 if op.operation.name == "func.func"]
    for op in functions:
        if ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op.operation
    names = [ir.StringAttr(op.attributes["sym_name"]).value for op in functions]
    raise user_error(ValueError, f"mlax.from_stablehlo: the module has no function @{entry} (functions: "
                     f"{', '.join('@' + n for n in names) or 'none'})", "entry of mlax.from_stablehlo")


def _argument_names(func_op: ir.Operation) -> list[str]:
    """Python parameter names for the entry's arguments, from the names jax gives them in
    their locations (``loc("x")``, ``loc("params['w']")``), else ``arg<i>``."""
    names: list[str] = []
    for i, arg in enumerate(func_op.regions[0].blocks[0].arguments):
        loc = arg.location
        name = re.sub(r"\W+", "_", loc.name_str).strip("_") if loc.is_a_name() else ""
        if not name.isidentifier() or name in names or name.startswith("arg"):
            name = f"arg{i}"
        names.append(name)
    return names


class ImportedFunction:
    """The callable `from_stablehlo` returns. The module is parsed once per thread (each
    thread works in its own MLIR context); the pass gives it a module to read directly."""

    def __init__(self, text: str | None, entry: str = "main", *, name: str | None = None,
                 in_tree: Any = None, out_tree: Any = None, module: ir.Operation | None = None) -> None:
        self._text = text
        self._local = threading.local()
        self._given = module
        self.entry = entry
        module = self._module()
        func_op = entry_function(module, entry)
        signature = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
        try:
            self.in_specs = [TensorSpec.from_mlir(t) for t in signature.inputs]
            self.out_specs = [TensorSpec.from_mlir(t) for t in signature.results]
        except (TypeError, ValueError):
            raise user_error(TypeError, f"mlax.from_stablehlo: @{entry} has the signature {signature}; mlax "
                             "arguments and results are static-shape tensors of mlax's element types",
                             "program of mlax.from_stablehlo") from None
        check_supported(module)
        self._check_trees(in_tree, out_tree)
        self.in_tree, self.out_tree = in_tree, out_tree
        # 64-bit types inside the program (jax's x32 programs have some: threefry counts in
        # ui64) are traced in x64 mode, thread-locally; 64-bit arguments or results need the
        # caller to be in x64 mode.
        self.uses_64_bits = bool(re.search(r"[<x](?:f|i|ui)64>", self._types_text(module)))
        self.needs_x64 = any(s.dtype.itemsize == (16 if s.dtype.kind == "c" else 8)  # complex64: 8 bytes
                             for s in (*self.in_specs, *self.out_specs))
        self.__name__ = self.__qualname__ = name or _default_name(module, entry)
        self.__doc__ = f"The StableHLO function @{entry}, imported into mlax."
        if in_tree is None:
            parameters = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
                          for n in _argument_names(func_op)]
            self.__signature__ = inspect.Signature(parameters)

    def _module(self) -> ir.Operation:
        if self._given is not None:
            return self._given
        module = getattr(self._local, "module", None)
        if module is None:
            module = self._local.module = ir.Module.parse(self._text, get_context())
        return module.operation

    @staticmethod
    def _types_text(module: ir.Operation) -> str:
        """Every value type in the module, as text (64-bit types need mlax's x64 mode)."""
        found: set[str] = set()

        def visit(op: ir.Operation) -> ir.WalkResult:
            found.update(str(r.type) for r in op.results)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        return " ".join(found)

    def _check_trees(self, in_tree: Any, out_tree: Any) -> None:
        checks = ((in_tree, self.in_specs, "arguments"), (out_tree, self.out_specs, "results"))
        for tree, specs, what in checks:
            if tree is not None and tree.num_leaves != len(specs):
                hint = " (jax dropped unused arguments: lower with jax.jit(f, keep_unused=True))" \
                    if what == "arguments" else ""
                raise user_error(ValueError, f"mlax.from_stablehlo: the pytree of the {what} has "
                                 f"{tree.num_leaves} leaves but @{self.entry} has {len(specs)} {what}{hint}",
                                 f"{'in_tree' if what == 'arguments' else 'out_tree'} of mlax.from_stablehlo")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.needs_x64 and not config.x64_enabled:
            raise user_error(ValueError, f"{self.__name__} takes or returns 64-bit types; enable them with "
                             "mlax.config.update('x64', True)", f"the program imported as {self.__name__}")
        leaves = self._leaves(args, kwargs)
        values = [self._argument(i, leaf, spec) for i, (leaf, spec) in
                  enumerate(zip(leaves, self.in_specs, strict=True))]
        with jax.enable_x64(True) if self.uses_64_bits else contextlib.nullcontext():
            outs = Importer(self._module(), CONVERTERS).call(self.entry, values)
        if self.out_tree is not None:
            return tree_util.tree_unflatten(self.out_tree, outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _leaves(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        if self.in_tree is not None:
            leaves, tree = tree_util.tree_flatten((args, kwargs))
            if tree != self.in_tree:
                raise user_error(TypeError, f"{self.__name__} takes arguments of the structure "
                                 f"{self.in_tree}, got {tree}", f"the arguments of {self.__name__}")
            return leaves
        if kwargs or len(args) != len(self.in_specs):
            raise user_error(TypeError, f"{self.__name__} takes {len(self.in_specs)} positional arguments "
                             f"({', '.join(map(str, self.in_specs))}), got {len(args)}"
                             + (f" and keywords {sorted(kwargs)}" if kwargs else ""),
                             f"the arguments of {self.__name__}")
        return list(args)

    def _argument(self, i: int, leaf: Any, spec: TensorSpec) -> Any:
        """Argument ``i`` as a value of the declared type; Python scalars take that type, as
        arguments of a compiled jax program do; anything else must already have it."""
        if not is_array_like(leaf):
            raise user_error(TypeError, f"argument {i} of {self.__name__} has type {type(leaf).__name__}, "
                             "which is not an array", f"argument {i} of {self.__name__}")
        if isinstance(leaf, (bool, int, float)):
            return Array._wrap(np.asarray(leaf, spec.dtype))
        aval = abstractify(leaf)
        if aval.shape != spec.shape or aval.dtype != spec.dtype:
            raise user_error(TypeError, f"argument {i} of {self.__name__} must be {spec.dtype.name}"
                             f"{list(spec.shape)}, got {aval.dtype.name}{list(aval.shape)}",
                             f"argument {i} of {self.__name__}")
        return leaf

    def __repr__(self) -> str:
        args = ", ".join(map(str, self.in_specs))
        return f"<mlax function {self.__name__}({args}) imported from StableHLO @{self.entry}>"


def _default_name(module: ir.Operation, entry: str) -> str:
    """jax names its modules ``jit_<function>``: the function's name, else the entry's."""
    sym = module.attributes["sym_name"] if "sym_name" in module.attributes else None
    name = ir.StringAttr(sym).value if sym is not None else entry
    name = re.sub(r"\W", "_", name.removeprefix("jit_"))
    return name if name and not name[0].isdigit() else entry


def from_stablehlo(program: Any, *, entry: str = "main", in_tree: Any = None,
                   out_tree: Any = None) -> ImportedFunction:
    """Import a StableHLO program (text, bytes, a jaxlib module, a jax Lowered or Exported) as an
    mlax function of ``entry``'s arguments; ``in_tree``/``out_tree`` (jax treedefs, e.g. a
    Lowered's) make it take and return pytrees. Unsupported ops are reported here, each
    naming its location in jax's program."""
    text, found_in, found_out = generic_text(program)
    return ImportedFunction(text, entry, in_tree=in_tree if in_tree is not None else found_in,
                            out_tree=out_tree if out_tree is not None else found_out)


__all__ = ["ImportedFunction", "from_stablehlo"]
