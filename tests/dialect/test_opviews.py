"""dialect/opviews: compiling loads linalg's op classes without upstream's OpDSL library, and
upstream's module still imports afterwards with the same classes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_CODE = """
import sys
import numpy as np
import mlax, mlax.numpy as mnp
rng = np.random.default_rng(11)
a, b = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
got = mlax.jit(lambda a, b: mnp.tanh(a @ b).sum(axis=0))(a, b)
np.testing.assert_allclose(np.asarray(got), np.tanh(a.astype(np.float64) @ b).sum(axis=0), rtol=1e-5)
assert "mlir.dialects.linalg" not in sys.modules, "upstream's linalg (OpDSL) was imported"
from mlir.dialects import linalg
from mlax.dialect.opviews import linalg as light
assert linalg.GenericOp is light.GenericOp and linalg.MatmulOp is light.MatmulOp
got = mlax.jit(lambda a, b: (a @ b) * 3)(a, b)  # lowering still works with upstream's module loaded
np.testing.assert_allclose(np.asarray(got), (a.astype(np.float64) @ b) * 3, rtol=1e-5)
print("ok")
"""


def test_compiling_does_not_import_upstream_linalg() -> None:
    result = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, cwd=REPO,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
