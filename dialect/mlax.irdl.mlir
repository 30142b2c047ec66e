// The mlax dialect, defined in IRDL. GENERATED from dialect/ops/*.py by
// `python -m mlax.tools.gen_irdl`; do not edit by hand.
//
// Ports that share a constraint variable must have identical types: IRDL binds one
// type per variable for the whole op (variadic ports included).
irdl.dialect @mlax {
  // All-reduce: the elementwise sum of `operand` over every instance along `axes`.
  irdl.operation @psum {
    %T = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axes" = %attr_axes}
  }

  // All-reduce: the elementwise maximum of `operand` over every instance along `axes`.
  irdl.operation @pmax {
    %T = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axes" = %attr_axes}
  }

  // All-reduce: the elementwise minimum of `operand` over every instance along `axes`.
  irdl.operation @pmin {
    %T = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axes" = %attr_axes}
  }

  // Tiled all-gather: the operands of every instance along `axes`, concatenated along `dimension`.
  irdl.operation @all_gather {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    %attr_dimension = irdl.base "#builtin.integer"
    %attr_axis_size = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"axes" = %attr_axes, "dimension" = %attr_dimension, "axis_size" = %attr_axis_size}
  }

  // Tiled reduce-scatter: block `j` along `dimension` of the sum over `axes` goes to instance `j`.
  irdl.operation @psum_scatter {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    %attr_dimension = irdl.base "#builtin.integer"
    %attr_axis_size = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"axes" = %attr_axes, "dimension" = %attr_dimension, "axis_size" = %attr_axis_size}
  }

  // Tiled all-to-all: block `j` of `split_dimension` goes to instance `j`; received blocks are concatenated along `concat_dimension` in source order.
  irdl.operation @all_to_all {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    %attr_split_dimension = irdl.base "#builtin.integer"
    %attr_concat_dimension = irdl.base "#builtin.integer"
    %attr_axis_size = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"axes" = %attr_axes, "split_dimension" = %attr_split_dimension, "concat_dimension" = %attr_concat_dimension, "axis_size" = %attr_axis_size}
  }

  // Collective permute: instance `source` sends its operand to `destination`, for each pair.
  irdl.operation @ppermute {
    %T = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    %attr_pairs = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axes" = %attr_axes, "pairs" = %attr_pairs}
  }

  // This instance's index along `axes` (linearized, the first axis major), as an i32 scalar.
  irdl.operation @axis_index {
    %T = irdl.base "!builtin.tensor"
    %attr_axes = irdl.base "#builtin.array"
    %attr_axis_size = irdl.base "#builtin.integer"
    irdl.results(result: %T)
    irdl.attributes {"axes" = %attr_axes, "axis_size" = %attr_axis_size}
  }

  // Negation, -x (wraps for the most negative integer and for unsigned integers).
  irdl.operation @neg {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Absolute value |x|.
  irdl.operation @abs {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
  }

  // Sign: -1, 0 or 1 in the operand's type.
  irdl.operation @sign {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Round toward -inf.
  irdl.operation @floor {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Round toward +inf.
  irdl.operation @ceil {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Round to an integral value; ties as `rounding_method` says.
  irdl.operation @round {
    %T = irdl.base "!builtin.tensor"
    %attr_rounding_method = irdl.base "#builtin.string"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"rounding_method" = %attr_rounding_method}
  }

  // Natural exponential e**x.
  irdl.operation @exp {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Base-2 exponential 2**x.
  irdl.operation @exp2 {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // e**x - 1, accurate near 0.
  irdl.operation @expm1 {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Natural logarithm (log 0 = -inf, log of a negative = NaN).
  irdl.operation @log {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // log(1 + x), accurate near 0 (log1p(-1) = -inf).
  irdl.operation @log1p {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Square root (sqrt(-0.0) = -0.0, negative -> NaN).
  irdl.operation @sqrt {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Reciprocal square root 1/sqrt(x).
  irdl.operation @rsqrt {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Cube root (defined for negative x).
  irdl.operation @cbrt {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Sine (radians).
  irdl.operation @sin {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Cosine (radians).
  irdl.operation @cos {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Tangent (radians).
  irdl.operation @tan {
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

  // Logistic sigmoid 1 / (1 + e**-x).
  irdl.operation @logistic {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Error function.
  irdl.operation @erf {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Complementary error function 1 - erf(x).
  irdl.operation @erfc {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Inverse error function.
  irdl.operation @erf_inv {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // True where x is neither infinite nor NaN.
  irdl.operation @is_finite {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
  }

  // Bitwise not (logical not on booleans).
  irdl.operation @not {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Number of set bits of each element, in the operand's type.
  irdl.operation @population_count {
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

  // Division x / y; integers truncate toward zero.
  irdl.operation @div {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Remainder with the sign of the dividend (C fmod).
  irdl.operation @rem {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Power x ** y (float ** float or int ** int).
  irdl.operation @pow {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Elementwise maximum (logical or on booleans).
  irdl.operation @max {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Elementwise minimum (logical and on booleans).
  irdl.operation @min {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Four-quadrant arctangent of lhs / rhs (y, x order).
  irdl.operation @atan2 {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Bitwise and (logical and on booleans).
  irdl.operation @and {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Bitwise or (logical or on booleans).
  irdl.operation @or {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Bitwise xor (logical xor on booleans).
  irdl.operation @xor {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Shift the bits of lhs left by rhs.
  irdl.operation @shift_left {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Shift the bits of lhs right by rhs, filling with zeros.
  irdl.operation @shift_right_logical {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Shift the bits of lhs right by rhs, filling with the sign bit.
  irdl.operation @shift_right_arithmetic {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // The next representable value after lhs in the direction of rhs.
  irdl.operation @nextafter {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %T)
  }

  // Elementwise comparison with an `i1` result; `comparison_direction` is one of EQ NE LT LE GT GE.
  irdl.operation @compare {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_comparison_direction = irdl.base "#builtin.string"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %U)
    irdl.attributes {"comparison_direction" = %attr_comparison_direction}
  }

  // on_true where pred is true, else on_false.
  irdl.operation @select {
    %P = irdl.base "!builtin.tensor"
    %T = irdl.base "!builtin.tensor"
    irdl.operands(pred: %P, on_true: %T, on_false: %T)
    irdl.results(result: %T)
  }

  // min(max(operand, min), max) elementwise.
  irdl.operation @clamp {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    irdl.operands(min: %T, operand: %U, max: %V)
    irdl.results(result: %U)
  }

  // The complex number lhs + i rhs of two f32 (complex64) or two f64 (complex128) operands.
  irdl.operation @complex {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %T, rhs: %T)
    irdl.results(result: %U)
  }

  // The real part of a complex operand, in its parts' float type.
  irdl.operation @real {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
  }

  // The imaginary part of a complex operand, in its parts' float type.
  irdl.operation @imag {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
  }

  // The complex conjugate real - i imag.
  irdl.operation @conj {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // A tensor literal; `value` is a dense elements attribute of the result type.
  irdl.operation @constant {
    %T = irdl.base "!builtin.tensor"
    %attr_value = irdl.base "#builtin.dense_int_or_fp_elements"
    irdl.results(result: %T)
    irdl.attributes {"value" = %attr_value}
  }

  // Counting values 0, 1, 2, ... along `dimension`, broadcast over the other dimensions.
  irdl.operation @iota {
    %T = irdl.base "!builtin.tensor"
    %attr_shape = irdl.base "#builtin.dense_array"
    %attr_dtype = irdl.base "#builtin.type"
    %attr_dimension = irdl.base "#builtin.integer"
    irdl.results(result: %T)
    irdl.attributes {"shape" = %attr_shape, "dtype" = %attr_dtype, "dimension" = %attr_dimension}
  }

  // Elementwise conversion to `new_dtype`, value-preserving where it can be.
  irdl.operation @convert {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_new_dtype = irdl.base "#builtin.type"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"new_dtype" = %attr_new_dtype}
  }

  // Reinterpret the bits of each element as `new_dtype`.
  irdl.operation @bitcast_convert {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_new_dtype = irdl.base "#builtin.type"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"new_dtype" = %attr_new_dtype}
  }

  // The lower Cholesky factor L (A = L L^T) of each matrix, from its lower triangle.
  irdl.operation @cholesky {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // X with op(A) X = B (left_side) or X op(A) = B, A triangular (BLAS `?trsm`).
  irdl.operation @triangular_solve {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_left_side = irdl.base "#builtin.integer"
    %attr_lower = irdl.base "#builtin.integer"
    %attr_transpose_a = irdl.base "#builtin.integer"
    %attr_conjugate_a = irdl.base "#builtin.integer"
    %attr_unit_diagonal = irdl.base "#builtin.integer"
    irdl.operands(a: %T, b: %U)
    irdl.results(result: %U)
    irdl.attributes {"left_side" = %attr_left_side, "lower" = %attr_lower, "transpose_a" = %attr_transpose_a, "conjugate_a" = %attr_conjugate_a, "unit_diagonal" = %attr_unit_diagonal}
  }

  // LU with partial pivoting (LAPACK `?getrf`): P A = L U, with the row swaps and the permutation.
  irdl.operation @lu {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(lu: %T, pivots: %U, permutation: %V)
  }

  // Householder QR factorization in LAPACK's packed form (`?geqrf`).
  irdl.operation @geqrf {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(a: %T, taus: %U)
  }

  // QR factorization with column pivoting in LAPACK's packed form (`?geqp3`).
  irdl.operation @geqp3 {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    irdl.operands(a: %T, jpvt: %U)
    irdl.results(result: %T, pivots: %U, taus: %V)
  }

  // The product of elementary Householder reflectors (`?orgqr` / `?ungqr`).
  irdl.operation @householder_product {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(a: %T, taus: %U)
    irdl.results(result: %T)
  }

  // Multiplication by Q of Householder reflectors, without forming Q (`?ormqr` / `?unmqr`).
  irdl.operation @ormqr {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_left = irdl.base "#builtin.integer"
    %attr_transpose = irdl.base "#builtin.integer"
    irdl.operands(a: %T, taus: %U, c: %V)
    irdl.results(result: %V)
    irdl.attributes {"left" = %attr_left, "transpose" = %attr_transpose}
  }

  // Reduction to upper Hessenberg form, in LAPACK's packed form (`?gehrd`).
  irdl.operation @hessenberg {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(a: %T, taus: %U)
  }

  // Reduction of a symmetric (Hermitian) matrix to tridiagonal form (`?sytrd` / `?hetrd`).
  irdl.operation @tridiagonal {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %W = irdl.base "!builtin.tensor"
    %attr_lower = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(a: %T, d: %U, e: %V, taus: %W)
    irdl.attributes {"lower" = %attr_lower}
  }

  // QR decomposition A = Q R, or A[:, P] = Q R with column pivoting (LAPACK `?geqrf` or `?geqp3`, then `?orgqr`, as jax's CPU lowering).
  irdl.operation @qr {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %W = irdl.base "!builtin.tensor"
    %attr_full_matrices = irdl.base "#builtin.integer"
    %attr_pivoting = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(q: %U, r: %V, p: variadic %W)
    irdl.attributes {"full_matrices" = %attr_full_matrices, "pivoting" = %attr_pivoting}
  }

  // Eigenvectors and eigenvalues of symmetric matrices (LAPACK `?syevd`).
  irdl.operation @eigh {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_lower = irdl.base "#builtin.integer"
    %attr_sort_eigenvalues = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(v: %T, w: %U)
    irdl.attributes {"lower" = %attr_lower, "sort_eigenvalues" = %attr_sort_eigenvalues}
  }

  // Singular value decomposition A = U diag(s) Vh (LAPACK `?gesdd`, as jax on CPU).
  irdl.operation @svd {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %W = irdl.base "!builtin.tensor"
    %attr_full_matrices = irdl.base "#builtin.integer"
    %attr_compute_uv = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(s: %U, u: %V, vh: %W)
    irdl.attributes {"full_matrices" = %attr_full_matrices, "compute_uv" = %attr_compute_uv}
  }

  // Eigenvalues and left/right eigenvectors of general square matrices (LAPACK `?geev`).
  irdl.operation @eig {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_compute_left_eigenvectors = irdl.base "#builtin.integer"
    %attr_compute_right_eigenvectors = irdl.base "#builtin.integer"
    %attr_enable_eigvec_derivs = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(eigenvalues: %U, eigenvectors: variadic %V)
    irdl.attributes {"compute_left_eigenvectors" = %attr_compute_left_eigenvectors, "compute_right_eigenvectors" = %attr_compute_right_eigenvectors, "enable_eigvec_derivs" = %attr_enable_eigvec_derivs}
  }

  // A discrete Fourier transform over the trailing fft_lengths axes (jax's lax.fft).
  irdl.operation @fft {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_fft_type = irdl.base "#builtin.string"
    %attr_fft_lengths = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"fft_type" = %attr_fft_type, "fft_lengths" = %attr_fft_lengths}
  }

  // Windows of `slice_sizes` at run-time start indices, stacked along the batch dimensions.
  irdl.operation @gather {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_offset_dims = irdl.base "#builtin.dense_array"
    %attr_collapsed_slice_dims = irdl.base "#builtin.dense_array"
    %attr_operand_batching_dims = irdl.base "#builtin.dense_array"
    %attr_start_indices_batching_dims = irdl.base "#builtin.dense_array"
    %attr_start_index_map = irdl.base "#builtin.dense_array"
    %attr_index_vector_dim = irdl.base "#builtin.integer"
    %attr_slice_sizes = irdl.base "#builtin.dense_array"
    %attr_mode = irdl.base "#builtin.string"
    irdl.operands(operand: %T, start_indices: %I)
    irdl.results(result: %U)
    irdl.attributes {"offset_dims" = %attr_offset_dims, "collapsed_slice_dims" = %attr_collapsed_slice_dims, "operand_batching_dims" = %attr_operand_batching_dims, "start_indices_batching_dims" = %attr_start_indices_batching_dims, "start_index_map" = %attr_start_index_map, "index_vector_dim" = %attr_index_vector_dim, "slice_sizes" = %attr_slice_sizes, "mode" = %attr_mode}
  }

  // Overwrite windows of the operand at run-time start indices with windows of `updates`.
  irdl.operation @scatter {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_update_window_dims = irdl.base "#builtin.dense_array"
    %attr_inserted_window_dims = irdl.base "#builtin.dense_array"
    %attr_input_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_indices_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_dims_to_operand_dims = irdl.base "#builtin.dense_array"
    %attr_index_vector_dim = irdl.base "#builtin.integer"
    %attr_mode = irdl.base "#builtin.string"
    irdl.operands(operand: %T, scatter_indices: %I, updates: %U)
    irdl.results(result: %T)
    irdl.attributes {"update_window_dims" = %attr_update_window_dims, "inserted_window_dims" = %attr_inserted_window_dims, "input_batching_dims" = %attr_input_batching_dims, "scatter_indices_batching_dims" = %attr_scatter_indices_batching_dims, "scatter_dims_to_operand_dims" = %attr_scatter_dims_to_operand_dims, "index_vector_dim" = %attr_index_vector_dim, "mode" = %attr_mode}
  }

  // Add windows of `updates` into the operand at run-time start indices.
  irdl.operation @scatter_add {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_update_window_dims = irdl.base "#builtin.dense_array"
    %attr_inserted_window_dims = irdl.base "#builtin.dense_array"
    %attr_input_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_indices_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_dims_to_operand_dims = irdl.base "#builtin.dense_array"
    %attr_index_vector_dim = irdl.base "#builtin.integer"
    %attr_mode = irdl.base "#builtin.string"
    irdl.operands(operand: %T, scatter_indices: %I, updates: %U)
    irdl.results(result: %T)
    irdl.attributes {"update_window_dims" = %attr_update_window_dims, "inserted_window_dims" = %attr_inserted_window_dims, "input_batching_dims" = %attr_input_batching_dims, "scatter_indices_batching_dims" = %attr_scatter_indices_batching_dims, "scatter_dims_to_operand_dims" = %attr_scatter_dims_to_operand_dims, "index_vector_dim" = %attr_index_vector_dim, "mode" = %attr_mode}
  }

  // Multiply windows of `updates` into the operand at run-time start indices.
  irdl.operation @scatter_mul {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_update_window_dims = irdl.base "#builtin.dense_array"
    %attr_inserted_window_dims = irdl.base "#builtin.dense_array"
    %attr_input_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_indices_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_dims_to_operand_dims = irdl.base "#builtin.dense_array"
    %attr_index_vector_dim = irdl.base "#builtin.integer"
    %attr_mode = irdl.base "#builtin.string"
    irdl.operands(operand: %T, scatter_indices: %I, updates: %U)
    irdl.results(result: %T)
    irdl.attributes {"update_window_dims" = %attr_update_window_dims, "inserted_window_dims" = %attr_inserted_window_dims, "input_batching_dims" = %attr_input_batching_dims, "scatter_indices_batching_dims" = %attr_scatter_indices_batching_dims, "scatter_dims_to_operand_dims" = %attr_scatter_dims_to_operand_dims, "index_vector_dim" = %attr_index_vector_dim, "mode" = %attr_mode}
  }

  // Combine windows of `updates` into the operand by minimum at run-time start indices.
  irdl.operation @scatter_min {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_update_window_dims = irdl.base "#builtin.dense_array"
    %attr_inserted_window_dims = irdl.base "#builtin.dense_array"
    %attr_input_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_indices_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_dims_to_operand_dims = irdl.base "#builtin.dense_array"
    %attr_index_vector_dim = irdl.base "#builtin.integer"
    %attr_mode = irdl.base "#builtin.string"
    irdl.operands(operand: %T, scatter_indices: %I, updates: %U)
    irdl.results(result: %T)
    irdl.attributes {"update_window_dims" = %attr_update_window_dims, "inserted_window_dims" = %attr_inserted_window_dims, "input_batching_dims" = %attr_input_batching_dims, "scatter_indices_batching_dims" = %attr_scatter_indices_batching_dims, "scatter_dims_to_operand_dims" = %attr_scatter_dims_to_operand_dims, "index_vector_dim" = %attr_index_vector_dim, "mode" = %attr_mode}
  }

  // Combine windows of `updates` into the operand by maximum at run-time start indices.
  irdl.operation @scatter_max {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_update_window_dims = irdl.base "#builtin.dense_array"
    %attr_inserted_window_dims = irdl.base "#builtin.dense_array"
    %attr_input_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_indices_batching_dims = irdl.base "#builtin.dense_array"
    %attr_scatter_dims_to_operand_dims = irdl.base "#builtin.dense_array"
    %attr_index_vector_dim = irdl.base "#builtin.integer"
    %attr_mode = irdl.base "#builtin.string"
    irdl.operands(operand: %T, scatter_indices: %I, updates: %U)
    irdl.results(result: %T)
    irdl.attributes {"update_window_dims" = %attr_update_window_dims, "inserted_window_dims" = %attr_inserted_window_dims, "input_batching_dims" = %attr_input_batching_dims, "scatter_indices_batching_dims" = %attr_scatter_indices_batching_dims, "scatter_dims_to_operand_dims" = %attr_scatter_dims_to_operand_dims, "index_vector_dim" = %attr_index_vector_dim, "mode" = %attr_mode}
  }

  // Batched contraction: sum over paired contracting dimensions, per paired batch index.
  irdl.operation @dot_general {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_lhs_contracting_dimensions = irdl.base "#builtin.dense_array"
    %attr_rhs_contracting_dimensions = irdl.base "#builtin.dense_array"
    %attr_lhs_batch_dimensions = irdl.base "#builtin.dense_array"
    %attr_rhs_batch_dimensions = irdl.base "#builtin.dense_array"
    %attr_result_dtype = irdl.base "#builtin.type"
    irdl.operands(lhs: %T, rhs: %U)
    irdl.results(result: %V)
    irdl.attributes {"lhs_contracting_dimensions" = %attr_lhs_contracting_dimensions, "rhs_contracting_dimensions" = %attr_rhs_contracting_dimensions, "lhs_batch_dimensions" = %attr_lhs_batch_dimensions, "rhs_batch_dimensions" = %attr_rhs_batch_dimensions, "result_dtype" = %attr_result_dtype}
  }

  // The sum of the elements along `dimensions`, which the result drops.
  irdl.operation @reduce_sum {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // The product of the elements along `dimensions`, which the result drops.
  irdl.operation @reduce_prod {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // The maximum of the elements along `dimensions`, which the result drops.
  irdl.operation @reduce_max {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // The minimum of the elements along `dimensions`, which the result drops.
  irdl.operation @reduce_min {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // The bitwise and of the elements along `dimensions`, which the result drops.
  irdl.operation @reduce_and {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // The bitwise or of the elements along `dimensions`, which the result drops.
  irdl.operation @reduce_or {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // Index of the maximum along `axis` (the first one on ties), as `index_dtype`.
  irdl.operation @argmax {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_axis = irdl.base "#builtin.integer"
    %attr_index_dtype = irdl.base "#builtin.type"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"axis" = %attr_axis, "index_dtype" = %attr_index_dtype}
  }

  // Index of the minimum along `axis` (the first one on ties), as `index_dtype`.
  irdl.operation @argmin {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_axis = irdl.base "#builtin.integer"
    %attr_index_dtype = irdl.base "#builtin.type"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"axis" = %attr_axis, "index_dtype" = %attr_index_dtype}
  }

  // Inclusive running sum along `axis`; `reverse = 1` runs from the end.
  irdl.operation @cumsum {
    %T = irdl.base "!builtin.tensor"
    %attr_axis = irdl.base "#builtin.integer"
    %attr_reverse = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axis" = %attr_axis, "reverse" = %attr_reverse}
  }

  // Inclusive running product along `axis`; `reverse = 1` runs from the end.
  irdl.operation @cumprod {
    %T = irdl.base "!builtin.tensor"
    %attr_axis = irdl.base "#builtin.integer"
    %attr_reverse = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axis" = %attr_axis, "reverse" = %attr_reverse}
  }

  // Inclusive running maximum along `axis`; `reverse = 1` runs from the end.
  irdl.operation @cummax {
    %T = irdl.base "!builtin.tensor"
    %attr_axis = irdl.base "#builtin.integer"
    %attr_reverse = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axis" = %attr_axis, "reverse" = %attr_reverse}
  }

  // Inclusive running minimum along `axis`; `reverse = 1` runs from the end.
  irdl.operation @cummin {
    %T = irdl.base "!builtin.tensor"
    %attr_axis = irdl.base "#builtin.integer"
    %attr_reverse = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"axis" = %attr_axis, "reverse" = %attr_reverse}
  }

  // The Schur form T and Schur vectors Z (A = Z T Z^H) of square matrices (LAPACK `?gees`).
  irdl.operation @schur {
    %T = irdl.base "!builtin.tensor"
    %attr_compute_schur_vectors = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(schur_form: %T, schur_vectors: variadic %T)
    irdl.attributes {"compute_schur_vectors" = %attr_compute_schur_vectors}
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

  // Reshape to `shape` in row-major (C) order; the element count is unchanged.
  irdl.operation @reshape {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_shape = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"shape" = %attr_shape}
  }

  // Permute dimensions: result dimension i is operand dimension permutation[i].
  irdl.operation @transpose {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_permutation = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"permutation" = %attr_permutation}
  }

  // Reverse the order of elements along each of `dimensions`.
  irdl.operation @rev {
    %T = irdl.base "!builtin.tensor"
    %attr_dimensions = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"dimensions" = %attr_dimensions}
  }

  // Static strided slice: `operand[start:limit:stride]` in every dimension.
  irdl.operation @slice {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_start_indices = irdl.base "#builtin.dense_array"
    %attr_limit_indices = irdl.base "#builtin.dense_array"
    %attr_strides = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"start_indices" = %attr_start_indices, "limit_indices" = %attr_limit_indices, "strides" = %attr_strides}
  }

  // Slice of static size `slice_sizes` at run-time start indices (clamped into bounds).
  irdl.operation @dynamic_slice {
    %T = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_slice_sizes = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T, start_indices: variadic %I)
    irdl.results(result: %U)
    irdl.attributes {"slice_sizes" = %attr_slice_sizes}
  }

  // Overwrite the window of `update`'s shape at run-time start indices (clamped into bounds).
  irdl.operation @dynamic_update_slice {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %I = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T, update: %U, start_indices: variadic %I)
    irdl.results(result: %T)
  }

  // Join two tensors along `dimension` (binary: chains express N operands).
  irdl.operation @concatenate {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_dimension = irdl.base "#builtin.integer"
    irdl.operands(lhs: %T, rhs: %U)
    irdl.results(result: %V)
    irdl.attributes {"dimension" = %attr_dimension}
  }

  // Pad with `padding_value` at both edges and between elements; negative edge padding crops.
  irdl.operation @pad {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_edge_padding_low = irdl.base "#builtin.dense_array"
    %attr_edge_padding_high = irdl.base "#builtin.dense_array"
    %attr_interior_padding = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T, padding_value: %U)
    irdl.results(result: %V)
    irdl.attributes {"edge_padding_low" = %attr_edge_padding_low, "edge_padding_high" = %attr_edge_padding_high, "interior_padding" = %attr_interior_padding}
  }

  // Identity on values whose result must have the partition spec `sharding` (jax's `lax.with_sharding_constraint`).
  irdl.operation @sharding_constraint {
    %T = irdl.base "!builtin.tensor"
    %attr_sharding = irdl.base "#builtin.array"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
    irdl.attributes {"sharding" = %attr_sharding}
  }

  // The i32 indices that stably sort `keys` ascending along `dimension`.
  irdl.operation @sort_permutation {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimension = irdl.base "#builtin.integer"
    irdl.operands(keys: %T)
    irdl.results(result: %U)
    irdl.attributes {"dimension" = %attr_dimension}
  }

  // `operand` read along `dimension` at `indices`: result[.., i, ..] = operand[.., indices[i], ..].
  irdl.operation @apply_permutation {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_dimension = irdl.base "#builtin.integer"
    irdl.operands(operand: %T, indices: %U)
    irdl.results(result: %T)
    irdl.attributes {"dimension" = %attr_dimension}
  }

  // The `k` largest elements along the last dimension, descending, and their i32 indices.
  irdl.operation @top_k {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_k = irdl.base "#builtin.integer"
    irdl.operands(operand: %T)
    irdl.results(values: %U, indices: %V)
    irdl.attributes {"k" = %attr_k}
  }

  // Identity on values whose derivative is zero (JAX's `lax.stop_gradient`).
  irdl.operation @stop_gradient {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // Identity that no optimization looks through (JAX's `lax.optimization_barrier`).
  irdl.operation @optimization_barrier {
    %T = irdl.base "!builtin.tensor"
    irdl.operands(operand: %T)
    irdl.results(result: %T)
  }

  // N-d convolution with strides, padding, lhs/rhs dilation and feature/batch groups.
  irdl.operation @conv_general_dilated {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %V = irdl.base "!builtin.tensor"
    %attr_window_strides = irdl.base "#builtin.dense_array"
    %attr_padding = irdl.base "#builtin.dense_array"
    %attr_lhs_dilation = irdl.base "#builtin.dense_array"
    %attr_rhs_dilation = irdl.base "#builtin.dense_array"
    %attr_lhs_spec = irdl.base "#builtin.dense_array"
    %attr_rhs_spec = irdl.base "#builtin.dense_array"
    %attr_out_spec = irdl.base "#builtin.dense_array"
    %attr_feature_group_count = irdl.base "#builtin.integer"
    %attr_batch_group_count = irdl.base "#builtin.integer"
    irdl.operands(lhs: %T, rhs: %U)
    irdl.results(result: %V)
    irdl.attributes {"window_strides" = %attr_window_strides, "padding" = %attr_padding, "lhs_dilation" = %attr_lhs_dilation, "rhs_dilation" = %attr_rhs_dilation, "lhs_spec" = %attr_lhs_spec, "rhs_spec" = %attr_rhs_spec, "out_spec" = %attr_out_spec, "feature_group_count" = %attr_feature_group_count, "batch_group_count" = %attr_batch_group_count}
  }

  // The sum over every (strided, dilated) window of the padded operand.
  irdl.operation @reduce_window_sum {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_window_dimensions = irdl.base "#builtin.dense_array"
    %attr_window_strides = irdl.base "#builtin.dense_array"
    %attr_padding = irdl.base "#builtin.dense_array"
    %attr_base_dilation = irdl.base "#builtin.dense_array"
    %attr_window_dilation = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"window_dimensions" = %attr_window_dimensions, "window_strides" = %attr_window_strides, "padding" = %attr_padding, "base_dilation" = %attr_base_dilation, "window_dilation" = %attr_window_dilation}
  }

  // The maximum over every (strided, dilated) window of the padded operand.
  irdl.operation @reduce_window_max {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_window_dimensions = irdl.base "#builtin.dense_array"
    %attr_window_strides = irdl.base "#builtin.dense_array"
    %attr_padding = irdl.base "#builtin.dense_array"
    %attr_base_dilation = irdl.base "#builtin.dense_array"
    %attr_window_dilation = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"window_dimensions" = %attr_window_dimensions, "window_strides" = %attr_window_strides, "padding" = %attr_padding, "base_dilation" = %attr_base_dilation, "window_dilation" = %attr_window_dilation}
  }

  // The minimum over every (strided, dilated) window of the padded operand.
  irdl.operation @reduce_window_min {
    %T = irdl.base "!builtin.tensor"
    %U = irdl.base "!builtin.tensor"
    %attr_window_dimensions = irdl.base "#builtin.dense_array"
    %attr_window_strides = irdl.base "#builtin.dense_array"
    %attr_padding = irdl.base "#builtin.dense_array"
    %attr_base_dilation = irdl.base "#builtin.dense_array"
    %attr_window_dilation = irdl.base "#builtin.dense_array"
    irdl.operands(operand: %T)
    irdl.results(result: %U)
    irdl.attributes {"window_dimensions" = %attr_window_dimensions, "window_strides" = %attr_window_strides, "padding" = %attr_padding, "base_dilation" = %attr_base_dilation, "window_dilation" = %attr_window_dilation}
  }
}
