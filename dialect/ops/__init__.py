"""Op families of the mlax dialect; importing this package registers every op."""

from mlax.dialect.ops import constants, conversions, elementwise, shape  # noqa: F401
