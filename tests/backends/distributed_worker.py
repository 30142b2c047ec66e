"""One process of tests/backends/test_distributed.py: joins the group, runs a per-device program
(with a psum) partitioned over every process's devices and a sharded jit, and checks the shards
this process holds (exit status 0 if so).

    python -m tests.backends.distributed_worker COORDINATOR NUM_PROCESSES PROCESS_ID [shardy|gspmd]
"""

from __future__ import annotations

import sys

import numpy as np

# x: 2 (one per process, major), y: 2 (this process's two devices). a * b is split over both,
# and its per-device blocks are summed over y, so each process's two devices reduce with each
# other only if the program's device order is the mesh's (global ids are not 0..N-1).
PROGRAM = """
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>,
                                device_ids = array<i64: IDS>}} {
  func.func @f(%a: tensor<2x3xf32> {mlax.sharding = [["x"], ["y"]]},
               %b: tensor<2x3xf32> {mlax.sharding = [["x"], ["y"]]})
      -> (tensor<2x3xf32> {mlax.sharding = [["x"], ["y"]]}, tensor<2x3xf32> {mlax.sharding = [["x"], []]})
      attributes {mlax.partitioned} {
    %0 = "mlax.mul"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "mlax.psum"(%0) {axes = ["y"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
  }
}
"""

def main() -> None:
    coordinator, count, process = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    import mlax

    mlax.config.update("jax_num_cpu_devices", 2)
    mlax.config.update("jax_use_shardy_partitioner", sys.argv[4:5] != ["gspmd"])
    mlax.distributed.initialize(coordinator, count, process)
    try:
        check(process)
    finally:
        mlax.distributed.shutdown()


def check(process: int) -> None:
    import jax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P
    from mlir import ir

    import mlax
    from mlax.array import Array
    from mlax.backends.registry import get_backend
    from mlax.dialect import get_context

    assert mlax.process_count() == 2 and mlax.process_index() == process
    assert len(mlax.devices()) == 4 and len(mlax.local_devices()) == 2
    devices = mlax.devices()
    ids = [d.id for d in devices]
    mesh = Mesh(np.array(devices).reshape(2, 2), ("x", "y"))
    rng = np.random.default_rng(7)  # the same global data in every process
    a = rng.normal(size=(4, 6)).astype(np.float32)
    b = rng.normal(size=(4, 6)).astype(np.float32)
    # a from this process's rows only; b as the global value (each process takes its shards)
    sharding = NamedSharding(mesh, P("x", "y"))
    local_a = mlax.make_array_from_process_local_data(sharding, a[2 * process:2 * process + 2])
    assert not local_a.is_fully_addressable and len(local_a.addressable_shards) == 2
    text = PROGRAM.replace("IDS", ", ".join(map(str, ids)))
    module = ir.Module.parse(text, get_context())
    executable = get_backend("xla").compile(module, "f")
    product, summed = (Array._wrap_device(o) for o in executable([local_a._buffer, b]))
    assert product.sharding == sharding and not product.is_fully_addressable
    expected_sum = (a * b).reshape(4, 2, 3).sum(axis=1)  # the two column blocks summed
    for shard in product.addressable_shards:
        assert shard.device.process_index == process
        np.testing.assert_allclose(np.asarray(shard.data), (a * b)[shard.index], rtol=1e-6)
    for shard in summed.addressable_shards:
        np.testing.assert_allclose(np.asarray(shard.data), expected_sum[shard.index], rtol=1e-5)
    # jax's own shard_map of the same body on the same arrays agrees
    body = lambda a, b: jax.lax.psum(a * b, "y")  # noqa: E731
    theirs = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"),) * 2, out_specs=P("x", None)))(
        local_a._device, jax.device_put(b, sharding))
    for mine, shard in zip(summed.addressable_shards, theirs.addressable_shards, strict=True):
        np.testing.assert_allclose(np.asarray(mine.data), np.asarray(shard.data), rtol=1e-6)
    # a sharded jit over both processes: the partitioner's collectives sum the rows' halves
    placed_b = mlax.device_put(b, sharding)
    row_sums = mlax.jit(lambda a, b: mlax.numpy.sum(a * b, axis=1), out_shardings=NamedSharding(mesh, P("x")))
    out = row_sums(local_a, placed_b)
    assert out.sharding.is_equivalent_to(NamedSharding(mesh, P("x")), 1) and not out.is_fully_addressable
    for shard in out.addressable_shards:
        assert shard.device.process_index == process
        np.testing.assert_allclose(np.asarray(shard.data), (a * b).sum(axis=1)[shard.index], rtol=1e-5)
    print(f"process {process}: ok", flush=True)


if __name__ == "__main__":
    main()
