"""Resolving transformation declarations on demand, shared by `mlax-autodiff`, `mlax-batch`
and `mlax-expand-transforms`.

A pass builds a `Resolver` for the kinds it handles. Each kind has a handler (registered in
`HANDLERS` by passes/autodiff and passes/batching) that writes the declaration's body from its
callee. Functions are looked up through `Resolver.lookup`, which resolves a declaration the
first time something needs its body, so transformations of transformations (vmap of grad,
grad of vmap, grad of grad) resolve innermost first, whatever order they appear in. The
kinds in `THROUGH` (custom derivatives, checkpoint) are handled by the rules at their calls
and, once everything is resolved, become plain calls of their callee.

The handlers' modules (passes/autodiff, passes/batching) are imported by `load_handlers`, when a
module first has a declaration to resolve: most programs have none, and importing every rule
table costs more than compiling a small program.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import func

from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.shard_map import SHARD_MAP_KIND
from mlax.dialect.transforms import ATTR_PREFIX, DeclarationError, Transform, read_transform
from mlax.dialect.user_primitives import USER_PRIMITIVE_KIND
from mlax.passes import user_primitives
from mlax.passes.registry import ModulePass, PassFailure, register_pass

if TYPE_CHECKING:
    from mlax.passes.autodiff.emit import MaybeValue

THROUGH = ("custom_jvp_call", "custom_vjp_call", "checkpoint")
# Declarations that stay what they are (the transformations of their calls are rules):
# control flow, host callbacks, shard_map and user primitives (until mlax-expand-transforms
# gives them their lowering).
PERSISTENT = (*CONTROL_FLOW_KINDS, CALLBACK_KIND, SHARD_MAP_KIND, USER_PRIMITIVE_KIND)


class Resolver:
    """Looks functions up by symbol, giving declarations of the enabled kinds their bodies."""

    def __init__(self, module: ir.Operation, kinds: Sequence[str], pass_name: str) -> None:
        self.module = module
        self.kinds = tuple(kinds)
        self.pass_name = pass_name
        self.table = ir.SymbolTable(module)
        self.in_progress: set[str] = set()

    def fail(self, message: str, location: ir.Location | None = None) -> PassFailure:
        return PassFailure(f"{self.pass_name}: {message}", location)

    def lookup(self, name: str) -> ir.Operation:
        if name not in self.table:  # maybe created since (the table does not see new symbols)
            self.table = ir.SymbolTable(self.module)
        if name not in self.table:
            raise self.fail(f"no function @{name} in the module")
        function = self.table[name].operation
        if name in self.in_progress:
            raise self.fail(f"@{name} depends on its own transformation", function.location)
        try:
            transform = read_transform(function)
        except DeclarationError as error:
            raise self.fail(str(error), function.location) from None
        if transform is not None and transform.kind not in (*THROUGH, *PERSISTENT):
            if transform.kind not in self.kinds:
                raise self.fail(f"@{name} is an {ATTR_PREFIX}{transform.kind} declaration, which "
                                f"{self.pass_name} cannot transform through (run mlax-expand-transforms)",
                                function.location)
            self.resolve(function, transform.kind, transform.fields)
        return function

    def resolve(self, declaration: ir.Operation, kind: str, fields: dict) -> None:
        from mlax.passes.autodiff.emit import Emitter

        name = ir.StringAttr(declaration.attributes["sym_name"]).value
        self.in_progress.add(name)
        callee = self.lookup(fields["callee"])
        del declaration.attributes[ATTR_PREFIX + kind]
        with declaration.location:
            block = declaration.opview.add_entry_block()
        point = ir.InsertionPoint(block)
        values = HANDLERS[kind](self, declaration, callee, fields, list(block.arguments), point)
        results = list(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
        emitter = Emitter(point, declaration.location)
        values = [emitter.materialize(v, t) for v, t in zip(values, results, strict=True)]
        with declaration.location:
            func.ReturnOp(values, ip=point)
        self.in_progress.discard(name)

    def _unresolved(self) -> list[tuple[ir.Operation, Transform]]:
        """The declarations of the enabled kinds not resolved yet, with what they declare."""
        found = []
        for op in [o.operation for o in self.module.regions[0].blocks[0].operations]:
            try:
                transform = read_transform(op)
            except DeclarationError as error:
                raise self.fail(str(error), op.location) from None
            if transform is not None and transform.kind in self.kinds and not op.regions[0].blocks:
                found.append((op, transform))
        return found

    def run(self) -> None:
        """Resolve every declaration of the enabled kinds, then turn the THROUGH ones into calls."""
        for prepare in PREPARERS:
            prepare(self.module)
        # to a fixpoint: a rule traced while resolving (a custom_vjp's bwd traced at pass time)
        # may declare more, which need the custom derivatives as declarations still
        while pending := self._unresolved():
            for op, transform in pending:
                if not op.regions[0].blocks:  # (not resolved meanwhile as another's callee)
                    self.resolve(op, transform.kind, transform.fields)
        for op in [o.operation for o in self.module.regions[0].blocks[0].operations]:
            transform = read_transform(op)
            if transform is not None and transform.kind in THROUGH:
                _call_callee(op, transform.kind, transform.fields["callee"])
        for finish in FINALIZERS:
            finish(self.module)


# kind -> handler(resolver, declaration, callee, fields, block arguments, point) -> result values
Handler = Callable[[Resolver, ir.Operation, ir.Operation, dict, list[ir.Value], ir.InsertionPoint],
                   "list[MaybeValue]"]
HANDLERS: dict[str, Handler] = {}
# run on the module before / after a Resolver resolves its declarations
PREPARERS: list[Callable[[ir.Operation], None]] = []
FINALIZERS: list[Callable[[ir.Operation], None]] = []
# The modules that fill the tables above.
HANDLER_MODULES = ("mlax.passes.autodiff", "mlax.passes.batching")


def load_handlers() -> None:
    """Import the passes that register `HANDLERS`, `PREPARERS` and `FINALIZERS` (once)."""
    for name in HANDLER_MODULES:
        importlib.import_module(name)


def has_declarations_to_resolve(module: ir.Operation) -> bool:
    """Whether ``module`` declares a transformation a handler resolves (not only control flow,
    callbacks, shard_maps, custom derivatives or checkpoints outside differentiation)."""
    for op in module.regions[0].blocks[0].operations:
        transform = read_transform(op) if op.operation.name == "func.func" else None
        if transform is not None and transform.kind not in (*THROUGH, *PERSISTENT):
            return True
    return False


def _call_callee(declaration: ir.Operation, kind: str, callee: str) -> None:
    """Outside differentiation a custom_jvp_call / custom_vjp_call / checkpoint is its callee:
    the declaration becomes a function that calls it."""
    del declaration.attributes[ATTR_PREFIX + kind]
    with declaration.location:
        block = declaration.opview.add_entry_block()
        results = list(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
        call = func.CallOp(results, callee, list(block.arguments), ip=ir.InsertionPoint(block))
        func.ReturnOp(list(call.results), ip=ir.InsertionPoint(block))


@register_pass
@dataclass
class ExpandTransforms(ModulePass):
    """Resolve every transformation declaration (jvp, vjp, vmap, ...) innermost first, then
    give each user primitive its lowering (which may bind more of them: to a fixpoint)."""

    argument = "mlax-expand-transforms"
    summary = "resolve all transformation declarations (autodiff and batching), then lower user primitives"

    def run(self, module: ir.Operation) -> None:
        while True:
            if has_declarations_to_resolve(module):
                load_handlers()
            Resolver(module, tuple(HANDLERS), self.argument).run()
            if not user_primitives.expand(module, self.argument):
                return
