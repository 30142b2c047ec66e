"""jax's ahead-of-time stages for `mlax.jit`: ``jit(f).trace(*args)`` is a `Traced`, its
``.lower()`` a `Lowered`, whose ``.compile()`` is a `Compiled`, with the attributes of
``jax.stages``' classes (``args_info``, ``in_tree``, ``out_tree``, ``out_info``, ``as_text``,
``cost_analysis``, ``memory_analysis``...), so code written against jax's AOT API runs.

Each stage holds one `CacheEntry` of the jit's trace cache (pyfront/api.py): the traced module
and what running it needs. mlax's own view of a program is its stages' IR (``as_text(stage)``:
"mlax", then the backend's road). What jax reports it takes from XLA: ``as_text()`` is the
StableHLO text jax prints, and the cost and memory analyses are XLA's, of the program's
StableHLO (the xla backend's road) compiled by XLA on this host's default platform. On the xla
backend that is the program that runs; on mlax's native backends it is the same program as
XLA would compile it, since those compilers keep no cost model of their own.
"""

from __future__ import annotations

import functools
import re
import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from jax import ShapeDtypeStruct, tree_util
from jax.core import ShapedArray
from jax.stages import ArgInfo
from mlir import ir

from mlax.array import Array
from mlax.backends.registry import Executable, compile_cached, get_backend
from mlax.backends.xla import pjrt
from mlax.backends.xla.sharded import jax_mesh, named_sharding
from mlax.core import Aval, Tracer, abstractify, to_numpy
from mlax.custom_derivatives import raise_failed_rule
from mlax.dialect import get_context
from mlax.dialect import sharding as ir_sharding
from mlax.dialect.callbacks import callback_declarations
from mlax.errors import user_error
from mlax.explicit_sharding import place_output
from mlax.sharding import CONTEXT as MESH_CONTEXT
from mlax.tracing import TracedFunction, flatten_arguments, numpy_leaves


@dataclass
class CacheEntry:
    """One traced signature of a jitted function. Its executable is owned by the process-wide
    compile cache (bounded by ``config.compile_cache_size``) and only referenced weakly here,
    so evicting it there frees its memory; the next call compiles it again."""

    traced: TracedFunction
    donated: tuple[int, ...] = ()  # flat argument indices whose buffers the program may reuse
    backend: str = "cpu"  # the backend it runs on (a program with a mesh: its devices' one)
    in_tree: Any = None  # the pytree of the traced (args, kwargs), static arguments left out
    arg_names: tuple[str, ...] = ()  # names of the traced positional arguments (for paths)
    arg_paths: tuple[str, ...] = ()  # each argument leaf's path: ``x``, ``params['w']``
    fun_name: str = ""  # the function's own name, as jax's stages show it
    _executable: weakref.ref[Executable] | None = field(default=None, repr=False)

    def executable(self) -> Executable | None:
        return self._executable() if self._executable is not None else None


def executable_of(entry: CacheEntry) -> Executable:
    """The entry's executable, compiled (or found in the compile cache) if it has none alive."""
    executable = entry.executable()
    if executable is None:
        try:
            executable = compile_cached(entry.backend, entry.traced.module, entry.traced.entry, entry.donated)
        except ValueError as error:  # a custom derivative rule that raised was needed: its error
            raise_failed_rule(error)
            raise
        entry._executable = weakref.ref(executable)
    return executable


def donate_inputs(entry: CacheEntry, leaves: list[Any], result: Any) -> None:
    """After a call: each output takes a donated argument of its shape and dtype (the first
    unused one, as jax pairs them), whose Array is deleted and whose buffer becomes the output's,
    so the output lives where the argument did, as jax's aliased outputs do; the donated
    arguments no output can take stay, with jax's warning (once per traced signature). The XLA
    backend donates itself."""
    if not entry.donated or entry.backend == "xla":
        return
    outputs = tree_util.tree_leaves(result)
    free = {j: (a.shape, np.dtype(a.dtype)) for j, a in enumerate(entry.traced.out_avals)}
    unusable = []
    for i in entry.donated:
        aval = entry.traced.in_avals[i]
        key = (aval.shape, np.dtype(aval.dtype))
        j = next((j for j, k in free.items() if k == key), None)
        if j is None:
            unusable.append(_type_text(aval.shape, aval.dtype))
            continue
        del free[j]
        if type(leaves[i]) is Array:
            _move_into(leaves[i], outputs[j])
            leaves[i].delete()
    if unusable and not getattr(entry, "donation_warned", False):
        entry.donation_warned = True  # type: ignore[attr-defined]
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\nSee an explanation at "
                      "https://docs.jax.dev/en/latest/faq.html#buffer-donation.", stacklevel=4)  # jax's text


def _move_into(donor: Array, output: Any) -> None:
    """Give ``output`` the donated ``donor``'s host buffer, holding ``output``'s values. The
    native backends write their results into fresh buffers; one copy puts them where the
    argument was, and the fresh one is freed at once. Only a buffer the donor alone holds (no
    NumPy view of it, no other reference: ``sys.getrefcount`` counts its slot, ``buffer`` and the
    call's argument) is written, so no other Array's values change."""
    buffer, values = donor._host, getattr(output, "_host", None)
    if (type(output) is not Array or buffer is None or values is None or donor._device is not None
            or not buffer.flags.owndata or not buffer.flags.c_contiguous or sys.getrefcount(buffer) > 3):
        return
    buffer.flags.writeable = True
    np.copyto(buffer, values, casting="no")
    buffer.flags.writeable = False
    output._host = buffer


def _inputs(executable: Executable, leaves: list[Any]) -> list[Any]:
    """The arguments' leaves as the executable takes them: NumPy buffers, or, for a backend
    that takes device buffers, mlax Arrays' buffers and jax Arrays (already in jax's, hence
    mlax's, canonical dtypes) as they are."""
    if getattr(executable, "takes_device_buffers", False):
        return [leaf._buffer if type(leaf) is Array else leaf if isinstance(leaf, jax.Array)
                else to_numpy(leaf) for leaf in leaves]
    return numpy_leaves(leaves)


def run_program(traced: TracedFunction, executable: Executable, leaves: list[Any]) -> Any:
    """Run ``executable`` on argument leaves; its outputs as the traced output pytree of Arrays."""
    return wrap_outputs(traced, executable(_inputs(executable, leaves)))


def _output(out: Any, aval: Aval) -> Array:
    if type(out) is np.ndarray:
        array = Array._wrap(out.astype(aval.dtype, copy=False).reshape(aval.shape), aval.weak_type)
    else:
        array = Array._wrap_device(out, aval.weak_type)  # a device buffer of the traced type
    if aval.sharding is not None or MESH_CONTEXT.mesh is not None:  # on its type's / the context's mesh
        return place_output(array, aval)
    return array


def wrap_outputs(traced: TracedFunction, outs: list[Any]) -> Any:
    arrays = [_output(o, a) for o, a in zip(outs, traced.out_avals, strict=True)]
    return tree_util.tree_unflatten(traced.out_tree, arrays)


def _type_text(shape: Sequence[int], dtype: Any) -> str:
    return f"{np.dtype(dtype).name}[{','.join(map(str, shape))}]"


def public_name(fun: Callable[..., Any]) -> str:
    """jax's ``fun_name``: the function's ``__name__`` (``<lambda>`` too), through partials."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    name = getattr(fun, "__name__", None)
    return name if isinstance(name, str) else type(fun).__name__


class _Stage:
    """What every stage knows of its signature (jax's ``Stage``): the arguments' pytree and
    avals, which of them are donated, and the outputs' pytree."""

    def __init__(self, entry: CacheEntry) -> None:
        self._entry = entry
        self._traced = entry.traced

    @property
    def in_tree(self) -> Any:
        """The pytree of ``(args, kwargs)`` the program was traced for (static arguments left out)."""
        return self._entry.in_tree

    @property
    def out_tree(self) -> Any:
        return self._traced.out_tree

    @property
    def args_info(self) -> Any:
        """The ``(args, kwargs)`` pytree of `jax.stages.ArgInfo`: each leaf's aval and donation."""
        donated = set(self._entry.donated)
        return tree_util.tree_unflatten(self.in_tree, [
            ArgInfo(_shaped(aval), i in donated) for i, aval in enumerate(self._traced.in_avals)])

    @property
    def in_avals(self) -> Any:
        """The ``(args, kwargs)`` pytree of the arguments' ``ShapedArray``s."""
        return tree_util.tree_unflatten(self.in_tree, [_shaped(a) for a in self._traced.in_avals])

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The flat indices of the donated argument leaves."""
        return tuple(self._entry.donated)

    @property
    def fun_name(self) -> str:
        return self._entry.fun_name

    def _out_info(self, weak_types: bool) -> Any:
        shardings = _result_shardings(self._traced)
        structs = [ShapeDtypeStruct(a.shape, a.dtype, sharding=s, weak_type=a.weak_type and weak_types)
                   for a, s in zip(self._traced.out_avals, shardings, strict=True)]
        return tree_util.tree_unflatten(self.out_tree, structs)


def _shaped(aval: Aval) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type)


def _result_shardings(traced: TracedFunction) -> list[Any]:
    """Each result's NamedSharding where out_shardings gave one (a program for a mesh), else None."""
    n = len(traced.out_avals)
    with get_context():
        module = traced.module.operation
        mesh = ir_sharding.module_mesh(module)
        if mesh is None:
            return [None] * n
        function = ir.SymbolTable(module)[traced.entry].operation
        specs = [ir_sharding.result_spec(function, i) for i in range(n)]
        jmesh = jax_mesh(mesh)
        return [None if spec is None else named_sharding(jmesh, spec) for spec in specs]


class Traced(_Stage):
    """``jit(f).trace(*args)``: the traced program, ready to lower (jax's ``Traced``)."""

    def __init__(self, entry: CacheEntry, fun: Callable[..., Any]) -> None:
        super().__init__(entry)
        self._fun = fun

    @functools.cached_property
    def jaxpr(self) -> Any:
        """The program as a ``ClosedJaxpr`` (mlax's IR read as jax's data structures, as
        ``mlax.make_jaxpr`` shows it)."""
        from mlax.jaxpr import traced_jaxpr

        return traced_jaxpr(self._fun, self._traced, self._entry.arg_paths, self._out_info(True))

    @property
    def out_info(self) -> Any:
        """The outputs' pytree of ``ShapeDtypeStruct`` (weak types included, as jax's Traced)."""
        return self._out_info(True)

    @property
    def out_avals(self) -> Any:
        return tree_util.tree_unflatten(self.out_tree, [_shaped(a) for a in self._traced.out_avals])

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> Lowered:
        """The lowered program. ``lowering_platforms`` other than None (jax.export's multi-platform
        lowering) are not supported: a program runs on its jit's backend."""
        if lowering_platforms is not None:
            raise user_error(NotImplementedError, "Traced.lower(lowering_platforms=...) is not supported by "
                             "mlax: the program lowers for its jit's backend (jax.export.export takes "
                             "platforms=)", "lowering_platforms of Traced.lower")
        return Lowered(self._entry)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the traced program on arguments of its signature."""
        return self.lower().compile()(*args, **kwargs)


@dataclass(frozen=True)
class XlaProgram:
    """An entry's program on the xla backend's road: generic StableHLO text of ``main`` and, for
    a program of a mesh, where its arguments and results live."""

    text: str
    placement: pjrt.Placement | None
    platform: str
    in_avals: tuple[tuple[tuple[int, ...], np.dtype], ...]
    out_avals: tuple[tuple[tuple[int, ...], np.dtype], ...]


def xla_program(entry: CacheEntry, module: ir.Module) -> XlaProgram:
    """``module`` (a copy of the entry's, in this thread's context) lowered to StableHLO. A program
    with host callbacks has none that outlives this process: NotImplementedError."""
    from mlax.backends.xla.executable import lower_for_xla, module_text

    if callback_declarations(module.operation):
        raise user_error(NotImplementedError, f"{entry.fun_name} calls back into Python (pure_callback, "
                         "debug.print): its StableHLO names this process's callbacks, so mlax shows no "
                         "StableHLO of it outside the xla backend", "the program")
    lowered, program = lower_for_xla(module, entry.traced.entry, entry.donated)
    placement = program.placement() if program is not None else None
    if placement is not None:
        platform = next(iter(next(iter(placement.inputs + placement.outputs)).device_set)).platform
    else:
        platform = pjrt.platforms()[0]
    text = module_text(lowered, debug_info=True)
    if '"lapack_' in text:
        pjrt.initialize_lapack()
    traced = entry.traced
    return XlaProgram(text, placement, platform, tuple((a.shape, a.dtype) for a in traced.in_avals),
                      tuple((a.shape, a.dtype) for a in traced.out_avals))


def result_names(out_tree: Any) -> list[str]:
    """``result['a'][0]``...: each output leaf's path, as jax names results (``jax.result_info``)."""
    dummy = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return ["result" + tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def jax_style_text(text: str, fun_name: str, results: Sequence[str], nr_devices: int,
                   debug_info: bool) -> str:
    """Generic StableHLO ``text`` printed as jax prints a lowering: by jaxlib's MLIR (pretty
    form), the module named as jax names it (``jit_f``) with jax's partition counts, ``main`` public and
    its results named (``jax.result_info``)."""
    from jax.extend.mlir import ir as jir

    with pjrt.jax_ir_context():
        module = jir.Module.parse(text)
        attributes = module.operation.attributes
        i32 = jir.IntegerType.get_signless(32)
        attributes["sym_name"] = jir.StringAttr.get(re.sub(r"[^\w.-]", "_", f"jit({fun_name})").rstrip("_"))
        for name, value in (("mhlo.num_partitions", nr_devices), ("mhlo.num_replicas", 1)):
            if name not in attributes:
                attributes[name] = jir.IntegerAttr.get(i32, value)
        main = next(op for op in module.body.operations if op.operation.name == "func.func"
                    and jir.StringAttr(op.attributes["sym_name"]).value == "main")
        main.attributes["sym_visibility"] = jir.StringAttr.get("public")
        old = list(jir.ArrayAttr(main.attributes["res_attrs"])) if "res_attrs" in main.attributes \
            else [jir.DictAttr.get({}) for _ in results]
        res_attrs = []
        for attrs, result in zip(old, results, strict=True):
            entries = {named.name: named.attr for named in jir.DictAttr(attrs)}
            entries["jax.result_info"] = jir.StringAttr.get(result)
            res_attrs.append(jir.DictAttr.get(entries))
        main.attributes["res_attrs"] = jir.ArrayAttr.get(res_attrs)
        text = module.operation.get_asm(enable_debug_info=debug_info)
    # jax names main's arguments by their names alone (``loc("x")``): no source line under them
    return re.sub(r"^\s*func\.func public @main\(.*$",
                  lambda m: re.sub(r'loc\(("(?:[^"\\]|\\.)*")\(#loc\d*\)\)', r"loc(\1)", m.group(0)),
                  text, count=1, flags=re.M)


def _xla_lowered(program: XlaProgram) -> Any:
    """The program as jax lowers a call of it: a `jax.stages.Lowered` of XLA's view."""
    signature = pjrt.ExportSignature.flat(program.in_avals, program.out_avals)
    exported = pjrt.exported_module(program.text, signature, (program.platform,), program.placement)
    structs = [ShapeDtypeStruct(shape, dtype) for shape, dtype in program.in_avals]
    if program.placement is None:
        return jax.jit(exported.call).lower(*structs)
    return jax.jit(exported.call, in_shardings=program.placement.inputs,
                   out_shardings=program.placement.outputs).lower(*structs)


class Lowered(_Stage):
    """A traced program for one signature (jax's ``Lowered``). ``as_text()`` is its StableHLO as
    jax prints it; ``.as_text(stage)`` shows mlax's IR at any stage of its backend's road: "mlax"
    as traced, then the CPU pipeline's "linalg", "buffers", "loops", "llvm", or the XLA backend's
    "stablehlo" (XLA's input, generic form) and "hlo" (XLA's optimized HLO)."""

    @property
    def STAGES(self) -> tuple[str, ...]:  # noqa: N802 (the name it had as a class constant)
        return ("mlax", *get_backend(self._entry.backend).stages)

    @property
    def out_info(self) -> Any:
        """The outputs' pytree of ``ShapeDtypeStruct`` (with their shardings where given)."""
        return self._out_info(False)

    def mlir_module(self) -> ir.Module:
        """A copy of the traced module in this thread's context, for running passes on (the
        cached one stays as traced)."""
        return ir.Module.parse(self._traced.module.operation.get_asm(enable_debug_info=True), get_context())

    @functools.cached_property
    def _xla_program(self) -> XlaProgram:
        return xla_program(self._entry, self.mlir_module())

    def _jax_text(self, debug_info: bool) -> str:
        program = self._xla_program
        devices = program.placement.devices if program.placement is not None else 1
        return jax_style_text(program.text, self._entry.fun_name, result_names(self.out_tree), devices,
                              debug_info)

    def as_text(self, dialect: str | None = None, *, debug_info: bool | None = None) -> str:
        """The program as text: by default (``dialect`` None, or "stablehlo" where the backend has
        no such stage) its StableHLO as jax prints it, without locations unless ``debug_info``;
        else mlax's IR at stage ``dialect`` of `STAGES`, with the source location of every op
        unless ``debug_info=False``."""
        if dialect is None or (dialect == "stablehlo" and dialect not in self.STAGES):
            return self._jax_text(bool(debug_info))
        if dialect not in self.STAGES:
            raise user_error(ValueError, f"unknown stage {dialect!r} for the {self._entry.backend} backend; "
                             f"available stages: {list(self.STAGES)} (and None: jax's StableHLO text)",
                             "stage of Lowered.as_text")
        with_locations = True if debug_info is None else debug_info
        if dialect == "mlax":
            return self._traced.module.operation.get_asm(enable_debug_info=with_locations)
        return get_backend(self._entry.backend).stage_text(self.mlir_module(), self._traced.entry, dialect,
                                                           with_locations, self._entry.donated)

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The program as an MLIR module: StableHLO in jaxlib's MLIR (``dialect`` None or
        "stablehlo", as jax's), XLA's HLO ("hlo"), or the traced mlax module ("mlax"); None for
        any other dialect."""
        if dialect == "mlax":
            return self.mlir_module()
        if dialect == "hlo":  # XLA's HloModule of the program, as jax's (``as_hlo_text()``)
            return _xla_lowered(self._xla_program).compiler_ir(dialect="hlo")
        if dialect not in (None, "stablehlo"):
            return None
        from jax.extend.mlir import ir as jir

        with pjrt.jax_ir_context():
            return jir.Module.parse(self._jax_text(debug_info=True))

    def cost_analysis(self) -> dict[str, float] | None:
        """XLA's estimate of the program's cost before optimization (``flops``, ``bytes
        accessed``...), as jax's; None where XLA gives none (a platform without it, a program
        with Python callbacks)."""
        try:
            return _xla_lowered(self._xla_program).cost_analysis()
        except NotImplementedError:
            return None

    def compile(self, compiler_options: dict[str, Any] | None = None, *,
                device_assignment: Any = None) -> Compiled:
        """The compiled program, as jax's ``Lowered.compile``. ``compiler_options`` are XLA's
        debug options (autotuning levels, pass switches: how XLA compiles, not what the program
        means): XLA checks them, as in jax (an unknown one raises jax's ``JaxRuntimeError``), and
        mlax's own compilers, which have none, leave them unread. ``device_assignment`` may be
        None only."""
        if compiler_options is not None and not isinstance(compiler_options, dict):
            raise user_error(TypeError, "Lowered.compile: compiler_options must be a dict of XLA options, "
                             f"got {type(compiler_options).__name__}", "compiler_options of Lowered.compile")
        if compiler_options:
            _check_xla_options(tuple(sorted(compiler_options.items(), key=lambda item: str(item[0]))))
        if device_assignment is not None:
            raise user_error(NotImplementedError, "Lowered.compile(device_assignment=...) is not supported "
                             "by mlax: the program runs on the devices it was lowered for",
                             "device_assignment of Lowered.compile")
        return Compiled(self._entry, executable_of(self._entry), self)


@functools.lru_cache(maxsize=64)
def _check_xla_options(options: tuple[tuple[str, Any], ...]) -> None:
    """XLA's check of compiler options: a trivial program compiled with them by jax's XLA."""
    jax.jit(lambda: 0).lower().compile(compiler_options=dict(options))


class Compiled(_Stage):
    """A compiled program for one signature, callable on arguments of that signature (jax's
    ``Compiled``: wrong pytrees, shapes or dtypes raise its TypeErrors, naming the arguments)."""

    def __init__(self, entry: CacheEntry, executable: Executable, lowered: Lowered) -> None:
        super().__init__(entry)
        self._executable = executable
        self._lowered = lowered

    @property
    def out_info(self) -> Any:
        return self._out_info(False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return run_program(self._traced, self._executable, self._checked_leaves(args, kwargs))

    def _checked_leaves(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        entry = self._entry
        leaves, tree, _ = flatten_arguments((args, kwargs), entry.fun_name, entry.arg_names)
        if tree != entry.in_tree:
            mismatches = _tree_mismatches(entry.in_tree, tree)
            raise user_error(TypeError, "Function compiled with input pytree does not match the input pytree "
                             f"it was called with. There are {len(mismatches)} mismatches, including:\n"
                             + "\n".join(f"    * {m}" for m in mismatches),
                             f"the arguments of compiled {entry.fun_name}")
        if any(isinstance(leaf, Tracer) for leaf in leaves):
            raise user_error(TypeError, "Cannot apply JAX transformations to a function lowered and compiled "
                             "for a particular signature. Detected argument of Tracer type "
                             f"{Tracer}.", f"the arguments of compiled {entry.fun_name}")
        wrong = []
        for path, leaf, aval in zip(entry.arg_paths, leaves, self._traced.in_avals, strict=True):
            given = abstractify(leaf)
            if given.shape != aval.shape or given.dtype != aval.dtype:
                wrong.append(f"Argument '{path}' compiled with {_type_text(aval.shape, aval.dtype)} and "
                             f"called with {_type_text(given.shape, given.dtype)}")
        if wrong:
            raise user_error(TypeError, "Argument types differ from the types for which this computation was "
                             "compiled. Perhaps you are calling the compiled executable with a different "
                             "enable_x64 mode than when it was AOT compiled? The mismatches are:\n"
                             + "\n".join(wrong), f"the arguments of compiled {entry.fun_name}")
        return leaves

    def as_text(self) -> str | None:
        """The program as its backend compiled it: the last stage of the backend's road (XLA's
        optimized HLO, the CPU pipeline's LLVM IR...); the traced mlax IR for the interpreter."""
        return self._lowered.as_text(self._lowered.STAGES[-1], debug_info=False)

    @functools.cached_property
    def _xla_compiled(self) -> Any:
        return _xla_lowered(self._lowered._xla_program).compile()

    def cost_analysis(self) -> dict[str, float] | None:
        """XLA's estimate of the compiled program's cost: a dict with ``flops``, ``bytes
        accessed``... as jax's (see the module's docstring for which program); None where XLA
        gives none."""
        try:
            return self._xla_compiled.cost_analysis()
        except NotImplementedError:
            return None

    def memory_analysis(self) -> Any:
        """XLA's memory statistics of the compiled program (``argument_size_in_bytes``,
        ``output_size_in_bytes``, ``temp_size_in_bytes``, ``generated_code_size_in_bytes``...),
        as jax's; None where XLA gives none."""
        try:
            return self._xla_compiled.memory_analysis()
        except NotImplementedError:
            return None

    def runtime_executable(self) -> Executable:
        """The backend's executable (a callable on flat buffers)."""
        return self._executable


def _tree_mismatches(expected: Any, given: Any, path: str = "") -> list[str]:
    """Where pytree ``given`` differs from ``expected``, in jax's words ("at args[0], seen ...")."""
    if expected == given:
        return []
    where = path or "the top level"
    if expected.num_nodes == 1 or given.num_nodes == 1 or expected.node_data() != given.node_data():
        return [f"at {where}, seen {_node_text(expected)} but now given {_node_text(given)}"]
    old, new = expected.children(), given.children()
    if len(old) != len(new):
        return [f"at {where}, seen {_node_text(expected)} but now given {_node_text(given)}, so the "
                "numbers of children do not match"]
    keys = _child_keys(expected, path)
    found: list[str] = []
    for key, a, b in zip(keys, old, new, strict=True):
        found += _tree_mismatches(a, b, key)
    return found


def _child_keys(tree: Any, path: str) -> list[str]:
    """The paths of a node's children: ``args``/``kwargs`` at the top, then jax's key strings."""
    dummy = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    if not path:
        return ["args", "kwargs"]
    children = tree_util.tree_flatten_with_path(dummy, is_leaf=lambda x: x is not dummy)[0]
    return [path + tree_util.keystr(key) for key, _ in children]


def _node_text(tree: Any) -> str:
    if tree.num_nodes == 1 and tree.num_leaves == 1:
        return "a leaf"
    data = tree.node_data()
    kind = data[0] if data else None
    count = len(tree.children())
    name = kind.__name__ if isinstance(kind, type) else str(kind)
    return f"{name} with {count} child{'ren' if count != 1 else ''}"
