"""Differential fuzzer of the whole compiler: random programs, every backend, jax as the oracle.

    python tools/diff_fuzz.py --seed S --programs N [--backends eager,interpreter,cpu,xla]
                              [--ops sin,reduce_window_max,...] [--out DIR] [--start K]

Each program is a short straight-line function of front-end calls (``lax.*``, ``jnp.*``,
``nn.*``; the same text runs on mlax and on jax, whose modules mirror each other) built from the
op catalog (tools/diff_fuzz_ops.py): random shapes (size 0 and 1 included), every dtype the op's
dialect definition accepts, inputs with special values (NaN, +-inf, -0.0, subnormals, huge and
tiny numbers) and ties (repeated values, integer-valued floats, constant runs). The program is
composed with one of plain / vmap / grad / vmap(grad) / grad(vmap) / jvp and run on mlax's
eager interpreter (plain programs only), on ``jit(backend=...)`` for each backend, and on
``jax.jit`` (the oracle). Programs are a function of (seed, index) alone.

Results are compared per output element: integers and booleans exactly; floats to a few units
in the last place (ulps), NaN matching NaN. A float mismatch is a disagreement only if it is
also larger than the oracle's own spread when every inexact op of the program is perturbed by
the drift the catalog allows for that op (so cancellation and ill-conditioning are not
reported as bugs; see tools/diff_fuzz_ops.py). Each disagreement is then matched against
KNOWN (documented differences, and open bugs with their cause); what is left is new. New
disagreements are shrunk (transform removed, outputs dropped, producing ops lifted into inputs,
shapes narrowed to the failing element) and written as standalone reproducers.

Every program runs under a time limit (``--timeout``, in-process alarm) inside a worker process
(address space capped by ``--memory-gb``) that the driver restarts, noting a stall or crash,
when it stalls or dies; shapes and op counts are bounded (at most 96 elements per value, 6 ops). The
run writes DIR/results.jsonl (one line per program), DIR/findings.jsonl, DIR/repro/*.py and
DIR/summary.json, and prints the summary. See docs/reliability.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

try:
    from mlax.tools import diff_fuzz_ops as ops_mod
    from mlax.tools.process_watch import wait_unless_stalled
except ImportError:  # run as a script where mlax is not installed: the sibling modules
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import diff_fuzz_ops as ops_mod  # type: ignore[no-redef]
    from process_watch import wait_unless_stalled  # type: ignore[no-redef]

CATALOG, FLOATS, INTS, X64_ONLY = ops_mod.CATALOG, ops_mod.FLOATS, ops_mod.INTS, ops_mod.X64_ONLY
OpEntry, np_dtype = ops_mod.OpEntry, ops_mod.np_dtype

BACKENDS = ("eager", "interpreter", "cpu", "xla")
TRANSFORMS = ("plain", "vmap", "grad", "vmap_grad", "grad_vmap", "jvp")
_TRANSFORM_WEIGHTS = (0.34, 0.18, 0.2, 0.1, 0.08, 0.1)
MAX_ELEMENTS = 96
MAX_OPS = 6
BASE_ULPS = 2  # final comparison: floats within this many ulps agree
GRAD_ULPS = 64  # grad and jvp outputs: also within this many ulps of the largest output magnitude
SPREAD_FACTOR = 4.0  # a mismatch must exceed this multiple of the oracle's perturbed spread
PERTURB_DRAWS = 3


def _finfo(dtype: Any) -> Any:
    """np.finfo that knows bfloat16 (ml_dtypes)."""
    import ml_dtypes

    return ml_dtypes.finfo(dtype) if np.dtype(dtype) == np_dtype("bfloat16") else np.finfo(dtype)


def _is_floating(dtype: Any) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == np_dtype("bfloat16")


class NoFit(Exception):
    """The op cannot be applied to this program (no dtype or shape fits)."""


# --- values ------------------------------------------------------------------------------------

@dataclass
class Val:
    ref: str
    shape: tuple[int, ...]
    dtype: str
    exact: bool

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass
class Input:
    name: str
    data: np.ndarray  # as passed to the transformed function (batched where in_axis is not None)
    in_axis: int | None = None  # vmap axis of the data
    role: str = "x"  # "x": program input; "c": cotangent weight; "t": jvp tangent


@dataclass
class Stmt:
    targets: tuple[str, ...]
    op: str
    template: str
    operands: tuple[str, ...]
    ulps: float  # perturbation size in ulps (0: exact op)
    where: str


@dataclass
class Program:
    seed: int
    index: int
    x64: bool
    inputs: list[Input]
    stmts: list[Stmt]
    types: dict[str, tuple[tuple[int, ...], str]]  # unbatched shape and dtype of every value
    outputs: list[str]
    transform: str = "plain"
    batch: int = 0

    @property
    def ops(self) -> list[str]:
        return [s.op for s in self.stmts]

    def program_inputs(self) -> list[Input]:
        return [i for i in self.inputs if i.role == "x"]

    def float_inputs(self) -> list[Input]:
        return [i for i in self.program_inputs() if self.types[i.name][1] in FLOATS]

    def float_outputs(self) -> list[str]:
        return [o for o in self.outputs if self.types[o][1] in FLOATS]


def special_values(dtype: str) -> list[float]:
    info = _finfo(np_dtype(dtype))
    tiny, big = float(info.tiny), float(info.max)
    sub = float(info.smallest_subnormal)
    return [np.nan, np.inf, -np.inf, -0.0, 0.0, sub, -sub * 3, tiny, -tiny / 2, big, -big / 3, 1e30 if
            big > 1e30 else big / 7, 1.5, -2.5, 0.5, 1.0, -1.0, 65504.0 if big > 65504 else 2.0]


def random_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, regime: str) -> np.ndarray:
    """Values of one input: ``regime`` is "plain", "special" (NaN, inf, subnormals, huge...) or
    "ties" (repeated values, integer-valued floats, constant runs)."""
    dt = np_dtype(dtype)
    size = math.prod(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dt)
        small = rng.integers(max(int(info.min), -6), min(int(info.max), 9) + 1, size).astype(object)
        if regime != "plain":
            extremes = [int(info.min), int(info.max), 0, 1, int(info.max) // 2 + 1, max(int(info.min), -1)]
            if regime == "ties":
                extremes = [0, 2, 8 * dt.itemsize, 8 * dt.itemsize + 1]
            mask = rng.random(size) < 0.35
            picks = np.array(extremes, dtype=object)[rng.integers(0, len(extremes), size)]
            small = np.where(mask, picks, small)
        return np.array(small.tolist(), dtype=dt).reshape(shape)
    if dtype == "complex64":
        re = random_values(rng, shape, "float32", regime)
        im = random_values(rng, shape, "float32", "plain" if regime == "special" else regime)
        return (re.astype(np.complex64) + 1j * im.astype(np.complex64)).astype(np.complex64)
    values = rng.uniform(-3, 3, size)
    if regime == "special":
        mask = rng.random(size) < 0.4
        values = np.where(mask, rng.choice(special_values(dtype), size), values)
    elif regime == "ties":
        pool = rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0], rng.integers(1, 4))
        values = np.where(rng.random(size) < 0.8, rng.choice(pool, size), np.round(values))
    with np.errstate(all="ignore"):
        return values.astype(dt).reshape(shape)


# --- generation -------------------------------------------------------------------------------

class Gen:
    """Builds one program: operands are values already computed (most often the latest ones, so
    ops chain) or new inputs."""

    def __init__(self, seed: int, index: int, rng: random.Random, vals: np.random.Generator,
                 dtypes: tuple[str, ...], grad_mode: bool):
        self.seed, self.index = seed, index
        self.rng, self.vals = rng, vals
        self.dtypes = dtypes
        self.grad_mode = grad_mode
        self.values: list[Val] = []
        self.inputs: list[Input] = []
        self.regime = rng.choices(["plain", "special", "ties"], [0.45, 0.3, 0.25])[0]
        self.zero_ok = rng.random() < 0.15
        self.counter = 0

    def dim(self) -> int:
        choices = [0, 1, 1, 2, 2, 3, 3, 4, 5] if self.zero_ok else [1, 1, 2, 2, 3, 3, 4, 5]
        return self.rng.choice(choices)

    def shape(self, min_rank: int = 0, max_rank: int = 3) -> tuple[int, ...]:
        rank = self.rng.randint(min_rank, max(min_rank, max_rank))
        shape = [self.dim() for _ in range(rank)]
        while math.prod(shape) > MAX_ELEMENTS:
            shape[shape.index(max(shape))] -= 1
        return tuple(shape)

    def new_ref(self, prefix: str) -> str:
        ref = f"{prefix}{self.counter}"
        self.counter += 1
        return ref

    def new_input(self, shape: tuple[int, ...], dtype: str, data: np.ndarray | None = None) -> Val:
        if math.prod(shape) > MAX_ELEMENTS:
            raise NoFit("too large")
        ref = self.new_ref("x")
        if data is None:
            data = random_values(self.vals, shape, dtype, self.regime)
        self.inputs.append(Input(ref, data))
        val = Val(ref, shape, dtype, True)
        self.values.append(val)
        return val

    def pick(self, dtypes: Sequence[str], shape: tuple[int, ...] | None = None, exact: bool = False,
             tie: bool = False, min_rank: int = 0, max_rank: int = 3, avoid: Val | None = None) -> Val:
        dtypes = [d for d in dtypes if d in self.dtypes]
        if not dtypes:
            raise NoFit("no dtype")
        need_exact = exact or (tie and self.grad_mode)
        candidates = [v for v in self.values if v.dtype in dtypes and v is not avoid
                      and (shape is None or v.shape == tuple(shape)) and min_rank <= v.rank <= max_rank
                      and (v.exact or not need_exact)]
        if candidates and self.rng.random() < 0.8:
            recent = candidates[-2:]
            return self.rng.choice(recent if self.rng.random() < 0.7 else candidates)
        used = [v.dtype for v in self.values if v.dtype in dtypes]
        dtype = self.rng.choice(used) if used and self.rng.random() < 0.7 else self.rng.choice(dtypes)
        return self.new_input(tuple(shape) if shape is not None else self.shape(min_rank, max_rank), dtype)

    def index_input(self, shape: tuple[int, ...] | None = None, low: int = 0, high: int = 0,
                    values: Sequence[int] | None = None) -> Val:
        if values is not None:
            data = np.asarray(list(values), np.int32).reshape(len(values))
        else:
            data = self.vals.integers(low, high + 1, shape).astype(np.int32)
        return self.new_input(data.shape, "int32", data)


def _program_dtypes(rng: random.Random, x64: bool) -> tuple[str, ...]:
    base = [d for d in ops_mod.ALL_DTYPES if x64 or d not in X64_ONLY]
    return tuple(base)


def _eval_shape(template: str, operands: list[Val], x64: bool) -> Any:
    """Result structure of one call, by jax.eval_shape (None when jax refuses the call)."""
    import jax

    names = [f"a{i}" for i in range(len(operands))]
    expr = template.format(*names)
    fn = eval(f"lambda {', '.join(names)}: {expr}", _namespace(jax))  # noqa: S307 - our own text
    specs = [jax.ShapeDtypeStruct(v.shape, np_dtype(v.dtype)) for v in operands]
    try:
        return jax.eval_shape(fn, *specs)
    except Exception:  # noqa: BLE001 - jax refuses the call: the op does not apply
        return None


def _namespace(lib: Any) -> dict[str, Any]:
    return {"lax": lib.lax, "jnp": lib.numpy, "nn": lib.nn, "np": np, "_pb": lambda x: x}


def _weights(names: list[str]) -> list[float]:
    return [CATALOG[n].weight for n in names]


def generate(seed: int, index: int, ops: Sequence[str] | None = None,
             transforms: Sequence[str] | None = None, x64: bool | None = None) -> Program:
    """Program ``index`` of ``seed``: deterministic. ``x64`` forces 64-bit mode on or off (by
    default one program in ten runs in it)."""
    ops_mod.probe_dtypes()
    rng = random.Random(f"diff-fuzz:{seed}:{index}")
    vals = np.random.default_rng(zlib.crc32(f"diff-fuzz-values:{seed}:{index}".encode()))
    drawn = rng.random() < 0.1
    x64 = drawn if x64 is None else x64
    set_x64(x64)  # jax.eval_shape types the calls as the program will run
    names = sorted(ops) if ops else sorted(CATALOG)
    allowed = transforms or TRANSFORMS
    weights = [w for t, w in zip(TRANSFORMS, _TRANSFORM_WEIGHTS, strict=True) if t in allowed]
    transform = rng.choices([t for t in TRANSFORMS if t in allowed], weights)[0]
    grad_mode = "grad" in transform or transform == "jvp"
    g = Gen(seed, index, rng, vals, _program_dtypes(rng, x64), grad_mode)
    if grad_mode and rng.random() < 0.85:  # gradients need float paths: start from a float input
        g.new_input(g.shape(), rng.choice([d for d in FLOATS if d in g.dtypes]))
    stmts: list[Stmt] = []
    types: dict[str, tuple[tuple[int, ...], str]] = {}
    n_ops = rng.randint(1, MAX_OPS)
    attempts = 0
    while len(stmts) < n_ops and attempts < 40:
        attempts += 1
        op = CATALOG[rng.choices(names, _weights(names))[0]]
        mark = (len(g.values), len(g.inputs), g.counter)
        try:
            made = op.gen(g, op)
            if made is None:
                raise NoFit("op refused")
            template, operands = made
            structure = _eval_shape(template, operands, x64)
            if structure is None:
                raise NoFit("jax refused")
        except NoFit:
            del g.values[mark[0]:]
            del g.inputs[mark[1]:]
            g.counter = mark[2]
            continue
        stmts.append(_make_stmt(g, op, template, operands, structure))
        for inp in g.inputs:
            types[inp.name] = (tuple(inp.data.shape), _dtype_name(inp.data.dtype))
        for val in g.values:
            types[val.ref] = (val.shape, val.dtype)
    if not stmts:  # fall back to one elementwise op
        x = g.new_input(g.shape(), "float32")
        stmts.append(Stmt((g.new_ref("v"),), "neg", "lax.neg({0})", (x.ref,), 0, "out"))
        types[x.ref] = (x.shape, x.dtype)
        types[stmts[0].targets[0]] = (x.shape, x.dtype)
    used = {o for s in stmts for o in s.operands}
    sinks = [t for s in stmts for t in s.targets if t not in used]
    outputs = sinks[-3:] if sinks else list(stmts[-1].targets)
    prog = _dce(Program(seed, index, x64, g.inputs, stmts, types, outputs))
    return _apply_transform(prog, transform, rng, vals)


def _dtype_name(dtype: np.dtype) -> str:
    return "bool" if dtype == np.bool_ else str(dtype)


def _make_stmt(g: Gen, op: OpEntry, template: str, operands: list[Val], structure: Any) -> Stmt:
    import jax

    leaves = jax.tree_util.tree_leaves(structure)
    targets = tuple(g.new_ref("v") for _ in leaves)
    floats_in = any(v.dtype in FLOATS or v.dtype == "complex64" for v in operands)
    exact = all(v.exact for v in operands) and (op.ulps == 0 or not floats_in)
    ulps = op.ulps
    if op.where == "in" and ulps:
        biggest = max((math.prod(v.shape) for v in operands), default=1)
        ulps = ulps * (1 + math.log2(max(biggest, 1)))
    for ref, leaf in zip(targets, leaves, strict=True):
        g.values.append(Val(ref, tuple(leaf.shape), _dtype_name(np.dtype(leaf.dtype)), exact))
    return Stmt(targets, op.name, template, tuple(v.ref for v in operands), ulps, op.where)


def _apply_transform(prog: Program, transform: str, rng: random.Random, vals: np.random.Generator) -> Program:
    """Compose ``prog`` with ``transform``: batch inputs for vmap, add cotangent weights for grad
    and tangents for jvp; falls back to plain when the transform has nothing to act on."""
    if transform in ("grad", "vmap_grad", "grad_vmap", "jvp"):
        if not prog.float_inputs() or (transform != "jvp" and not prog.float_outputs()):
            transform = "vmap" if "vmap" in transform else "plain"
    prog.transform = transform
    if "vmap" in transform:
        prog.batch = rng.choice([1, 2, 2, 3, 3, 0] if rng.random() < 0.1 else [1, 2, 2, 3, 3])
        batched_any = False
        for inp in prog.inputs:
            if rng.random() < 0.75 or (not batched_any and inp is prog.inputs[-1]):
                axis = rng.randint(0, inp.data.ndim)
                copies = [inp.data] + [_jitter(inp.data, vals) for _ in range(prog.batch - 1)]
                inp.data = np.stack(copies[:prog.batch], axis=axis) if prog.batch else \
                    np.zeros(inp.data.shape[:axis] + (0,) + inp.data.shape[axis:], inp.data.dtype)
                inp.in_axis = axis
                batched_any = True
    if "grad" in transform:
        for out in prog.float_outputs():
            shape = prog.types[out][0]
            if transform == "grad_vmap":
                shape = (prog.batch, *shape)
            data = vals.uniform(-2, 2, shape).astype(np.float32)
            in_axis = None
            if transform == "vmap_grad":
                data = vals.uniform(-2, 2, (prog.batch, *shape)).astype(np.float32)
                in_axis = 0
            prog.inputs.append(Input(f"c_{out}", data, in_axis, "c"))
    if transform == "jvp":
        for inp in prog.float_inputs():
            data = vals.uniform(-2, 2, inp.data.shape).astype(inp.data.dtype)
            prog.inputs.append(Input(f"t_{inp.name}", data, None, "t"))
    return prog


def _jitter(data: np.ndarray, vals: np.random.Generator) -> np.ndarray:
    """Another batch member: a copy with some elements redrawn from the array itself."""
    flat = data.reshape(-1).copy()
    if flat.size:
        pick = vals.integers(0, flat.size, flat.size)
        mask = vals.random(flat.size) < 0.5
        flat[mask] = flat[pick][mask]
    return flat.reshape(data.shape)


# --- source ------------------------------------------------------------------------------------

def program_source(prog: Program, hooks: bool = True) -> str:
    """``build(lib)``: returns the transformed function for ``lib`` (mlax or jax). With ``hooks``,
    every statement goes through ``_p`` (identity, or the perturbation/recording hook)."""
    xs = [i.name for i in prog.program_inputs()]
    lines = ["def build(lib):", "    lax, jnp, nn = lib.lax, lib.numpy, lib.nn", "",
             f"    def f({', '.join(xs)}):"]
    for s in prog.stmts:
        operands = list(s.operands)
        if hooks and s.where == "in" and s.ulps:
            operands = [f"_p({o}, {f'{s.targets[0]}.{k}'!r}, {s.ulps:.3g})" for k, o in enumerate(operands)]
        expr = s.template.format(*operands)
        if not hooks:
            expr = _strip_call(expr, "_pb")
        if hooks:
            expr = f"_p({expr}, {s.targets[0]!r}, {s.ulps if s.where == 'out' else 0:.3g})"
        target = s.targets[0] if len(s.targets) == 1 else ", ".join(s.targets)
        lines.append(f"        {target} = {expr}")
    lines.append(f"        return ({', '.join(prog.outputs)},)")
    lines.append("")
    lines += _transform_source(prog)
    return "\n".join(lines) + "\n"


def _strip_call(text: str, name: str) -> str:
    """``text`` with every ``name(...)`` replaced by its argument."""
    while (start := text.find(f"{name}(")) >= 0:
        depth, i = 0, start + len(name)
        while True:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        text = text[:start] + text[start + len(name) + 1:i] + text[i + 1:]
    return text


def _transform_source(prog: Program) -> list[str]:
    xs = [i.name for i in prog.program_inputs()]
    axes = tuple(i.in_axis for i in prog.program_inputs())
    floats = [k for k, i in enumerate(prog.program_inputs()) if prog.types[i.name][1] in FLOATS]
    cs = [i.name for i in prog.inputs if i.role == "c"]
    t = prog.transform
    if t == "plain":
        return ["    return f"]
    if t == "vmap":
        return [f"    return lib.vmap(f, in_axes={axes!r})"]
    loss_terms = []
    for k, out in enumerate(prog.outputs):
        if prog.types[out][1] in FLOATS:
            loss_terms.append(f"jnp.sum(outs[{k}].astype(jnp.float32) * c_{out})")
    loss_body = " + ".join(loss_terms) or "0.0"
    if t == "grad":
        return [f"    def loss({', '.join(xs + cs)}):", f"        outs = f({', '.join(xs)})",
                f"        return {loss_body}", "",
                f"    return lib.grad(loss, argnums={tuple(floats)!r})"]
    if t == "vmap_grad":
        all_axes = axes + (0,) * len(cs)
        return [f"    def loss({', '.join(xs + cs)}):", f"        outs = f({', '.join(xs)})",
                f"        return {loss_body}", "",
                f"    return lib.vmap(lib.grad(loss, argnums={tuple(floats)!r}), in_axes={all_axes!r})"]
    if t == "grad_vmap":
        return [f"    def loss({', '.join(xs + cs)}):",
                f"        outs = lib.vmap(f, in_axes={axes!r})({', '.join(xs)})",
                f"        return {loss_body}", "",
                f"    return lib.grad(loss, argnums={tuple(floats)!r})"]
    if t == "jvp":
        ts = [i.name for i in prog.inputs if i.role == "t"]
        primal_names = [xs[k] for k in floats]
        inner = ", ".join(f"p{k}" for k in range(len(floats)))
        call_args = []
        for k, name in enumerate(xs):
            call_args.append(f"p{floats.index(k)}" if k in floats else name)
        return [f"    def g({', '.join(xs + ts)}):",
                f"        return lib.jvp(lambda {inner}: f({', '.join(call_args)}), "
                f"({', '.join(primal_names)},), ({', '.join(ts)},))", "",
                "    return g"]
    raise ValueError(t)


def build(prog: Program, lib: Any, hook: Callable[..., Any] | None = None) -> Callable[..., Any]:
    _p = hook or (lambda x, key, ulps: x)
    namespace: dict[str, Any] = {"np": np, "_p": _p, "_pb": lambda x: _p(x, "body", 4)}
    exec(compile(program_source(prog), f"<diff_fuzz {prog.seed}:{prog.index}>", "exec"), namespace)  # noqa: S102
    return namespace["build"](lib)


# --- running ----------------------------------------------------------------------------------

@dataclass
class Outcome:
    leaves: list[np.ndarray] | None = None
    error: str | None = None  # "Type: first line"
    trace: str = ""


def set_x64(on: bool) -> None:
    import jax

    if bool(jax.config.jax_enable_x64) != on:
        jax.config.update("jax_enable_x64", on)


def run_backend(prog: Program, backend: str, hook: Callable[..., Any] | None = None) -> Outcome:
    """The program's leaves on ``backend`` ("jax", "eager" or an mlax jit backend)."""
    import jax

    set_x64(prog.x64)
    args = [i.data for i in prog.inputs]
    try:
        if backend in ("jax", "jax-eager"):
            fn = build(prog, jax, hook)
            out = jax.jit(fn)(*args) if backend == "jax" else fn(*args)
        else:
            import mlax

            fn = build(prog, mlax, hook)
            if backend == "eager":
                out = fn(*[mlax.numpy.asarray(a) for a in args])
            else:
                out = mlax.jit(fn, backend=backend)(*args)
        leaves = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(out)]
    except TimeoutError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is an outcome
        if "program ran past" in str(exc):  # our time limit, wrapped by a pass manager or jax
            raise TimeoutError(str(exc)) from exc
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return Outcome(error=f"{type(exc).__name__}: {first}", trace=traceback.format_exc(limit=-6))
    return Outcome(leaves=leaves)


# --- comparison -------------------------------------------------------------------------------

@dataclass
class Mismatch:
    backend: str
    kind: str  # value, nan, inf, int, structure, error, timeout
    leaf: int = -1
    count: int = 0
    index: tuple[int, ...] = ()
    want: str = ""
    got: str = ""
    detail: str = ""
    known: str | None = None  # the KNOWN entry it matches
    subnormal: bool = False  # the disagreeing values are both zero or subnormal

    def summary(self) -> str:
        where = f" leaf {self.leaf} at {self.index} ({self.count} elements)" if self.leaf >= 0 else ""
        values = f": want {self.want}, got {self.got}" if self.want or self.got else ""
        return f"{self.backend} {self.kind}{where}{values}{' ' + self.detail if self.detail else ''}"


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Ulps between a and b in their own float type (inf is one ulp above the largest finite)."""
    dtype = a.dtype
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[dtype.itemsize]
    ia = a.view(bits).astype(np.int64)
    ib = b.view(bits).astype(np.int64)
    top = np.int64(1) << (8 * dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + top), ia)  # sign-magnitude -> ordered integers (-0 == +0)
    ib = np.where(ib < 0, -(ib + top), ib)
    return np.abs(ia - ib)


def _float_bad(want: np.ndarray, got: np.ndarray, atol: float) -> np.ndarray:
    wn, gn = np.isnan(want), np.isnan(got)
    with np.errstate(all="ignore"):
        close = (want == got) | (wn & gn)
        close |= ~(wn | gn) & (_ulp_distance(want, got) <= BASE_ULPS)
        if atol:
            close |= ~(wn | gn) & (np.abs(want.astype(np.float64) - got.astype(np.float64)) <= atol)
    return ~close


def _as_real_parts(x: np.ndarray) -> np.ndarray:
    """Complex arrays as (..., 2) real arrays; booleans masks of complex elements broadcast so."""
    if x.dtype.kind == "c":
        return np.stack([x.real, x.imag], axis=-1)
    return x


def elementwise_bad(want: np.ndarray, got: np.ndarray, atol: float) -> np.ndarray:
    """Boolean mask of elements that disagree (shapes and dtypes already equal). Complex numbers
    agree when both parts do, or when they are within a few ulps of the larger modulus."""
    if want.dtype.kind == "c":
        parts = _float_bad(_as_real_parts(want), _as_real_parts(got), atol).any(axis=-1)
        with np.errstate(all="ignore"):
            scale = np.maximum(np.abs(want), np.abs(got)).astype(np.float64)
            near = np.abs(want.astype(np.complex128) - got.astype(np.complex128)) <= \
                BASE_ULPS * float(_finfo(want.real.dtype).eps) * scale
        bad = parts & ~near
        return np.stack([bad, bad], axis=-1)
    want, got = _as_real_parts(want), _as_real_parts(got)
    if _is_floating(want.dtype):
        return _float_bad(want, got, atol)
    return want != got


def _grad_atol(prog: Program, want: np.ndarray, scale: float) -> float:
    """Gradients sum contributions in an order the backends choose, and jax's derivative rules
    form some exact zeros as rounded differences (scatter min/max): allow a few ulps of the
    largest magnitude among all the outputs (transforms with a grad or jvp only)."""
    parts = _as_real_parts(want)
    if prog.transform in ("plain", "vmap") or not _is_floating(parts.dtype):
        return 0.0
    return GRAD_ULPS * float(_finfo(parts.dtype).eps) * scale


def _output_scale(leaves: list[np.ndarray]) -> float:
    """The largest finite magnitude among the float leaves."""
    scale = 0.0
    for leaf in leaves:
        parts = _as_real_parts(leaf)
        if _is_floating(parts.dtype) and parts.size:
            finite = np.abs(parts.astype(np.float64))
            finite = finite[np.isfinite(finite)]
            if finite.size:
                scale = max(scale, float(finite.max()))
    return scale


def _fmt(x: Any) -> str:
    return np.array2string(np.asarray(x), precision=9, floatmode="maxprec") if np.ndim(x) == 0 else repr(x)


def diff(prog: Program, want: list[np.ndarray], got: Outcome, backend: str) -> tuple[Mismatch | None, list]:
    """First-pass comparison: a structural mismatch, or per-leaf masks of candidate elements."""
    if got.error is not None:
        return Mismatch(backend, "error", detail=got.error), []
    assert got.leaves is not None
    if len(got.leaves) != len(want):
        return Mismatch(backend, "structure", detail=f"{len(got.leaves)} outputs, want {len(want)}"), []
    masks = []
    scale = _output_scale(want)
    for k, (w, o) in enumerate(zip(want, got.leaves, strict=True)):
        if w.shape != o.shape or w.dtype != o.dtype:
            return Mismatch(backend, "structure", leaf=k,
                            detail=f"got {o.dtype}{list(o.shape)}, want {w.dtype}{list(w.shape)}"), []
        masks.append(elementwise_bad(w, o, _grad_atol(prog, w, scale)))
    return None, masks


def perturbed_spreads(prog: Program, want: list[np.ndarray]) -> list[np.ndarray] | None:
    """Per leaf, the largest change of the oracle's output when every inexact op is perturbed
    by its allowed drift (inf where the NaN/inf/integer pattern changes)."""
    spreads = [np.zeros(_as_real_parts(w).shape) for w in want]
    if not any(s.ulps for s in prog.stmts):
        return spreads
    for draw in range(PERTURB_DRAWS):
        outcome = run_backend(prog, "jax", _perturb_hook(prog.seed * 1000 + prog.index, draw))
        if outcome.leaves is None or len(outcome.leaves) != len(want):
            return None
        for k, (w, p) in enumerate(zip(want, outcome.leaves, strict=True)):
            w2, p2 = _as_real_parts(w), _as_real_parts(p)
            if w2.shape != p2.shape:
                return None
            if w2.dtype.kind in "biu":
                spreads[k] = np.where(w2 != p2, np.inf, spreads[k])
                continue
            w64, p64 = w2.astype(np.float64), p2.astype(np.float64)
            with np.errstate(all="ignore"):
                pattern = (np.isnan(w64) != np.isnan(p64)) | (np.isinf(w64) != np.isinf(p64)) | \
                    (np.isinf(w64) & (w64 != p64))
                delta = np.where(pattern, np.inf, np.abs(w64 - p64))
            spreads[k] = np.maximum(spreads[k], np.nan_to_num(delta, nan=0.0))
    return spreads


def _perturb_hook(seed: int, draw: int) -> Callable[..., Any]:
    def hook(x: Any, key: str, ulps: float) -> Any:
        if isinstance(x, (tuple, list)):
            return type(x)(hook(e, f"{key}.{i}", ulps) for i, e in enumerate(x))
        if not ulps:
            return x
        dtype = np.dtype(x.dtype)
        if dtype.kind != "c" and not _is_floating(dtype):
            return x
        rng = np.random.default_rng(zlib.crc32(f"{seed}:{draw}:{key}".encode()))
        real = np.float64 if dtype in (np.float64, np.complex128) else np.float32
        eps = float(_finfo(np.float32 if dtype.kind == "c" else dtype).eps)
        factor = 1 + rng.uniform(1, 2, x.shape) * rng.choice([-1.0, 1.0], x.shape) * ulps * eps
        wide = np.complex64 if dtype.kind == "c" else real
        return (x.astype(wide) * factor.astype(real)).astype(dtype)
    return hook


def compare(prog: Program, want: list[np.ndarray], got: Outcome, backend: str,
            spread_cache: dict[str, Any]) -> Mismatch | None:
    """The disagreement of ``backend`` with the oracle that survives the spread filter, if any."""
    structural, masks = diff(prog, want, got, backend)
    if structural is not None:
        return structural
    if not any(m.any() for m in masks):
        return None
    if "spreads" not in spread_cache:
        spread_cache["spreads"] = perturbed_spreads(prog, want)
    spreads = spread_cache["spreads"]
    assert got.leaves is not None
    for k, (w, o, mask) in enumerate(zip(want, got.leaves, masks, strict=True)):
        if not mask.any():
            continue
        w2, o2 = _as_real_parts(w), _as_real_parts(o)
        if spreads is not None:
            with np.errstate(all="ignore"):
                err = np.abs(w2.astype(np.float64) - o2.astype(np.float64)) if w2.dtype.kind not in "biu" \
                    else np.where(w2 != o2, np.inf, 0.0)
                err = np.where(np.isnan(err), np.inf, err)
                mask = mask & ~(err <= SPREAD_FACTOR * spreads[k])
        if not mask.any():
            continue
        index = tuple(int(i) for i in np.argwhere(mask)[0])
        wv, ov = w2[index], o2[index]
        if w2.dtype.kind in "biu":
            kind = "int"
        elif np.isnan(np.float64(wv)) or np.isnan(np.float64(ov)):
            kind = "nan"
        elif np.isinf(np.float64(wv)) or np.isinf(np.float64(ov)):
            kind = "inf"
        else:
            kind = "value"
        tiny = float(_finfo(w2.dtype).tiny) if _is_floating(w2.dtype) else 0.0
        with np.errstate(all="ignore"):
            small = bool(max(abs(float(wv)), abs(float(ov))) < tiny) if tiny else False
        return Mismatch(backend, kind, leaf=k, count=int(mask.sum()), index=index, want=_fmt(wv),
                        got=_fmt(ov),
                        subnormal=small)
    return None


# --- program features and the allowlist --------------------------------------------------------

@dataclass
class Features:
    subnormal: bool = False  # an input or intermediate value is subnormal (the interpreter's values)
    subnormal_half: bool = False  # ... and one of them is an f16/bf16 subnormal
    subnormal_refs: set[str] = field(default_factory=set)  # the values that hold subnormals
    nan_bitcast: bool = False  # a NaN reaches a bitcast
    big_trig: bool = False  # sin/cos/tan of |x| > 1e4
    nonfinite_algorithm: bool = False  # an op whose algorithm is free gets an extreme operand
    extreme_refs: set[str] = field(default_factory=set)  # the results of those ops
    values: dict[str, np.ndarray] = field(default_factory=dict)


def _is_half(x: np.ndarray) -> bool:
    return np.asarray(x).dtype in (np.dtype(np.float16), np_dtype("bfloat16"))


def _is_subnormal(x: np.ndarray) -> bool:
    x = _as_real_parts(np.asarray(x))
    if not _is_floating(x.dtype):
        return False
    tiny = _finfo(x.dtype).tiny
    with np.errstate(all="ignore"):
        a = np.abs(x.astype(np.float64))
        return bool(((a > 0) & (a < float(tiny))).any())


def _extreme(x: np.ndarray) -> bool:
    """inf, NaN, or a magnitude whose square overflows or underflows (|x| > sqrt(max) or
    0 < |x| < sqrt(tiny)): where algorithms that scale (LAPACK's norms) and ones that do not part."""
    parts = _as_real_parts(np.asarray(x))
    if not _is_floating(parts.dtype):
        return False
    info = _finfo(parts.dtype)
    a = np.abs(parts.astype(np.float64))
    with np.errstate(all="ignore"):
        return bool((~np.isfinite(a) | (a > np.sqrt(float(info.max))) |
                     ((a > 0) & (a < np.sqrt(float(info.tiny))))).any())


def features(prog: Program) -> Features:
    """Facts about the values of the program, from mlax's eager interpreter (which keeps
    subnormals): one run per batch member for vmap programs, the forward program for grads."""
    feats = Features()
    recorded: dict[str, list[np.ndarray]] = {}

    def hook(x: Any, key: str, ulps: float) -> Any:
        if isinstance(x, (tuple, list)):
            for i, e in enumerate(x):
                recorded.setdefault(f"{key}.{i}", []).append(np.asarray(e))
        else:
            recorded.setdefault(key, []).append(np.asarray(x))
        return x

    plain = replace(prog, transform="plain", inputs=[i for i in prog.inputs if i.role == "x"])
    members = range(prog.batch) if "vmap" in prog.transform else [None]
    for b in list(members)[:3]:
        inputs = []
        for inp in plain.inputs:
            data = inp.data if b is None or inp.in_axis is None else np.take(inp.data, b, axis=inp.in_axis)
            inputs.append(Input(inp.name, data))
        one = replace(plain, inputs=inputs, batch=0)
        for i in inputs:
            if _is_subnormal(i.data):
                feats.subnormal = True
                feats.subnormal_half |= _is_half(i.data)
                feats.subnormal_refs.add(i.name)
        with contextlib.suppress(Exception):
            run_backend(one, "eager", hook)
    # hook keys: a statement's first target (its result), or target.k (operand k of an "in" op)
    by_first = {s.targets[0]: s for s in prog.stmts}
    for key, arrays in recorded.items():
        for a in arrays:
            if _is_subnormal(a):
                feats.subnormal = True
                feats.subnormal_half |= _is_half(a)
                head, _, rest = key.partition(".")
                stmt = by_first.get(head)
                if stmt is not None:  # a result (or a tuple's element), or an operand of an "in" op
                    feats.subnormal_refs.update(stmt.targets)
                    if rest:
                        feats.subnormal_refs.update(stmt.operands)
    values = {i.name: [i.data] for i in prog.program_inputs()}
    for s in prog.stmts:
        result = recorded.get(s.targets[0])
        if result is not None:
            values[s.targets[0]] = result
        for k, t in enumerate(s.targets[1:], 1):
            if f"{s.targets[0]}.{k}" in recorded:
                values[t] = recorded[f"{s.targets[0]}.{k}"]
    for s in prog.stmts:
        operands = [values.get(o, []) for o in s.operands]
        if s.op == "bitcast_convert" and any(np.isnan(_as_real_parts(a).astype(np.float64)).any()
                                             for a in operands[0] if _is_floating(a.dtype)):
            feats.nan_bitcast = True
        if s.op in _ALGORITHM_OPS and any(_extreme(a) for arrays in operands for a in arrays):
            feats.nonfinite_algorithm = True
            feats.extreme_refs.update(s.targets)
        if s.op in ("sin", "cos", "tan") and any(
                (np.nan_to_num(np.abs(a).astype(np.float64), posinf=0) > 1e4).any()
                for a in operands[0]):
            feats.big_trig = True
    feats.values = {k: v[0] for k, v in values.items() if v}
    return feats


@dataclass(frozen=True)
class Known:
    """A documented disagreement: ``status`` is "difference" (by design, stays) or "open" (a bug
    with a known cause, to be fixed: the fuzzer then stops matching it and the entry goes)."""
    name: str
    status: str
    cause: str
    match: Callable[[Program, Mismatch, Features], bool]


_FLUSHING = ("jax", "xla")  # XLA's CPU runtime flushes subnormal results and operands to zero
# Ops computed by an algorithm of the backend's choosing (blocked, reordered, iterative): with an
# inf or NaN operand, where the infinities meet (inf - inf, 0 * inf) depends on that algorithm.
_ALGORITHM_OPS = {"cholesky", "eigvalsh", "svdvals", "qr_r", "solve", "triangular_solve", "slogdet", "fft",
                  "rfft", "dot_general", "conv_general_dilated", "norm", "var"}


_KNOWN_ENTRIES: list[Known] = [
    Known("xla-flushes-subnormals", "difference",
          "XLA's CPU runtime (jax, and mlax's xla backend) runs with flush-to-zero and "
          "denormals-are-zero; mlax's interpreter and native cpu backend keep subnormals "
          "(documented in dialect/ops/elementwise.py). Any program whose inputs or intermediate "
          "values are subnormal may differ, by as much as the subnormal's downstream effect "
          "(log(1e-40) = -92.1 vs -inf), or where the disagreeing values are themselves zero or "
          "subnormal (gradients). mlax's xla backend flushes too, but an f16/bf16 subnormal is a "
          "normal number once widened to f32, so where mlax's decomposition of an op (or of its derivative) "
          "keeps a different intermediate in f32 than jax's, one side flushes and the other does "
          "not: d/dx cbrt(6e-8 : f16) is 2.7e4 on mlax's xla backend, inf on jax (jax squares "
          "cbrt(x) in f16, a subnormal 1.5e-5, flushed to 0).",
          lambda p, m, f: m.kind in ("value", "nan", "inf", "int") and (
              ((m.subnormal or (f.subnormal and _reaches(p, m, f.subnormal_refs)))
               and m.backend in ("eager", "interpreter", "cpu"))
              or (f.subnormal_half and m.backend == "xla" and _reaches(p, m, f.subnormal_refs)))),
    Known("jvp-integer-tangent-dtype", "open",
          "mlax.jvp gives the tangent of an integer (or boolean) output as zeros of the output's "
          "dtype; jax gives float0 zeros (jax's rule for non-differentiable values).",
          lambda p, m, f: m.kind == "structure" and "float0" in m.detail and p.transform == "jvp"),
    Known("max-window-jvp-ties", "open",
          "Forward-mode derivative (jvp) of a max (min) reduce_window whose maximum is tied, with "
          "padding or window dilation: jax takes the tangent of the tie XLA's select_and_gather_add "
          "picks, mlax another one. (Reverse mode at ties, max pooling's gradient, was fixed while "
          "this fuzzer ran.)",
          lambda p, m, f: bool({"max_pool", "reduce_window_max", "reduce_window_min"} & set(p.ops))
          and p.transform == "jvp" and m.kind in ("value", "nan")),
    Known("extremes-through-algorithms", "difference",
          "Linear algebra, FFTs, dot products and convolutions fed inf, NaN or magnitudes whose "
          "squares overflow or underflow: which of inf, -inf or NaN comes out depends on the "
          "algorithm (back substitution vs XLA's blocked triangular solve that multiplies by an "
          "inverted diagonal block, inf * 0 = NaN), and LAPACK scales its norms where XLA's "
          "Householder QR does not (|R| of a matrix holding 1e38 and 2.5: 0.3168 by LAPACK, "
          "the exact value; 2.2456 by XLA, whose 2.2e-38 intermediate it flushes to zero).",
          lambda p, m, f: f.nonfinite_algorithm and _reaches(p, m, f.extreme_refs)),
    Known("scatter-min-max-grad-nan-cotangent", "open",
          "The derivative of x.at[i].min(u) / .max(u) with a NaN cotangent: jax masks with "
          "arithmetic, so the NaN reaches the operand and every update; mlax masks with select, "
          "so losers get 0, and on the xla backend the operand gets 0 where mlax's interpreter "
          "gives NaN. Found by this fuzzer.",
          lambda p, m, f: bool({"scatter_min", "scatter_max"} & set(p.ops)) and m.kind == "nan"
          and p.transform not in ("plain", "vmap")),
    Known("complex-running-and-window-extremes-nan", "open",
          "cummin / cummax and max/min windows of complex numbers with a NaN part: jax's "
          "lexicographic order is not associative there (a comparison with NaN is false, so the "
          "later operand wins), and mlax folds each prefix or window in another order than XLA's "
          "reduce_window. reduce_min / reduce_max fold as XLA does (fixed). Found by this fuzzer.",
          lambda p, m, f: bool({"cummin", "cummax", "reduce_window_min", "reduce_window_max"} & set(p.ops))
          and m.kind in ("nan", "value") and any(d == "complex64" for _, d in p.types.values())),
    Known("jax-pad-value-cotangent-nan", "difference",
          "jax transposes pad for the padding value as sum(all cotangents) - sum(cotangents of the "
          "operand's region), so a NaN or inf cotangent anywhere in the operand's region makes the "
          "padding value's gradient NaN; mlax sums the padded positions only (the exact answer).",
          lambda p, m, f: "pad" in p.ops and p.transform not in ("plain", "vmap") and m.kind == "nan"
          and m.want.strip() == "nan" and m.got.strip() != "nan"),
    Known("nan-bit-pattern", "difference",
          "The sign and payload of a NaN that an op computes are not specified (StableHLO, IEEE); "
          "bitcast_convert exposes them.",
          lambda p, m, f: f.nan_bitcast and p.transform in ("plain", "vmap") and 0 <= m.leaf < len(p.outputs)
          and "bitcast_convert" in _producers(p, p.outputs[m.leaf])),
    Known("xla-trig-large-arguments", "difference",
          "XLA's CPU sin/cos/tan reduce large arguments (|x| > 1e4) with a short Cody-Waite "
          "reduction and lose accuracy; mlax's backends reduce exactly (libm).",
          lambda p, m, f: f.big_trig and m.kind in ("value", "nan", "inf")
          and (p.transform not in ("plain", "vmap") or bool({"sin", "cos", "tan"} & _producers(
              p, p.outputs[m.leaf])))),
]
# Open bugs first: a program can hold both a documented difference and a bug, and the bug is the
# more specific explanation.
KNOWN: list[Known] = sorted(_KNOWN_ENTRIES, key=lambda k: k.status != "open")


IGNORE_KNOWN: set[str] = set()  # --no-allowlist: entries treated as new (to shrink them, or see if fixed)


def _upstream(prog: Program, ref: str) -> tuple[set[str], set[str]]:
    """The values (inputs and results) and the ops that ``ref`` depends on, itself included."""
    by_target = {t: s for s in prog.stmts for t in s.targets}
    refs: set[str] = set()
    ops: set[str] = set()
    todo = [ref]
    while todo:
        name = todo.pop()
        if name in refs:
            continue
        refs.add(name)
        stmt = by_target.get(name)
        if stmt is not None:
            ops.add(stmt.op)
            todo += list(stmt.operands) + list(stmt.targets)
    return refs, ops


def _producers(prog: Program, ref: str) -> set[str]:
    return _upstream(prog, ref)[1]


def _reaches(prog: Program, m: Mismatch, refs: set[str]) -> bool:
    """Whether the disagreeing output depends on one of ``refs`` (always true under grad and jvp,
    whose outputs are not the program's)."""
    if prog.transform not in ("plain", "vmap") or not 0 <= m.leaf < len(prog.outputs):
        return True
    return bool(_upstream(prog, prog.outputs[m.leaf])[0] & refs)


def classify(prog: Program, mismatch: Mismatch, feats: Features | None) -> str | None:
    if feats is None:
        return None
    for known in KNOWN:
        if known.name in IGNORE_KNOWN or "all" in IGNORE_KNOWN:
            continue
        with contextlib.suppress(Exception):
            if known.match(prog, mismatch, feats):
                return known.name
    return None


# --- one program -------------------------------------------------------------------------------

@dataclass
class Result:
    index: int
    transform: str
    ops: list[str]
    status: str  # ok, oracle-error, disagree
    seconds: float
    mismatches: list[Mismatch] = field(default_factory=list)
    oracle_error: str = ""


def check(prog: Program, backends: Sequence[str]) -> tuple[Result, list[np.ndarray] | None]:
    """Run ``prog`` everywhere and compare with the oracle."""
    began = time.monotonic()
    result = Result(prog.index, prog.transform, prog.ops, "ok", 0.0)
    want = run_backend(prog, "jax")
    if want.leaves is None:
        result.status, result.oracle_error = "oracle-error", want.error or ""
        result.seconds = time.monotonic() - began
        return result, None
    cache: dict[str, Any] = {}
    feats: Features | None = None
    for backend in backends:
        if backend == "eager" and prog.transform != "plain":
            continue
        mismatch = compare(prog, want.leaves, run_backend(prog, backend), backend, cache)
        if mismatch is None:
            continue
        if feats is None:
            feats = features(prog)
        mismatch.known = classify(prog, mismatch, feats)
        result.mismatches.append(mismatch)
    if result.mismatches:
        result.status = "disagree"
    result.seconds = time.monotonic() - began
    return result, want.leaves


def still_fails(prog: Program, backend: str, kind: str) -> Mismatch | None:
    """The unknown mismatch of ``backend`` on ``prog`` of the same kind, if it is still there."""
    want = run_backend(prog, "jax")
    if want.leaves is None:
        return None
    mismatch = compare(prog, want.leaves, run_backend(prog, backend), backend, {})
    if mismatch is None or (mismatch.kind != kind and not {mismatch.kind, kind} <= {"value", "nan", "inf"}):
        return None
    if classify(prog, mismatch, features(prog)) is not None:
        return None
    return mismatch


# --- shrinking ---------------------------------------------------------------------------------

def _dce(prog: Program) -> Program:
    live = set(prog.outputs)
    kept = []
    for s in reversed(prog.stmts):
        if live & set(s.targets):
            kept.append(s)
            live |= set(s.operands)
    stmts = list(reversed(kept))
    inputs = [i for i in prog.inputs if i.role != "x" or i.name in live]
    if "vmap" in prog.transform and not any(i.in_axis is not None for i in inputs if i.role == "x"):
        batched = [i for i in prog.inputs if i.role == "x" and i.in_axis is not None][:1]
        inputs = batched + inputs  # vmap needs one batched argument, used or not
    cot = {f"c_{o}" for o in prog.outputs} | {f"t_{i.name}" for i in inputs}
    inputs = [i for i in inputs if i.role == "x" or i.name in cot]
    return replace(prog, stmts=stmts, inputs=inputs)


def _to_plain(prog: Program, member: int) -> Program:
    inputs = []
    for inp in prog.inputs:
        if inp.role != "x":
            continue
        data = inp.data if inp.in_axis is None else np.take(inp.data, member, axis=inp.in_axis)
        inputs.append(Input(inp.name, data))
    return replace(prog, inputs=inputs, transform="plain", batch=0)


def _with_outputs(prog: Program, outputs: list[str]) -> Program:
    return _dce(replace(prog, outputs=outputs))


def _lift(prog: Program, stmt: Stmt, values: dict[str, np.ndarray]) -> Program | None:
    """Replace ``stmt`` by inputs holding its results (the interpreter's values)."""
    if any(t not in values for t in stmt.targets):
        return None
    new_inputs = [Input(t, np.asarray(values[t]).astype(np_dtype(prog.types[t][1]))) for t in stmt.targets]
    stmts = [s for s in prog.stmts if s is not stmt]
    position = 0
    return _dce(replace(prog, stmts=stmts,
                        inputs=prog.inputs[:position] + new_inputs + prog.inputs[position:]))


def _narrow(prog: Program, index: int) -> Program | None:
    """An elementwise program on one element: every input (cotangents and tangents included)
    becomes its element ``index``; for plain, grad and jvp programs whose inputs share one shape."""
    shapes = {tuple(i.data.shape) for i in prog.inputs}
    if prog.transform not in ("plain", "grad", "jvp") or len(shapes) != 1 or \
            not all(CATALOG[s.op].elementwise for s in prog.stmts):
        return None
    shape = next(iter(shapes))
    if math.prod(shape) <= 1:
        return None
    inputs = [replace(i, data=i.data.reshape(-1)[index].reshape(())) for i in prog.inputs]
    types = {name: (() if s == shape else s, d) for name, (s, d) in prog.types.items()}
    return replace(prog, inputs=inputs, types=types)


def shrink(prog: Program, mismatch: Mismatch, budget: int = 60) -> tuple[Program, Mismatch]:
    """A smaller program on which ``mismatch.backend`` still disagrees the same way."""
    calls = 0

    def attempt(candidate: Program | None) -> Mismatch | None:
        nonlocal calls
        if candidate is None or calls >= budget:
            return None
        calls += 1
        try:
            return still_fails(candidate, mismatch.backend, mismatch.kind)
        except TimeoutError:
            raise
        except Exception:  # noqa: BLE001 - a candidate the generator would not make
            return None

    backend, current = mismatch.backend, mismatch
    # 1. simpler transforms
    simpler = {"vmap_grad": ["grad", "vmap"], "grad_vmap": ["grad", "vmap"], "jvp": ["plain"],
               "grad": ["plain"], "vmap": ["plain"]}
    changed = True
    while changed and calls < budget:
        changed = False
        for t in simpler.get(prog.transform, []):
            candidates = []
            if t == "plain":
                candidates = [_to_plain(prog, b) for b in range(min(prog.batch, 3))] \
                    if "vmap" in prog.transform else [_to_plain(prog, 0)]
            elif t == "grad" and "vmap" in prog.transform and prog.batch:
                member = _to_plain(prog, 0)
                rng = np.random.default_rng(0)
                candidates = [_apply_transform(member, "grad", random.Random(0), rng)]
            elif t == "vmap" and "grad" in prog.transform:
                stripped = replace(prog, inputs=[i for i in prog.inputs if i.role == "x"], transform="vmap")
                candidates = [stripped]
            for cand in candidates:
                found = attempt(cand)
                if found is not None:
                    prog, current, changed = cand, found, True
                    break
            if changed:
                break
    # 2. one output
    if len(prog.outputs) > 1:
        for out in list(prog.outputs):
            cand = _with_outputs(prog, [out])
            found = attempt(cand)
            if found is not None:
                prog, current = cand, found
                break
    # 3. lift statements into inputs, first to last
    if "vmap" not in prog.transform:
        progress = True
        while progress and calls < budget and len(prog.stmts) > 1:
            progress = False
            values = features(prog).values
            for stmt in list(prog.stmts):
                if set(stmt.targets) & set(prog.outputs):
                    continue
                cand = _lift(prog, stmt, values)
                found = attempt(cand)
                if found is not None:
                    prog, current, progress = cand, found, True
                    break
    # 4. narrow elementwise programs to the failing element
    shapes = {tuple(i.data.shape) for i in prog.inputs}
    if current.index and len(shapes) == 1:
        shape = next(iter(shapes))
        flat = int(np.ravel_multi_index(current.index[:len(shape)], shape)) if shape else 0
        cand = _narrow(prog, flat)
        found = attempt(cand)
        if found is not None:
            prog, current = cand, found
    del backend
    return prog, current


# --- reproducers -------------------------------------------------------------------------------

def _array_literal(data: np.ndarray) -> str:
    dtype = _dtype_name(data.dtype)
    dt = "ml_dtypes.bfloat16" if dtype == "bfloat16" else f"np.{dtype if dtype != 'bool' else 'bool_'}"
    raw = np.ascontiguousarray(data).tobytes().hex()
    with np.printoptions(precision=9, threshold=40):
        shown = " ".join(str(data.tolist()).split()) if data.size <= 12 else f"{data.size} values"
    return f"np.frombuffer(bytes.fromhex({raw!r}), {dt}).reshape({tuple(data.shape)!r}),  # {shown}"


def reproducer(prog: Program, mismatch: Mismatch, original: Program | None = None) -> str:
    backend = mismatch.backend
    call = "build(mlax)(*args)" if backend == "eager" else \
        f"mlax.jit(build(mlax), backend={backend!r})(*args)"
    header = [f"# diff_fuzz: seed {prog.seed} program {prog.index} ({prog.transform}; ops "
              f"{', '.join(prog.ops)})",
              f"# {mismatch.summary()}"]
    if original is not None and len(original.stmts) != len(prog.stmts):
        header.append(f"# shrunk from {len(original.stmts)} ops ({', '.join(original.ops)}, "
                      f"{original.transform})")
    lines = header + ["import ml_dtypes", "import numpy as np", "", "import jax", "import mlax", "",
                      f"jax.config.update('jax_enable_x64', {prog.x64})", "", "",
                      program_source(prog, hooks=False).rstrip(), "", "",
                      "args = ["]
    lines += [f"    {_array_literal(i.data)}" for i in prog.inputs]
    lines += ["]",
              "want = jax.tree_util.tree_leaves(jax.jit(build(jax))(*args))",
              f"got = jax.tree_util.tree_leaves({call})",
              "for w, g in zip(want, got):",
              "    print('jax :', repr(np.asarray(w)))",
              f"    print('{backend:4}:', repr(np.asarray(g)))", ""]
    return "\n".join(lines)


# --- driver ------------------------------------------------------------------------------------

@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in this (main) thread after ``seconds``."""
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"program ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def signature(prog: Program, m: Mismatch) -> str:
    dtypes = sorted({d for _, d in (prog.types[i.name] for i in prog.program_inputs())})
    return f"{m.backend}:{m.kind}:{prog.transform}:{'+'.join(sorted(set(prog.ops)))}:{','.join(dtypes)}"


def fuzz_one(seed: int, index: int, backends: Sequence[str], ops: Sequence[str] | None, timeout: float,
             do_shrink: bool, seen: set[str], transforms: Sequence[str] | None = None,
             x64: bool | None = None) -> dict[str, Any]:
    """Generate, run, compare and (for new disagreements) shrink program ``index``."""
    began = time.monotonic()
    record: dict[str, Any] = {"index": index}
    try:
        with time_limit(timeout):
            prog = generate(seed, index, ops, transforms, x64)
            record.update(transform=prog.transform, ops=prog.ops, x64=prog.x64)
            result, _ = check(prog, backends)
            record["status"] = result.status
            if result.oracle_error:
                record["oracle_error"] = result.oracle_error
            findings = []
            for m in result.mismatches:
                finding: dict[str, Any] = {"backend": m.backend, "kind": m.kind, "summary": m.summary(),
                                           "known": m.known, "signature": signature(prog, m)}
                if m.known is None:
                    small, sm = prog, m
                    pre = finding["signature"]
                    if do_shrink and pre not in seen:
                        seen.add(pre)
                        with time_limit(timeout):
                            small, sm = shrink(prog, m)
                    finding["signature"] = signature(small, sm)
                    finding["min_summary"] = sm.summary()
                    finding["repro"] = reproducer(small, sm, prog)
                    finding["min_ops"] = small.ops
                findings.append(finding)
            record["findings"] = findings
    except TimeoutError as exc:
        record["status"] = "timeout"
        record["findings"] = [{"backend": "?", "kind": "timeout", "summary": str(exc), "known": None,
                               "signature": f"timeout:{'+'.join(sorted(set(record.get('ops', []))))}"}]
    except Exception as exc:  # noqa: BLE001 - a bug of the fuzzer itself: recorded, the run goes on
        record["status"] = "fuzzer-error"
        record["findings"] = [{"backend": "?", "kind": "fuzzer-error", "known": None,
                               "summary": f"{type(exc).__name__}: {exc}"[:300], "signature": "fuzzer-error",
                               "trace": traceback.format_exc(limit=-4)}]
    record["seconds"] = round(time.monotonic() - began, 3)
    return record


def run_range(seed: int, start: int, count: int, backends: Sequence[str], ops: Sequence[str] | None,
              timeout: float, do_shrink: bool, results: Path | None, progress: Path | None,
              transforms: Sequence[str] | None = None, x64: bool | None = None) -> list[dict[str, Any]]:
    import jax

    jax.config.update("jax_platforms", "cpu")
    records = []
    seen: set[str] = set()
    if results is not None and results.exists():  # signatures already shrunk by earlier workers
        for line in results.read_text().splitlines():
            with contextlib.suppress(ValueError):
                for f in json.loads(line).get("findings", []):
                    seen.add(f.get("signature", ""))
    for index in range(start, start + count):
        if progress is not None:
            progress.write_text(f"{index}\n")
        record = fuzz_one(seed, index, backends, ops, timeout, do_shrink, seen, transforms, x64)
        records.append(record)
        if results is not None:
            with results.open("a") as out:
                out.write(json.dumps(record) + "\n")
        if index % 50 == 49:
            jax.clear_caches()
    return records


def summarize(records: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    statuses = Counter(r.get("status", "?") for r in records)
    known: Counter[str] = Counter()
    new: Counter[str] = Counter()
    examples: dict[str, dict[str, Any]] = {}
    for r in records:
        for f in r.get("findings", []):
            if f.get("known"):
                known[f"{f['known']} ({f['backend']})"] += 1
            else:
                new[f["signature"]] += 1
                if f["signature"] not in examples or len(f.get("min_ops", [])) < len(
                        examples[f["signature"]].get("min_ops", [])):
                    examples[f["signature"]] = {"index": r["index"], **f}
    return {"programs": len(records), "statuses": dict(statuses), "seconds": round(seconds, 1),
            "programs_per_second": round(len(records) / seconds, 3) if seconds else None,
            "known": dict(known.most_common()), "new": dict(new.most_common()),
            "examples": examples}


def _supervise(args: argparse.Namespace, out: Path) -> list[dict[str, Any]]:
    """Run the programs in worker processes; a worker that stalls past the timeout or dies is
    replaced and its program recorded as a timeout/crash."""
    results = out / "results.jsonl"
    progress = out / "progress"
    index, stop = args.start, args.start + args.programs
    while index < stop:
        end = min(index + args.chunk, stop)
        progress.unlink(missing_ok=True)
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--seed", str(args.seed),
                   "--start", str(index), "--programs", str(end - index), "--out", str(out),
                   "--backends", ",".join(args.backends), "--timeout", str(args.timeout)]
        if args.ops:
            command += ["--ops", ",".join(args.ops)]
        if args.transforms:
            command += ["--transforms", ",".join(args.transforms)]
        if args.no_shrink:
            command.append("--no-shrink")
        if args.no_allowlist:
            command += ["--no-allowlist", ",".join(sorted(args.no_allowlist))]
        if args.x64 != "auto":
            command += ["--x64", args.x64]
        with tempfile.TemporaryFile("w+") as err:
            worker = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err,
                                      preexec_fn=lambda: _limit_memory(args.memory_gb))
            stalled = wait_unless_stalled(worker, lambda: progress.read_text() if progress.exists() else None,
                                          3 * args.timeout + 30, poll_s=0.5)
            err.seek(0)
            tail = err.read().strip().splitlines()[-3:]
        if worker.returncode == 0 and not stalled:
            index = end
            continue
        text = progress.read_text().split() if progress.exists() else []
        culprit = int(text[-1]) if text else index
        kind = "stall" if stalled else f"crash (exit status {worker.returncode})"
        with results.open("a") as handle:
            handle.write(json.dumps({"index": culprit, "status": "crash", "findings": [
                {"backend": "?", "kind": kind, "summary": " | ".join(tail), "known": None,
                 "signature": f"{kind}"}]}) + "\n")
        index = culprit + 1
    records = []
    for line in results.read_text().splitlines():
        with contextlib.suppress(ValueError):
            records.append(json.loads(line))
    return records


def _limit_memory(gigabytes: float) -> None:
    """Cap a worker's address space: a program that would allocate without bound fails with a
    MemoryError (reported as that backend's error) instead of taking the machine's memory."""
    import resource

    if gigabytes > 0:
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def write_outputs(out: Path, summary: dict[str, Any]) -> None:
    repro = out / "repro"
    repro.mkdir(parents=True, exist_ok=True)
    for old in repro.glob("*.py"):
        old.unlink()
    for n, (sig, example) in enumerate(sorted(summary["examples"].items())):
        name = "".join(c if c.isalnum() else "_" for c in sig)[:100]
        (repro / f"{n:03d}_{name}.py").write_text(example.get("repro", f"# {example['summary']}\n"))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))


def format_summary(summary: dict[str, Any]) -> str:
    lines = [f"{summary['programs']} programs in {summary['seconds']} s "
             f"({summary['programs_per_second']} programs/s); status: {summary['statuses']}"]
    if summary["known"]:
        lines.append("known (allowlisted) disagreements:")
        lines += [f"  {count:5d}  {name}" for name, count in summary["known"].items()]
    if summary["new"]:
        lines.append("NEW disagreements (signature = backend:kind:transform:ops:dtypes):")
        for sig, count in summary["new"].items():
            example = summary["examples"][sig]
            detail = example.get("min_summary", example["summary"])
            lines.append(f"  {count:5d}  {sig}  (program {example['index']}: {detail})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--start", type=int, default=0, help="index of the first program")
    parser.add_argument("--backends", type=lambda s: s.split(","), default=list(BACKENDS))
    parser.add_argument("--ops", type=lambda s: s.split(","), default=None,
                        help=f"restrict to these catalog ops ({len(CATALOG)} in all)")
    parser.add_argument("--transforms", type=lambda s: s.split(","), default=None)
    parser.add_argument("--out", type=Path, default=None, help="folder for results and reproducers")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one program may take")
    parser.add_argument("--chunk", type=int, default=200, help="programs per worker process")
    parser.add_argument("--x64", choices=("auto", "on", "off"), default="auto",
                        help="64-bit mode: one program in ten (auto), or every program, or none")
    parser.add_argument("--memory-gb", type=float, default=8.0, help="address space of a worker (0: no cap)")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--in-process", action="store_true", help="no worker processes")
    parser.add_argument("--print-program", action="store_true", help="print each program's source")
    parser.add_argument("--no-allowlist", type=lambda s: set(s.split(",")), default=set(),
                        help="KNOWN entries to treat as new ('all' for every one): to shrink them or "
                             "check that an open bug is fixed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.ops or []) - set(CATALOG)) + sorted(set(args.backends) - set(BACKENDS))
    if unknown:
        parser.error(f"unknown op(s) or backend(s): {unknown}")
    x64 = {"auto": None, "on": True, "off": False}[args.x64]
    if args.print_program:
        for index in range(args.start, args.start + args.programs):
            prog = generate(args.seed, index, args.ops, args.transforms, x64)
            print(f"# program {index} ({prog.transform})\n{program_source(prog, False)}")
        return 0
    IGNORE_KNOWN.update(args.no_allowlist)
    out = args.out or Path(tempfile.mkdtemp(prefix="diff-fuzz-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.worker:
        run_range(args.seed, args.start, args.programs, args.backends, args.ops, args.timeout,
                  not args.no_shrink, out / "results.jsonl", out / "progress", args.transforms, x64)
        return 0
    began = time.monotonic()
    (out / "results.jsonl").unlink(missing_ok=True)
    if args.in_process:
        records = run_range(args.seed, args.start, args.programs, args.backends, args.ops, args.timeout,
                            not args.no_shrink, out / "results.jsonl", None, args.transforms, x64)
    else:
        records = _supervise(args, out)
    summary = summarize(records, time.monotonic() - began)
    summary.update(seed=args.seed, start=args.start, backends=args.backends)
    write_outputs(out, summary)
    print(format_summary(summary))
    print(f"results in {out}")
    return 1 if summary["new"] else 0


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.exit(main())
