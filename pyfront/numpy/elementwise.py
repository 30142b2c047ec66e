"""mlax.numpy elementwise functions: promotion and broadcasting, then one lax primitive."""

from __future__ import annotations

from typing import Any

__all__ = ["add", "exp", "multiply", "negative", "subtract", "tanh"]

from mlax import lax
from mlax.numpy.util import promote_args, promote_args_inexact


def add(x: Any, y: Any, /) -> Any:
    return lax.add(*promote_args("add", x, y))


def subtract(x: Any, y: Any, /) -> Any:
    return lax.sub(*promote_args("subtract", x, y))


def multiply(x: Any, y: Any, /) -> Any:
    return lax.mul(*promote_args("multiply", x, y))


def exp(x: Any, /) -> Any:
    return lax.exp(*promote_args_inexact("exp", x))


def tanh(x: Any, /) -> Any:
    return lax.tanh(*promote_args_inexact("tanh", x))


def negative(x: Any, /) -> Any:
    return lax.neg(*promote_args("negative", x))
