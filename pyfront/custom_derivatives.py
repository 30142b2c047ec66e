"""mlax.custom_jvp / custom_vjp: functions with user-written derivative rules, as jax's.

Called inside a trace, the function and its rules are traced into private functions of the
module and joined by an `mlax.custom_jvp_call` / `mlax.custom_vjp_call` declaration, which
the program calls; `mlax-autodiff` differentiates through it with the rules (and otherwise
makes it a call of the function). Called outside a trace, the function simply runs. A
custom_jvp rule must be linear in the tangents for reverse mode (as in JAX, where custom_jvp
rules are transposed too). ``nondiff_argnums`` arguments may be any Python objects; traced
values among them travel as extra operands that no derivative flows to (jax's stop_gradient).
With ``symbolic_zeros=True`` the rules see jax's SymbolicZero / CustomVJPPrimal for the
inputs the pass finds undifferentiated (pyfront/rule_variants.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from jax import tree_util
from mlir import ir
from mlir.dialects import func

from mlax.autodiff import _call, _trace_callee
from mlax.callbacks import debug_effects_silenced
from mlax.closure import closure_convert
from mlax.core import Aval, Known, Tracer, abstractify, current_trace, is_array_like, known_of, zeros
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.errors import check_callable, index_tuple, user_error
from mlax.passes.symbols import unique_name
from mlax.rule_variants import (
    CustomVJPPrimal,
    SymbolicZero,
    TraceInto,
    custom_vjp_primal_tree_values,
    dense,
    placeholder,
    register_variants,
    with_zeros,
    zero_from_primal,
)
from mlax.source_info import current_location
from mlax.staging import needs_values, with_known
from mlax.tracing import SubFunction, function_name

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp",
           "custom_vjp", "custom_vjp_primal_tree_values", "zero_from_primal"]


@dataclasses.dataclass
class _Arguments:
    """A call's arguments as the rules see them: the differentiated ones, and those of
    ``nondiff_argnums`` (any objects), whose traced leaves are ``hidden`` operands."""

    positions: tuple[int, ...]
    nondiff_leaves: list[Any]  # the nondiff arguments' leaves, None where a traced one was
    nondiff_tree: Any
    hidden: list[Any]  # Tracers; their Avals once abstract()
    dynamic: tuple[Any, ...]

    @classmethod
    def split(cls, args: tuple[Any, ...], nondiff_argnums: tuple[int, ...], name: str) -> _Arguments:
        for i in nondiff_argnums:
            if not -len(args) <= i < len(args):
                raise user_error(IndexError, f"nondiff_argnums {nondiff_argnums} refer to positional "
                                 f"argument {i}, but {name} was called with {len(args)} positional arguments",
                                 f"nondiff_argnums of {name}")
        positions = tuple(i % len(args) for i in nondiff_argnums)
        leaves, tree = tree_util.tree_flatten([args[i] for i in positions])
        hidden = [leaf for leaf in leaves if isinstance(leaf, Tracer)]
        kept = [None if isinstance(leaf, Tracer) else leaf for leaf in leaves]
        dynamic = tuple(a for i, a in enumerate(args) if i not in positions)
        return cls(positions, kept, tree, hidden, dynamic)

    @property
    def operands(self) -> tuple[Any, ...]:
        """What the traced functions take: the differentiated arguments, then the hidden list."""
        return (*self.dynamic, self.hidden)

    @property
    def n_hidden(self) -> int:
        return len(self.hidden)

    def nondiff(self, hidden: Sequence[Any]) -> list[Any]:
        """The nondiff arguments, with ``hidden`` (values of the trace at hand) in place of the
        traced leaves (tree_flatten never yields None, so None marks them)."""
        given = iter(hidden)
        leaves = [next(given) if kept is None else kept for kept in self.nondiff_leaves]
        return tree_util.tree_unflatten(self.nondiff_tree, leaves)

    def trace_primal(self, fun: Callable[..., Any], trace: Any,
                     name: str) -> tuple[SubFunction, list[Any], Any]:
        """Trace ``fun`` on the operands' leaves (each an array: a non-array object must be
        among nondiff_argnums, as in jax); also the operands' tree. In concrete mode ``fun``
        sees the values: jax's eager transformations run it (through its rules) on them."""
        leaves, tree = tree_util.tree_flatten(self.operands)
        for leaf in leaves:
            if not is_array_like(leaf):
                raise user_error(TypeError, f"Value {leaf!r} with type {type(leaf)} is not a valid mlax "
                                 f"type: an argument of custom derivative function {name} that is not an "
                                 "array must be listed in nondiff_argnums", f"the arguments of {name}")

        def primal(*flat: Any) -> Any:
            operands = tree_util.tree_unflatten(tree, list(flat))
            return fun(*self.full(operands[:-1], operands[-1]))

        primal.__name__ = name
        knowns = [known_of(leaf) for leaf in leaves]
        sub, traced, _ = _trace_callee(primal, tuple(leaves), trace, knowns=knowns)
        return sub, traced, tree

    def abstract(self) -> _Arguments:
        """The same split with abstract values in place of the arguments' values."""
        return dataclasses.replace(self, hidden=[abstractify(h) for h in self.hidden],
                                   dynamic=tree_util.tree_map(abstractify, self.dynamic))

    def full(self, dynamic: Sequence[Any], hidden: Sequence[Any]) -> list[Any]:
        """The call's positional arguments from the differentiated ones and the hidden ones."""
        full = list(dynamic)
        for i, value in sorted(zip(self.positions, self.nondiff(hidden), strict=True), key=lambda p: p[0]):
            full.insert(i, value)
        return full


class _InsideRules(threading.local):
    """Per thread, the custom-derivative functions whose rules are being traced: inside its
    rules a function is its plain self (rules are traced at the call, so a rule calling its
    function would otherwise trace itself without end)."""

    def __init__(self) -> None:
        self.owners: set[int] = set()


_INSIDE = _InsideRules()


def _inside_rules(owner: object) -> bool:
    return id(owner) in _INSIDE.owners


@contextlib.contextmanager
def _tracing_rules_of(owner: object) -> Iterator[None]:
    key, nested = id(owner), _inside_rules(owner)
    _INSIDE.owners.add(key)
    try:
        yield
    finally:
        if not nested:
            _INSIDE.owners.discard(key)


def _declare_call(trace: Any, kind: str, sub: SubFunction, leaves: list[Any], origin: str,
                  **rules: str) -> Any:
    """Declare ``kind`` of ``sub`` with its rule functions, call it on ``leaves`` and rebuild
    the outputs."""
    module = trace.block.owner.parent
    with get_context(), current_location():
        name = unique_name(module, f"{sub.name}_{kind.removesuffix('_call')}")
        declared = declare_transform(module, kind, name, callee=sub.name, **rules)
    results = _call(trace, name, ir.FunctionType(declared.type), leaves, sub.out_avals, origin)
    return tree_util.tree_unflatten(sub.out_tree, results)


def _no_captures(name: str, what: str, *subs: SubFunction) -> None:
    if any(sub.captured for sub in subs):
        raise user_error(TypeError, f"{what} function {name} (or its rules) uses a value of the enclosing "
                         "traced function; pass it as an argument instead (or see mlax.closure_convert)")


class custom_jvp:  # noqa: N801 (JAX's name)
    """Decorator: ``f = custom_jvp(f)``, then ``@f.defjvp`` on ``rule(*nondiff, primals,
    tangents) -> (primal_out, tangent_out)``, or ``f.defjvps`` with one tangent function per
    argument. ``nondiff_argnums`` arguments are passed to the rule first and not differentiated."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        check_callable(fun, "fun of mlax.custom_jvp")
        self.fun = fun
        self.nondiff_argnums = index_tuple(nondiff_argnums, "nondiff_argnums", "mlax.custom_jvp")
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Set the JVP rule; with ``symbolic_zeros`` it gets SymbolicZero for the tangents of
        inputs that are not differentiated, and may return SymbolicZero tangents."""
        self.jvp, self.symbolic_zeros = jvp, symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule ``jvp(tangent, primal_out, *primals)`` per argument (None: no dependence);
        the output tangent is their sum, as jax."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
            out = self(*primals)
            terms = [rule(t, out, *primals) for t, rule in zip(tangents, jvps, strict=False) if rule]
            if not terms:
                return out, zero_from_primal(out)
            return out, tree_util.tree_map(lambda *xs: functools.reduce(lambda a, b: a + b, xs), *terms)

        self.defjvp(jvp)

    def __call__(self, *args: Any) -> Any:
        name = function_name(self.fun)
        if self.jvp is None:
            raise user_error(AttributeError, f"No JVP defined for custom_jvp function {name} using defjvp.",
                             "the rule of mlax.custom_jvp")
        trace = current_trace()
        if trace is None or _inside_rules(self):  # inside its own rule f is its plain function
            return self.fun(*args)
        parts = _Arguments.split(args, self.nondiff_argnums, name)

        sub, leaves, in_tree = parts.trace_primal(self.fun, trace, name)
        parts = parts.abstract()  # the rules (traced again at pass time) keep no traced values
        avals = [abstractify(leaf) for leaf in leaves]
        into = TraceInto(trace.block.owner.parent, trace)

        def make(into: TraceInto, zero: tuple[bool, ...]) -> list[str]:
            return [self._trace_rule(into, parts, in_tree, avals, sub.out_avals, zero).name]

        before = _functions(into.module)
        try:
            rule_sub = self._trace_rule(into, parts, in_tree, avals, sub.out_avals, (False,) * len(leaves),
                                        [known_of(leaf) for leaf in leaves])
        except Exception as error:  # noqa: BLE001 (raised again if the pass needs the rule)
            if needs_values(error):  # traced again with the values (pyfront/staging.py)
                raise
            _erase_new_functions(into.module, before)
            rule_name = _failed_rule(into, [*avals, *avals], [*sub.out_avals, *sub.out_avals],
                                     f"{sub.name}_jvp_rule", error, make)
        else:
            _no_captures(name, "custom_jvp", sub, rule_sub)
            rule_name = rule_sub.name
            if self.symbolic_zeros:
                register_variants(rule_sub.name, into.module, make)
        _no_captures(name, "custom_jvp", sub)
        out = _declare_call(trace, "custom_jvp_call", sub, leaves, f"result of custom_jvp {name}",
                            jvp=rule_name)
        return with_known(out, args, {}, self)  # concrete mode: the value is fun's

    def _trace_rule(self, into: TraceInto, parts: _Arguments, in_tree: Any, avals: list[Aval],
                    out_avals: Sequence[Aval], zero: tuple[bool, ...],
                    knowns: Sequence[Known | None] = ()) -> SubFunction:
        """The rule as a function (primals..., the tangents ``zero`` leaves nonzero...) ->
        (outs..., tangent outs...); ``knowns``: at the call, what concrete mode knows of the
        primals (the tangents' values are never known, as under jax's grad)."""
        name, n = function_name(self.fun), len(avals)

        def rule(*flat: Any) -> list[Any]:
            primals = tree_util.tree_unflatten(in_tree, list(flat[:n]))
            given = flat[n:]
            tangent_leaves = with_zeros(given, zero, avals) if self.symbolic_zeros or any(zero) else given
            if not self.symbolic_zeros:  # a plain rule sees zeros (pass time, for a failed rule's stand-in)
                tangent_leaves = [dense(t, a) for t, a in zip(tangent_leaves, avals, strict=True)]
            tangents = tree_util.tree_unflatten(in_tree, list(tangent_leaves))
            pair = self.jvp(*parts.nondiff(primals[-1]), tuple(primals[:-1]), tuple(tangents[:-1]))
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise user_error(TypeError, "Custom JVP rule must produce a pair (list or tuple of length "
                                 "two) representing primal and tangent outputs, but got "
                                 f"{type(pair).__name__}", f"the rule of custom_jvp function {name}")
            outs = tree_util.tree_leaves(pair[0])
            tangent_outs = tree_util.tree_leaves(pair[1], is_leaf=lambda t: isinstance(t, SymbolicZero))
            if len(tangent_outs) == len(out_avals):
                tangent_outs = [dense(t, a) for t, a in zip(tangent_outs, out_avals, strict=True)]
            return [*outs, *tangent_outs]

        rule.__name__ = f"{name}_rule"
        tangents = [placeholder(a) for a, z in zip(avals, zero, strict=True) if not z]
        with _tracing_rules_of(self):
            sub = into(rule, (*(placeholder(a) for a in avals), *tangents),
                       [*knowns, *[None] * len(tangents)] if knowns else None)
        _check_rule_outputs(out_avals, sub.out_avals, name)
        return sub


class custom_vjp:  # noqa: N801 (JAX's name)
    """Decorator: ``f = custom_vjp(f)``, then ``f.defvjp(fwd, bwd)`` with ``fwd(*args) ->
    (out, residuals)`` and ``bwd(*nondiff, residuals, cotangent) -> tuple of cotangents, one
    per argument`` (None for a zero one). ``nondiff_argnums`` arguments are passed to fwd as
    they are and to bwd first, and are not differentiated. Reverse mode only, as in JAX."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        check_callable(fun, "fun of mlax.custom_vjp")
        self.fun = fun
        self.nondiff_argnums = index_tuple(nondiff_argnums, "nondiff_argnums", "mlax.custom_vjp")
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False) -> None:
        """Set the rules; with ``symbolic_zeros`` fwd gets CustomVJPPrimal records (``value``,
        ``perturbed``) and bwd SymbolicZero for zero output cotangents."""
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __call__(self, *args: Any) -> Any:
        name = function_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise user_error(AttributeError, f"No VJP defined for custom_vjp function {name} using defvjp.",
                             "the rules of mlax.custom_vjp")
        trace = current_trace()
        if trace is None or _inside_rules(self):
            return self.fun(*args)
        parts = _Arguments.split(args, self.nondiff_argnums, name)

        sub, leaves, in_tree = parts.trace_primal(self.fun, trace, name)
        parts = parts.abstract()  # the rules (traced again at pass time) keep no traced values
        avals = [abstractify(leaf) for leaf in leaves]
        rules = _VjpRules(self, parts, in_tree, avals, sub, [known_of(leaf) for leaf in leaves])
        into = TraceInto(trace.block.owner.parent, trace)

        def make(into: TraceInto, zero: tuple[bool, ...]) -> list[str]:
            return [s.name for s in rules.trace(into, zero)]

        before = _functions(into.module)
        try:
            fwd_sub, bwd_sub = rules.trace(into, (False,) * len(leaves))
        except Exception as error:  # noqa: BLE001 (raised again if the pass needs the rules)
            if needs_values(error):  # traced again with the values (pyfront/staging.py)
                raise
            _erase_new_functions(into.module, before)
            # fwd stands in as the function itself (no residuals: the declaration needs fwd's
            # body for their types); bwd as a body-less function, so the error is raised if
            # reverse mode needs the rules for all inputs, else the pass traces its variant
            def primal(*flat: Any) -> list[Any]:
                operands = tree_util.tree_unflatten(in_tree, list(flat))
                with _tracing_rules_of(self):
                    return tree_util.tree_leaves(self.fun(*parts.full(operands[:-1], operands[-1])))

            primal.__name__ = f"{sub.name}_fwd_failed"
            fwd_name = into(primal, tuple(placeholder(a) for a in avals)).name
            _remember_failure(fwd_name, error)
            register_variants(fwd_name, into.module, _failing(fwd_name, make))
            bwd_name = _failed_rule(into, sub.out_avals, avals, f"{sub.name}_bwd", error, make)
        else:
            _no_captures(name, "custom_vjp", sub, fwd_sub, bwd_sub)
            fwd_name, bwd_name = fwd_sub.name, bwd_sub.name
            if self.symbolic_zeros:
                register_variants(fwd_sub.name, into.module, make)
        _no_captures(name, "custom_vjp", sub)
        out = _declare_call(trace, "custom_vjp_call", sub, leaves, f"result of custom_vjp {name}",
                            fwd=fwd_name, bwd=bwd_name)
        return with_known(out, args, {}, self)  # concrete mode: the value is fun's


@dataclasses.dataclass
class _VjpRules:
    """How one call's fwd and bwd are traced, for a pattern of unperturbed inputs (all
    perturbed at the call; others at pass time, with symbolic_zeros). ``knowns``: what concrete
    mode knows of the inputs at the call (jax's eager grad hands fwd concrete values)."""

    owner: custom_vjp
    parts: _Arguments
    in_tree: Any
    avals: list[Aval]
    sub: SubFunction
    knowns: Sequence[Known | None]

    def trace(self, into: TraceInto, zero: tuple[bool, ...]) -> tuple[SubFunction, SubFunction]:
        owner, name, n_out = self.owner, function_name(self.owner.fun), len(self.sub.out_avals)
        residual_tree: list[Any] = []

        def fwd(*flat: Any) -> list[Any]:
            if owner.symbolic_zeros:
                flat = tuple(CustomVJPPrimal(x, not z) for x, z in zip(flat, zero, strict=True))
            operands = tree_util.tree_unflatten(self.in_tree, list(flat))
            hidden = [p.value for p in operands[-1]] if owner.symbolic_zeros else operands[-1]
            pair = owner.fwd(*self.parts.full(operands[:-1], hidden))
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise user_error(TypeError, "Custom VJP fwd rule must produce a pair (list or tuple of "
                                 "length two) where the first element represents the primal output and the "
                                 f"second element represents residuals, but got {type(pair).__name__}",
                                 f"fwd of custom_vjp function {name}")
            residual_leaves, tree = tree_util.tree_flatten(pair[1])
            # Python scalars among the residuals are constants of the trace: bwd gets them as
            # they are (as jax's eager bwd does: equinox passes its `perturbed` flags so)
            static = {i: leaf for i, leaf in enumerate(residual_leaves) if type(leaf) in _PYTHON_SCALARS}
            residual_tree.append((tree, static))
            traced = [leaf for i, leaf in enumerate(residual_leaves) if i not in static]
            return [*tree_util.tree_leaves(pair[0]), *traced, *hidden]  # bwd gets hidden too

        fwd.__name__ = f"{self.sub.name}_fwd"
        # fwd runs where jax runs it, under differentiation alone: its effects stay (the primal's
        # forward pass called the function itself)
        with _tracing_rules_of(owner), debug_effects_silenced(False):
            fwd_sub = into(fwd, tuple(placeholder(a) for a in self.avals), self.knowns)
        _check_fwd_outputs(self.sub.out_avals, fwd_sub.out_avals[:n_out], name)
        residual_avals = fwd_sub.out_avals[n_out:]
        if not owner.symbolic_zeros:
            return fwd_sub, self._trace_bwd(into, residual_tree[0], residual_avals, (False,) * n_out)

        def make(into: TraceInto, ct_zero: tuple[bool, ...]) -> list[str]:
            return [self._trace_bwd(into, residual_tree[0], residual_avals, ct_zero).name]

        before = _functions(into.module)
        try:
            bwd_sub = self._trace_bwd(into, residual_tree[0], residual_avals, (False,) * n_out)
        except Exception as error:  # noqa: BLE001 (raised again if the pass needs this variant)
            # a bwd that refuses nonzero cotangents for all outputs (equinox asserts the zeros
            # it was promised): a stand-in, traced at pass time for the cotangents of the use
            _erase_new_functions(into.module, before)
            symbol = _failed_rule(into, (*residual_avals, *self.sub.out_avals), self.avals,
                                  f"{self.sub.name}_bwd", error, make)
            return fwd_sub, SubFunction(symbol, (*residual_avals, *self.sub.out_avals), tuple(self.avals),
                                        None, [])
        register_variants(bwd_sub.name, into.module, make)
        return fwd_sub, bwd_sub

    def _trace_bwd(self, into: TraceInto, residual_tree: tuple[Any, dict[int, Any]],
                   residual_avals: Sequence[Aval], zero: tuple[bool, ...]) -> SubFunction:
        """bwd as a function (residuals..., the nonzero output cotangents...) -> input cotangents;
        ``residual_tree``: the residuals' tree and the Python scalars among its leaves."""
        owner, name, sub = self.owner, function_name(self.owner.fun), self.sub
        dynamic = self.parts.dynamic
        tree, static = residual_tree

        def bwd(*flat: Any) -> list[Any]:
            count = tree.num_leaves - len(static)
            end = count + self.parts.n_hidden
            traced = iter(flat[:count])
            leaves = [static[i] if i in static else next(traced) for i in range(tree.num_leaves)]
            residuals = tree_util.tree_unflatten(tree, leaves)
            given = with_zeros(flat[end:], zero, sub.out_avals) if owner.symbolic_zeros else flat[end:]
            cotangent = tree_util.tree_unflatten(sub.out_tree, list(given))
            cts = owner.bwd(*self.parts.nondiff(flat[count:end]), residuals, cotangent)
            if not isinstance(cts, tuple) or len(cts) != len(dynamic):
                got = f"a tuple of length {len(cts)}" if isinstance(cts, tuple) else type(cts).__name__
                raise user_error(TypeError, "Custom VJP bwd rule must produce a tuple of length equal to the "
                                 f"number of arguments to the primal function ({len(dynamic)}), got {got}",
                                 f"bwd of custom_vjp function {name}")
            out = []
            for arg, ct in zip(dynamic, cts, strict=True):
                leaves = tree_util.tree_leaves(arg)
                given = _cotangent_leaves(ct, arg)
                if given is None or len(given) != len(leaves):
                    raise user_error(TypeError, "Custom VJP bwd rule must produce an output with the same "
                                     "container (pytree) structure as the args tuple of the primal function",
                                     f"bwd of custom_vjp function {name}")
                out += [_cotangent_like(leaf, c, name) for leaf, c in zip(leaves, given, strict=True)]
            return out + [_cotangent_like(h, None, name) for h in self.parts.hidden]

        bwd.__name__ = f"{sub.name}_bwd"
        cts = [placeholder(a) for a, z in zip(sub.out_avals, zero, strict=True) if not z]
        with _tracing_rules_of(owner), debug_effects_silenced(False):  # bwd's effects are the pullback's
            return into(bwd, (*(placeholder(a) for a in residual_avals), *cts))


def _functions(module: ir.Operation) -> set[str]:
    """The symbols defined in ``module``."""
    return {ir.StringAttr(op.attributes["sym_name"]).value for op in module.regions[0].blocks[0].operations
            if "sym_name" in op.attributes}


def _erase_new_functions(module: ir.Operation, before: set[str]) -> None:
    """Erase what a trace that failed left in ``module`` (the symbols not in ``before``)."""
    table = ir.SymbolTable(module)
    for symbol in _functions(module) - before:
        table.erase(table[symbol])


_PYTHON_SCALARS = (bool, int, float, complex)
_FAILED_RULES: dict[str, BaseException] = {}  # stand-in symbol -> what tracing the rule raised
_FAILED_LIMIT = 1024


def _failed_rule(into: TraceInto, in_avals: Sequence[Aval], out_avals: Sequence[Aval], name: str,
                 error: BaseException,
                 make: Callable[[TraceInto, tuple[bool, ...]], list[str]]) -> str:
    """A rule that raised when traced at the call (with every tangent present), as a stand-in:
    a body-less function of the rule's type. As in jax, a rule runs only for a call whose
    inputs are differentiated, so the error is the user's only if `mlax-autodiff` needs the
    rule: the pass then traces it for its pattern of zero tangents (``make``) or, with every
    tangent present, finds no body; ``raise_failed_rule`` gives the error back its own kind
    (equinox's ``nondifferentiable`` is a custom_jvp whose rule always raises)."""
    def stand_in(*flat: Any) -> list[Any]:
        return [zeros(a) for a in out_avals]

    stand_in.__name__ = name
    traced = into(stand_in, tuple(placeholder(a) for a in in_avals))
    table = ir.SymbolTable(into.module)
    op = table[traced.name]
    with get_context(), ir.InsertionPoint(op), ir.Location.name(
            f"the rule {name} raised {type(error).__name__}: {error}"):
        symbol = unique_name(into.module, f"{name}_failed")
        stub = func.FuncOp(symbol, ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value),
                           visibility="private")
    table.erase(op)
    _remember_failure(symbol, error)
    register_variants(stub.sym_name.value, into.module, _failing(symbol, make))
    return symbol


def _remember_failure(symbol: str, error: BaseException) -> None:
    _FAILED_RULES[symbol] = error
    while len(_FAILED_RULES) > _FAILED_LIMIT:
        _FAILED_RULES.pop(next(iter(_FAILED_RULES)))


def _failing(symbol: str, make: Callable[[TraceInto, tuple[bool, ...]], list[str]]
             ) -> Callable[[TraceInto, tuple[bool, ...]], list[str]]:
    """``make`` for the stand-in ``symbol``: what it raises is the error to give back."""
    def traced(into: TraceInto, zero: tuple[bool, ...]) -> list[str]:
        try:
            return make(into, zero)
        except Exception as error:
            _remember_failure(symbol, error)
            raise

    return traced


def raise_failed_rule(error: BaseException) -> None:
    """Raise, in place of a pipeline ``error`` that says a rule stand-in of `_failed_rule` was
    needed, what the rule raised when traced (nothing when ``error`` is another one)."""
    text = str(error)
    for symbol, failure in list(_FAILED_RULES.items()):
        if f"@{symbol} " in text or f"@{symbol}\n" in text:
            raise failure.with_traceback(None) from error


def _cotangent_like(like: Aval, cotangent: Any, name: str) -> Any:
    """A custom_vjp bwd's cotangent for a primal input of abstract value ``like`` (zeros for
    None), checked and converted to the input's dtype."""
    import mlax.numpy as mnp

    if cotangent is None:
        return mnp.zeros(like.shape, like.dtype)
    if mnp.shape(cotangent) != like.shape:
        raise user_error(ValueError, "Custom VJP bwd rule must produce an output with the same shapes as the "
                         f"args tuple of the primal function, but it produced shape {mnp.shape(cotangent)} "
                         f"for an input of shape {like.shape}", f"bwd of custom_vjp function {name}")
    return mnp.asarray(cotangent, like.dtype)


def _check_rule_outputs(out_avals: Sequence[Any], rule_avals: Sequence[Any], name: str) -> None:
    """JAX's check of a custom_jvp rule: primal outputs like the function's, and tangents of
    the same shapes and dtypes."""
    def text(avals: Sequence[Any]) -> str:
        return "(" + ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in avals) + ")"

    expected = [*out_avals, *out_avals]
    if len(rule_avals) != len(expected) or any(
            a.shape != b.shape or a.dtype != b.dtype for a, b in zip(expected, rule_avals, strict=True)):
        raise user_error(TypeError, "Custom JVP rule must produce primal and tangent outputs with "
                         f"corresponding shapes and dtypes. Expected {text(out_avals)} for each, but got "
                         f"{text(rule_avals[:len(out_avals)])} and {text(rule_avals[len(out_avals):])}.",
                         f"the rule of custom_jvp function {name}")


def _cotangent_leaves(ct: Any, arg: Any) -> list[Any] | None:
    """The leaves of a bwd's cotangent ``ct`` for the primal pytree ``arg``, one per leaf of
    ``arg`` (None for zeros): as jax, a None or SymbolicZero in place of a subtree stands for
    zeros of all its leaves (none where the primal has no leaves there). None where ``ct``'s
    structure is not a prefix of ``arg``'s."""
    given: list[Any] = []

    def add(c: Any, primal: Any) -> None:
        if _is_zero(c):
            given.extend([None] * len(tree_util.tree_leaves(primal)))
        else:
            given.append(c)

    try:
        tree_util.tree_map(add, ct, arg, is_leaf=_is_zero)
    except ValueError:
        return None
    return given


def _is_zero(ct: Any) -> bool:
    """Whether a bwd's cotangent (or pytree leaf of one) stands for zeros: None or SymbolicZero."""
    return ct is None or isinstance(ct, SymbolicZero)


def _check_fwd_outputs(out_avals: Sequence[Aval], fwd_avals: Sequence[Aval], name: str) -> None:
    """JAX's check of a custom_vjp fwd: its primal outputs have the function's types."""
    if len(fwd_avals) != len(out_avals) or any(
            a.shape != b.shape or a.dtype != b.dtype for a, b in zip(out_avals, fwd_avals, strict=True)):
        raise user_error(TypeError, "Custom VJP fwd rule must produce primal outputs with the same shapes "
                         f"and dtypes as the function: expected {[str(a) for a in out_avals]}, got "
                         f"{[str(a) for a in fwd_avals]}", f"fwd of custom_vjp function {name}")


@tree_util.register_pytree_node_class
class _Gradient:
    """custom_gradient's residuals: the closure-converted vjp_fn (static) and its consts."""

    def __init__(self, converted: Callable[..., Any], consts: Sequence[Any], single: bool) -> None:
        self.converted, self.consts, self.single = converted, list(consts), single

    def tree_flatten(self) -> tuple[list[Any], tuple[Any, bool]]:
        return self.consts, (self.converted, self.single)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, bool], consts: list[Any]) -> _Gradient:
        return cls(aux[0], consts, aux[1])


def custom_gradient(fun: Callable[..., Any]) -> custom_vjp:
    """``fun(*args) -> (value, vjp_fn)`` made a function whose reverse-mode derivative is
    ``vjp_fn`` (output cotangent -> a tuple of cotangents, or one for a single argument), as
    jax.custom_gradient: a custom_vjp whose residuals are the values vjp_fn closes over."""
    check_callable(fun, "fun of mlax.custom_gradient")

    @functools.wraps(fun)
    def value(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple[Any, _Gradient]:
        out, rule = fun(*args)
        converted, consts = closure_convert(rule, out)
        return out, _Gradient(converted, consts, len(args) == 1)

    def bwd(residuals: _Gradient, cotangent: Any) -> tuple[Any, ...]:
        cts = residuals.converted(cotangent, *residuals.consts)
        return (cts,) if residuals.single and not isinstance(cts, (tuple, list)) else tuple(cts)

    wrapped = custom_vjp(value)
    wrapped.defvjp(fwd, bwd)
    return wrapped

