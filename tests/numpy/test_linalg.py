"""mlax.numpy products (dot, matmul, einsum, ...) against jax.numpy, eager and jitted."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import check_values
from tests.oracle import check_against_jax, random_array

# Contractions reorder sums: compare floats with a tolerance that grows with the precision.
TOL = {np.dtype(np.float32): (1e-5, 1e-5), np.dtype(np.float16): (1e-2, 1e-2),
       np.dtype(ml_dtypes.bfloat16): (2e-2, 5e-2)}
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int32, np.uint8]


def check(make: object, *args: np.ndarray) -> None:
    """``make(module)`` is the function to compare, for module mnp and jnp."""
    rtol, atol = TOL.get(jnp.result_type(*[a.dtype for a in args]), (None, 0.0))
    check_against_jax(make(mnp), jax.jit(make(jnp)), *args, rtol=rtol, atol=atol)


def arrays(rng: np.random.Generator, dtype: object, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    """Random operands; integers small enough that int8 products of short sums do not wrap."""
    small_ints = np.dtype(dtype).kind in "iu"
    return [random_array(rng, s, dtype) % 8 if small_ints else random_array(rng, s, dtype, -2.0, 2.0)
            for s in shapes]


PRODUCT_SHAPES = {
    "dot": [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 5, 3), (4, 3, 2)),
            ((), (3, 4)), ((2, 3), ()), ((2, 0), (0, 4)), ((0, 3), (3,))],
    "matmul": [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
               ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 1)),
               ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((2, 0), (0, 4)), ((1, 0, 3), (3, 2))],
    "inner": [((3,), (3,)), ((2, 3), (4, 3)), ((2, 5, 3), (3,)), ((), (2, 3))],
    "vdot": [((3,), (3,)), ((2, 3), (3, 2)), ((1,), (1,))],
    "outer": [((3,), (4,)), ((2, 3), (2,)), ((), (3,)), ((0,), (2,))],
    "kron": [((2, 3), (4, 5)), ((3,), (2, 2)), ((), (3,)), ((2, 1, 3), (2, 2))],
}
PRODUCT_CASES = [pytest.param(name, k, id=f"{name}-{k}") for name, shapes in PRODUCT_SHAPES.items()
                 for k in range(len(shapes))]


@pytest.mark.parametrize("name, k", PRODUCT_CASES)
def test_products(name: str, k: int, rng: np.random.Generator) -> None:
    dtype = DTYPES[k % len(DTYPES)]
    check(lambda m: getattr(m, name), *arrays(rng, dtype, *PRODUCT_SHAPES[name][k]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_matmul_dtypes(dtype: object, rng: np.random.Generator) -> None:
    check(lambda m: m.matmul, *arrays(rng, dtype, (3, 2, 4), (4, 5)))
    check(lambda m: lambda a, b: m.asarray(a) @ b, *arrays(rng, dtype, (2, 4), (4,)))


# Products of transposed operands: the lowering reads a transposed matrix in place (BLAS's
# transpose flags) and an operand that is a transpose from its source.
TRANSPOSED = {
    "lhs.T": (lambda m: lambda x, w: x.T @ w, (5, 3), (5, 4)),
    "rhs.T": (lambda m: lambda x, w: x @ w.T, (3, 5), (4, 5)),
    "both.T": (lambda m: lambda x, w: x.T @ w.T, (5, 3), (4, 5)),
    "swapaxes-batched": (lambda m: lambda x, w: m.swapaxes(x, 1, 2) @ m.swapaxes(w, 1, 2),
                         (2, 5, 3), (2, 4, 5)),
    "batch-moved": (lambda m: lambda x, w: m.transpose(x, (1, 0, 2)) @ w, (3, 2, 5), (2, 5, 4)),
    "transposed-used-twice": (lambda m: lambda x, w: (x @ m.asarray(w).T, m.asarray(w).T * 2),
                              (3, 5), (5, 5)),
}


@pytest.mark.parametrize("case", list(TRANSPOSED))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=lambda d: np.dtype(d).name)
def test_transposed_operands(case: str, dtype: object, rng: np.random.Generator) -> None:
    make, *shapes = TRANSPOSED[case]
    check(make, *arrays(rng, dtype, *shapes))


@pytest.mark.parametrize("pair", [(np.int8, np.float32), (np.uint8, np.int8), (np.int32, ml_dtypes.bfloat16),
                                  (np.float16, np.float32)], ids=str)
def test_mixed_dtypes_promote(pair: tuple[object, object], rng: np.random.Generator) -> None:
    (a,), (b,) = arrays(rng, pair[0], (2, 3)), arrays(rng, pair[1], (3, 4))
    check(lambda m: m.dot, a, b)
    check(lambda m: lambda x, y: m.einsum("ij,jk->ki", x, y), a, b)


@pytest.mark.parametrize("fname", ["dot", "matmul", "einsum", "tensordot", "inner", "vdot"])
def test_preferred_element_type(fname: str, rng: np.random.Generator) -> None:
    a, b = arrays(rng, np.int8, (3, 4), (4, 3))
    # int8 products that overflow unless accumulated in int32
    a, b = a * 16, (b.T if fname in ("inner", "vdot") else b) * 16

    def make(m: object) -> object:
        fn = getattr(m, fname)
        if fname == "einsum":
            return lambda x, y: fn("ij,jk", x, y, preferred_element_type=np.int32)
        if fname == "tensordot":
            return lambda x, y: fn(x, y, 1, preferred_element_type=np.int32)
        return lambda x, y: fn(x, y, preferred_element_type=np.int32)

    check(make, a, b)
    check(lambda m: lambda x: m.einsum("ij->j", x, preferred_element_type=np.int32), a)
    h1, h2 = arrays(rng, np.float16, (2, 3), (3,))
    check(lambda m: lambda x, y: m.dot(x, y, preferred_element_type=np.float32), h1, h2)


def test_python_scalars(rng: np.random.Generator) -> None:
    (x,) = arrays(rng, np.float32, (3,))
    check(lambda m: lambda a: m.dot(a, 2.0), x)
    check(lambda m: lambda a: m.dot(2, 3.5) + a, x)


TENSORDOT = [((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 5), 1), ((3,), (2,), 0),
             ((2, 3, 4), (4, 3, 2), ((1, 0), (1, 2))), ((2, 3), (3, 2), ([-1], [0])),
             ((2, 3), (2, 3), (0, 0)), ((), (), 0)]


@pytest.mark.parametrize("k", range(len(TENSORDOT)))
def test_tensordot(k: int, rng: np.random.Generator) -> None:
    a_shape, b_shape, axes = TENSORDOT[k]
    check(lambda m: lambda a, b: m.tensordot(a, b, axes), *arrays(rng, DTYPES[k % 4], a_shape, b_shape))


TRACE = [((3, 3), {}), ((3, 4), {"offset": 1}), ((4, 3), {"offset": -2}),
         ((2, 3, 4), {"axis1": 2, "axis2": 0}), ((3, 3), {"offset": 5}), ((3, 3), {"dtype": np.float32})]


@pytest.mark.parametrize("k", range(len(TRACE)))
def test_trace(k: int, rng: np.random.Generator) -> None:
    shape, kwargs = TRACE[k]
    for dtype in (np.float32, np.int8, np.bool_):
        check(lambda m: lambda a: m.trace(a, **kwargs), random_array(rng, shape, dtype))


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,kj->ki", [(2, 3), (4, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iji->j", [(2, 4, 2)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("ab,cd,bc->da", [(2, 3), (4, 2), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 5, 2, 3), (5, 3, 4)]),
    ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("...i->...", [(2, 3, 4)]),
    ("i...->...", [(2, 3, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]),
    ("i,i", [(1,), (3,)]),
    ("ij,j->i", [(2, 1), (3,)]),
    ("i,,j->ij", [(2,), (), (3,)]),
    (",->", [(), ()]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("Ab,bA->A", [(3, 2), (2, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("k", range(len(EINSUM)), ids=[e[0] for e in EINSUM])
def test_einsum(k: int, rng: np.random.Generator) -> None:
    subscripts, shapes = EINSUM[k]
    check(lambda m: lambda *ops: m.einsum(subscripts, *ops), *arrays(rng, DTYPES[k % len(DTYPES)], *shapes))


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal", "auto"], ids=str)
def test_einsum_optimize(optimize: object, rng: np.random.Generator) -> None:
    shapes = [(2, 3), (3, 40), (40, 5), (5, 2)]
    check(lambda m: lambda *ops: m.einsum("ab,bc,cd,de->ae", *ops, optimize=optimize),
          *arrays(rng, np.float32, *shapes))


def test_einsum_explicit_path(rng: np.random.Generator) -> None:
    ops = arrays(rng, np.float32, (2, 3), (3, 4), (4, 5))
    path, info = mnp.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")
    assert path[0] == "einsum_path" and "Optimized scaling" in info
    check(lambda m: lambda *o: m.einsum("ij,jk,kl->il", *o, optimize=path[1:]), *ops)
    check(lambda m: lambda *o: mnp.einsum("ij,jk,kl->il", *o, optimize=path) if m is mnp else
          jnp.einsum("ij,jk,kl->il", *o), *ops)


def test_einsum_interleaved(rng: np.random.Generator) -> None:
    a, b = arrays(rng, np.float32, (2, 3), (3, 4))
    check(lambda m: lambda x, y: m.einsum(x, [0, 1], y, [1, 2], [2, 0]), a, b)
    check(lambda m: lambda x, y: m.einsum(x, [Ellipsis, 1], y, [1, 2]), a, b)


def test_einsum_traced_under_jit_emits_dot_general(rng: np.random.Generator) -> None:
    a, b = arrays(rng, np.float32, (2, 3), (3, 4))
    text = mlax.jit(lambda x, y: mnp.einsum("ij,jk->ki", x, y)).lower(a, b).as_text("mlax")
    assert text.count("mlax.dot_general") == 1


ERRORS = [
    (lambda a, b: mnp.matmul(a, 2.0), ValueError, "matmul: operands must be at least 1-dimensional"),
    (lambda a, b: mnp.matmul(a, a), ValueError, "matmul: the last axis of the first operand"),
    (lambda a, b: mnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4))), ValueError, "matmul: shapes"),
    (lambda a, b: mnp.dot(a, a), ValueError, "dot: contracted dimensions differ"),
    (lambda a, b: mnp.tensordot(a, b, 3), ValueError, "tensordot: axes=3 must be in"),
    (lambda a, b: mnp.tensordot(a, b, (0, 1, 2)), ValueError, "tensordot: axes must be an int or a pair"),
    (lambda a, b: mnp.tensordot(a, b, ((0, 1), (0,))), ValueError, "pair sequences of different lengths"),
    (lambda a, b: mnp.tensordot(a, b, (0, 0)), ValueError, "tensordot: contracted dimensions differ"),
    (lambda a, b: mnp.einsum("ij,jk", a, a), ValueError, "size of label 'j' for operand 1 \\(2\\)"),
    (lambda a, b: mnp.einsum("ij->k", a), ValueError, "output subscript 'k' does not appear"),
    (lambda a, b: mnp.einsum("ij->ii", a), ValueError, "output subscript 'ii' repeats a label"),
    (lambda a, b: mnp.einsum("ijk", a), ValueError, "does not contain the correct number of indices"),
    (lambda a, b: mnp.einsum("ij,jk", a), ValueError, "2 subscript terms for 1 operands"),
    (lambda a, b: mnp.einsum("...i...", a), ValueError, "at most one '...'"),
    (lambda a, b: mnp.einsum("ij"), ValueError, "at least one operand"),
    (lambda a, b: mnp.einsum(a, [0, 99]), ValueError, "sublist entries must be Ellipsis or ints"),
    (lambda a, b: mnp.trace(np.ones(3)), ValueError, "diagonal: needs an array of rank >= 2"),
]


@pytest.mark.parametrize("fn, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors(fn: object, error: type, match: str) -> None:
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(error, match=match):
        fn(a, b)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype:UserWarning")  # jax in x32 mode
def test_under_x64(x64: bool, rng: np.random.Generator) -> None:
    a, b = arrays(rng, np.float64, (2, 3, 4), (4, 5))
    check(lambda m: lambda x, y: (m.matmul(x, y), m.einsum("bij,jk->kb", x, y)), a, b)
    i, j = arrays(rng, np.int64, (3, 4), (4,))
    check(lambda m: lambda x, y: (m.dot(x, y), m.trace(x), m.tensordot(x, y, 1)), i, j)


NORM_CASES = [
    ((4,), {}), ((4,), {"ord": np.inf}), ((4,), {"ord": -np.inf}), ((4,), {"ord": 0}), ((4,), {"ord": 1}),
    ((4,), {"ord": 3}), ((4,), {"ord": 2, "keepdims": True}), ((3, 4), {}), ((3, 4), {"ord": "fro"}),
    ((3, 4), {"ord": 1}), ((3, 4), {"ord": -1}), ((3, 4), {"ord": np.inf}),
    ((3, 4), {"ord": -np.inf, "keepdims": True}), ((3, 4), {"axis": 0}), ((3, 4), {"axis": 1, "ord": 1}),
    ((3, 4), {"axis": (1, 0), "ord": 1}), ((2, 3, 4), {"axis": (0, 2), "ord": np.inf})]


@pytest.mark.parametrize("shape, kw", NORM_CASES, ids=[f"{s}-{k}" for s, k in NORM_CASES])
def test_norm(rng: np.random.Generator, shape: tuple[int, ...], kw: dict) -> None:
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[1] = 0.0  # ord=0 counts nonzeros
    check_values(lambda a: mnp.linalg.norm(a, **kw), lambda a: jnp.linalg.norm(a, **kw), x)


EMPTY_NORM_CASES = [((0, 3), {"ord": 1}), ((3, 0), {"ord": np.inf}), ((2, 0, 0), {"ord": 1, "axis": (1, 2)}),
                    ((0, 2), {"ord": -1}), ((3, 0), {"ord": -np.inf}), ((0, 3), {"ord": np.inf, "axis": 0}),
                    ((0, 3), {"ord": -np.inf, "axis": 0}), ((0, 2), {"ord": "f"}), ((2, 3), {"ord": "f"})]


@pytest.mark.parametrize("shape, kw", EMPTY_NORM_CASES, ids=[f"{s}-{k}" for s, k in EMPTY_NORM_CASES])
def test_norm_empty_and_fro_spellings(rng: np.random.Generator, shape: tuple[int, ...], kw: dict) -> None:
    """jnp's max-based norms take ``initial=0`` (0 for an empty input), the min-based ones raise."""
    x = rng.standard_normal(shape).astype(np.float32)
    check_values(lambda a: mnp.linalg.norm(a, **kw), lambda a: jnp.linalg.norm(a, **kw), x)


def test_norm_gradient_and_errors(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(mlax.grad(lambda a: mnp.linalg.norm(a))(x)),
                               np.asarray(jax.grad(lambda a: jnp.linalg.norm(a))(x)), rtol=1e-6)
    for ord in (2, -2, "nuc"):  # the spectral norms, through the singular values
        np.testing.assert_allclose(np.asarray(mlax.grad(lambda a: mnp.linalg.norm(a, ord=ord))(x)),  # noqa: B023
                                   np.asarray(jax.grad(lambda a: jnp.linalg.norm(a, ord=ord))(x)),  # noqa: B023
                                   rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Improper number of axes"):
        mnp.linalg.norm(x[None], ord=1, axis=(0, 1, 2))
    with pytest.raises(ValueError, match="Invalid order 'f' for vector norm"):
        mnp.linalg.norm(x, ord="f", axis=0)
    check_values(lambda a: mnp.linalg.norm(a), lambda a: jnp.linalg.norm(a), x.astype(np.int32))


@pytest.mark.parametrize("subscripts", ["...kh1d,...khd->...kh1", "a1,1b->ab", "AbZ,Zc->Abc", "i_j,j_->i"])
def test_einsum_symbols_beyond_letters(subscripts: str, rng: np.random.Generator) -> None:
    """Any symbol but '.', ',', '-', '>' is a label, as in jax (flax's attention uses digits)."""
    terms = subscripts.split("->")[0].split(",")
    sizes = {c: int(rng.integers(1, 4)) for c in "".join(terms) if c != "."}
    shapes = [tuple([2] * t.count("...") + [sizes[c] for c in t.replace("...", "")]) for t in terms]
    args = [random_array(rng, s, np.float32) for s in shapes]
    check_against_jax(lambda *a: mnp.einsum(subscripts, *a), lambda *a: jnp.einsum(subscripts, *a), *args,
                      rtol=1e-5)
