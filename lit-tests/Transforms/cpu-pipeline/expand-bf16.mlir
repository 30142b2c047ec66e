// RUN: %mlax-opt --mlax-expand-bf16 %s | FileCheck %s

// extf: the bf16 bits become the high half of an f32.
// CHECK-LABEL: func.func @test_extend
// CHECK:         %[[BITS:.*]] = arith.bitcast %arg0 : bf16 to i16
// CHECK:         %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK:         %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : i32
// CHECK:         %[[F32:.*]] = arith.bitcast %[[HIGH]] : i32 to f32
// CHECK:         arith.shli
// CHECK:         %[[F32B:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[F64:.*]] = arith.extf %[[F32B]] : f32 to f64
// CHECK:         return %[[F32]], %[[F64]]
func.func @test_extend(%x: bf16) -> (f32, f64) {
  %0 = arith.extf %x : bf16 to f32
  %1 = arith.extf %x : bf16 to f64
  return %0, %1 : f32, f64
}

// truncf: round to nearest even on the f32 bits; NaN -> quiet NaN with the sign; f64 goes
// through f32.
// CHECK-LABEL: func.func @test_truncate
// CHECK:         %[[BITS:.*]] = arith.bitcast %arg0 : f32 to i32
// CHECK:         arith.andi
// CHECK:         %[[ROUNDED:.*]] = arith.shrui
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK:         %[[PICK:.*]] = arith.select %[[NAN]], %{{.*}}, %[[ROUNDED]] : i32
// CHECK:         %[[HALF:.*]] = arith.trunci %[[PICK]] : i32 to i16
// CHECK:         arith.bitcast %[[HALF]] : i16 to bf16
// CHECK:         %[[NARROW:.*]] = arith.truncf %arg1 : f64 to f32
// CHECK:         arith.bitcast %[[NARROW]] : f32 to i32
func.func @test_truncate(%x: f32, %y: f64) -> (bf16, bf16) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.truncf %y : f64 to bf16
  return %0, %1 : bf16, bf16
}

// Other conversions and maximumf are left alone.
// CHECK-LABEL: func.func @test_left_alone
// CHECK:         arith.extf %arg0 : f16 to f32
// CHECK:         arith.maximumf
func.func @test_left_alone(%x: f16, %y: f32) -> f32 {
  %0 = arith.extf %x : f16 to f32
  %1 = arith.maximumf %0, %y : f32
  return %1 : f32
}

// A bf16 select picks the bits (LLVM's x86 backend would select in an f32 register and
// convert back with vcvtneps2bf16, flushing subnormals).
// CHECK-LABEL: func.func @test_select_bits
// CHECK-DAG:     %[[X:.*]] = arith.bitcast %arg1 : bf16 to i16
// CHECK-DAG:     %[[Y:.*]] = arith.bitcast %arg2 : bf16 to i16
// CHECK:         %[[PICK:.*]] = arith.select %arg0, %[[X]], %[[Y]] : i16
// CHECK:         %[[BACK:.*]] = arith.bitcast %[[PICK]] : i16 to bf16
// CHECK:         return %[[BACK]]
func.func @test_select_bits(%c: i1, %x: bf16, %y: bf16) -> bf16 {
  %0 = arith.select %c, %x, %y : bf16
  return %0 : bf16
}

// A loop-carried bf16 (a block argument) is carried as i16: every branch to the block passes
// the bits, and the block reads them back through a bitcast; a select of the carried value
// feeds the branch its bits directly.
// CHECK-LABEL: func.func @test_carry_bits
// CHECK-DAG:     %[[X:.*]] = arith.bitcast %arg0 : bf16 to i16
// CHECK-DAG:     %[[Y:.*]] = arith.bitcast %arg1 : bf16 to i16
// CHECK:         cf.br ^bb1(%[[X]] : i16)
// CHECK:       ^bb1(%[[BITS:.*]]: i16):
// CHECK:         %[[V:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK:         %[[NEXT:.*]] = arith.select %arg2, %[[BITS]], %[[Y]] : i16
// CHECK:         cf.cond_br %arg2, ^bb1(%[[NEXT]] : i16), ^bb2
// CHECK:         return %[[V]]
func.func @test_carry_bits(%x: bf16, %y: bf16, %c: i1) -> bf16 {
  cf.br ^bb1(%x : bf16)
^bb1(%v: bf16):
  %next = arith.select %c, %v, %y : bf16
  cf.cond_br %c, ^bb1(%next : bf16), ^bb2
^bb2:
  return %v : bf16
}

// Function arguments keep their types, and f16 selects compute in f16 registers as they are.
// CHECK-LABEL: func.func @test_no_bits_for_f16
// CHECK-NOT:     arith.bitcast
// CHECK:         arith.select %arg0, %arg1, %arg2 : f16
func.func @test_no_bits_for_f16(%c: i1, %x: f16, %y: f16) -> f16 {
  %0 = arith.select %c, %x, %y : f16
  return %0 : f16
}

// copysign and fabs of bf16 (LLVM intrinsics by now): masks on the i16 bits, no bf16 intrinsic
// left for LLVM's vectorizer (it failed an assertion legalizing a vector bf16 copysign).
// CHECK-LABEL: func.func @test_sign_bits
// CHECK-DAG:     %[[MAG:.*]] = arith.bitcast %arg0 : bf16 to i16
// CHECK-DAG:     %[[SIGN:.*]] = arith.bitcast %arg1 : bf16 to i16
// CHECK:         %[[LOW:.*]] = arith.constant 32767 : i16
// CHECK:         %[[M:.*]] = arith.andi %[[MAG]], %[[LOW]] : i16
// CHECK:         %[[TOP:.*]] = arith.constant -32768 : i16
// CHECK:         %[[S:.*]] = arith.andi %[[SIGN]], %[[TOP]] : i16
// CHECK:         %[[BITS:.*]] = arith.ori %[[M]], %[[S]] : i16
// CHECK:         %[[COPY:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK:         %[[ABSBITS:.*]] = arith.andi %{{.*}}, %{{.*}} : i16
// CHECK:         %[[ABS:.*]] = arith.bitcast %[[ABSBITS]] : i16 to bf16
// CHECK-NOT:     llvm.intr
// CHECK:         return %[[COPY]], %[[ABS]]
func.func @test_sign_bits(%x: bf16, %y: bf16) -> (bf16, bf16) {
  %0 = llvm.intr.copysign(%x, %y) : (bf16, bf16) -> bf16
  %1 = llvm.intr.fabs(%x) : (bf16) -> bf16
  return %0, %1 : bf16, bf16
}
