"""Mutable array references as jax 0.10.2 has them: ``new_ref``, ``Ref``, ``freeze`` and
``jax.ref``'s get / set / swap / addupdate, with ``ref[idx]`` reads and writes.

mlax's programs are pure, so a Ref is *discharged* while Python traces, as jax's own
discharge turns a jaxpr with refs into one without: a Ref is a box whose value is kept per
trace. Outside any trace it holds an mlax Array (written in place of the box). Inside a trace
``ref[idx]`` reads the value the innermost enclosing trace has for it (an enclosing trace's
value is captured as any closed-over value is) and ``ref[idx] = v`` makes a new value for the
current trace (an ``.at[idx].set``: a dynamic_update_slice or a scatter). Where a traced body
ends, the values it wrote for refs made outside it are threaded out by the construct:

- ``jit`` at the top level: the refs passed in (anywhere in the arguments' pytrees) and those
  the function closes over become inputs of the program; the values written are extra outputs,
  stored back into the caller's refs after the call (`call_jit`). ``jit(f).trace`` and
  ``.lower`` give the stages of that program (`stage_jit`). Closed-over refs are found
  by tracing: a trace that meets new ones (reading their values as constants) is done again
  with them as inputs, and the jitted function remembers them.
- a jit called inside a trace is inlined while refs exist (its Python runs in the caller's
  trace, so reads and writes are the caller's).
- ``scan`` / ``fori_loop`` / ``while_loop``: refs the body writes are extra carries (found by
  tracing the body once: a body that writes one traces twice, and what the first trace
  emitted is erased); ``cond`` / ``switch``: extra outputs of every branch
  (`scan_refs`, `while_refs`, `branch_refs`).
- ``vmap``: refs passed with a mapped in_axes reach the function as refs of one example,
  their values written back batched; writing an unmapped ref under vmap is jax's error
  (`vmap_refs`).
- ``grad`` / ``value_and_grad``: functions that use refs internally need nothing (the
  discharged function is pure); refs made outside the function that it writes come out as
  auxiliary outputs, and a written value that depends on a differentiated input is jax's
  error (`grad_refs`).

Any other traced body that writes a ref made outside it is refused where it ends (`check_body`),
so a write is never lost silently.

The pieces: the type and its reads and writes (pyfront/ref_type.py), where traced bodies end
and how loops and branches thread writes out (ref_bodies.py), and jit, grad and vmap
(ref_transforms.py). This module is their one door for the rest of the front end.
"""

from mlax.ref_bodies import branch_refs, check_body, no_carried_refs, scan_refs, threaded, while_refs
from mlax.ref_transforms import UNHANDLED, call_jit, grad_refs, holds_refs, stage_jit, vmap_refs
from mlax.ref_type import (
    AbstractRef,
    Ref,
    addupdate,
    any_alive,
    empty_ref,
    free_ref,
    freeze,
    get,
    new_ref,
    set,  # noqa: A004 (jax.ref.set)
    swap,
)

__all__ = ["UNHANDLED", "AbstractRef", "Ref", "addupdate", "any_alive", "branch_refs", "call_jit",
           "check_body", "empty_ref", "free_ref", "freeze", "get", "grad_refs", "holds_refs", "new_ref",
           "no_carried_refs", "scan_refs", "set", "stage_jit", "swap", "threaded", "vmap_refs", "while_refs"]
