"""XLA's erf_inv: Giles' polynomials in w = -log1p(-x*x) ("Approximating the erfinv function",
GPU Computing Gems), shared by the reference semantics and the lowering so that eager, compiled
and JAX's results agree.

f32 (and f16/bf16, computed in f32) uses the single-precision pieces with each Horner step a
fused multiply-add, as XLA's CPU backend emits it; f64 uses the double-precision pieces with a
multiply and an add per step (NumPy has no exact f64 fma to check against).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# (upper bound of w, the offset subtracted from w or sqrt(w), Horner coefficients highest first)
Piece = tuple[float, tuple[bool, float], Sequence[float]]

ERF_INV_F32: list[Piece] = [
    (5.0, (False, 2.5), [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                         -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]),
    (float("inf"), (True, 3.0), [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]),
]

ERF_INV_F64: list[Piece] = [
    (6.25, (False, 3.125), [
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356]),
    (16.0, (True, 3.25), [
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635]),
    (float("inf"), (True, 5.0), [
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221]),
]


def _select(which: np.ndarray, values: Sequence[np.ndarray]) -> np.ndarray:
    chosen = values[-1]
    for k in reversed(range(len(values) - 1)):
        chosen = np.where(which == k, values[k], chosen)
    return chosen


def erf_inv_reference(x: np.ndarray) -> np.ndarray:
    """erf_inv of ``x`` (f32 or f64, the compute dtype) evaluated as the lowering does: each
    piece's Horner steps in order, a shorter piece keeping its value once it has run out."""
    t = x.dtype.type
    pieces = ERF_INV_F64 if x.dtype == np.float64 else ERF_INV_F32

    def fma(p: np.ndarray, a: np.ndarray, c: float) -> np.ndarray:
        if x.dtype == np.float64:
            return p * a + t(c)
        return (p.astype(np.float64) * a.astype(np.float64) + np.float64(t(c))).astype(np.float32)

    with np.errstate(all="ignore"):
        w = -np.log1p(-(x * x))
        which = np.full(x.shape, len(pieces) - 1)
        for k in reversed(range(len(pieces) - 1)):
            which = np.where(w < t(pieces[k][0]), k, which)
        root = np.sqrt(w)
        arg = _select(which, [(root if use_root else w) - t(offset) for _, (use_root, offset), _ in pieces])
        p = _select(which, [np.full(x.shape, t(c[0])) for _, _, c in pieces])
        for i in range(1, max(len(c) for _, _, c in pieces)):
            p = _select(which, [fma(p, arg, c[i]) if i < len(c) else p for _, _, c in pieces])
        return np.where(np.abs(x) == 1, x * t(np.inf), p * x)
