"""User-facing errors of the front end, worded after JAX's so users recognise them."""

from __future__ import annotations

from typing import Any


class ConcretizationTypeError(TypeError):
    """A traced value was used where Python needs a concrete one (bool, int, NumPy...)."""

    def __init__(self, tracer: Any, conversion: str) -> None:
        name = tracer.trace.function_name
        super().__init__(
            f"Attempted {conversion} conversion of a traced array {tracer.aval} inside the "
            f"traced function '{name}'.\n"
            f"The value is the {tracer.origin}.\n"
            "Its value is unknown while tracing: for value-dependent control flow use "
            "mlax.lax.cond, mlax.lax.while_loop or mlax.numpy.where; if the value is a "
            "configuration constant, mark the argument static with static_argnums or "
            "static_argnames."
        )


class UnexpectedTracerError(Exception):
    """A tracer escaped the function that created it (stored globally, returned by a side effect)."""

    def __init__(self, tracer: Any, trace: Any) -> None:
        super().__init__(
            f"Encountered a traced value {tracer.aval} ({tracer.origin}) from the traced "
            f"function '{tracer.trace.function_name}' outside of it. Traced values are only "
            "valid inside the function being traced; return them as outputs instead of "
            "storing them in globals or closures."
        )
