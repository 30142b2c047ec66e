"""Op families of the mlax dialect; importing this package registers every op.

The import order is the order of ops in dialect/mlax.irdl.mlir and docs/dialect.md.
"""

from mlax.dialect.ops import (  # noqa: F401
    collectives,
    comparison,
    complex_parts,
    constants,
    conversions,
    decompositions,
    decompositions_spectral,
    eig,
    elementwise,
    fft,
    householder,
    indexing,
    linalg,
    reductions,
    schur,
    shape,
    sharding,
    sorting,
    transforms,
    windowed,
)
