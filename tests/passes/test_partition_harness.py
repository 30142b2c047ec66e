"""Running a partitioned (per-device) mlax program on simulated devices, in NumPy.

The partition tests' independent oracle: every device of the module's mesh runs the entry
in lockstep with the dialect's reference semantics, and collectives combine the devices'
values by their definition (groups = devices that agree on every mesh axis not named;
index in a group = the named axes' coordinates linearized, first axis major). It shares no
code with `mlax-simulate-devices` (the interpreter's own road), so each checks the other.
The tests here pin the collectives' semantics on small hand-made cases.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from mlax.backends.interpreter import Interpreter
from mlax.dialect import make_context, read_attributes
from mlax.dialect.attrs import Spec
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.sharding import Mesh, arg_spec, module_mesh, result_spec
from mlax.dialect.transforms import read_transform

COLLECTIVES = {"psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index"}


def _functions(module: ir.Module) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "func.func"}


def block_index(mesh: Mesh, device: int, axes: Sequence[str]) -> int:
    """The device's index along ``axes`` (linearized, first axis major)."""
    coords = mesh.coordinates(device)
    index = 0
    for axis in axes:
        index = index * mesh.axis_size(axis) + coords[axis]
    return index


def group(mesh: Mesh, device: int, axes: Sequence[str]) -> list[int]:
    """The devices that differ from ``device`` only along ``axes``, by their index along them."""
    coords = mesh.coordinates(device)
    members = [d for d in range(mesh.size)
               if all(mesh.coordinates(d)[a] == coords[a] for a in mesh.axis_names if a not in axes)]
    return sorted(members, key=lambda d: block_index(mesh, d, axes))


def shard(value: np.ndarray, spec: Spec, mesh: Mesh, device: int) -> np.ndarray:
    """The device's block of a global value laid out as ``spec``."""
    index = []
    for n, axes in zip(value.shape, spec, strict=True):
        size = n // (mesh.axis_size(axes) if axes else 1)
        start = block_index(mesh, device, axes) * size
        index.append(slice(start, start + size))
    return value[tuple(index)]


def unshard(blocks: Sequence[np.ndarray], spec: Spec, mesh: Mesh) -> np.ndarray:
    """The global value whose blocks the devices hold; devices holding the same block must
    agree on it exactly (a replicated dimension is the same everywhere)."""
    local = blocks[0].shape
    shape = tuple(n * (mesh.axis_size(axes) if axes else 1) for n, axes in zip(local, spec, strict=True))
    out = np.zeros(shape, blocks[0].dtype)
    seen: dict[tuple, np.ndarray] = {}
    for device, block in enumerate(blocks):
        where = tuple(block_index(mesh, device, axes) for axes in spec)
        if where in seen:
            np.testing.assert_array_equal(block, seen[where], err_msg=f"devices disagree on block {where}")
            continue
        seen[where] = block
        out[tuple(slice(i * n, (i + 1) * n) for i, n in zip(where, local, strict=True))] = block
    return out


def _collective(name: str, attrs: dict, values: list[np.ndarray], mesh: Mesh) -> list[np.ndarray]:
    """One collective op on every device's operand (``values[device]``)."""
    axes = attrs["axes"]
    outs = []
    for device in range(mesh.size):
        members = group(mesh, device, axes)
        mine = members.index(device)
        parts = [values[d] for d in members]
        if name in ("psum", "pmax", "pmin"):
            reduce = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}[name]
            outs.append(reduce.reduce(np.stack(parts), axis=0).astype(parts[0].dtype))
        elif name == "all_gather":
            outs.append(np.concatenate(parts, axis=attrs["dimension"]))
        elif name == "psum_scatter":
            total = np.add.reduce(np.stack(parts), axis=0).astype(parts[0].dtype)
            outs.append(np.split(total, len(members), axis=attrs["dimension"])[mine])
        elif name == "all_to_all":
            pieces = [np.split(p, len(members), axis=attrs["split_dimension"])[mine] for p in parts]
            outs.append(np.concatenate(pieces, axis=attrs["concat_dimension"]))
        elif name == "ppermute":
            pairs = attrs["pairs"]
            sources = [s for s, t in zip(pairs[::2], pairs[1::2], strict=True) if t == mine]
            outs.append(parts[sources[0]] if sources else np.zeros_like(values[device]))
        else:  # axis_index
            outs.append(np.asarray(mine, np.int32))
    return outs


class Devices:
    """Runs the functions of a per-device module on all devices of its mesh at once."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.mesh = module_mesh(module)
        self.functions = _functions(module)
        self.interpreter = Interpreter(module)

    def call(self, name: str, args: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        """``args[i][device]`` -> ``results[j][device]``."""
        function = self.functions[name]
        block = function.regions[0].blocks[0]
        env: dict[ir.Value, list[np.ndarray]] = dict(zip(block.arguments, args, strict=True))
        for op in [o.operation for o in block.operations]:
            operands = [env[v] for v in op.operands]
            if op.name == "func.return":
                return operands
            outs = self._op(op, operands)
            for result, value in zip(op.results, outs, strict=True):
                env[result] = value
        raise AssertionError("no return")

    def _op(self, op: ir.Operation, operands: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        short = op.name.removeprefix("mlax.")
        if op.name.startswith("mlax.") and short in COLLECTIVES:
            per_device = [v for v in operands[0]] if operands else [None] * self.mesh.size
            return [_collective(short, read_attributes(op), per_device, self.mesh)]
        if op.name == "func.call":
            callee = self.functions[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
            if callee.regions[0].blocks:
                return self.call(ir.StringAttr(callee.attributes["sym_name"]).value, operands)
            construct = read_transform(callee)
            if construct is not None and construct.kind in CONTROL_FLOW_KINDS:
                return getattr(self, f"_{construct.kind}")(construct.fields, operands)
        rule = self.interpreter.rule_for(op)
        results: list[list[np.ndarray]] = [[] for _ in op.results]
        with np.errstate(all="ignore"):
            for device in range(self.mesh.size):
                outs = rule(*(v[device] for v in operands))
                outs = outs if isinstance(outs, (tuple, list)) else (outs,)
                for i, out in enumerate(outs):
                    results[i].append(np.asarray(out))
        return results


    # Control flow runs in lockstep on every device (its bodies may hold collectives); the
    # devices must agree on the branch taken and on when a loop stops, as SPMD programs do.

    @staticmethod
    def _agreed(values: list[np.ndarray], what: str) -> np.ndarray:
        assert all(np.array_equal(v, values[0]) for v in values), f"the devices disagree on {what}"
        return values[0]

    def _cond(self, fields: dict, operands: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        branches = fields["branches"]
        selector = int(self._agreed(operands[0], "a cond's selector"))
        return self.call(branches[min(max(selector, 0), len(branches) - 1)], operands[1:])

    def _while(self, fields: dict, operands: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        n = len(ir.FunctionType(ir.TypeAttr(self.functions[fields["body"]].attributes["function_type"])
                                .value).results)
        carry, consts = operands[:n], operands[n:]
        while bool(self._agreed(self.call(fields["cond"], [*carry, *consts])[0], "a loop's predicate")):
            carry = self.call(fields["body"], [*carry, *consts])
        return carry

    def _scan(self, fields: dict, operands: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        nc, nk = fields["num_carry"], fields["num_consts"]
        carry, xs = operands[:nc], operands[nc:len(operands) - nk]
        consts = operands[len(operands) - nk:]
        steps = range(fields["length"])
        ys: list[list[list[np.ndarray]]] = []
        for t in (reversed(steps) if fields["reverse"] else steps):
            outs = self.call(fields["body"], [*carry, *([x[t] for x in per] for per in xs), *consts])
            carry, y = outs[:nc], outs[nc:]
            ys.append(y)
        if fields["reverse"]:
            ys.reverse()
        stacked = [[np.stack([step[j][d] for step in ys]) for d in range(self.mesh.size)]
                   for j in range(len(ys[0]) if ys else 0)]
        return [*carry, *stacked]


def run_partitioned(module: ir.Module, entry: str, global_args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run a partitioned ``entry`` on global inputs: each device gets its blocks (by the
    argument specs), the results' blocks are put back together (by the result specs)."""
    devices = Devices(module)
    function, mesh = devices.functions[entry], devices.mesh
    args = [[shard(np.asarray(a), arg_spec(function, i), mesh, d) for d in range(mesh.size)]
            for i, a in enumerate(global_args)]
    results = devices.call(entry, args)
    return [unshard(blocks, result_spec(function, i), mesh) for i, blocks in enumerate(results)]


# --- the harness's own semantics, on hand-made cases -------------------------------------------

MESH = Mesh(("x", "y"), (2, 2), (0, 1, 2, 3))


def test_groups_follow_the_row_major_mesh() -> None:
    assert group(MESH, 0, ("x",)) == [0, 2] and group(MESH, 3, ("y",)) == [2, 3]
    assert group(MESH, 1, ("x", "y")) == [0, 1, 2, 3] and group(MESH, 1, ("y", "x")) == [0, 2, 1, 3]
    assert block_index(MESH, 2, ("x",)) == 1 and block_index(MESH, 2, ("y", "x")) == 1


def test_shard_unshard_round_trip(rng: np.random.Generator) -> None:
    value = rng.standard_normal((4, 6)).astype(np.float32)
    for spec in ((("x",), ("y",)), (("x", "y"), ()), ((), ("y",)), ((), ())):
        blocks = [shard(value, spec, MESH, d) for d in range(4)]
        np.testing.assert_array_equal(unshard(blocks, spec, MESH), value)


def test_collectives_by_definition(rng: np.random.Generator) -> None:
    value = rng.standard_normal((4, 6)).astype(np.float32)
    blocks = [shard(value, (("x",), ()), MESH, d) for d in range(4)]
    gathered = _collective("all_gather", {"axes": ("x",), "dimension": 0}, blocks, MESH)
    assert all(np.array_equal(g, value) for g in gathered)
    moved = _collective("all_to_all", {"axes": ("x",), "split_dimension": 1, "concat_dimension": 0},
                        blocks, MESH)
    np.testing.assert_array_equal(unshard(moved, ((), ("x",)), MESH), value)
    summed = _collective("psum", {"axes": ("x", "y")}, blocks, MESH)
    np.testing.assert_allclose(summed[3], 2 * (value[:2] + value[2:]), rtol=1e-6)
    scattered = _collective("psum_scatter", {"axes": ("y",), "dimension": 1}, blocks, MESH)
    np.testing.assert_allclose(scattered[1], 2 * value[:2, 3:], rtol=1e-6)
    index = _collective("axis_index", {"axes": ("y", "x")}, [None] * 4, MESH)
    assert [int(i) for i in index] == [0, 2, 1, 3]
    shifted = _collective("ppermute", {"axes": ("x",), "pairs": (0, 1)}, blocks, MESH)
    np.testing.assert_array_equal(shifted[2], blocks[0])
    assert not shifted[0].any()


def parse(text: str) -> ir.Module:
    with make_context():
        return ir.Module.parse(text)

