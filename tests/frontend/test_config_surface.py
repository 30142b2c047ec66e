"""jax's whole ``jax.config`` surface on mlax, against jax 0.10.2: every option jax defines is
accepted with jax's check of its value and read back, unknown names raise jax's error,
``parse_flags_with_absl``/``config_with_absl`` work as jax's, and ``jax_numpy_rank_promotion``
"warn"/"raise" give jax's warning and ValueError."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
import mlax.scipy.special as msp
from mlax import configuration
from tests.oracle import assert_same

JAX_OPTIONS = sorted(jax.config._value_holders)
# mlax settings that take one of jax's names (mlax.configuration._ALIASES): their values are mlax's
ALIASED = {"jax_platform_name", "jax_compilation_cache_dir", "jax_compilation_cache_max_size"}


def _error(fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


# ---------------------------------------------------------------- every option, jax's checks


def test_jax_options_reads_jaxs_config() -> None:
    """The private jax API the config mirrors (Config._value_holders, meta, _contextmanager_flags):
    if jax moves it, this is the test that says so."""
    options = configuration.jax_options()
    assert sorted(options) == JAX_OPTIONS and len(options) > 100
    debug_nans = options["jax_debug_nans"]
    assert debug_nans.is_state and debug_nans.flag_type is bool and debug_nans.parser is not None
    assert options["jax_traceback_filtering"].flag_type == "enum"
    assert not options["jax_backend_target"].is_state and options["jax_backend_target"].parser is None


@pytest.mark.parametrize("name", JAX_OPTIONS)
def test_every_jax_option_is_read_as_jax_reads_it(name: str) -> None:
    if name not in ALIASED:
        assert mlax.config.values[name] == jax.config.values[name]
        assert getattr(mlax.config, name, None) == getattr(jax.config, name, None)
    jax_read = _error(lambda: jax.config.read(name)) if name in jax.config._contextmanager_flags else None
    if jax_read is None:
        if name not in ALIASED:
            assert mlax.config.read(name) == jax.config.read(name)
    else:
        error = _error(lambda: mlax.config.read(name))
        assert type(error) is type(jax_read) and str(error) == str(jax_read)


KEPT = sorted(configuration._KEPT)


@pytest.mark.parametrize("name", KEPT)
def test_every_kept_option_updates_and_restores(name: str) -> None:
    before = mlax.config.values[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # jax's own value never warns
        mlax.config.update(name, before)
    assert mlax.config.values[name] == before == jax.config.values[name]


class _Bad:
    def __repr__(self) -> str:
        return "<bad>"


# Options with a checked value (enum, int, float): mlax raises what jax raises. A value jax
# accepts is never passed to jax here, so jax's own state is left alone.
# (The aliased names are checked as mlax's settings: tests/frontend/test_config.py.)
CHECKED = sorted(name for name, option in configuration.jax_options().items()
                 if option.is_state and option.flag_type in ("enum", "enum_class", int, float)
                 and name not in ALIASED)


@pytest.mark.parametrize("name", CHECKED)
@pytest.mark.parametrize("bad", ["bogus", _Bad()], ids=["string", "object"])
def test_bad_values_raise_jaxs_error(name: str, bad: Any) -> None:
    jax_error = _error(lambda: jax.config.update(name, bad))
    error = _error(lambda: mlax.config.update(name, bad))
    assert type(error) is type(jax_error) and str(error) == str(jax_error)
    assert getattr(mlax.config, name) == getattr(jax.config, name)


def test_unknown_names_raise_jaxs_error() -> None:
    for method in ("update", "read"):
        args = ("jax_no_such_option", 1) if method == "update" else ("jax_no_such_option",)
        jax_error = _error(lambda method=method, args=args: getattr(jax.config, method)(*args))
        error = _error(lambda method=method, args=args: getattr(mlax.config, method)(*args))
        assert isinstance(error, type(jax_error)) and str(error) == str(jax_error)
    assert type(_error(lambda: mlax.config.jax_no_such_option)) is AttributeError


def test_config_meta_and_values_are_jaxs() -> None:
    assert mlax.config.meta == jax.config.meta
    assert set(jax.config.values) <= set(mlax.config.values)


def test_unhonoured_values_warn_once_and_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(configuration, "_warned", set())
    try:
        with pytest.warns(configuration.UnhonouredOptionWarning, match="jax_threefry_partitionable=False"):
            mlax.config.update("jax_threefry_partitionable", False)
        assert mlax.config.jax_threefry_partitionable is False
        assert jax.config.jax_threefry_partitionable is True  # the real jax is left alone
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mlax.config.update("jax_threefry_partitionable", False)  # once per option and value
            mlax.config.update("jax_threefry_partitionable", True)  # what mlax computes: silent
    finally:
        mlax.config.update("jax_threefry_partitionable", True)
    assert_same(mlax.random.normal(mlax.random.PRNGKey(0), (3,)),
                jax.random.normal(jax.random.PRNGKey(0), (3,)))


def test_kept_options_leave_the_real_jax_alone() -> None:
    mlax.config.update("jax_traceback_filtering", "off")
    try:
        assert mlax.config.jax_traceback_filtering == "off"
        assert jax.config.jax_traceback_filtering == "auto"
    finally:
        mlax.config.update("jax_traceback_filtering", "auto")


def test_forwarded_options_are_jaxs() -> None:
    before = jax.config.jax_log_compiles
    mlax.config.update("jax_log_compiles", True)
    try:
        assert jax.config.jax_log_compiles is True and mlax.config.jax_log_compiles is True
    finally:
        mlax.config.update("jax_log_compiles", before)


def test_disabling_the_compilation_cache_turns_mlaxs_off(tmp_path: Any) -> None:
    mlax.config.update("compilation_cache_dir", str(tmp_path))
    try:
        assert mlax.config.compilation_cache_dir == str(tmp_path)
        mlax.config.update("jax_enable_compilation_cache", False)
        assert mlax.config.compilation_cache_dir is None
    finally:
        mlax.config.update("jax_enable_compilation_cache", True)
        mlax.config.update("compilation_cache_dir", None)


# ---------------------------------------------------------------- absl flags


def _run(code: str, *argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *argv], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_parse_flags_with_absl_as_jax() -> None:
    code = """
        import sys
        which = sys.argv[1]
        if which == "mlax":
            import mlax
            mlax.install_as_jax()
        import jax
        jax.config.parse_flags_with_absl()
        jax.config.parse_flags_with_absl()  # once only, as jax
        from absl import flags
        print(jax.config.jax_numpy_rank_promotion, jax.config.jax_traceback_filtering,
              jax.config.jax_debug_nans, flags.FLAGS.jax_debug_nans, flags.FLAGS.is_parsed())
    """
    argv = ("--jax_numpy_rank_promotion=raise", "--jax_traceback_filtering=off", "--jax_debug_nans",
            "--other", "--", "--jax_enable_checks")
    expected = _run(code, "jax", *argv)
    assert expected == "raise off True True True"
    assert _run(code, "mlax", *argv) == expected


def test_config_with_absl_defines_every_option() -> None:
    code = """
        import mlax
        mlax.install_as_jax()
        import jax
        from absl import flags
        jax.config.config_with_absl()
        names = sorted(n for n in flags.FLAGS if n.startswith(("jax", "mock_", "check_vma", "eager_")))
        print(len(names), jax.config.use_absl)
    """
    assert _run(code) == f"{len(JAX_OPTIONS)} True"


# ---------------------------------------------------------------- rank promotion


_size = itertools.count(2)


def _cases(k: int, np_mod: Any, nn: Any, special: Any, api: Any) -> dict[str, Callable[[], Any]]:
    """The cases on arrays of size ``k``, fresh for each test (jax's jitted ufuncs would not warn
    twice on one shape)."""
    a, b = np_mod.ones((2, k)), np_mod.ones(k)
    return {
        "operator": lambda: a + b, "rsub": lambda: b - a, "add": lambda: np_mod.add(a, b),
        "multiply_in_jit": lambda: api.jit(lambda x, y: x * y)(a, b),
        "in_grad": lambda: api.grad(lambda x: (x * b).sum())(a),
        "in_vmap": lambda: api.vmap(lambda x: x * b)(np_mod.ones((3, 2, k))),
        "logaddexp": lambda: np_mod.logaddexp(a, b), "arctan2": lambda: np_mod.arctan2(a, b),
        "equal": lambda: a == b, "isclose": lambda: np_mod.isclose(a, b), "power": lambda: a ** b,
        "xlogy": lambda: special.xlogy(a, b), "remainder": lambda: a % b,
        "vectorize": lambda: np_mod.vectorize(lambda x, y: x + y)(a, b),
        # no rank promotion, or none that jax checks
        "scalar": lambda: a + 1.0, "rank0": lambda: a * np_mod.float32(2),
        "where": lambda: np_mod.where(a > 0, a, b), "heaviside": lambda: np_mod.heaviside(a, b),
        "matmul": lambda: np_mod.ones((3, 2, k)) @ np_mod.ones((k, 4)),
        "same_rank": lambda: a + np_mod.ones((1, k)), "einsum": lambda: np_mod.einsum("ij,j->ij", a, b),
        "softmax": lambda: nn.softmax(a), "standardize": lambda: nn.standardize(a),
        "logsumexp": lambda: nn.logsumexp(a, axis=1), "mean": lambda: np_mod.mean(a, axis=0),
        "var": lambda: np_mod.var(a, axis=1), "norm": lambda: np_mod.linalg.norm(a, axis=1),
        "one_hot": lambda: nn.one_hot(np_mod.arange(3), 4), "outer": lambda: np_mod.outer(a, b),
        "categorical": lambda: api.random.categorical(api.random.PRNGKey(0), a),
    }


def _outcomes(mode: str, k: int, np_mod: Any, nn: Any, special: Any,
              api: Any) -> dict[str, tuple[str, list[str]]]:
    out = {}
    with api.numpy_rank_promotion(mode):
        for name, fn in _cases(k, np_mod, nn, special, api).items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    fn()
                    result = "ok"
                except ValueError as error:
                    result = f"ValueError: {error}"
            out[name] = (result, [str(w.message) for w in caught if "rank promotion" in str(w.message)])
    return out


def test_rank_promotion_raise_as_jax() -> None:
    k = next(_size)
    mine = _outcomes("raise", k, mnp, mlax.nn, msp, mlax)
    theirs = _outcomes("raise", k, jnp, jax.nn, jax.scipy.special, jax)
    assert {name: result for name, (result, _) in mine.items()} == {n: r for n, (r, _) in theirs.items()}
    assert theirs["operator"][0].startswith("ValueError: Operands could not be broadcast together for add")
    assert theirs["vectorize"][0].startswith("ValueError: operands with shapes")
    assert mlax.config.jax_numpy_rank_promotion == "allow"


def test_rank_promotion_warn_as_jax() -> None:
    """mlax warns where jax raises under "raise" (jax's own warnings are not repeated for a
    shape its jitted ufuncs have traced), with jax's warning when jax gives one."""
    k = next(_size)
    mine = _outcomes("warn", k, mnp, mlax.nn, msp, mlax)
    theirs = _outcomes("warn", k, jnp, jax.nn, jax.scipy.special, jax)
    raises = _outcomes("raise", k, jnp, jax.nn, jax.scipy.special, jax)
    for name, (result, warned) in mine.items():
        assert result == theirs[name][0] == "ok", name
        assert bool(warned) == (raises[name][0] != "ok"), name
        if theirs[name][1]:
            assert warned[0] == theirs[name][1][0], name
    assert mine["operator"][1][0].startswith("Following NumPy automatic rank promotion for add on shapes")


def test_rank_promotion_is_part_of_the_jit_cache_key() -> None:
    add = mlax.jit(lambda x, y: x + y)
    a, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    assert_same(add(a, b), jnp.ones((2, 3)) * 2)  # traced under "allow"
    with mlax.numpy_rank_promotion("raise"), jax.numpy_rank_promotion("raise"):
        error = _error(lambda: add(a, b))
        jax_error = _error(lambda: jax.jit(lambda x, y: x + y)(a, b))
        assert type(error) is type(jax_error) is ValueError and str(error) == str(jax_error)
    assert_same(add(a, b), jnp.ones((2, 3)) * 2)


def test_rank_promotion_from_the_config_and_the_environment() -> None:
    mlax.config.update("jax_numpy_rank_promotion", "raise")
    try:
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            mnp.ones((2, 3)) * mnp.ones(3)
    finally:
        mlax.config.update("jax_numpy_rank_promotion", "allow")
    code = """
        import mlax, mlax.numpy as mnp
        try:
            mnp.ones((2, 3)) * mnp.ones(3)
        except ValueError as error:
            print(str(error).split(" and ")[0])
    """
    env_code = f"import os; os.environ['JAX_NUMPY_RANK_PROMOTION'] = 'raise'\n{textwrap.dedent(code)}"
    assert _run(env_code) == "Operands could not be broadcast together for multiply on shapes (2, 3) (3,)"
