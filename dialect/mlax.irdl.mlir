// The mlax dialect, defined in IRDL. GENERATED from dialect/ops/*.py by
// `python -m mlax.tools.gen_irdl`; do not edit by hand.
//
// Ports that share a constraint variable must have identical types: IRDL binds one
// type per variable for the whole op (variadic ports included).
irdl.dialect @mlax {
  // A tensor literal; `value` is a dense elements attribute of the result type.
  irdl.operation @constant {
    %T = irdl.base "!builtin.tensor"
    %attr_value = irdl.base "#builtin.dense_int_or_fp_elements"
    irdl.results(result: %T)
    irdl.attributes {"value" = %attr_value}
  }

  // Negation, -x (wraps for the most negative integer).
  irdl.operation @neg {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Natural exponential e**x.
  irdl.operation @exp {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Hyperbolic tangent.
  irdl.operation @tanh {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Addition x + y (logical or on booleans).
  irdl.operation @add {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Subtraction x - y.
  irdl.operation @sub {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Multiplication x * y (logical and on booleans).
  irdl.operation @mul {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Elementwise conversion to `new_dtype` (float->int truncates toward zero and saturates, NaN -> 0; x != 0 for bool).
  irdl.operation @convert {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_new_dtype = irdl.base "#builtin.type"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"new_dtype" = %attr_new_dtype}
  }

  // Broadcast: operand dimension i becomes result dimension broadcast_dimensions[i] (size 1 or equal); other result dimensions replicate.
  irdl.operation @broadcast_in_dim {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_shape = irdl.base "#builtin.dense_array"
    %attr_broadcast_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"shape" = %attr_shape, "broadcast_dimensions" = %attr_broadcast_dimensions}
  }
}
