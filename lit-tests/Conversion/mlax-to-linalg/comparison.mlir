// RUN: %mlax-opt --mlax-lower-to-linalg %s | FileCheck %s
// RUN: %mlax-opt --mlax-lower-to-linalg %s | %mlir-opt > /dev/null

// compare, select and clamp. Rank-0 operands (select's pred, clamp's bounds) are read
// through the empty affine map, once for every element.

// CHECK-DAG:   #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// Booleans and unsigned integers compare unsigned.
// CHECK-LABEL: func.func @test_compare
// CHECK-SAME:    %{{.*}}: tensor<3xi64>
// CHECK:         arith.cmpf olt
// CHECK:         arith.cmpf une
// CHECK:         arith.cmpi sge
// CHECK:         arith.cmpi ult
// CHECK:         arith.cmpi uge, %{{.*}}, %{{.*}} : i64
func.func @test_compare(%x: tensor<3xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>, %u: tensor<3xui64>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %0 = "mlax.compare"(%x, %x) {comparison_direction = "LT"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %1 = "mlax.compare"(%x, %x) {comparison_direction = "NE"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %2 = "mlax.compare"(%i, %i) {comparison_direction = "GE"} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  %3 = "mlax.compare"(%b, %b) {comparison_direction = "LT"} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %4 = "mlax.compare"(%u, %u) {comparison_direction = "GE"} : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @test_select_rank0_pred
// CHECK:         linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$ID]], #[[$ID]], #[[$ID]]]
// CHECK:           arith.select
func.func @test_select_rank0_pred(%p: tensor<i1>, %x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "mlax.select"(%p, %x, %y) : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// clamp is min(max(x, lo), hi) with the elementwise max/min (NaN-propagating, -0 < +0).
// CHECK-LABEL: func.func @test_clamp_rank0_bounds
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$SCALAR]], #[[$ID]]]{{.*}} ins(%arg1, %arg0, %arg2
// CHECK:           %[[M:.*]] = arith.maximumf
// CHECK:           arith.minimumf %[[M]]
func.func @test_clamp_rank0_bounds(%lo: tensor<f32>, %x: tensor<2x3xf32>, %hi: tensor<f32>) -> tensor<2x3xf32> {
  %0 = "mlax.clamp"(%lo, %x, %hi) : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
