// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=gpu})' %s | FileCheck %s
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline{to=nvvm})' %s | FileCheck %s --check-prefix=NVVM
// RUN: %mlax-opt --split-input-file --pass-pipeline='builtin.module(mlax-gpu-pipeline)' %s | FileCheck %s --check-prefix=PTX

// Control flow decided on the device (mlax-gpu-host-reads, mlax-gpu-sink-views): the loops and
// branches stay host code around the kernels; a predicate computed by a kernel is copied to a
// host buffer (gpu.memcpy, waited for before the load once gpu-async-region has made it
// asynchronous); the deallocation bookkeeping of loop carries is scalar host code.

// A while_loop: the predicate kernel writes a byte, the host copies it and decides.
// CHECK-LABEL: func.func @jit.while(
// CHECK:         %[[HOST:.*]] = memref.alloca() : memref<i8>
// CHECK:         scf.while (%[[I:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[OWNED:.*]] = %false)
// CHECK:           %[[P:.*]] = gpu.alloc {{.*}}: memref<i8>
// CHECK-NEXT:      gpu.launch_func @jit.while_kernel::@jit_while_kernel {{.*}} args({{.*}}%[[I]] : memref<i32>, %[[P]] : memref<i8>)
// CHECK-NEXT:      gpu.memcpy %[[HOST]], %[[P]] : memref<i8>, memref<i8>
// CHECK-NEXT:      %[[BYTE:.*]] = memref.load %[[HOST]][] : memref<i8>
// CHECK-NEXT:      %[[PREDICATE:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK:           scf.if %[[OWNED]] {
// CHECK-NEXT:        gpu.dealloc
// CHECK:           scf.condition(%[[PREDICATE]])
// CHECK:         } do {
// CHECK:           gpu.launch_func @jit.while_kernel_0::@jit_while_kernel
// CHECK:           gpu.launch_func @jit.while_kernel_1::@jit_while_kernel blocks in (%c2, %c1, %c1)
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %true
// CHECK-NOT:     memref.load
// CHECK:         return
// NVVM-LABEL:  llvm.func @jit.while(
// NVVM:          %[[HOST:.*]] = llvm.alloca {{.*}} x i8
// NVVM:          llvm.call @mgpuMemcpy(%[[HOST]], %{{.*}}, %{{.*}}, %[[STREAM:.*]]) :
// NVVM-NEXT:     llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// NVVM-NEXT:     llvm.call @mgpuStreamDestroy(%[[STREAM]])
// NVVM-NEXT:     llvm.load %[[HOST]] : !llvm.ptr -> i8
// PTX-LABEL:    llvm.func @jit.while(
// PTX-COUNT-3:  gpu.binary @jit.while_kernel{{.*}}.visible .entry jit_while_kernel(
// PTX-NOT:      gpu.binary

func.func private @cond(%i: tensor<i32>, %x: tensor<64xf32>) -> tensor<i1> {
  %five = "mlax.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.compare"(%i, %five) {comparison_direction = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func private @body(%i: tensor<i32>, %x: tensor<64xf32>) -> (tensor<i32>, tensor<64xf32>) {
  %one = "mlax.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0 = "mlax.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %1 = "mlax.mul"(%x, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0, %1 : tensor<i32>, tensor<64xf32>
}
func.func private @loop(tensor<i32>, tensor<64xf32>) -> (tensor<i32>, tensor<64xf32>) attributes {mlax.while = {body = @body, cond = @cond}}
func.func @while(%x: tensor<64xf32>) -> tensor<64xf32> {
  %zero = "mlax.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0:2 = call @loop(%zero, %x) : (tensor<i32>, tensor<64xf32>) -> (tensor<i32>, tensor<64xf32>)
  return %0#1 : tensor<64xf32>
}

// -----

// A scan: a counted host loop; its index is a kernel argument (each kernel takes its row of xs
// and of ys itself: a view at a run-time offset cannot be a bare pointer). The bookkeeping of
// the carry after the loop compares addresses: no host array, no load.
// CHECK-LABEL: func.func @jit.scan(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[CARRY:.*]] = %{{.*}}, %[[OWNED:.*]] = %false)
// CHECK:           gpu.launch_func @jit.scan_kernel::@jit_scan_kernel {{.*}} args(%arg0 : memref<3x64xf32>, %[[I]] : index, %{{.*}} : index, %[[CARRY]] : memref<64xf32>, %{{.*}} : memref<64xf32>)
// CHECK-NEXT:      gpu.launch_func @jit.scan_kernel_0::@jit_scan_kernel {{.*}} args(%arg2 : memref<3x64xf32>, %[[I]] : index
// CHECK:           scf.if %[[OWNED]] {
// CHECK-NEXT:        gpu.dealloc
// CHECK:         %[[A:.*]] = memref.extract_aligned_pointer_as_index
// CHECK-NEXT:    %[[B:.*]] = memref.extract_aligned_pointer_as_index
// CHECK-NEXT:    %[[DISTINCT:.*]] = arith.cmpi ne, %[[A]], %[[B]] : index
// CHECK-NEXT:    %[[FREE:.*]] = arith.andi %[[DISTINCT]]
// CHECK:         scf.if %[[FREE]] {
// CHECK-NOT:     memref.load
// CHECK:         return
// CHECK:         gpu.module @jit.scan_kernel
// CHECK:           gpu.func @jit_scan_kernel(%[[XS:[a-z0-9]+]]: memref<3x64xf32>{{[^%]*}}%[[ROW:[a-z0-9]+]]: index,
// CHECK:             memref.subview %[[XS]][%[[ROW]], 0] [1, 64] [1, 1]
// PTX-LABEL:    llvm.func @jit.scan(
// PTX-COUNT-2:  gpu.binary @jit.scan_kernel{{.*}}.visible .entry jit_scan_kernel(
// PTX-NOT:      gpu.binary

func.func private @step(%c: tensor<64xf32>, %x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = "mlax.add"(%c, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %two = "mlax.constant"() {value = dense<2.000000e+00> : tensor<64xf32>} : () -> tensor<64xf32>
  %1 = "mlax.mul"(%c, %two) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0, %1 : tensor<64xf32>, tensor<64xf32>
}
func.func private @step_scan(tensor<64xf32>, tensor<3x64xf32>) -> (tensor<64xf32>, tensor<3x64xf32>) attributes {mlax.scan = {body = @step, length = 3 : i64, num_carry = 1 : i64, num_consts = 0 : i64, reverse = false}}
func.func @scan(%xs: tensor<3x64xf32>) -> (tensor<64xf32>, tensor<3x64xf32>) {
  %0 = "mlax.constant"() {value = dense<0.000000e+00> : tensor<64xf32>} : () -> tensor<64xf32>
  %1:2 = call @step_scan(%0, %xs) : (tensor<64xf32>, tensor<3x64xf32>) -> (tensor<64xf32>, tensor<3x64xf32>)
  return %1#0, %1#1 : tensor<64xf32>, tensor<3x64xf32>
}

// -----

// A cond on a sum computed on the device; its result (a buffer of either branch, of a run-time
// layout) feeds a kernel as its base buffer, offset and stride.
// CHECK-LABEL: func.func @jit.cond(
// CHECK:         %[[HOST:.*]] = memref.alloca() : memref<i8>
// CHECK:         gpu.memcpy %[[HOST]], %{{.*}} : memref<i8>, memref<i8>
// CHECK-NEXT:    %[[BYTE:.*]] = memref.load %[[HOST]][] : memref<i8>
// CHECK-NEXT:    %[[PREDICATE:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK-NEXT:    %[[RESULT:.*]] = scf.if %[[PREDICATE]] -> (memref<64xf32, strided<[?], offset: ?>>) {
// CHECK:           gpu.launch_func @jit.cond_kernel_0::@jit_cond_kernel
// CHECK:         } else {
// CHECK:           gpu.launch_func @jit.cond_kernel_1::@jit_cond_kernel
// CHECK:         %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %[[RESULT]]
// CHECK-NEXT:    gpu.launch_func @jit.cond_kernel_2::@jit_cond_kernel {{.*}} args(%[[BASE]] : memref<f32>, %[[OFFSET]] : index, %[[STRIDE]] : index,
// CHECK:         gpu.module @jit.cond_kernel_2
// CHECK:           memref.reinterpret_cast %arg0 to offset: [%arg1], sizes: [64], strides: [%arg2] : memref<f32> to memref<64xf32, strided<[?], offset: ?>>
// PTX-LABEL:    llvm.func @jit.cond(
// PTX-COUNT-4:  gpu.binary @jit.cond_kernel{{.*}}.visible .entry jit_cond_kernel(
// PTX-NOT:      gpu.binary

func.func private @minus(%x: tensor<64xf32>) -> tensor<64xf32> {
  %one = "mlax.constant"() {value = dense<1.000000e+00> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "mlax.sub"(%x, %one) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
func.func private @twice(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "mlax.add"(%x, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
func.func private @branch(tensor<i1>, tensor<64xf32>) -> tensor<64xf32> attributes {mlax.cond = {branches = [@minus, @twice]}}
func.func @cond(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<64xf32>) -> tensor<f32>
  %zero = "mlax.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = "mlax.compare"(%0, %zero) {comparison_direction = "GT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %2 = call @branch(%1, %x) : (tensor<i1>, tensor<64xf32>) -> tensor<64xf32>
  %three = "mlax.constant"() {value = dense<3.000000e+00> : tensor<64xf32>} : () -> tensor<64xf32>
  %3 = "mlax.mul"(%2, %three) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %3 : tensor<64xf32>
}
