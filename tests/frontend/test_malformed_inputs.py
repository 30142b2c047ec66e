"""Malformed inputs to every public transformation and constructor: mlax raises JAX's exception
type (checked against jax itself on the same call), with a message that names the argument
and the user's file:line, and never an internal error (MLIRError, KeyError, AssertionError...).

Each row is ``Case(call, error, fragment)``: ``call(m)`` runs the same code on ``m = mlax`` and
``m = jax``; it is written on one line, so the line the message must name is the lambda's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest
from mlir.ir import MLIRError

import mlax

X3 = np.ones(3, np.float32)
X4 = np.ones(4, np.float32)
X23 = np.ones((2, 3), np.float32)
I3 = np.ones(3, np.int32)
U3 = np.zeros(3, np.uint32)


class Case(NamedTuple):
    call: Callable[[Any], Any]
    error: type[BaseException]
    fragment: str
    jax: bool | type[BaseException] = True  # check jax raises the same type (or this one) on call(jax)


def key(m: Any, seed: int = 0) -> Any:
    return m.random.PRNGKey(seed)


def sin(m: Any) -> Callable[[Any], Any]:
    return m.numpy.sin


def pair(x: Any) -> tuple[Any, Any]:
    return x, x


def undefined_custom_jvp(m: Any) -> Any:
    return m.custom_jvp(lambda x: x)


def undefined_custom_vjp(m: Any) -> Any:
    return m.custom_vjp(lambda x: x)


def custom_jvp_rule(m: Any, rule: Callable[..., Any]) -> Any:
    """The identity with the JVP rule ``rule``."""
    f = m.custom_jvp(lambda x: x)
    f.defjvp(rule)
    return f


def custom_vjp_rules(m: Any, bwd: Callable[..., Any]) -> Any:
    """The identity with the backward rule ``bwd``."""
    f = m.custom_vjp(lambda x: x)
    f.defvjp(lambda x: (x, None), bwd)
    return f


CONCRETIZATION = mlax.ConcretizationTypeError
INDEX_CONVERSION = jax.errors.TracerIntegerConversionError
ARRAY_CONVERSION = jax.errors.TracerArrayConversionError
UNEXPECTED_TRACER = mlax.UnexpectedTracerError
JAX_TYPES = {CONCRETIZATION: jax.errors.ConcretizationTypeError,
             UNEXPECTED_TRACER: jax.errors.UnexpectedTracerError}

CASES: dict[str, Case] = {
    # ---- jit
    "jit_not_callable": Case(lambda m: m.jit(5), TypeError, "Expected a callable value"),
    "jit_static_argnames_unknown": Case(
        lambda m: m.jit(pair, static_argnames="nope"),
        ValueError, "invalid argnames {'nope'} in static_argnames"),
    "jit_static_argnums_out_of_range": Case(
        lambda m: m.jit(pair, static_argnums=5),
        ValueError, "static_argnums=(5,), but only accepts 1 positional"),
    "jit_static_argnums_negative": Case(
        lambda m: m.jit(pair, static_argnums=-2),
        ValueError, "static_argnums=(-2,)"),
    "jit_donate_argnums_out_of_range": Case(
        lambda m: m.jit(pair, donate_argnums=1),
        ValueError, "donate_argnums=(1,), but only accepts 1 positional"),
    "jit_static_and_donated": Case(
        lambda m: m.jit(pair, static_argnums=0, donate_argnums=0),
        ValueError, "cannot intersect"),
    "jit_static_argnames_positional_only": Case(
        lambda m: m.jit(lambda x, /: x, static_argnames="x"),
        ValueError, "positional-only"),
    "jit_static_argnums_str": Case(lambda m: m.jit(pair, static_argnums="x"), TypeError, "static_argnums"),
    "jit_static_argnames_int": Case(lambda m: m.jit(pair, static_argnames=0), TypeError, "static_argnames"),
    "jit_donate_argnums_float": Case(lambda m: m.jit(pair, donate_argnums=0.5), TypeError, "donate_argnums"),
    "jit_unhashable_static": Case(
        lambda m: m.jit(pair, static_argnums=0)(X3),
        ValueError, "Non-hashable static argument"),
    "jit_string_argument": Case(lambda m: m.jit(pair)("a"), TypeError, "Argument x of pair"),
    "jit_object_in_pytree": Case(
        lambda m: m.jit(pair)({"w": object()}),
        TypeError, "Argument x['w'] of pair"),
    "jit_too_many_arguments": Case(lambda m: m.jit(pair)(X3, X3), TypeError, "positional argument"),
    "jit_unknown_keyword": Case(
        lambda m: m.jit(pair)(X3, y=X3),
        TypeError, "unexpected keyword argument 'y'"),
    "jit_string_output": Case(lambda m: m.jit(lambda x: "a")(X3), TypeError, "output"),
    "jit_bad_backend": Case(lambda m: m.jit(pair, backend="nope")(X3), RuntimeError, "nope"),
    # ---- grad and value_and_grad
    "grad_not_callable": Case(lambda m: m.grad(5), TypeError, "Expected a callable value"),
    "grad_empty_argnums": Case(lambda m: m.grad(lambda x: x, argnums=())(1.0), ValueError, "argnums"),
    "grad_argnums_out_of_range": Case(
        lambda m: m.grad(lambda x: x, argnums=1)(1.0),
        TypeError, "argnums=1 requires at least 2 positional arguments"),
    "grad_argnums_str": Case(lambda m: m.grad(lambda x: x, argnums="x")(1.0), TypeError, "argnums"),
    "grad_no_arguments": Case(
        lambda m: m.grad(lambda: 1.0)(),
        TypeError, "argnums=0 requires at least 1 positional argument"),
    "grad_int_input": Case(lambda m: m.grad(lambda x: x)(1), TypeError, "grad requires real"),
    "grad_vector_output": Case(
        lambda m: m.grad(lambda x: x)(X3),
        TypeError, "Gradient only defined for scalar-output functions"),
    "grad_int_output": Case(
        lambda m: m.grad(lambda x: m.numpy.int32(1))(1.0),
        TypeError, "real-valued output"),
    "grad_tuple_output": Case(lambda m: m.grad(lambda x: (x, x))(1.0), TypeError, "scalar-output"),
    "grad_has_aux_not_pair": Case(lambda m: m.grad(lambda x: x, has_aux=True)(1.0), TypeError, "aux output"),
    "grad_argnums_negative": Case(
        lambda m: m.grad(lambda x: x, argnums=-2)(1.0),
        ValueError, "got value -2 for len(args) == 1"),
    "grad_string_argument": Case(lambda m: m.grad(lambda x: x)("a"), TypeError, "Argument x of lambda"),
    "value_and_grad_not_callable": Case(
        lambda m: m.value_and_grad(None),
        TypeError, "Expected a callable value"),
    "value_and_grad_int_input": Case(
        lambda m: m.value_and_grad(lambda x: x)(I3),
        TypeError, "grad requires real"),
    "value_and_grad_vector_output": Case(
        lambda m: m.value_and_grad(lambda x: x)(X3),
        TypeError, "scalar-output"),
    # ---- vjp and the function it returns
    "vjp_not_callable": Case(lambda m: m.vjp(5, X3), TypeError, "Expected a callable value"),
    "vjp_string_primal": Case(lambda m: m.vjp(sin(m), "a"), TypeError, "argument"),
    "vjp_cotangent_shape": Case(
        lambda m: m.vjp(sin(m), X3)[1](X4),
        ValueError, "got float32[4], but expected float32[3]"),
    "vjp_cotangent_dtype": Case(
        lambda m: m.vjp(sin(m), X3)[1](I3),
        ValueError, "got int32[3], but expected float32[3]"),
    "vjp_cotangent_float16": Case(
        lambda m: m.vjp(sin(m), X3)[1](X3.astype(np.float16)),
        ValueError, "got float16[3]"),
    "vjp_cotangent_python_int": Case(
        lambda m: m.vjp(sin(m), 1.0)[1](1),
        ValueError, "got int32[], but expected float32[]"),
    "vjp_cotangent_tuple_for_leaf": Case(
        lambda m: m.vjp(sin(m), X3)[1]((X3,)),
        ValueError, "unexpected tree structure"),
    "vjp_cotangent_leaf_for_tuple": Case(
        lambda m: m.vjp(pair, X3)[1](X3),
        ValueError, "unexpected tree structure"),
    "vjp_cotangent_list_for_tuple": Case(
        lambda m: m.vjp(pair, X3)[1]([X3, X3]),
        ValueError, "unexpected tree structure"),
    "vjp_cotangent_two_arguments": Case(lambda m: m.vjp(sin(m), X3)[1](X3, X3), TypeError, "single argument"),
    "vjp_has_aux_not_pair": Case(lambda m: m.vjp(sin(m), X3, has_aux=True), TypeError, "aux output"),
    # ---- jvp
    "jvp_not_callable": Case(lambda m: m.jvp(5, (X3,), (X3,)), TypeError, "Expected a callable value"),
    "jvp_int_tangent": Case(lambda m: m.jvp(sin(m), (X3,), (I3,)), TypeError, "got tangent dtype int32"),
    "jvp_float16_tangent": Case(
        lambda m: m.jvp(sin(m), (X3,), (X3.astype(np.float16),)),
        TypeError, "expected tangent dtype float32"),
    "jvp_int_primal_int_tangent": Case(lambda m: m.jvp(lambda x: x * 2, (I3,), (I3,)), TypeError, "float0"),
    "jvp_tangent_shape": Case(
        lambda m: m.jvp(sin(m), (X3,), (X4,)),
        ValueError, "different primal and tangent shapes"),
    "jvp_tree_mismatch": Case(lambda m: m.jvp(sin(m), (X3,), (X3, X3)), TypeError, "same tree structure"),
    "jvp_not_tuples": Case(lambda m: m.jvp(sin(m), X3, X3), TypeError, "must be tuples or lists"),
    "jvp_string_tangent": Case(lambda m: m.jvp(sin(m), (X3,), ("a",)), TypeError, "tangent"),
    # ---- jacfwd, jacrev, hessian
    "jacfwd_not_callable": Case(lambda m: m.jacfwd(5), TypeError, "Expected a callable value"),
    "jacrev_not_callable": Case(lambda m: m.jacrev(5), TypeError, "Expected a callable value"),
    "hessian_not_callable": Case(lambda m: m.hessian(5), TypeError, "Expected a callable value"),
    "jacfwd_int_input": Case(lambda m: m.jacfwd(sin(m))(I3), TypeError, "jacfwd requires real"),
    "jacrev_int_input": Case(lambda m: m.jacrev(sin(m))(I3), TypeError, "jacrev requires real"),
    "hessian_int_input": Case(lambda m: m.hessian(lambda x: x.sum())(I3), TypeError, "requires real"),
    "jacrev_argnums_out_of_range": Case(
        lambda m: m.jacrev(sin(m), argnums=2)(X3),
        ValueError, "got value 2 for len(args) == 1"),
    "jacfwd_argnums_out_of_range": Case(
        lambda m: m.jacfwd(sin(m), argnums=1)(X3),
        ValueError, "got value 1 for len(args) == 1"),
    "jacrev_int_output": Case(
        lambda m: m.jacrev(lambda x: m.numpy.ones(2, int))(X3),
        TypeError, "real-valued output"),
    # ---- vmap
    "vmap_not_callable": Case(lambda m: m.vmap(5), TypeError, "Expected a callable value"),
    "vmap_in_axes_str": Case(
        lambda m: m.vmap(pair, in_axes="a"),
        TypeError, "vmap in_axes must be an int, None, or a tuple"),
    "vmap_in_axes_float": Case(lambda m: m.vmap(pair, in_axes=1.5), TypeError, "vmap in_axes must be an int"),
    "vmap_out_axes_str": Case(
        lambda m: m.vmap(pair, out_axes="a"),
        TypeError, "vmap out_axes must be an int, None"),
    "vmap_in_axes_length": Case(
        lambda m: m.vmap(pair, in_axes=(0, 0))(X3),
        ValueError, "len(in_axes)=2, len(args)=1"),
    "vmap_in_axes_out_of_bounds": Case(lambda m: m.vmap(pair, in_axes=1)(X3), ValueError, "axis 1"),
    "vmap_scalar_argument": Case(lambda m: m.vmap(pair)(1.0), ValueError, "rank"),
    "vmap_inconsistent_sizes": Case(
        lambda m: m.vmap(lambda a, b: a)(X3, X4),
        ValueError, "inconsistent sizes"),
    "vmap_all_none": Case(
        lambda m: m.vmap(pair, in_axes=None)(X3),
        ValueError, "at least one non-None value in in_axes"),
    "vmap_out_axes_out_of_bounds": Case(
        lambda m: m.vmap(lambda x: x, out_axes=2)(X3),
        ValueError, "out_axes"),
    "vmap_axis_size_mismatch": Case(lambda m: m.vmap(pair, axis_size=4)(X3), ValueError, "axis_size"),
    "vmap_string_argument": Case(lambda m: m.vmap(pair)("a"), TypeError, "Argument x of pair"),
    "vmap_no_arguments": Case(lambda m: m.vmap(lambda: 1.0)(), ValueError, "at least one argument"),
    "vmap_in_axes_dict_for_array": Case(
        lambda m: m.vmap(pair, in_axes=({"a": 0},))(X3),
        ValueError, "in_axes"),
    # ---- random
    "random_key_float_seed": Case(lambda m: m.random.PRNGKey(1.5), TypeError, "seed"),
    "random_key_array_seed": Case(lambda m: m.random.PRNGKey(np.ones(2, np.int32)), TypeError, "scalar seed"),
    "random_key_string_seed": Case(lambda m: m.random.PRNGKey("a"), TypeError, "seed of mlax.random.PRNGKey"),
    "random_split_float_num": Case(lambda m: m.random.split(key(m), 2.5), TypeError, "num"),
    "random_split_negative": Case(lambda m: m.random.split(key(m), -1), ValueError, "negative", jax=False),
    "random_split_float_key": Case(lambda m: m.random.split(X3), TypeError, "key"),
    "random_split_bad_key_shape": Case(lambda m: m.random.split(U3), TypeError, "key"),
    "random_uniform_float_shape": Case(
        lambda m: m.random.uniform(key(m), (2.5,)),
        TypeError, "Shapes must be 1D sequences"),
    "random_uniform_int_dtype": Case(
        lambda m: m.random.uniform(key(m), (2,), np.int32),
        ValueError, "dtype argument to"),
    "random_uniform_batched_key": Case(
        lambda m: m.random.uniform(m.random.split(key(m)), (2,)),
        ValueError, "single key"),
    "random_uniform_minval_shape": Case(
        lambda m: m.random.uniform(key(m), (2,), minval=np.zeros(3)),
        TypeError, "broadcast"),
    "random_normal_negative_shape": Case(
        lambda m: m.random.normal(key(m), (-1,)),
        ValueError, "negative", jax=False),
    "random_normal_int_dtype": Case(
        lambda m: m.random.normal(key(m), (2,), np.int32),
        ValueError, "dtype argument to"),
    "random_normal_bad_key": Case(lambda m: m.random.normal(np.zeros(2, np.int32), (2,)), TypeError, "key"),
    "random_randint_float_dtype": Case(
        lambda m: m.random.randint(key(m), (2,), 0, 9, np.float32),
        TypeError, "randint only accepts integer dtypes"),
    "random_randint_bound_shape": Case(
        lambda m: m.random.randint(key(m), (2,), np.zeros(3, int), 9),
        ValueError, "broadcast"),
    "random_randint_string_shape": Case(
        lambda m: m.random.randint(key(m), ("a",), 0, 9),
        TypeError, "Shapes must be"),
    "random_choice_empty": Case(
        lambda m: m.random.choice(key(m), 0, (2,)),
        ValueError, "a must be greater than 0"),
    "random_choice_too_many": Case(
        lambda m: m.random.choice(key(m), 3, (5,), replace=False),
        ValueError, "Cannot take a larger sample"),
    "random_choice_p_shape": Case(
        lambda m: m.random.choice(key(m), 3, (2,), p=np.ones(4) / 4),
        ValueError, "p must be None or a 1D vector"),
    "random_choice_int_shape": Case(lambda m: m.random.choice(key(m), X3, 3), TypeError, "shape"),
    "random_permutation_float": Case(
        lambda m: m.random.permutation(key(m), 2.5),
        TypeError, "x must be an integer or at least 1-dimensional"),
    "random_permutation_axis": Case(lambda m: m.random.permutation(key(m), X3, axis=2), ValueError, "axis 2"),
    "random_bernoulli_mode": Case(lambda m: m.random.bernoulli(key(m), 0.5, mode="x"), ValueError, "mode"),
    "random_bernoulli_int_p": Case(lambda m: m.random.bernoulli(key(m), 1), TypeError, "floating dtype"),
    "random_fold_in_overflow": Case(
        lambda m: m.random.fold_in(key(m), 2**33),
        OverflowError, "out of bounds"),
    "random_fold_in_array": Case(lambda m: m.random.fold_in(key(m), I3), TypeError, "scalar"),
    "random_categorical_axis": Case(
        lambda m: m.random.categorical(key(m), X3, axis=3),
        ValueError, "axis 3", jax=False),
    "random_key_overflow": Case(lambda m: m.random.PRNGKey(2**70), OverflowError, "too large"),
    "random_normal_unknown_dtype": Case(lambda m: m.random.normal(key(m), (2,), "nope"), TypeError, "nope"),
    "random_gumbel_mode": Case(lambda m: m.random.gumbel(key(m), (2,), mode="x"), ValueError, "mode"),
    "random_bernoulli_p_shape": Case(
        lambda m: m.random.bernoulli(key(m), np.full(3, 0.5), (2,)),
        ValueError, "broadcast"),
    "random_bits_float_dtype": Case(
        lambda m: m.random.bits(key(m), (2,), np.float32),
        ValueError, "dtype argument to"),
    "random_truncated_normal_dtype": Case(
        lambda m: m.random.truncated_normal(key(m), 0, 1, (2,), np.int32),
        ValueError, "dtype argument to"),
    # ---- control flow
    "cond_branch_not_callable": Case(lambda m: m.lax.cond(True, 1.0, lambda: 2.0), TypeError, "callable"),
    "cond_vector_pred": Case(
        lambda m: m.lax.cond(np.ones(2, bool), lambda: 1.0, lambda: 2.0),
        TypeError, "Pred must be a scalar"),
    "cond_string_pred": Case(lambda m: m.lax.cond("a", lambda: 1.0, lambda: 2.0), TypeError, "pred"),
    "cond_branch_types": Case(
        lambda m: m.lax.cond(True, lambda: 1.0, lambda: X3),
        TypeError, "must have identical types"),
    "cond_branch_structures": Case(
        lambda m: m.lax.cond(True, lambda: 1.0, lambda: (1.0, 2.0)),
        TypeError, "must have identical types"),
    "cond_branch_arity": Case(
        lambda m: m.lax.cond(True, lambda: 1.0, lambda: 2.0, X3),
        TypeError, "positional argument"),
    "switch_branch_not_callable": Case(lambda m: m.lax.switch(0, [1.0, lambda: 2.0]), TypeError, "callable"),
    "switch_no_branches": Case(lambda m: m.lax.switch(0, []), ValueError, "Empty branch sequence"),
    "switch_float_index": Case(lambda m: m.lax.switch(1.5, [lambda: 1.0, lambda: 2.0]), TypeError, "integer"),
    "switch_vector_index": Case(lambda m: m.lax.switch(I3, [lambda: 1.0, lambda: 2.0]), TypeError, "scalar"),
    "switch_branch_types": Case(
        lambda m: m.lax.switch(0, [lambda: 1.0, lambda: X3]),
        TypeError, "must have identical types"),
    "while_not_callable": Case(lambda m: m.lax.while_loop(1, lambda x: x, 0), TypeError, "callable"),
    "while_cond_not_bool": Case(
        lambda m: m.lax.while_loop(lambda x: x, lambda x: x, 0.0),
        TypeError, "cond_fun must return a boolean scalar"),
    "while_cond_vector": Case(
        lambda m: m.lax.while_loop(lambda x: x < 1, lambda x: x, X3),
        TypeError, "boolean scalar"),
    "while_body_dtype": Case(
        lambda m: m.lax.while_loop(lambda x: x[0] < 1, lambda x: I3, X3),
        TypeError, "body_fun output and input must have identical types"),
    "while_body_structure": Case(
        lambda m: m.lax.while_loop(lambda x: x[0] < 1, lambda x: x[:1], [1.0, 2.0]),
        TypeError, "body_fun output and input must have identical types"),
    "fori_not_callable": Case(lambda m: m.lax.fori_loop(0, 3, 5, 0.0), TypeError, "callable"),
    "fori_mixed_bound_types": Case(
        lambda m: m.lax.fori_loop(0, 3.5, lambda i, v: v, 0.0),
        TypeError, "lower and upper arguments to fori_loop must have equal types"),
    "fori_bool_bound": Case(
        lambda m: m.lax.fori_loop(True, 3, lambda i, v: v, 0.0),
        TypeError, "must have equal types"),
    "fori_carry_type": Case(
        lambda m: m.lax.fori_loop(0, 3, lambda i, v: X3, 0.0),
        TypeError, "must have identical types"),
    "fori_unroll_traced_bounds": Case(
        lambda m: m.jit(lambda n: m.lax.fori_loop(0, n, lambda i, v: v, 0.0, unroll=2))(3),
        ValueError, "unroll"),
    "fori_carry_structure": Case(
        lambda m: m.lax.fori_loop(0, 3, lambda i, v: [*v, i], []),
        TypeError, "carry"),
    "scan_not_callable": Case(lambda m: m.lax.scan(1, 0.0, X3), TypeError, "callable"),
    "scan_body_not_pair": Case(lambda m: m.lax.scan(lambda c, x: c, 0.0, X3), TypeError, "pair"),
    "scan_lengths_differ": Case(
        lambda m: m.lax.scan(lambda c, x: (c, x), 0.0, (X3, X4)),
        ValueError, "different leading axis sizes"),
    "scan_no_length": Case(lambda m: m.lax.scan(lambda c, x: (c, x), 0.0, None), ValueError, "length"),
    "scan_scalar_xs": Case(lambda m: m.lax.scan(lambda c, x: (c, x), 0.0, 1.0), ValueError, "leading axis"),
    "scan_length_mismatch": Case(
        lambda m: m.lax.scan(lambda c, x: (c, x), 0.0, X3, length=5),
        ValueError, "length"),
    "scan_negative_length": Case(
        lambda m: m.lax.scan(lambda c, x: (c, c), 0.0, None, length=-1),
        ValueError, "length", jax=False),
    "scan_carry_type": Case(lambda m: m.lax.scan(lambda c, x: (X3, x), 0.0, X3), TypeError, "carry"),
    "map_not_callable": Case(lambda m: m.lax.map(1, X3), TypeError, "callable"),
    "map_scalar_xs": Case(lambda m: m.lax.map(lambda x: x, 1.0), ValueError, "leading axis"),
    "map_negative_batch_size": Case(
        lambda m: m.lax.map(lambda x: x, X3, batch_size=-1),
        ValueError, "batch_size"),
    "map_float_batch_size": Case(
        lambda m: m.lax.map(lambda x: x, X3, batch_size=1.5),
        TypeError, "batch_size"),
    # ---- custom_jvp and custom_vjp
    "custom_jvp_undefined_rule": Case(
        lambda m: undefined_custom_jvp(m)(1.0),
        AttributeError, "No JVP defined"),
    "custom_vjp_undefined_rule": Case(
        lambda m: undefined_custom_vjp(m)(1.0),
        AttributeError, "No VJP defined"),
    "custom_jvp_tangent_shape": Case(
        lambda m: m.jvp(custom_jvp_rule(m, lambda p, t: (p[0], X3)), (1.0,), (1.0,)),
        TypeError, "Custom JVP rule must produce primal and tangent outputs"),
    "custom_jvp_rule_not_pair": Case(
        lambda m: m.jvp(custom_jvp_rule(m, lambda p, t: p[0]), (1.0,), (1.0,)),
        TypeError, "Custom JVP rule must produce a pair"),
    "custom_vjp_bwd_shape": Case(
        lambda m: m.grad(lambda x: custom_vjp_rules(m, lambda r, g: (X3,))(x))(1.0),
        ValueError, "Custom VJP bwd rule must produce an output with the same shape"),
    "custom_vjp_bwd_arity": Case(
        lambda m: m.grad(custom_vjp_rules(m, lambda r, g: (g, g)))(1.0),
        TypeError, "Custom VJP bwd rule must produce a tuple"),
    # ---- mlax.numpy constructors
    "zeros_negative": Case(lambda m: m.numpy.zeros((-1,)), TypeError, "negative"),
    "zeros_float_shape": Case(lambda m: m.numpy.zeros((2.5,)), TypeError, "shape"),
    "zeros_bad_dtype": Case(lambda m: m.numpy.zeros(3, "nope"), TypeError, "nope"),
    "ones_string_shape": Case(lambda m: m.numpy.ones("a"), TypeError, "shape"),
    "full_bad_fill_shape": Case(lambda m: m.numpy.full((2,), X3), ValueError, "broadcast"),
    "asarray_string": Case(lambda m: m.numpy.asarray("a"), TypeError, "dtype"),
    "asarray_ragged": Case(lambda m: m.numpy.asarray([1.0, [2.0]]), ValueError, "sequence"),
    "asarray_object": Case(lambda m: m.numpy.asarray(object()), TypeError, "object"),
    "arange_zero_step": Case(lambda m: m.numpy.arange(0, 3, 0), ZeroDivisionError, "step"),
    "arange_traced": Case(lambda m: m.jit(lambda n: m.numpy.arange(n))(3), CONCRETIZATION, "arange"),
    "linspace_negative_num": Case(lambda m: m.numpy.linspace(0, 1, -1), ValueError, "-1"),
    "eye_float": Case(lambda m: m.numpy.eye(2.5), TypeError, "2.5"),
    "reshape_size": Case(lambda m: m.numpy.reshape(X3, (4,)), ValueError, "cannot reshape array of size 3"),
    "sum_axis_out_of_range": Case(lambda m: m.numpy.sum(X3, axis=2), ValueError, "axis 2"),
    "concatenate_ranks": Case(lambda m: m.numpy.concatenate([X3, X23]), TypeError, "concatenate"),
    # ---- indexing
    "index_too_many": Case(lambda m: m.numpy.asarray(X3)[0, 0], IndexError, "Too many indices"),
    "index_float": Case(lambda m: m.numpy.asarray(X3)[1.5], TypeError, "integer"),
    "index_string": Case(lambda m: m.numpy.asarray(X3)["a"], TypeError, "index"),
    # ---- Python control flow on traced values
    "if_on_tracer": Case(lambda m: m.jit(lambda x: x if x > 0 else -x)(1.0), CONCRETIZATION, "lax.cond"),
    "int_of_tracer": Case(lambda m: m.jit(lambda x: int(x))(1.0), CONCRETIZATION, "`int` function"),
    "range_of_tracer": Case(lambda m: m.jit(lambda n: list(range(n)))(3), INDEX_CONVERSION, "__index__"),
    "escaped_tracer": Case(
        lambda m: (lambda box: (m.jit(lambda x: box.append(x) or x)(1.0), box[0] + 1))([]),
        UNEXPECTED_TRACER, "outside of it"),
    "numpy_of_tracer": Case(lambda m: m.jit(lambda x: np.asarray(x))(X3), ARRAY_CONVERSION, "__array__"),
    "if_on_tracer_in_vmap": Case(lambda m: m.vmap(lambda x: x if x > 0 else -x)(X3), CONCRETIZATION, "bool"),
    "while_on_tracer_in_scan": Case(
        lambda m: m.lax.scan(lambda c, x: (c, 1.0 if x else 0.0), 0.0, X3),
        CONCRETIZATION, "bool"),
}

FORBIDDEN = (MLIRError, KeyError, AttributeError, AssertionError, IndexError)
DELIBERATE = (np.exceptions.AxisError,)  # numpy's error for a bad axis: a ValueError (and an IndexError)


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_input(name: str) -> None:
    case = CASES[name]
    with pytest.raises(BaseException) as info:  # noqa: B017,PT011 - the type is checked below
        case.call(mlax)
    error = info.value
    message = str(error)
    assert isinstance(error, case.error), f"{type(error).__name__}: {message}"
    allowed = (*DELIBERATE, *(kind for kind in FORBIDDEN if issubclass(case.error, kind)))
    assert not isinstance(error, FORBIDDEN) or isinstance(error, allowed), message
    assert case.fragment in message
    line = case.call.__code__.co_firstlineno
    assert f"{os.path.basename(__file__)}:{line}:" in message, message
    if case.jax:
        expected = case.jax if isinstance(case.jax, type) else JAX_TYPES.get(case.error, case.error)
        with pytest.raises(expected):
            case.call(jax)


@pytest.mark.parametrize("lower, upper", [(0.5, 3.5), (-0.5, 2.7), (np.float32(0.5), np.float32(3.5))])
def test_fori_loop_float_bounds_truncate_as_jax(lower: Any, upper: Any) -> None:
    """Concrete float bounds are truncated to ints (i = 0, 1, 2 for 0.5..3.5), as jax does."""
    expected = np.zeros(4, np.float32)
    expected[int(lower):int(upper)] = 1.0
    for m in (mlax, jax):
        visited = m.lax.fori_loop(lower, upper, lambda i, v: v.at[i].set(1.0), np.zeros(4, np.float32))
        np.testing.assert_array_equal(np.asarray(visited), expected)
    ours = mlax.lax.fori_loop(lower, upper, lambda i, v: v + i, 0.0)
    theirs = jax.lax.fori_loop(lower, upper, lambda i, v: v + i, 0.0)
    assert float(ours) == float(theirs)


def test_jvp_of_integer_primal_takes_float0_tangent() -> None:
    """As jax: an int primal's tangent is float0 (an int tangent is the TypeError above)."""
    tangent = np.zeros(3, jax.dtypes.float0)
    out, _ = mlax.jvp(lambda x: x * 2, (I3,), (tangent,))
    np.testing.assert_array_equal(np.asarray(out), 2 * I3)
