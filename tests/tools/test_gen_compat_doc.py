"""docs/compatibility.md lists what install_as_jax gives for every public jax name, as it is today."""

from __future__ import annotations

import re

from mlax import jax_modules
from mlax.tools import gen_compat_doc


def test_compatibility_doc_is_fresh() -> None:
    assert gen_compat_doc.DOC.read_text() == gen_compat_doc.render(), \
        "docs/compatibility.md is stale: run python -m mlax.tools.gen_compat_doc"


def test_every_public_jax_module_has_an_entry() -> None:
    import jax

    listed = {*jax_modules.REDIRECTS, *jax_modules.PASSTHROUGH_MODULES}
    assert not set(jax_modules.REDIRECTS) & set(jax_modules.PASSTHROUGH_MODULES)
    public = {f"jax.{n}" for n in dir(jax)
              if not n.startswith("_") and type(getattr(jax, n)).__name__ == "module"}
    assert public <= listed, sorted(public - listed)


def test_status_agrees_with_what_the_names_are() -> None:
    import mlax.numpy as mnp

    assert jax_modules.status("jax.numpy", "sin") == "mlax"
    assert jax_modules.status("jax.lax", "ConvDimensionNumbers") == "jax"
    assert jax_modules.status("jax.lax", "add_p") == "jax"
    assert jax_modules.status("jax.numpy.fft", "fft") == "missing"
    assert jax_modules.status("jax", "new_ref") == "not yet"
    assert jax_modules.status("jax", "pmap") == "mlax"
    assert jax_modules.status("jax.tree_util", "tree_map") == "jax"
    assert jax_modules.resolve("jax.numpy", "sin", {}) is mnp.sin


def test_the_page_example_runs() -> None:
    import subprocess
    import sys

    block = re.findall(r"```python\n(.*?)```", gen_compat_doc.DOC.read_text(), flags=re.S)[0]
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mlax.array.Array" in done.stdout
