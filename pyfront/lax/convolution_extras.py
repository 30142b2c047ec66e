"""mlax.lax conv_transpose, conv_general_dilated_patches and conv_general_dilated_local, all
convolutions by conv_general_dilated (as in jax), and conv_general_permutations.

conv_transpose is a convolution of the input dilated by the strides, with the padding that
makes it the gradient of a forward convolution with 'SAME'/'VALID' padding (or with given
padding pairs, taken as the forward conv's under ``use_consistent_padding``). The patches of
conv_general_dilated_patches come from a grouped convolution with a constant one-hot filter,
one group per input channel, so the channel dimension of the result is channel-major
(C * prod(filter_shape)). conv_general_dilated_local (an unshared convolution) contracts
those patches with a filter per output position.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax as jax_lax

from mlax.lax.common import operand as as_operand
from mlax.lax.linalg import dot_general
from mlax.lax.shape import moveaxis, rev, transpose
from mlax.lax.windowed import Padding, conv_general_dilated
from mlax.source_info import where

# jax's default layouts by rank: the input and output channels last (TensorFlow's convention).
_DEFAULT_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                    5: ("NHWDC", "HWDIO", "NHWDC")}

conv_general_permutations = jax_lax.conv_general_permutations  # pure arithmetic on the layout strings


def _transpose_padding(kernel: int, stride: int, padding: str | tuple[int, int]) -> tuple[int, int]:
    """(before, after) padding of the dilated input so the transposed convolution has the
    shape and alignment of the gradient of a forward one with ``padding``."""
    if padding == "SAME":
        total = kernel + stride - 2
        before = kernel - 1 if stride > kernel - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = kernel + stride - 2 + max(kernel - stride, 0)
        before = kernel - 1
    elif isinstance(padding, tuple):
        before, after = (kernel - p - 1 for p in padding)
        total = before + after
    else:
        raise ValueError(f"mlax.lax.conv_transpose: invalid padding {padding!r}{where()}")
    return before, total - before


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Padding,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None, preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """The N-d transposed ("fractionally strided") convolution (jax.lax.conv_transpose).
    ``transpose_kernel`` flips the kernel's spatial axes and swaps its in/out channels, which
    makes this the gradient of conv_general_dilated with that kernel (Keras' Conv2DTranspose)."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ValueError(f"mlax.lax.conv_transpose: lhs and rhs must have one rank >= 2, got shapes "
                         f"{lhs.shape} and {rhs.shape}{where()}")
    if dimension_numbers is None:
        if lhs.ndim not in _DEFAULT_LAYOUTS:
            raise ValueError(f"mlax.lax.conv_transpose: no default dimension_numbers for rank "
                             f"{lhs.ndim}{where()}")
        dimension_numbers = _DEFAULT_LAYOUTS[lhs.ndim]
    dn = jax_lax.conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    spatial = lhs.ndim - 2
    kernel_sizes = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    dilation = (1,) * spatial if rhs_dilation is None else tuple(operator.index(r) for r in rhs_dilation)
    strides = tuple(operator.index(s) for s in strides)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        forward = [padding] * spatial if isinstance(padding, str) else [tuple(p) for p in padding]
        pads: Padding = [_transpose_padding((k - 1) * d + 1, s, p)
                         for k, d, s, p in zip(kernel_sizes, dilation, strides, forward, strict=True)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        swap = list(range(rhs.ndim))
        swap[dn.rhs_spec[0]], swap[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, swap)
    return conv_general_dilated(lhs, rhs, (1,) * spatial, pads, strides, dilation, dn, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int], window_strides: Sequence[int],
                                 padding: Padding, lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                                 precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The patches a convolution with a ``filter_shape`` window sees, laid out as its output
    with C * prod(filter_shape) features (channel-major), as jax.lax."""
    lhs = as_operand(lhs)
    filter_shape = tuple(operator.index(f) for f in filter_shape)
    dn = jax_lax.conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    size, channels = math.prod(filter_shape), lhs.shape[dn.lhs_spec[1]]
    # Output feature c * size + p is input channel c at window position p.
    one_hot = np.tile(np.eye(size, dtype=lhs.dtype), (channels, 1)).reshape(channels * size, 1, *filter_shape)
    rhs = np.moveaxis(one_hot, (0, 1), (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                                feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Padding,
                               filter_shape: Sequence[int], lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                               precision: Any = None) -> Any:
    """An unshared convolution: every output position has its own filter. ``rhs`` has the
    filter layout of ``dimension_numbers`` with the input-feature dimension of size
    C * prod(filter_shape) (channel-major) and output-sized spatial dimensions."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation,
                                           rhs_dilation, dimension_numbers)
    _, rhs_spec, out_spec = jax_lax.conv_dimension_numbers(lhs.shape, (1, 1) + tuple(filter_shape),
                                                           dimension_numbers)
    # Batch over the spatial positions (in the patches' order), contract the features.
    order = sorted(range(len(out_spec) - 2), key=lambda k: out_spec[2 + k])
    batch = ([out_spec[2 + k] for k in order], [rhs_spec[2 + k] for k in order])
    out = dot_general(patches, rhs, (([out_spec[1]], [rhs_spec[1]]), batch), precision)
    return moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches", "conv_general_permutations",
           "conv_transpose"]
