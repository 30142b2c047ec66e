"""mlax: JAX's composable function transformations built as an MLIR compiler.

``import mlax as jax`` style: ``mlax.jit``, ``mlax.numpy``, ``mlax.lax``, ``mlax.nn``,
``mlax.tree_util``, ``mlax.config``. Traced programs are IR in the ``mlax`` MLIR dialect.

Attributes load on first use (PEP 562), so the compiler tools, which need only
``mlax.dialect`` and ``mlax.passes``, start without importing JAX.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("ad_checkpoint", "custom_derivatives", "debug", "flatten_util", "lax", "nn", "numpy", "random",
               "scipy", "test_util", "tree", "tree_util")
_SUBMODULES += ("experimental", "sharding")  # the sharding issue: mlax.sharding, mlax.experimental.shard_map
_SUBMODULES += ("distributed",)  # mlax.distributed: several processes (jax.distributed)
_SUBMODULES += ("ops", "profiler")  # jax.ops segment reductions; jax.profiler annotations
_SUBMODULES += ("ref",)  # jax.ref: mutable array references (mlax.refs)
_SUBMODULES += ("export",)  # jax.export: mlax programs as jax's Exported, and jax's run on mlax
_ATTRIBUTES = {
    "make_mesh": "mlax.sharding",
    "set_mesh": "mlax.sharding",
    "reshard": "mlax.explicit_sharding",
    "NamedSharding": "mlax.sharding",
    "P": "mlax.sharding",
    "shard_map": "mlax.shard_mapping",
    "Array": "mlax.array",
    "config": "mlax.configuration",
    "jit": "mlax.api",
    "custom_jvp": "mlax.custom_derivatives",
    "custom_vjp": "mlax.custom_derivatives",
    "checkpoint": "mlax.ad_checkpoint",
    "remat": "mlax.ad_checkpoint",
    "checkpoint_policies": "mlax.ad_checkpoint",
    "clear_caches": "mlax.api",
    "debug_infs": "mlax.configuration",
    "debug_nans": "mlax.configuration",
    "default_matmul_precision": "mlax.configuration",
    "disable_jit": "mlax.configuration",
    "enable_x64": "mlax.configuration",
    "enable_custom_prng": "mlax.configuration",
    "default_prng_impl": "mlax.configuration",
    "debug_key_reuse": "mlax.configuration",
    "ensure_compile_time_eval": "mlax.configuration",
    "numpy_dtype_promotion": "mlax.configuration",
    "numpy_rank_promotion": "mlax.configuration",
    "float0": "mlax.dtypes",
    "custom_gradient": "mlax.custom_derivatives",
    "closure_convert": "mlax.closure",
    "linear_transpose": "mlax.transposition",
    "jacobian": "mlax.jacobians",
    "grad": "mlax.autodiff",
    "hessian": "mlax.jacobians",
    "jacfwd": "mlax.jacobians",
    "jacrev": "mlax.jacobians",
    "jvp": "mlax.autodiff",
    "linearize": "mlax.vjp_object",
    "value_and_grad": "mlax.autodiff",
    "vjp": "mlax.vjp_object",
    "fwd_and_bwd": "mlax.vjp_object",
    "vmap": "mlax.batching",
    "pure_callback": "mlax.callbacks",
    "effects_barrier": "mlax.callbacks",
    "make_mlir": "mlax.api",
    "make_jaxpr": "mlax.jaxpr",
    "named_call": "mlax.name_stack",
    "named_scope": "mlax.name_stack",
    "from_stablehlo": "mlax.stablehlo_import",
    "install_as_jax": "mlax.install",
    "pmap": "mlax.parallel",
    "new_ref": "mlax.refs",
    "Ref": "mlax.refs",
    "freeze": "mlax.refs",
    "empty_ref": "mlax.refs",
    "free_ref": "mlax.refs",
    "ConcretizationTypeError": "mlax.errors",
    "UnexpectedTracerError": "mlax.errors",
    "block_until_ready": "mlax.device_info",
    "default_backend": "mlax.device_info",
    "device_count": "mlax.device_info",
    "device_get": "mlax.device_info",
    "devices": "mlax.device_info",
    "local_devices": "mlax.device_info",
    "local_device_count": "mlax.device_info",
    "process_index": "mlax.device_info",
    "process_count": "mlax.device_info",
    "Device": "mlax.device_info",
    "device_put": "mlax.transfer",
    "make_array_from_callback": "mlax.transfer",
    "make_array_from_single_device_arrays": "mlax.transfer",
    "make_array_from_process_local_data": "mlax.transfer",
    "stop_gradient": "mlax.lax.transforms",
    "eval_shape": "mlax.shape_eval",
    "ShapeDtypeStruct": "mlax.shape_eval",
    "typeof": "mlax.shape_eval",
}

__all__ = sorted([*_SUBMODULES, *_ATTRIBUTES])


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"mlax.{name}")
    if name in _ATTRIBUTES:
        value = getattr(importlib.import_module(_ATTRIBUTES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlax' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


def _profile_if_asked() -> None:
    """``MLAX_PROFILE=dir``: the native CPU kernels of the whole process, saved there at exit."""
    import os

    if os.environ.get("MLAX_PROFILE"):
        importlib.import_module("mlax.profiler").profile_process(os.environ["MLAX_PROFILE"])


_profile_if_asked()
