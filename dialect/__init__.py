"""The mlax dialect: op table, IRDL definition, builders, inference and reference semantics."""

# importing these registers the op families and the declaration kinds
from mlax.dialect import callbacks, control_flow, ops, shard_map, user_primitives  # noqa: F401
from mlax.dialect.builder import build, infer, read_attributes
from mlax.dialect.context import get_context, make_context
from mlax.dialect.registry import OPS, OpDef, get_op
from mlax.dialect.tensor_spec import TensorSpec

__all__ = ["OPS", "OpDef", "TensorSpec", "build", "get_context", "get_op", "infer",
           "make_context", "read_attributes"]
