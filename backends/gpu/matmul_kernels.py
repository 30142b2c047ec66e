"""The matmul kernels of `mlax-gpu-matmul`, written as MLIR text, and their index arithmetic.

Every index formula is a small Python function of plain operators (``+ * // %``) that works
on ints, on NumPy arrays (tests/backends/gpu/test_matmul_kernels.py runs a NumPy model of the kernels
through these same functions against ``numpy.matmul``) and on `Ix`, which writes the ``arith``
ops computing it: the IR and the model cannot disagree.

Two kernels, one ``gpu.launch`` per contraction, a block per ``BM x BN`` tile of the output
(x: column tiles, y: row tiles, z: the batch), looping over K in steps of ``BK``; each step
stages the A and B tiles through shared memory (workgroup attributions; ``gpu.barrier``
before and after the reads). Loads of the tiles are coalesced: consecutive threads read
consecutive elements of the operand as it is stored (`staged`). Where a size is not a multiple
of its tile the load index is clamped into the operand and the value replaced by zero
(``arith.select``): no branch, no out-of-bounds read, and zeros add nothing to the sums;
stores outside the result are skipped (``scf.if``).

- `mma_kernel` (f32 as TF32, f16, bf16; f32 accumulation): 4 warps in 2x2, each computing a
  32x32 tile as 2x4 ``nvvm.mma.sync`` tiles of m16n8 (k8 for TF32, k16 for halves); the 32
  accumulators per thread are ``scf.for`` iteration arguments (registers). f32 operands are
  rounded to TF32 once, when staged (``cvt.rna.tf32.f32``, as cuBLAS/XLA); halves go to the
  tensor cores as they are (two per 32-bit register, the lower index in the low half).
- `simt_kernel` (f64, integers, and f32 at HIGHEST precision): 16x16 threads, each computing
  a 4x4 register tile (rows ``ty + 16 i``, columns ``tx + 16 j``: a warp's stores and shared
  reads are consecutive) with ``math.fma`` for floats, ``muli``/``addi`` for integers.

The mma fragment layouts are PTX's (PTX ISA, "Warp-level matrix fragments for mma.m16n8k8"
(.tf32) and "for mma.m16n8k16 with floating point type" (.f16/.bf16), section 9.7.14.5.x):
with ``groupID = laneid / 4`` and ``threadID_in_group = laneid % 4``,

- m16n8k8 .tf32, A (16x8, row), registers a0..a3: row = groupID + 8 for a1 and a3, groupID
  otherwise; col = threadID_in_group + 4 for a2 and a3, threadID_in_group otherwise.
  B (8x8, col), b0..b1: row (k) = threadID_in_group (+ 4 for b1); col (n) = groupID.
- m16n8k16 .f16/.bf16, A (16x16), elements a0..a7 (two per register): row = groupID for
  a0, a1, a4, a5, groupID + 8 otherwise; col = threadID_in_group * 2 + (i & 1), + 8 for i >= 4.
  B (16x8), b0..b3: row (k) = threadID_in_group * 2 + (i & 1), + 8 for i >= 2; col = groupID.
- C/D (16x8 f32, both shapes), c0..c3: row = groupID, + 8 for c2, c3; col =
  threadID_in_group * 2 + (i & 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The tensor-core kernel: a 64x64 block tile, K staged 32 at a time, 4 warps of 32x32 each.
MMA_TILE = (64, 64, 32)
MMA_THREADS = 128
WARPS_N = 2
WARP_TILE = (32, 32)
WARP_MMAS = (WARP_TILE[0] // 16, WARP_TILE[1] // 8)  # m16n8 tiles per warp
MMA_K = {"tf32": 8, "f16": 16, "bf16": 16}
# Shared rows are padded so that a warp's fragment reads hit 32 different banks.
MMA_PAD = {"tf32": 4, "f16": 8, "bf16": 8}
# The SIMT kernel: a 64x64 block tile, K staged 16 at a time, 16x16 threads of 4x4 outputs.
SIMT_TILE = (64, 64, 16)
SIMT_SIDE = 16
SIMT_REGS = 4
SIMT_THREADS = SIMT_SIDE * SIMT_SIDE

_WORKGROUP = "#gpu.address_space<workgroup>"
_STRUCT = "!llvm.struct<(f32, f32, f32, f32)>"


# ----- index formulas (ints, NumPy arrays or Ix) -----

def staged(thread: Any, step: int, threads: int, shape: tuple[int, int], swapped: bool) -> tuple[Any, Any]:
    """The element (row, col) of a logical ``shape`` tile that ``thread`` loads at ``step``:
    consecutive threads take consecutive elements of the tile as the operand stores it
    (``swapped``: stored transposed, the logical rows contiguous)."""
    cols = shape[0] if swapped else shape[1]
    flat = thread + step * threads
    r, c = flat // cols, flat % cols
    return (c, r) if swapped else (r, c)


def loads_per_thread(shape: tuple[int, int], threads: int) -> int:
    return shape[0] * shape[1] // threads


def warp_origin(warp: Any) -> tuple[Any, Any]:
    """The (row, col) of a warp's 32x32 tile in the block tile."""
    return warp // WARPS_N * WARP_TILE[0], warp % WARPS_N * WARP_TILE[1]


def mma_a(kind: str, lane: Any, i: int) -> tuple[Any, Any]:
    """The (row, col) in the 16 x k A tile of element ``i`` of ``lane``'s A fragment."""
    group, thread = lane // 4, lane % 4
    if kind == "tf32":
        return group + 8 * (i % 2), thread + 4 * (i // 2)
    return group + 8 * (i // 2 % 2), thread * 2 + i % 2 + 8 * (i // 4)


def mma_b(kind: str, lane: Any, i: int) -> tuple[Any, Any]:
    """The (k, col) in the k x 8 B tile of element ``i`` of ``lane``'s B fragment."""
    group, thread = lane // 4, lane % 4
    if kind == "tf32":
        return thread + 4 * i, group
    return thread * 2 + i % 2 + 8 * (i // 2), group


def mma_c(lane: Any, i: int) -> tuple[Any, Any]:
    """The (row, col) in the 16x8 accumulator tile of element ``i`` of ``lane``'s fragment."""
    group, thread = lane // 4, lane % 4
    return group + 8 * (i // 2), thread * 2 + i % 2


def fragment_sizes(kind: str) -> tuple[int, int]:
    """Elements per thread of the A and B fragments (4 and 2 registers; halves pack two)."""
    return (4, 2) if kind == "tf32" else (8, 4)


def simt_element(thread: Any, i: int, j: int) -> tuple[Any, Any]:
    """The (row, col) in the block tile of a SIMT thread's output ``(i, j)`` of its 4x4."""
    return thread // SIMT_SIDE + SIMT_SIDE * i, thread % SIMT_SIDE + SIMT_SIDE * j


# ----- writing the IR -----

class Text:
    """MLIR text being written: fresh SSA names, constants hoisted to the launch's entry, and
    the user's location on every op."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, str] = {}  # "value : type" -> SSA name
        self.count = 0

    def op(self, text: str) -> str:
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {text} loc(#user)")
        return name

    def stmt(self, text: str) -> None:
        self.lines.append(f"{text} loc(#user)" if not text.endswith("{") else text)

    def const(self, value: int | float, type_: str) -> str:
        literal = _literal(value, type_)
        if literal not in self.constants:
            self.constants[literal] = f"%cst{len(self.constants)}"
        return self.constants[literal]

    def index(self, value: int) -> Ix:
        return Ix(self, self.const(value, "index"))

    def constant_lines(self) -> list[str]:
        return [f"{name} = arith.constant {literal} loc(#user)" for literal, name in self.constants.items()]


def _is_float(element: str) -> bool:
    return element.startswith(("f", "bf"))


def _literal(value: int | float, type_: str) -> str:
    if isinstance(value, float) or _is_float(type_):
        return f"{float(value)!r} : {type_}"
    return f"{value} : {type_}"


@dataclass(frozen=True)
class Ix:
    """An index value in the IR; arithmetic with ints and Ixs writes the ops (folding 0, 1)."""

    text: Text
    name: str

    def _binary(self, other: Any, op: str) -> Ix:
        other = other if isinstance(other, Ix) else self.text.index(other)
        return Ix(self.text, self.text.op(f"arith.{op} {self.name}, {other.name} : index"))

    def __add__(self, other: Any) -> Ix:
        return self if isinstance(other, int) and other == 0 else self._binary(other, "addi")

    __radd__ = __add__

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, int) and other in (0, 1):
            return 0 if other == 0 else self
        return self._binary(other, "muli")

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Any:
        return self if isinstance(other, int) and other == 1 else self._binary(other, "divui")

    def __mod__(self, other: Any) -> Any:
        return 0 if isinstance(other, int) and other == 1 else self._binary(other, "remui")


def _ix(text: Text, value: Any) -> Ix:
    return value if isinstance(value, Ix) else text.index(value)


@dataclass(frozen=True)
class Operand:
    """A matmul operand as the kernel reads it: its memref type and, per memref dimension,
    ``(which, stride, size)``: the dimension's index is ``(logical // stride) % size`` of the
    logical index ``which``: ``"b"`` (the batch), ``"r"`` or ``"c"`` (the operand's matrix row
    and column: A is M x K, B is K x N, C is M x N). Dimensions may come in any order (a
    transposed operand) and several may make up one logical index (``x @ w`` with x of shape
    (4, 8, 16): M = 32 rows read as ``(m // 8, m % 8)``)."""

    name: str
    type: str
    element: str
    dims: tuple[tuple[str, int, int], ...]

    @property
    def swapped(self) -> bool:
        """Whether the operand's contiguous dimension is part of its rows (stored transposed)."""
        return bool(self.dims) and self.dims[-1][0] == "r"

    def indices(self, logical: dict[str, Any]) -> list[Any]:
        """The memref indices of the element at the ``logical`` indices (ints, arrays or Ix)."""
        extent: dict[str, int] = {}
        for which, stride, size in self.dims:
            extent[which] = max(extent.get(which, 1), stride * size)
        return [logical[which] // stride % size if stride * size < extent[which] else logical[which] // stride
                for which, stride, size in self.dims]


@dataclass(frozen=True)
class Matmul:
    """One contraction ``C[b] (+)= A[b] @ B[b]`` of static sizes."""

    a: Operand
    b: Operand
    c: Operand
    m: int
    n: int
    k: int
    batch: int
    accumulate: bool  # C's contents are the initial sums (no zero fill was found)


def _ceil(x: int, step: int) -> int:
    return -(-x // step) * step


class _Kernel:
    """What both kernels share: the launch, guarded tile loads, guarded result stores."""

    def __init__(self, mm: Matmul, tile: tuple[int, int, int], threads: int, accumulator: str) -> None:
        self.mm, self.tile, self.threads, self.accumulator = mm, tile, threads, accumulator
        self.t = Text()

    def zero(self, element: str) -> str:
        return self.t.const(0.0 if _is_float(element) else 0, element)

    def load(self, operand: Operand, row: Any, col: Any, bounds: tuple[int, int], batch: Ix) -> str:
        """The element at logical ``(batch, row, col)`` of ``operand``, zero outside."""
        t, ok = self.t, None
        clamped = []
        for index, bound, step in zip((row, col), bounds, self._steps(operand), strict=True):
            index = _ix(t, index)
            if bound % step:
                inside = t.op(f"arith.cmpi ult, {index.name}, {t.const(bound, 'index')} : index")
                ok = inside if ok is None else t.op(f"arith.andi {ok}, {inside} : i1")
                index = Ix(t, t.op(f"arith.minui {index.name}, {t.const(bound - 1, 'index')} : index"))
            clamped.append(index)
        at = operand.indices({"b": batch, "r": clamped[0], "c": clamped[1]})
        indices = ", ".join(_ix(t, i).name for i in at)
        value = t.op(f"memref.load %{operand.name}[{indices}] : {operand.type}")
        return value if ok is None else t.op(f"arith.select {ok}, {value}, {self.zero(operand.element)} : "
                                             f"{operand.element}")

    def _steps(self, operand: Operand) -> tuple[int, int]:
        bm, bn, bk = self.tile
        return {"a": (bm, bk), "b": (bk, bn), "c": (bm, bn)}[operand.name]

    def store(self, value: str, row: Ix, col: Ix, batch: Ix) -> None:
        t, mm = self.t, self.mm
        guard = [f"arith.cmpi ult, {i.name}, {t.const(bound, 'index')} : index"
                 for i, bound, step in ((row, mm.m, self.tile[0]), (col, mm.n, self.tile[1])) if bound % step]
        ok = None
        for condition in guard:
            inside = t.op(condition)
            ok = inside if ok is None else t.op(f"arith.andi {ok}, {inside} : i1")
        if ok is not None:
            t.stmt(f"scf.if {ok} {{")
        if mm.c.element != self.accumulator:  # a half result: rounded as it is stored
            value = t.op(f"arith.truncf {value} : {self.accumulator} to {mm.c.element}")
        indices = ", ".join(_ix(t, i).name for i in mm.c.indices({"b": batch, "r": row, "c": col}))
        t.stmt(f"memref.store {value}, %c[{indices}] : {mm.c.type}")
        if ok is not None:
            t.stmt("}")

    def initial(self, rows: list[Ix], cols: list[Ix], batch: Ix) -> list[str]:
        """The accumulators' initial values: zeros, or C's contents."""
        if not self.mm.accumulate:
            return [self.zero(self.accumulator)] * len(rows)
        bounds = (self.mm.m, self.mm.n)
        return [self.load(self.mm.c, r, c, bounds, batch) for r, c in zip(rows, cols, strict=True)]

    def k_loop(self, initial: list[str], body: Any) -> list[str]:
        """``scf.for`` over the K tiles carrying the accumulators; ``body(k0, accs)`` -> new accs."""
        t, bk = self.t, self.tile[2]
        accs = [f"%acc{j}" for j in range(len(initial))]
        result = f"%sums{t.count}"
        t.count += 1
        carried = ", ".join(f"{a} = {v}" for a, v in zip(accs, initial, strict=True))
        types = ", ".join([self.accumulator] * len(accs))
        t.stmt(f"{result}:{len(accs)} = scf.for %k0 = {t.const(0, 'index')} to "
               f"{t.const(_ceil(self.mm.k, bk), 'index')} step {t.const(bk, 'index')} "
               f"iter_args({carried}) -> ({types}) {{")
        new = body(Ix(t, "%k0"), accs)
        t.stmt(f"scf.yield {', '.join(new)} : {types}")
        t.stmt("}")
        return [f"{result}#{j}" for j in range(len(accs))]

    def finish(self, initial: list[str], body: Any, c_at: Any, batch: Ix, shared: list[tuple[str, str]],
               location: str) -> str:
        """Run the K loop from ``initial``, store the sums at ``c_at`` and return the function."""
        sums = self.k_loop(initial, body)
        for value, (row, col) in zip(sums, c_at, strict=True):
            self.store(value, _ix(self.t, row), _ix(self.t, col), batch)
        return self.function(shared, location)

    def function(self, shared: list[tuple[str, str]], location: str) -> str:
        """The template function holding the launch (the pass moves its body into place)."""
        mm, (bm, bn, _) = self.mm, self.tile
        grid = (-(-mm.n // bn), -(-mm.m // bm), mm.batch)
        workgroup = ", ".join(f"%{name} : {type_}" for name, type_ in shared)
        sizes = (*grid, self.threads, 1)
        host = [f"%g{j} = arith.constant {v} : index loc(#user)" for j, v in enumerate(sizes)]
        return "\n".join([
            f"#user = {location}",
            f"func.func @template(%a: {mm.a.type}, %b: {mm.b.type}, %c: {mm.c.type}) {{", *host,
            "gpu.launch blocks(%bx, %by, %bz) in (%sbx = %g0, %sby = %g1, %sbz = %g2) "
            "threads(%tx, %ty, %tz) in (%stx = %g3, %sty = %g4, %stz = %g4) "
            f"workgroup({workgroup}) {{",
            *self.t.constant_lines(), *self.t.lines,
            "gpu.terminator loc(#user)", "} loc(#user)", "return loc(#user)", "} loc(#user)"])


def _stage(kernel: _Kernel, operand: Operand, k0: Ix, origin: tuple[Ix, Ix], batch: Ix,
           store: Any) -> None:
    """Load this thread's share of an A or B tile (all loads first) and ``store`` each value
    at its logical tile position."""
    t, (bm, bn, bk) = kernel.t, kernel.tile
    shape = (bm, bk) if operand.name == "a" else (bk, bn)
    bounds = (kernel.mm.m, kernel.mm.k) if operand.name == "a" else (kernel.mm.k, kernel.mm.n)
    thread = Ix(t, "%tx")
    values = []
    for step in range(loads_per_thread(shape, kernel.threads)):
        r, c = staged(thread, step, kernel.threads, shape, operand.swapped)
        row = _ix(t, r) + (origin[0] if operand.name == "a" else k0)
        col = _ix(t, c) + (k0 if operand.name == "a" else origin[1])
        values.append((r, c, kernel.load(operand, row, col, bounds, batch)))
    for r, c, value in values:
        store(_ix(t, r), _ix(t, c), value)


def mma_kernel(mm: Matmul, kind: str, location: str) -> str:
    """The tensor-core kernel of ``mm`` (``kind``: tf32, f16 or bf16) as a template function."""
    kernel = _Kernel(mm, MMA_TILE, MMA_THREADS, "f32")
    t, (bm, bn, bk) = kernel.t, MMA_TILE
    stored = "i32" if kind == "tf32" else kind  # TF32 bits once rounded
    shared_type = f"memref<{bm}x{bk + MMA_PAD[kind]}x{stored}, {_WORKGROUP}>"
    thread, batch = Ix(t, "%tx"), Ix(t, "%bz")
    origin = (Ix(t, "%by") * bm, Ix(t, "%bx") * bn)
    warp_row, warp_col = (_ix(t, v) for v in warp_origin(thread // 32))
    lane = thread % 32
    tiles = [(mt, nt) for mt in range(WARP_MMAS[0]) for nt in range(WARP_MMAS[1])]
    c_at = [(origin[0] + warp_row + 16 * mt + mma_c(lane, i)[0],
             origin[1] + warp_col + 8 * nt + mma_c(lane, i)[1]) for mt, nt in tiles for i in range(4)]
    n_a, n_b = fragment_sizes(kind)
    a_at = {(mt, kk, i): (warp_row + 16 * mt + mma_a(kind, lane, i)[0], _ix(t, mma_a(kind, lane, i)[1] + kk))
            for mt in range(WARP_MMAS[0]) for kk in range(0, bk, MMA_K[kind]) for i in range(n_a)}
    b_at = {(nt, kk, i): (warp_col + 8 * nt + mma_b(kind, lane, i)[1], _ix(t, mma_b(kind, lane, i)[0] + kk))
            for nt in range(WARP_MMAS[1]) for kk in range(0, bk, MMA_K[kind]) for i in range(n_b)}
    initial = kernel.initial([_ix(t, r) for r, _ in c_at], [_ix(t, c) for _, c in c_at], batch)

    def put(name: str) -> Any:
        def store(row: Ix, col: Ix, value: str) -> None:
            if kind == "tf32":
                value = t.op(f'llvm.call_intrinsic "llvm.nvvm.f2tf32.rna"({value}) : (f32) -> i32')
            at = f"{row.name}, {col.name}" if name == "As" else f"{col.name}, {row.name}"  # Bs is [n][k]
            t.stmt(f"memref.store {value}, %{name}[{at}] : {shared_type}")
        return store

    def fragment(name: str, at: list[tuple[Ix, Ix]]) -> list[str]:
        values = [t.op(f"memref.load %{name}[{r.name}, {c.name}] : {shared_type}") for r, c in at]
        if kind == "tf32":
            return values
        return [_pack(t, kind, values[j], values[j + 1]) for j in range(0, len(values), 2)]

    def body(k0: Ix, accs: list[str]) -> list[str]:
        _stage(kernel, mm.a, k0, origin, batch, put("As"))
        _stage(kernel, mm.b, k0, origin, batch, put("Bs"))
        t.stmt("gpu.barrier")
        accs = list(accs)
        for kk in range(0, bk, MMA_K[kind]):
            a = [fragment("As", [a_at[mt, kk, i] for i in range(n_a)]) for mt in range(WARP_MMAS[0])]
            b = [fragment("Bs", [b_at[nt, kk, i] for i in range(n_b)]) for nt in range(WARP_MMAS[1])]
            for tile, (mt, nt) in enumerate(tiles):
                accs[4 * tile:4 * tile + 4] = _mma(t, kind, a[mt], b[nt], accs[4 * tile:4 * tile + 4])
        t.stmt("gpu.barrier")
        return accs

    return kernel.finish(initial, body, c_at, batch, [("As", shared_type), ("Bs", shared_type)], location)


def _pack(t: Text, kind: str, low: str, high: str) -> str:
    """Two halves in one 32-bit register, the lower index in the low bits (PTX's .f16x2)."""
    words = []
    for value in (low, high):
        bits = t.op(f"arith.bitcast {value} : {kind} to i16")
        words.append(t.op(f"arith.extui {bits} : i16 to i32"))
    high_bits = t.op(f"arith.shli {words[1]}, {t.const(16, 'i32')} : i32")
    packed = t.op(f"arith.ori {words[0]}, {high_bits} : i32")
    return t.op(f"llvm.bitcast {packed} : i32 to vector<2xf16>") if kind == "f16" else packed


def _mma(t: Text, kind: str, a: list[str], b: list[str], c: list[str]) -> list[str]:
    """One m16n8 ``mma.sync`` (row-major A, column-major B, f32 accumulators)."""
    operand = "vector<2xf16>" if kind == "f16" else "i32"
    shape = f"#nvvm.shape<m = 16, n = 8, k = {MMA_K[kind]}>"
    d = t.op(f"nvvm.mma.sync A[{', '.join(a)}] B[{', '.join(b)}] C[{', '.join(c)}] "
             f"{{layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, "
             f"multiplicandAPtxType = #nvvm.mma_type<{kind}>, multiplicandBPtxType = #nvvm.mma_type<{kind}>, "
             f"shape = {shape}}} : ({operand}, {operand}, f32) -> {_STRUCT}")
    return [t.op(f"llvm.extractvalue {d}[{i}] : {_STRUCT}") for i in range(4)]


def simt_kernel(mm: Matmul, element: str, location: str) -> str:
    """The shared-memory tiled kernel without tensor cores (f64, integers, f32 at HIGHEST)."""
    kernel = _Kernel(mm, SIMT_TILE, SIMT_THREADS, element)
    t, (bm, bn, bk) = kernel.t, SIMT_TILE
    a_type, b_type = (f"memref<{bk}x{side + 1}x{element}, {_WORKGROUP}>" for side in (bm, bn))
    thread, batch = Ix(t, "%tx"), Ix(t, "%bz")
    origin = (Ix(t, "%by") * bm, Ix(t, "%bx") * bn)
    outputs = [(i, j) for i in range(SIMT_REGS) for j in range(SIMT_REGS)]
    at = [tuple(_ix(t, v) for v in simt_element(thread, i, j)) for i, j in outputs]
    rows = [at[SIMT_REGS * i][0] for i in range(SIMT_REGS)]
    cols = [at[j][1] for j in range(SIMT_REGS)]
    c_at = [(origin[0] + r, origin[1] + c) for r, c in at]
    initial = kernel.initial([r for r, _ in c_at], [c for _, c in c_at], batch)

    def put(name: str, type_: str) -> Any:
        def store(row: Ix, col: Ix, value: str) -> None:
            at = f"{col.name}, {row.name}" if name == "As" else f"{row.name}, {col.name}"  # As is [k][m]
            t.stmt(f"memref.store {value}, %{name}[{at}] : {type_}")
        return store

    def body(k0: Ix, accs: list[str]) -> list[str]:
        _stage(kernel, mm.a, k0, origin, batch, put("As", a_type))
        _stage(kernel, mm.b, k0, origin, batch, put("Bs", b_type))
        t.stmt("gpu.barrier")
        accs = list(accs)
        for kk in range(bk):
            k = t.const(kk, "index")
            a = [t.op(f"memref.load %As[{k}, {r.name}] : {a_type}") for r in rows]
            b = [t.op(f"memref.load %Bs[{k}, {c.name}] : {b_type}") for c in cols]
            for n, (i, j) in enumerate(outputs):
                if _is_float(element):
                    accs[n] = t.op(f"math.fma {a[i]}, {b[j]}, {accs[n]} : {element}")
                else:
                    product = t.op(f"arith.muli {a[i]}, {b[j]} : {element}")
                    accs[n] = t.op(f"arith.addi {product}, {accs[n]} : {element}")
        t.stmt("gpu.barrier")
        return accs

    return kernel.finish(initial, body, c_at, batch, [("As", a_type), ("Bs", b_type)], location)
