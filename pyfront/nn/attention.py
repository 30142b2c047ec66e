"""mlax.nn.dot_product_attention: softmax(Q K^T * scale + bias, masked) V, as jax.nn's 'xla'
implementation computes it.

The logits are contracted into float32 at least (bf16/f16 inputs accumulate in f32) and the
softmax runs in float32; masked logits get a large finite negative value (so a fully masked
row averages its values instead of producing NaN). Grouped-query attention keeps the K
key/value heads and splits the N query heads into K groups of N // K, so no key or value is
copied: query head n uses key head n // (N // K), as in jax.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.nn import softmax
from mlax.numpy.util import asarray
from mlax.scipy.special import logsumexp


def _four_d(x: Any) -> Any:
    """``x`` with leading unit dimensions up to rank 4 (BTNH without the batch, say)."""
    x = asarray(x)
    return x.reshape((1,) * (4 - x.ndim) + x.shape) if x.ndim < 4 else x


def _check(x: Any, shape: list[int], dtype: Any, name: str) -> None:
    """jax's checks, with its messages: rank, dtype, and the sizes that are not -1."""
    if x is None:
        return
    if x.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {x.ndim}")
    if dtype is not None and x.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {x.dtype}")
    if any(want not in (-1, got) for want, got in zip(shape, x.shape, strict=True)):
        raise ValueError(f"{name} shape should be {shape}: but got {x.shape}")


def _large_negative(dtype: np.dtype) -> Any:
    """-0.7 of the largest value, capped at float32's so it stays finite in the f32 softmax."""
    big = min(float(ml_dtypes.finfo(dtype).max), float(np.finfo(np.float32).max))
    return np.asarray(-0.7 * big, dtype)


def _mask(t: int, s: int, mask: Any, is_causal: bool, q_lengths: Any, kv_lengths: Any,
          window: tuple[int, int] | None) -> Any:
    """The boolean (B|1, N|1, T, S) mask of the logits that take part, or None for all."""
    query, key = lax.broadcasted_iota(np.int32, (t, s), 0), lax.broadcasted_iota(np.int32, (t, s), 1)
    parts = [] if mask is None else [mask]
    if is_causal:
        parts.append(mnp.greater_equal(query, key)[None, None])
    if window is not None:
        left, right = window
        parts.append(mnp.logical_and(mnp.less_equal(query, mnp.add(key, left)),
                                     mnp.greater_equal(query, mnp.subtract(key, right)))[None, None])
    if q_lengths is not None:
        parts.append(mnp.less(query[None, None], q_lengths[:, None, None, None]))
    if kv_lengths is not None:
        parts.append(mnp.less(key[None, None], kv_lengths[:, None, None, None]))
    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = mnp.logical_and(combined, part)
    return combined


def _attend(query: Any, key: Any, value: Any, bias: Any, mask: Any, scale: float,
            return_residual: bool) -> Any:
    """The attention of 4-D BTNH queries on BSKH keys and values, masks already combined."""
    b, t, n, h = query.shape
    _, s, k, _ = key.shape
    logits_dtype = mnp.promote_types(query.dtype, np.float32)
    grouped = query.reshape((b, t, k, n // k, h))
    logits = mnp.einsum("BTKGH,BSKH->BKGTS", grouped, key, preferred_element_type=logits_dtype)
    logits = mnp.multiply(logits.reshape((b, n, t, s)), np.asarray(scale, logits.dtype))
    if bias is not None:
        logits = mnp.add(logits, bias).astype(logits.dtype)
    if mask is not None:
        logits = mnp.where(mask, logits, _large_negative(logits.dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = mnp.einsum("BKGTS,BSKH->BTKGH", probs.reshape((b, k, n // k, t, s)), value)
    encoded = encoded.reshape((b, t, n, h))
    if not return_residual:
        return encoded
    residual = mnp.transpose(logsumexp(logits, axis=-1).astype(key.dtype), (0, 2, 1))  # BNT -> BTN
    return encoded, lax.stop_gradient(residual)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
                          scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None, return_residual: bool = False) -> Any:
    """Scaled dot-product attention of ``query`` (BTNH or TNH) on ``key`` and ``value`` (BSKH or
    SKH, N a multiple of K): ``bias`` is added to the logits, boolean ``mask`` (broadcastable
    to BNTS) and the causal, window and sequence-length masks keep logits out, and
    ``return_residual`` also returns the logsumexp of the logits (BTN). ``implementation``
    may be None or 'xla' ('cudnn' needs an NVIDIA GPU and cuDNN, which mlax does not use)."""
    if implementation == "cudnn":
        raise NotImplementedError("mlax.nn.dot_product_attention: implementation='cudnn' is not supported "
                                  "(mlax has no cuDNN kernels); use None or 'xla'")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = asarray(query).shape
    q, k, v = _four_d(query), _four_d(key), _four_d(value)
    bias = None if bias is None else _four_d(bias)
    mask = None if mask is None else _four_d(mask)
    q_lengths = None if query_seq_lengths is None else asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    batch, s, heads, h = k.shape
    _check(v, [batch, s, heads, h], k.dtype, "value")
    _check(q, [batch, -1, -1, h], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_lengths, [batch], np.dtype(np.int32), "query_seq_lengths")
    _check(kv_lengths, [batch], np.dtype(np.int32), "key_value_seq_lengths")
    if q.shape[-2] % heads:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but got "
                         f"{q.shape[-2]} vs {heads}")
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    combined = _mask(q.shape[1], s, mask, is_causal, q_lengths, kv_lengths, local_window_size)
    out = _attend(q, k, v, bias, combined, scale, return_residual)
    encoded, residual = out if return_residual else (out, None)
    if q_lengths is not None:  # padded query rows give zeros
        rows = mnp.less(lax.broadcasted_iota(np.int32, (1, q.shape[1]), 1), q_lengths[:, None])
        encoded = mnp.multiply(encoded, rows[:, :, None, None].astype(encoded.dtype))
    encoded = encoded.reshape(output_shape)
    return (encoded, residual.reshape(output_shape[:-1])) if return_residual else encoded


__all__ = ["dot_product_attention"]
