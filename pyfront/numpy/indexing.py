"""mlax.numpy indexing: x[...] and x.at[...]."""
