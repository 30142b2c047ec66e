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
    assert jax_modules.status("jax.lax", "add_p") == "mlax"  # pyfront/lax_primitives.py
    assert jax_modules.status("jax.lax", "while_p") == "jax"
    assert jax_modules.status("jax.extend.core.primitives", "tanh_p") == "mlax"
    assert jax_modules.status("jax.numpy.fft", "fft") == "mlax"
    assert jax_modules.status("jax.lax", "rng_uniform") == "not yet"
    assert jax_modules.status("jax", "new_ref") == "mlax"
    assert jax_modules.status("jax", "pmap") == "mlax"
    assert jax_modules.status("jax.tree_util", "tree_map") == "jax"
    assert jax_modules.resolve("jax.numpy", "sin", {}) is mnp.sin


def _lacking() -> list[tuple[str, str]]:
    return [(module, name) for module in sorted(jax_modules.REDIRECTS)
            for name in jax_modules.public_names(jax_modules.real_module(module))
            if jax_modules.status(module, name) in ("missing", "not yet")]


def test_every_lacking_name_has_a_reason() -> None:
    unexplained = [f"{module}.{name}" for module, name in _lacking() if not jax_modules.reason(module, name)]
    assert not unexplained, f"add these to _MISSING_REASONS in pyfront/jax_modules.py: {unexplained}"


def test_no_reason_is_stale() -> None:
    """Every entry of the reasons table names a jax module and a name that mlax lacks today."""
    lacking = {f"{module}:{name}" for module, name in _lacking()}
    modules_lacking = {entry.split(":")[0] for entry in lacking}
    stale = [entry for entry in jax_modules.MISSING_REASONS
             if entry not in lacking and not (entry.endswith(":*") and entry[:-2] in modules_lacking)]
    assert not stale, f"mlax has these now: drop them from _MISSING_REASONS: {stale}"


def test_missing_and_not_yet_names_say_why() -> None:
    import pytest

    import mlax

    assert "XLA tokens" in jax_modules.missing_message("jax.lax", "after_all")
    assert jax_modules.reason("jax.scipy.optimize", "minimize").startswith("not built yet")
    assert "stateful" in jax_modules.reason("jax.lax", "rng_uniform")
    assert jax_modules.reason("jax.numpy", "sin") is None
    with pytest.raises(NotImplementedError, match="stateful"):
        mlax.lax.rng_uniform(0.0, 1.0, (2,))


def test_the_page_example_runs() -> None:
    import subprocess
    import sys

    block = re.findall(r"```python\n(.*?)```", gen_compat_doc.DOC.read_text(), flags=re.S)[0]
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mlax.array.Array" in done.stdout


def test_core_trace_is_mlax_s_base_class() -> None:
    """jax.core.Trace resolves to mlax's trace class: libraries that subclass it at import
    (dm-haiku's DotTrace) import under install_as_jax."""
    import mlax.core

    assert jax_modules.status("jax.core", "Trace") == "mlax"
    assert jax_modules.resolve("jax.core", "Trace", {}) is mlax.core.Trace

    class Sub(jax_modules.resolve("jax.core", "Trace", {})):  # what haiku does
        pass

    assert issubclass(Sub, mlax.core.Trace)
