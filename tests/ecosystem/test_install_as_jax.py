"""mlax.install_as_jax: what `import jax` gives afterwards, checked in fresh processes (the
install is process-wide, so each check runs a script of its own)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=300)


def check(script: str) -> str:
    done = run(script)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_jax_names_become_mlax_and_tracing_free_modules_pass_through() -> None:
    check("""
        import jax as real_jax, jax.tree_util as real_tree_util, jax.typing as real_typing
        import mlax, mlax.numpy, mlax.lax, mlax.random, mlax.lax_primitives
        mlax.install_as_jax()
        import jax
        import jax.numpy as jnp
        from jax import lax, random
        import jax.nn.initializers as init
        assert jax is not real_jax and jax.jit is mlax.jit and jax.grad is mlax.grad
        assert jnp.sin is mlax.numpy.sin and lax.scan is mlax.lax.scan and random.split is mlax.random.split
        assert init.glorot_uniform is mlax.nn.initializers.glorot_uniform
        assert jax.Array is mlax.Array and jnp.ndarray is mlax.Array
        assert jax.tree_util is real_tree_util and jax.typing is real_typing
        assert jax.tree.map is mlax.tree.map
        assert jax.flatten_util.ravel_pytree is mlax.flatten_util.ravel_pytree
        assert jax.Device is real_jax.Device and jax.lax.Precision is real_jax.lax.Precision
        assert jax.lax.add_p is mlax.lax_primitives.add_p  # lax's primitives bind on mlax values
        assert jax.extend.core.primitives.add_p is jax.lax.add_p
        assert jax.lax.while_p is real_jax.lax.while_p  # the others pass through as identities
        assert jax.__version__ == real_jax.__version__ and jax.make_mlir is mlax.make_mlir
        assert jax.core.Tracer is mlax.core.Tracer
        assert "sin" in dir(jnp) and "fft" in dir(jnp) and "no_such" not in dir(jnp)
        assert {"numpy", "lax", "tree_util"} <= set(dir(jax)) and "typeof" in dir(jax)
        assert "ragged_all_to_all" not in dir(jax.lax)  # mlax lacks it: not listed
        mlax.install_as_jax()  # idempotent
        assert __import__("jax") is jax
        x = jnp.arange(6.0).reshape(2, 3)
        assert type(jax.jit(lambda a: jnp.sin(a) * 2)(x)) is mlax.Array
        """)


@pytest.mark.parametrize("expression, message", [
    ("jax.scipy.optimize.minimize", "'jax.scipy.optimize' has no attribute 'minimize'"),
    ("jax.lax.after_all", "'jax.lax' has no attribute 'after_all'"),
    ("jax.lax.ragged_all_to_all", "'jax.lax' has no attribute 'ragged_all_to_all'"),
    ("jax.numpy.no_such_name", "'jax.numpy' has no attribute 'no_such_name'"),
])
def test_names_mlax_lacks_raise_attribute_error_saying_so(expression: str, message: str) -> None:
    out = check(f"""
        import mlax
        mlax.install_as_jax()
        import jax, jax.numpy, jax.image, jax.lax, jax.scipy.optimize
        try:
            {expression}
        except AttributeError as err:
            print(err)
        """)
    assert message in out and "mlax.install_as_jax()" in out and "docs/compatibility.md" in out


def test_jax_and_mlax_internals_keep_the_real_jax() -> None:
    check("""
        import mlax
        mlax.install_as_jax()
        import jax, numpy as np
        from jax._src import core  # jax's own code keeps working after the swap
        import mlax.numpy as mnp
        # mlax's XLA backend runs through the real jax.jit and jax.export
        f = mlax.jit(lambda a: mnp.cos(a) + 1.0, backend="xla")
        np.testing.assert_allclose(np.asarray(f(np.ones(3, np.float32))), np.cos(1.0) + 1.0, rtol=1e-6)
        # mlax still reads jax arrays as inputs (it checks them against the real jax.Array)
        import importlib
        real = importlib.import_module("jax").__dict__["_mlax_real"]
        assert float(mlax.jit(lambda a: a.sum())(real.numpy.ones(3))) == 3.0
        assert jax.errors is real.errors
        """)


def test_mlax_errors_are_jax_errors() -> None:
    check("""
        import mlax
        mlax.install_as_jax()
        import jax, jax.numpy as jnp
        try:
            jax.jit(lambda x: 1 if x > 0 else 2)(jnp.ones(()))
        except jax.errors.ConcretizationTypeError as err:
            assert "mlax.lax.cond" in str(err)
        else:
            raise AssertionError("no error")
        """)


def test_modules_imported_before_the_install_are_named_in_a_warning() -> None:
    done = run("""
        import warnings, types, sys
        import jax
        holder = types.ModuleType("early_library"); holder.jax = jax; sys.modules["early_library"] = holder
        import mlax
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mlax.install_as_jax()
        print([str(w.message) for w in caught])
        """)
    assert done.returncode == 0, done.stderr
    assert "early_library" in done.stdout and "keep using the real jax" in done.stdout


def test_attribute_lookups_from_threads_agree() -> None:
    check("""
        import threading
        import mlax
        mlax.install_as_jax()
        import jax
        seen, errors = [], []
        def look():
            try:
                for _ in range(200):
                    seen.append((jax.numpy.sin, jax.lax.scan, jax.tree_util.tree_map))
            except Exception as err:
                errors.append(err)
        threads = [threading.Thread(target=look) for _ in range(4)]
        [t.start() for t in threads]; [t.join() for t in threads]
        assert not errors and len(set(seen)) == 1
        """)
