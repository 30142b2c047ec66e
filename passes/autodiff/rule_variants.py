"""Custom-derivative rules specialised to a zero pattern, traced when the pass meets them.

With ``symbolic_zeros=True`` (jax.custom_jvp.defjvp, jax.custom_vjp.defvjp) the user's rule
sees which tangents (or cotangents) are symbolically zero: those of inputs not being
differentiated. Only this pass knows that pattern, so the front end marks the rule function
it traced with all tangents present (``mlax.rule_variants = "<token>"``) and registers, under
the token, a maker that traces the rule for one pattern into the module. The pass calls it
through `variant`; a rule whose maker is unknown (IR read from text, or evicted) is used as
it is, which is the rule's all-perturbed case and gives the same numbers.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from mlir import ir

from mlax.passes.registry import PassFailure

ATTR = "mlax.rule_variants"

# (module, zero pattern) -> the symbols of the functions traced for that pattern.
Maker = Callable[[ir.Operation, tuple[bool, ...]], list[str]]

_LIMIT = 4096  # makers kept; the oldest is dropped first (its rule then runs unspecialised)
_LOCK = threading.Lock()
_MAKERS: OrderedDict[str, Maker] = OrderedDict()
_COUNTER = itertools.count()


def register(maker: Maker) -> str:
    """The token under which the pass will find ``maker``."""
    with _LOCK:
        token = f"rule{next(_COUNTER)}"
        _MAKERS[token] = maker
        while len(_MAKERS) > _LIMIT:
            _MAKERS.popitem(last=False)
    return token


def variant(function: ir.Operation, zero: Sequence[bool]) -> list[str] | None:
    """The functions specialising rule ``function`` to the pattern ``zero`` (True = that
    tangent is a symbolic zero), traced into its module; None where it has no maker."""
    if ATTR not in function.attributes:
        return None
    with _LOCK:
        maker = _MAKERS.get(ir.StringAttr(function.attributes[ATTR]).value)
    if maker is None:
        return None
    try:
        return maker(function.parent, tuple(zero))
    except Exception as error:  # the user's rule failed on SymbolicZeros: say so, where it was defined
        name = ir.StringAttr(function.attributes["sym_name"]).value
        raise PassFailure(f"mlax-autodiff: the custom derivative rule @{name} (symbolic_zeros=True) failed "
                          f"when traced with the zero tangents of this use: {type(error).__name__}: {error}",
                          function.location) from error
