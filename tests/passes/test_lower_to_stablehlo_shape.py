"""mlax-lower-to-stablehlo on the shape ops: random shapes, attributes and values of every
dtype, run by XLA and compared with the interpreter bit for bit (they move values without
arithmetic); chains of binary concatenations are fused into one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from tests.passes.stablehlo_harness import (
    DTYPES,
    assert_bits_equal,
    attributes,
    check_lowering,
    lower,
    name,
    random_shape,
    run_on_interpreter,
    run_on_xla,
    tensor_text,
    values,
)

pytestmark = pytest.mark.usefixtures("x64")


# --- shape ops -------------------------------------------------------------------------------

def check_shape_op(op: str, args: Sequence[np.ndarray], **attrs: Sequence[int] | int) -> None:
    py = {k: v if isinstance(v, int) else tuple(int(x) for x in v) for k, v in attrs.items()}
    check_lowering(op, args, attributes(**attrs), **py)


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("seed", range(3))
def test_broadcast_reshape_transpose_rev(dtype: np.dtype, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = random_shape(rng, int(rng.integers(0, 4)))
    x = values(rng, dtype, shape)
    kept = np.sort(rng.choice(len(shape) + 2, size=len(shape), replace=False))
    result = [int(d) for d in rng.integers(1, 5, size=len(shape) + 2)]
    for i, d in enumerate(kept):
        result[d] = shape[i] if shape[i] != 1 else result[d]
    check_shape_op("broadcast_in_dim", [x], shape=result, broadcast_dimensions=kept)
    check_shape_op("reshape", [x], shape=(*reversed(shape), 1))
    check_shape_op("transpose", [x], permutation=rng.permutation(len(shape)))
    check_shape_op("rev", [x], dimensions=np.sort(rng.choice(len(shape), size=len(shape) // 2 + 1,
                                                             replace=False)) if shape else ())


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_slice_and_pad(dtype: np.dtype, rng: np.random.Generator) -> None:
    """Strided slices; pad with interior padding and negative (cropping) edges."""
    shape = random_shape(rng, int(rng.integers(1, 4)))
    x = values(rng, dtype, shape)
    starts = [int(rng.integers(0, n + 1)) for n in shape]
    limits = [int(rng.integers(s, n + 1)) for s, n in zip(starts, shape, strict=True)]
    check_shape_op("slice", [x], start_indices=starts, limit_indices=limits,
                   strides=rng.integers(1, 4, size=len(shape)))
    interior = [int(i) for i in rng.integers(0, 3, size=len(shape))]
    low, high = [], []
    for n, i in zip(shape, interior, strict=True):
        size = n + (n - 1) * i
        low.append(int(rng.integers(-min(size, 2), 3)))
        high.append(int(rng.integers(-min(size + min(low[-1], 0), 2), 3)))
    check_shape_op("pad", [x, values(rng, dtype, ())], edge_padding_low=low, edge_padding_high=high,
                   interior_padding=interior)


INDEX_DTYPES = [np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint32)]


def _start(rng: np.random.Generator, dtype: np.dtype, room: int) -> np.ndarray:
    """A start index that may lie before, inside or past ``room`` (clamped by both), or be the
    most negative / largest value of its type."""
    info = np.iinfo(dtype)
    low = 0 if info.min == 0 else -3
    choice = rng.integers(low, room + 4) if rng.random() < 0.8 else rng.choice([info.min, info.max])
    return np.array(choice, dtype)


@pytest.mark.parametrize("index", INDEX_DTYPES, ids=name)
@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_dynamic_slice_and_update(dtype: np.dtype, index: np.dtype, rng: np.random.Generator) -> None:
    """Start indices clamp so the window stays in bounds (StableHLO's rule in both)."""
    shape = random_shape(rng, int(rng.integers(1, 4)))
    x = values(rng, dtype, shape)
    sizes = [int(rng.integers(0, n + 1)) for n in shape]
    starts = [_start(rng, index, n - s) for n, s in zip(shape, sizes, strict=True)]
    check_shape_op("dynamic_slice", [x, *starts], slice_sizes=sizes)
    update = values(rng, dtype, tuple(sizes))
    check_lowering("dynamic_update_slice", [x, update, *starts])


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
def test_concatenate(dtype: np.dtype, rng: np.random.Generator) -> None:
    shape = random_shape(rng, int(rng.integers(1, 4)))
    dimension = int(rng.integers(0, len(shape)))
    other = tuple(int(rng.integers(0, 4)) if d == dimension else n for d, n in enumerate(shape))
    check_shape_op("concatenate", [values(rng, dtype, shape), values(rng, dtype, other)],
                   dimension=dimension)


def _operand_counts(text: str, op: str) -> list[int]:
    """How many operands each ``stablehlo.<op>`` of the printed ``text`` has."""
    return sorted(line.split("(", 1)[1].split(")", 1)[0].count("%")
                  for line in text.splitlines() if f'"stablehlo.{op}"' in line)


@pytest.mark.parametrize(("returned", "counts"), [(["%c3"], [4]), (["%c3", "%c2"], [2, 3])])
def test_concatenate_chain_is_fused(returned: list[str], counts: list[int],
                                    rng: np.random.Generator) -> None:
    """lax.concatenate's left-to-right chain of binary concatenations becomes one N-ary
    stablehlo.concatenate; a link that is also read elsewhere stays a value of its own."""
    sizes = [2, 1, 3, 2]
    args = [values(rng, np.dtype(np.float32), (n, 3)) for n in sizes]
    t = [tensor_text((sum(sizes[:k + 1]), 3), np.float32) for k in range(4)]
    params = ", ".join(f"%c0: {t[0]}" if k == 0 else f"%a{k}: {tensor_text((n, 3), np.float32)}"
                       for k, n in enumerate(sizes))
    body = "".join(f'  %c{k} = "mlax.concatenate"(%c{k - 1}, %a{k}) {{dimension = 0 : i64}} : '
                   f"({t[k - 1]}, {tensor_text((sizes[k], 3), np.float32)}) -> {t[k]}\n"
                   for k in range(1, 4))
    types = ", ".join(t[int(r[-1])] for r in returned)
    text = f"func.func @f({params}) -> ({types}) {{\n{body}  return {', '.join(returned)} : {types}\n}}\n"
    assert _operand_counts(lower(text), "concatenate") == counts
    for a, e in zip(run_on_xla(text, "f", args), run_on_interpreter(text, "f", args), strict=True):
        assert_bits_equal(a, e)
