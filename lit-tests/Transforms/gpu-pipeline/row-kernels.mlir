// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | FileCheck %s --check-prefix=PTX

// mlax-gpu-row-kernels in the GPU pipeline: each run of row reductions and the row-wise ops
// around them is one kernel; reductions are block reductions (gpu.all_reduce: warp shuffles,
// shared memory, bar.sync) or, for rows of at most 32, butterflies of shuffles in a warp.

// Softmax: one kernel, a block of 128 threads per row.
// CHECK-LABEL: func.func @jit.softmax(
// CHECK:         gpu.launch_func @jit.softmax_kernel::@jit_softmax_kernel blocks in (%c16, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK-NEXT:    gpu.dealloc
// CHECK-NEXT:    return
// CHECK:         gpu.module @jit.softmax_kernel
// CHECK:           scf.for
// CHECK:             arith.maximumf
// CHECK:           gpu.all_reduce maximumf
// CHECK:           scf.for
// CHECK:             memref.store
// CHECK:           gpu.all_reduce add
// CHECK:           scf.for
// CHECK:             arith.divf
// CHECK-NOT:     gpu.module @jit.softmax
// PTX-LABEL:     gpu.binary @jit.softmax_kernel
// PTX-SAME:        shfl.sync.bfly.b32{{.*}}bar.sync{{.*}}max.NaN.f32
// PTX-NOT:       gpu.binary @jit.softmax
func.func @softmax(%x: tensor<16x100xf32>) -> tensor<16x100xf32> {
  %m = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<16x100xf32>) -> tensor<16xf32>
  %mb = "mlax.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 16, 100>} : (tensor<16xf32>) -> tensor<16x100xf32>
  %d = "mlax.sub"(%x, %mb) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  %e = "mlax.exp"(%d) : (tensor<16x100xf32>) -> tensor<16x100xf32>
  %s = "mlax.reduce_sum"(%e) {dimensions = array<i64: 1>} : (tensor<16x100xf32>) -> tensor<16xf32>
  %sb = "mlax.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 16, 100>} : (tensor<16xf32>) -> tensor<16x100xf32>
  %r = "mlax.div"(%e, %sb) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  return %r : tensor<16x100xf32>
}

// -----

// log_softmax: x - max - log(sum(exp(x - max))), one kernel.
// CHECK-LABEL: func.func @jit.log_softmax(
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.all_reduce maximumf
// CHECK:         gpu.all_reduce add
// PTX-COUNT-1:   gpu.binary @jit.log_softmax_kernel {{.*}}bar.sync
// PTX-NOT:       gpu.binary
func.func @log_softmax(%x: tensor<16x100xf32>) -> tensor<16x100xf32> {
  %m = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<16x100xf32>) -> tensor<16xf32>
  %mb = "mlax.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 16, 100>} : (tensor<16xf32>) -> tensor<16x100xf32>
  %d = "mlax.sub"(%x, %mb) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  %e = "mlax.exp"(%d) : (tensor<16x100xf32>) -> tensor<16x100xf32>
  %s = "mlax.reduce_sum"(%e) {dimensions = array<i64: 1>} : (tensor<16x100xf32>) -> tensor<16xf32>
  %l = "mlax.log"(%s) : (tensor<16xf32>) -> tensor<16xf32>
  %lb = "mlax.broadcast_in_dim"(%l) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 16, 100>} : (tensor<16xf32>) -> tensor<16x100xf32>
  %r = "mlax.sub"(%d, %lb) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  return %r : tensor<16x100xf32>
}

// -----

// Layer norm: mean, variance (sum of squares of x - mean, the mean read from registers) and
// the normalisation in one kernel.
// CHECK-LABEL: func.func @jit.layernorm(
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.all_reduce add
// CHECK:         gpu.all_reduce add
// CHECK:         arith.divf
// PTX-COUNT-1:   gpu.binary @jit.layernorm_kernel {{.*}}bar.sync
// PTX-NOT:       gpu.binary
func.func @layernorm(%x: tensor<16x100xf32>) -> tensor<16x100xf32> {
  %n = "mlax.constant"() {value = dense<1.000000e+02> : tensor<16xf32>} : () -> tensor<16xf32>
  %eps = "mlax.constant"() {value = dense<1.000000e-05> : tensor<16xf32>} : () -> tensor<16xf32>
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 1>} : (tensor<16x100xf32>) -> tensor<16xf32>
  %mean = "mlax.div"(%s, %n) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %mb = "mlax.broadcast_in_dim"(%mean) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 16, 100>} : (tensor<16xf32>) -> tensor<16x100xf32>
  %d = "mlax.sub"(%x, %mb) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  %sq = "mlax.mul"(%d, %d) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  %ss = "mlax.reduce_sum"(%sq) {dimensions = array<i64: 1>} : (tensor<16x100xf32>) -> tensor<16xf32>
  %var = "mlax.div"(%ss, %n) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %ve = "mlax.add"(%var, %eps) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %sd = "mlax.sqrt"(%ve) : (tensor<16xf32>) -> tensor<16xf32>
  %sdb = "mlax.broadcast_in_dim"(%sd) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 16, 100>} : (tensor<16xf32>) -> tensor<16x100xf32>
  %r = "mlax.div"(%d, %sdb) : (tensor<16x100xf32>, tensor<16x100xf32>) -> tensor<16x100xf32>
  return %r : tensor<16x100xf32>
}

// -----

// Row sum, max and min of 37x53 (rows not a multiple of a warp): one kernel, a block of 64
// threads per row (53 rounded up to whole warps), three block reductions; each result is
// stored once by the row's first thread.
// CHECK-LABEL: func.func @jit.rows(
// CHECK:         gpu.launch_func @jit.rows_kernel::@jit_rows_kernel blocks in (%c37, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK-NEXT:    return
// CHECK:         gpu.all_reduce add
// CHECK:         gpu.all_reduce maximumf
// CHECK:         gpu.all_reduce minimumf
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK:         scf.if %[[FIRST]]
// CHECK-COUNT-3:   memref.store
// PTX:           gpu.binary @jit.rows_kernel {{.*}}max.NaN.f32{{.*}}min.NaN.f32
func.func @rows(%x: tensor<37x53xf32>) -> (tensor<37xf32>, tensor<37xf32>, tensor<37xf32>) {
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 1>} : (tensor<37x53xf32>) -> tensor<37xf32>
  %m = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<37x53xf32>) -> tensor<37xf32>
  %n = "mlax.reduce_min"(%x) {dimensions = array<i64: 1>} : (tensor<37x53xf32>) -> tensor<37xf32>
  return %s, %m, %n : tensor<37xf32>, tensor<37xf32>, tensor<37xf32>
}

// -----

// Reducing the last two dimensions of 4x5x6 (rows of 30): 32 lanes per row, 4 rows per block,
// a butterfly of 5 shuffles (no shared memory, no barrier).
// CHECK-LABEL: func.func @jit.rank3(
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1, %c1, %c1) threads in (%c32, %c4, %c1)
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT:     gpu.all_reduce
// PTX-LABEL:     gpu.binary @jit.rank3_kernel
// PTX-COUNT-5:   shfl.sync.bfly.b32
// PTX-NOT:       bar.sync
func.func @rank3(%x: tensor<4x5x6xf32>) -> tensor<4xf32> {
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 1, 2>} : (tensor<4x5x6xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Rows of 10 (an MLP's log_softmax over 10 classes), 3-D 3x7x45 max over the last dimension:
// 16 lanes per row, 16 rows per block, 4 butterfly steps; 21 rows of 45: a block of 64
// threads per row.
// CHECK-LABEL: func.func @jit.short(
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1)
// CHECK:         gpu.launch_func {{.*}} blocks in (%c21, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK-NEXT:    return
// The 16 rows fill the block exactly: no row guard.
// CHECK:         gpu.module
// CHECK-NOT:       arith.cmpi ult
// CHECK-COUNT-4:   gpu.shuffle  xor
// CHECK-NOT:       gpu.shuffle
// CHECK:         gpu.module
// CHECK:           gpu.all_reduce maximumf
// PTX-LABEL:     gpu.binary @jit.short_kernel
func.func @short(%x: tensor<16x10xf32>, %y: tensor<3x7x45xf32>) -> (tensor<16xf32>, tensor<3x7xf32>) {
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 1>} : (tensor<16x10xf32>) -> tensor<16xf32>
  %m = "mlax.reduce_max"(%y) {dimensions = array<i64: 2>} : (tensor<3x7x45xf32>) -> tensor<3x7xf32>
  return %s, %m : tensor<16xf32>, tensor<3x7xf32>
}

// -----

// 5 rows of 12: 16 lanes a row, the block rounded to whole warps (6 rows, 96 threads); the
// extra row loads nothing (its loops end at 0, its index clamped) and stores nothing.
// CHECK-LABEL: func.func @jit.guarded(
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1, %c1, %c1) threads in (%c16, %c6, %c1)
// CHECK:         %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %c5
// CHECK:         arith.select %[[VALID]], %{{.*}}, %c4
// CHECK:         arith.select %[[VALID]], %c12, %c0
// CHECK:         arith.andi %{{.*}}, %[[VALID]]
func.func @guarded(%x: tensor<5x12xf32>) -> tensor<5xf32> {
  %s = "mlax.reduce_max"(%x) {dimensions = array<i64: 1>} : (tensor<5x12xf32>) -> tensor<5xf32>
  return %s : tensor<5xf32>
}

// -----

// A sum to a scalar: one block of 1024 threads striding over the 1961 elements.
// CHECK-LABEL: func.func @jit.scalar(
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1, %c1, %c1) threads in (%c1024, %c1, %c1)
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c1961 step %c1024
// CHECK:         gpu.all_reduce add
// PTX:           gpu.binary @jit.scalar_kernel {{.*}}shfl.sync.bfly{{.*}}bar.sync
func.func @scalar(%x: tensor<37x53xf32>) -> tensor<f32> {
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0, 1>} : (tensor<37x53xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A column reduction keeps its kernels (a fill, then one thread per column looping down it:
// already coalesced); an argmax (two outputs) too.
// CHECK-LABEL: func.func @jit.columns(
// CHECK-NOT:     gpu.all_reduce
// CHECK-NOT:     gpu.shuffle
// CHECK:         return
func.func @columns(%x: tensor<37x53xf32>) -> (tensor<53xf32>, tensor<37xi32>) {
  %s = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<37x53xf32>) -> tensor<53xf32>
  %a = "mlax.argmax"(%x) {axis = 1 : i64, index_dtype = i32} : (tensor<37x53xf32>) -> tensor<37xi32>
  return %s, %a : tensor<53xf32>, tensor<37xi32>
}
