"""What `mlax.install_as_jax` makes each ``jax`` module name mean: the one table of it.

Every public jax module is either *redirected* (its names resolve to mlax's counterpart,
plus a short list of tracing-free names of the real module that are passed through, and
nothing else: a name mlax lacks raises AttributeError) or *passed through* whole (the real
jax module, for modules that carry no tracing: typing, the pytree registry, extend, ...).
docs/compatibility.md is generated from this table (tools/gen_compat_doc.py).
"""

from __future__ import annotations

import importlib
import types
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Redirect:
    """A jax module whose names mlax provides: from ``mlax_module`` (None where mlax has no
    counterpart), from ``extras`` (name -> "mlax.module:attribute", for names mlax keeps in
    another module), and ``passthrough`` names taken from the real module as they are."""

    mlax_module: str | None
    passthrough: frozenset[str] = field(default_factory=frozenset)
    extras: tuple[tuple[str, str], ...] = ()
    real_submodules: bool = False  # submodules without an entry of their own: the real ones
    passthrough_rest: bool = False  # every other name of the real module passes through
    # jax's primitive objects (``add_p``) mlax provides, from this module (pyfront/lax_primitives.py)
    primitives: str | None = None


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Modules that carry no tracing: the real jax module, whole.
PASSTHROUGH_MODULES = (
    "jax.api_util", "jax.errors",
    "jax.lib", "jax.monitoring", "jax.stages", "jax.tree_util",
    "jax.typing", "jax.version",
)

# Tracing-free names of jax's top-level module: device queries of this process (one process
# until mlax.distributed), sharding specs (inert objects), and config contexts mlax does not
# read or reads through jax's config.
_TOP_PASSTHROUGH = _names("""
    Device NamedSharding P Shard local_device_count process_count process_index process_indices
    host_count host_id host_ids print_environment_info log_compiles explain_cache_misses
    check_tracer_leaks checking_leaks enable_checks default_device
    transfer_guard transfer_guard_device_to_device
    transfer_guard_device_to_host transfer_guard_host_to_device
""")

# Dtype and scalar types mlax does not compute with (sub-byte and 8-bit floats):
# usable as dtype specifiers, which mlax then rejects with its own error.
_NUMPY_PASSTHROUGH = _names("""
    ComplexWarning character flexible
    float4_e2m1fn float6_e2m3fn float6_e3m2fn float8_e3m4 float8_e4m3 float8_e4m3b11fnuz
    float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu int1 int2 int4 object_
    uint1 uint2 uint4 iterable printoptions get_printoptions set_printoptions
""")

# Enums, named tuples and shape arithmetic of jax.lax: values, not operations on arrays.
_LAX_PASSTHROUGH = _names("""
    AccuracyMode ConvDimensionNumbers DotAlgorithm DotAlgorithmPreset FftType Precision
    RaggedDotDimensionNumbers RandomAlgorithm Tolerance ConvGeneralDilatedDimensionNumbers
    DotDimensionNumbers PrecisionLike padtype_to_pads conv_general_shape_tuple conv_shape_tuple
    conv_transpose_shape_tuple reduce_window_shape_tuple broadcast_shapes conv_dimension_numbers
""")

# The distributions of jax.scipy.stats, each a module of its own.
_STATS_DISTRIBUTIONS = _names("""
    bernoulli beta betabinom binom cauchy chi2 dirichlet expon gamma gennorm geom gumbel_l gumbel_r
    laplace logistic multinomial multivariate_normal nbinom norm pareto poisson t truncnorm uniform vonmises
    wrapcauchy
""")

REDIRECTS: dict[str, Redirect] = {
    "jax": Redirect("mlax", _TOP_PASSTHROUGH),
    "jax.numpy": Redirect("mlax.numpy", _NUMPY_PASSTHROUGH),
    "jax.numpy.linalg": Redirect("mlax.numpy.linalg"),
    "jax.numpy.fft": Redirect("mlax.numpy.fft"),
    "jax.lax": Redirect("mlax.lax", _LAX_PASSTHROUGH, primitives="mlax.lax_primitives"),
    "jax.random": Redirect("mlax.random"),
    "jax.nn": Redirect("mlax.nn"),
    "jax.nn.initializers": Redirect("mlax.nn.initializers"),
    "jax.scipy": Redirect("mlax.scipy"),
    "jax.scipy.special": Redirect("mlax.scipy.special"),
    "jax.scipy.linalg": Redirect("mlax.scipy.linalg"),
    "jax.scipy.stats": Redirect("mlax.scipy.stats"),
    **{f"jax.scipy.stats.{name}": Redirect(f"mlax.scipy.stats.{name}")
       for name in sorted(_STATS_DISTRIBUTIONS)},
    "jax.scipy.signal": Redirect("mlax.scipy.signal"),
    "jax.scipy.optimize": Redirect(None),
    "jax.scipy.ndimage": Redirect("mlax.scipy.ndimage"),
    "jax.tree": Redirect("mlax.tree"),
    "jax.dtypes": Redirect("mlax.dtypes"),
    "jax.profiler": Redirect("mlax.profiler"),
    # pytype_aval_mappings: jax's registry of array-like types, which libraries extend at import
    # (tfp's jax substrate registers its ndarray subclass); mlax reads ndarray subclasses itself
    "jax.core": Redirect(None, _names("AbstractValue ShapedArray Value Atom ParamDict max_dim min_dim "
                                      "pytype_aval_mappings"),
                         (("Tracer", "mlax.core:Tracer"),
                          ("Trace", "mlax.core:Trace"),  # a base class to subclass (haiku's DotTrace)
                          ("ensure_compile_time_eval", "mlax.configuration:ensure_compile_time_eval"),
                          ("eval_jaxpr", "mlax.jaxpr_eval:eval_jaxpr"))),  # of make_jaxpr's jaxprs
    "jax.debug": Redirect("mlax.debug"),
    "jax.custom_derivatives": Redirect("mlax.custom_derivatives"),
    "jax.ad_checkpoint": Redirect("mlax.ad_checkpoint"),
    "jax.test_util": Redirect("mlax.test_util"),
    "jax.flatten_util": Redirect("mlax.flatten_util"),
    "jax.image": Redirect("mlax.image"),
    "jax.ops": Redirect("mlax.ops"),
    "jax.custom_batching": Redirect(None),
    "jax.ffi": Redirect(None),
    "jax.export": Redirect("mlax.export"),
    "jax.dlpack": Redirect(None),
    "jax.ref": Redirect("mlax.ref"),
    "jax.distributed": Redirect("mlax.distributed"),
    # mlax.sharding re-exports jax's sharding classes and owns the context mesh (set_mesh...)
    "jax.sharding": Redirect("mlax.sharding",
                             _names("AbstractDevice ManualAxisType make_single_device_sharding")),
    # io_callback is mlax's; jax's other names, and its submodules (mesh_utils, pallas,
    # checkify, ...), are the real ones, as when the whole module was passed through
    "jax.experimental": Redirect("mlax.experimental", _names("EArray cur_qdd primal_tangent_dtype"),
                                 real_submodules=True),
    "jax.experimental.shard_map": Redirect("mlax.experimental.shard_map"),
    # jax's own but for HiPrimitive, bound eagerly on mlax values (pyfront/extend_primitive.py)
    "jax.experimental.hijax": Redirect(None, extras=(("HiPrimitive", "mlax.extend_primitive:HiPrimitive"),),
                                       passthrough_rest=True),
    # jax's extension API, jax's own but for the trace state libraries compare (flax.nnx's
    # TraceContextError, haiku's JaxUsageError), which must name mlax's traces, the test
    # of array data (distrax's pytrees), which must know mlax's arrays, and Primitive, whose
    # bind on mlax values is mlax's (pyfront/extend_primitive.py)
    "jax.extend": Redirect(None, real_submodules=True, passthrough_rest=True),
    "jax.extend.core": Redirect(None, extras=(("Primitive", "mlax.extend_primitive:Primitive"),
                                              ("get_opaque_trace_state",
                                               "mlax.trace_state:get_opaque_trace_state"),
                                              ("find_top_trace", "mlax.trace_state:find_top_trace"),
                                              ("valid_jaxtype", "mlax.trace_state:valid_jaxtype"),
                                              ("jaxpr_as_fun", "mlax.jaxpr_eval:jaxpr_as_fun")),
                                passthrough_rest=True),
    # jax's primitive objects: mlax's for the lax primitives bound on mlax values, jax's own for the rest
    "jax.extend.core.primitives": Redirect(None, passthrough_rest=True, primitives="mlax.lax_primitives"),
    # jax's tracer internals, jax's own (libraries register their primitives' rules there) but
    # for the class of forward-mode tracers, which must know mlax's (equinox's filter_jvp)
    "jax.interpreters": Redirect(None, real_submodules=True, passthrough_rest=True),
    "jax.interpreters.ad": Redirect(None, extras=(("JVPTracer", "mlax.trace_state:JVPTracer"),),
                                    passthrough_rest=True),
    # which outputs are known from the known inputs (flax's lazy_init and nn.scan ask)
    "jax.interpreters.partial_eval": Redirect(None, extras=(("trace_to_jaxpr_nounits",
                                                             "mlax.partial_eval:trace_to_jaxpr_nounits"),),
                                              passthrough_rest=True),
    "jax.experimental.checkify": Redirect("mlax.experimental.checkify",
                                          _names("init_error NaNError DivisionByZeroError OOBError")),
}


NOT_BUILT = "not built yet"

# Why mlax lacks each name it lacks: reason -> the names ("module:name"; "module:*" for all of a
# module's missing names). Generated into docs/compatibility.md; a test keeps it complete and exact.
_MISSING_REASONS = {
    "XLA tokens: mlax orders effects by program order and has no token type":
        "jax.lax:after_all jax.lax:create_token",
    "point-to-point and ragged collectives are not among mlax's collective ops yet":
        "jax.lax:psend jax.lax:precv jax.lax:ragged_all_to_all",
    "jax-internal program markers (dead-code sink, pipeline stage) with no meaning outside jax's tracer":
        "jax.lax:dce_sink jax.lax:stage",
    "jax's tracer internals (its autodiff module, traces, jaxpr evaluation, effect types): mlax traces "
    "to MLIR, not to jaxprs": "jax:ad jax.core:eval_context "
                              "jax.debug:DebugEffect jax.debug:OrderedDebugEffect",
    "block-scaled products of 8- and 4-bit float types, which mlax does not compute with":
        """jax.lax:scaled_dot jax.nn:scaled_dot_general jax.nn:scaled_matmul
        jax.nn:get_scaled_dot_general_config""",
    "a switch of jax's tracer or runtime that mlax does not read (passed through, it would do nothing)":
        """jax:allow_f16_reductions jax:array_garbage_collection_guard
        jax:jax2tf_associative_scan_reductions
        jax:legacy_prng_key jax:softmax_custom_jvp
        jax:threefry_partitionable jax:remove_size_one_mesh_axis_from_type jax:no_execution jax:no_tracing
        jax:thread_guard jax:make_user_context""",
    "Pallas's dynamic-slice indexer for refs: mlax's refs take NumPy-style indexers (pyfront/refs.py)":
        "jax:ds",
    "explicit sharding's pcast of types and smap: mlax types Explicit axes (mlax.sharding_types), "
    "not a shard_map's varying ones":
        "jax:auto_pcast jax:smap",
    "memory kinds and asynchronous host copies: mlax's arrays have one memory space":
        "jax:memory jax:copy_to_host_async",
    "jax's registry of device buffers: mlax's native arrays are NumPy memory": "jax:live_arrays",
    f"{NOT_BUILT}: user-defined batching rules": "jax.custom_batching:*",
    f"{NOT_BUILT}: linear functions with a user transpose": "jax.custom_derivatives:linear_call",
    f"{NOT_BUILT}: jax.debug.log": "jax.debug:*",
    f"{NOT_BUILT}: DLPack exchange (mlax's arrays convert through NumPy)": "jax.dlpack:*",
    "shape polymorphism (symbolic dimensions): mlax's shapes are static":
        "jax.export:SymbolicScope jax.export:is_symbolic_dim jax.export:symbolic_shape "
        "jax.export:symbolic_args_specs",
    f"{NOT_BUILT}: foreign function calls (XLA custom calls)": "jax.ffi:*",
    f"{NOT_BUILT}: BFGS minimization": "jax.scipy.optimize:*",
}


def _reason_table() -> dict[str, str]:
    table = {}
    for reason, names in _MISSING_REASONS.items():
        for entry in names.split():
            assert entry not in table, entry
            table[entry] = reason
    return table


MISSING_REASONS = _reason_table()


def reason(module: str, name: str) -> str | None:
    """Why ``module.name`` is missing or not yet in mlax (None where it is neither, or no reason
    was written down, which tests/tools/test_gen_compat_doc.py rejects)."""
    which = status(module, name)
    if which == "not yet":
        return getattr(mlax_counterpart(module), name).mlax_not_yet
    if which == "missing":
        return MISSING_REASONS.get(f"{module}:{name}") or MISSING_REASONS.get(f"{module}:*")
    return None


def real_module(name: str) -> types.ModuleType:
    """The real jax module ``name``, also after install_as_jax put a shim in its place."""
    module = importlib.import_module(name)
    return module.__dict__.get("_mlax_real", module)


def mlax_counterpart(name: str) -> types.ModuleType | None:
    """mlax's module for jax module ``name``, or None where mlax has none (yet)."""
    target = REDIRECTS[name].mlax_module
    if target is None:
        return None
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as err:
        if err.name == target:
            return None
        raise


def public_names(module: types.ModuleType) -> list[str]:
    """The public names of a real jax module, submodules left out: they have entries of their
    own, and which of them ``dir`` lists depends on what the process has imported so far."""
    return sorted(n for n in dir(module)
                  if not n.startswith("_") and not isinstance(getattr(module, n, None), types.ModuleType))


def _provider(module: str, name: str) -> types.ModuleType | None:
    """The mlax module giving ``<module>.<name>``: its counterpart, or for a primitive object
    (``add_p``) the module of mlax's primitives where the spec names one."""
    primitives = REDIRECTS[module].primitives
    if primitives is not None and name.endswith("_p") and hasattr(importlib.import_module(primitives), name):
        return importlib.import_module(primitives)
    return mlax_counterpart(module)


def _provided_by_mlax(module: str, name: str, counterpart: types.ModuleType | None) -> bool:
    if counterpart is None or name.startswith("_") or not hasattr(counterpart, name):
        return False
    real = real_module(module)
    if name in public_names(real) or name in getattr(real, "_deprecations", {}):  # deprecated: not in dir
        return True
    return module == "jax" and name in getattr(counterpart, "__all__", ())  # mlax's own top-level names


def _is_primitive(module: str, name: str) -> bool:
    """jax's primitive objects that mlax does not provide (control flow, collectives: see
    pyfront/lax_primitives.py) pass through as identities: libraries key tables by them at
    import (equinox does); binding one on mlax values fails in jax with its error."""
    from jax.extend.core import Primitive

    return name.endswith("_p") and isinstance(getattr(real_module(module), name, None), Primitive)


MISSING = object()


def resolve(module: str, name: str, shims: dict[str, types.ModuleType]) -> Any:
    """What ``<module>.<name>`` is after install_as_jax: mlax's object, the real jax's (passed
    through), or ``MISSING``. A redirected submodule resolves to its shim in ``shims``."""
    child = f"{module}.{name}"
    if child in REDIRECTS:
        return shims[child]
    if child in PASSTHROUGH_MODULES:
        return real_module(child)
    spec = REDIRECTS[module]
    for extra, target in spec.extras:
        if extra == name:
            path, attribute = target.split(":")
            return getattr(importlib.import_module(path), attribute)
    counterpart = _provider(module, name)
    if _provided_by_mlax(module, name, counterpart):
        return getattr(counterpart, name)
    if name in spec.passthrough or _is_primitive(module, name) or _rest(spec, module, name):
        return getattr(real_module(module), name)
    if spec.real_submodules and name.isidentifier():
        try:
            return importlib.import_module(child)
        except ImportError:
            pass
    return MISSING


def status(module: str, name: str) -> str:
    """``"mlax"``, ``"not yet"`` (mlax has the name, calling it raises NotImplementedError: its
    function ``mlax_not_yet``), ``"jax"`` (passed through) or ``"missing"``: one cell of the
    compatibility table."""
    if module in PASSTHROUGH_MODULES:
        return "jax"
    spec = REDIRECTS[module]
    child = f"{module}.{name}"
    if child in PASSTHROUGH_MODULES:
        return "jax"
    if child in REDIRECTS:
        return "mlax" if REDIRECTS[child].mlax_module and mlax_counterpart(child) else "missing"
    counterpart = _provider(module, name)
    if _provided_by_mlax(module, name, counterpart):
        return "not yet" if getattr(getattr(counterpart, name), "mlax_not_yet", None) else "mlax"
    if any(extra == name for extra, _ in spec.extras):
        return "mlax"
    passed = name in spec.passthrough or _is_primitive(module, name) or _rest(spec, module, name)
    return "jax" if passed else "missing"


def _rest(spec: Redirect, module: str, name: str) -> bool:
    """Whether ``name`` passes through as one of the real module's other names."""
    return spec.passthrough_rest and not name.startswith("_") and hasattr(real_module(module), name)


def missing_message(module: str, name: str) -> str:
    target = REDIRECTS[module].mlax_module
    where = f"mlax's counterpart {target}" if target else "mlax (it has no counterpart of this module yet)"
    why = reason(module, name)
    return (f"module '{module}' has no attribute '{name}' under mlax.install_as_jax(): {where} does not "
            f"provide it{f' ({why})' if why else ''}, and the real {module}.{name} would not work on mlax's "
            "arrays (see docs/compatibility.md)")
