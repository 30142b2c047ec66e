"""The module MLIR's bindings look for when Python first meets an ``mlax`` op.

mlax's ops are IRDL ops with no OpView classes, so there is nothing to register. But the
bindings remember a dialect's module only once an import of it succeeds: without this module
every ``value.owner`` or block iteration that met an mlax op tried (and failed) to import
``mlax.dialect.opviews.mlax`` and ``mlir.dialects.mlax`` again, ~0.1-0.2 ms a time, on 3,400
ops in tracing and lowering a transformer block's gradient.
"""
