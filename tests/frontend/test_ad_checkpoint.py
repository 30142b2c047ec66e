"""mlax.checkpoint / remat and mlax.ad_checkpoint against jax: every policy gives jax's
gradients on every backend; static arguments, keyword arguments and jax's errors; and
print_saved_residuals reports what mlax's reverse mode keeps, in jax's format."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import ad_checkpoint
from tests.oracle import assert_same

RNG = np.random.default_rng(11)
CP = jax.checkpoint_policies
POLICIES = {
    "none": None,
    "everything_saveable": CP.everything_saveable,
    "nothing_saveable": CP.nothing_saveable,
    "dots_saveable": CP.dots_saveable,
    "checkpoint_dots": CP.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": CP.dots_with_no_batch_dims_saveable,
    "checkpoint_dots_with_no_batch_dims": CP.checkpoint_dots_with_no_batch_dims,
    "save_only_these_names": CP.save_only_these_names("h"),
    "save_any_names_but_these": CP.save_any_names_but_these("h"),
    "save_anything_except_these_names": CP.save_anything_except_these_names("h"),
    "save_from_both_policies": CP.save_from_both_policies(CP.dots_saveable, CP.save_only_these_names("h")),
    "offload_dot_with_no_batch_dims": CP.offload_dot_with_no_batch_dims("device", "pinned_host"),
    "save_and_offload_only_these_names": CP.save_and_offload_only_these_names(
        names_which_can_be_saved=["h"], names_which_can_be_offloaded=[], offload_src="device",
        offload_dst="pinned_host"),
}


def _loss(np_: Any, name: Callable[[Any, str], Any]) -> Callable[..., Any]:
    """A small network: a plain dot, a named value, a batched dot, elementwise ops."""
    def loss(p: dict[str, Any], x: Any) -> Any:
        h = name(np_.tanh(x @ p["w1"]), "h")
        b = np_.einsum("bij,bjk->bik", h.reshape(2, 2, 4), p["w2"])
        return np_.sum(np_.sin(b) ** 2)
    return loss


M_LOSS = _loss(mnp, ad_checkpoint.checkpoint_name)
J_LOSS = _loss(jnp, jax.ad_checkpoint.checkpoint_name)


def _params() -> tuple[dict[str, np.ndarray], np.ndarray]:
    p = {"w1": RNG.normal(size=(3, 8)).astype(np.float32),
         "w2": RNG.normal(size=(2, 4, 3)).astype(np.float32)}
    return p, RNG.normal(size=(2, 3)).astype(np.float32)


def test_names_are_jaxs() -> None:
    assert mlax.checkpoint_policies is jax.checkpoint_policies
    public = {n for n in dir(jax.ad_checkpoint) if not n.startswith("_")}
    assert public <= set(ad_checkpoint.__all__)
    assert set(ad_checkpoint.__all__) - public == {"checkpoint", "remat"}  # jax 0.10 moved them to jax.*
    assert mlax.checkpoint is ad_checkpoint.checkpoint and mlax.remat is ad_checkpoint.remat
    for name in ("Recompute", "Saveable", "Offloadable"):
        assert getattr(ad_checkpoint, name) is getattr(jax.ad_checkpoint, name)


@pytest.mark.parametrize("policy", list(POLICIES), ids=list(POLICIES))
def test_every_policy_gives_jaxs_gradients(policy: str, backend: str) -> None:
    p, x = _params()
    chosen = POLICIES[policy]
    got = mlax.jit(mlax.value_and_grad(mlax.checkpoint(M_LOSS, policy=chosen)))(p, x)
    expected = jax.value_and_grad(jax.checkpoint(J_LOSS, policy=chosen))(p, x)
    assert_same(got, expected, rtol=2e-5, atol=1e-5)


def test_gradients_against_finite_differences() -> None:
    with mlax.enable_x64(True):
        p = {"w1": RNG.normal(size=(3, 8)), "w2": RNG.normal(size=(2, 4, 3))}
        x = RNG.normal(size=(2, 3))
        grad = mlax.grad(mlax.checkpoint(M_LOSS, policy=CP.dots_saveable))(p, x)
        eps = 1e-6
        for key in p:
            for index in [(0, 0), (1, 2)] if key == "w1" else [(0, 1, 2), (1, 3, 0)]:
                up = {k: v.copy() for k, v in p.items()}
                down = {k: v.copy() for k, v in p.items()}
                up[key][index] += eps
                down[key][index] -= eps
                numeric = (float(M_LOSS(up, x)) - float(M_LOSS(down, x))) / (2 * eps)
                np.testing.assert_allclose(float(grad[key][index]), numeric, rtol=1e-6, atol=1e-8)


def test_eager_jit_vmap_and_nesting(backend: str) -> None:
    x = RNG.normal(size=(4, 3)).astype(np.float32)

    def inner(n: Any) -> Callable[[Any], Any]:
        return lambda v: n.sin(v) * v

    m_f = mlax.checkpoint(lambda v: mlax.remat(inner(mnp))(v).sum())
    j_f = jax.checkpoint(lambda v: jax.remat(inner(jnp))(v).sum())
    assert_same(m_f(x), j_f(x))  # outside a trace: the function itself
    assert_same(mlax.jit(m_f)(x), jax.jit(j_f)(x))
    assert_same(mlax.vmap(mlax.grad(m_f))(x), jax.vmap(jax.grad(j_f))(x))
    assert_same(mlax.grad(mlax.grad(lambda v: m_f(v * v)))(np.float32(0.7)),
                jax.grad(jax.grad(lambda v: j_f(v * v)))(np.float32(0.7)))


def test_static_argnums_argnames_and_kwargs(backend: str) -> None:
    def make(n: Any) -> Callable[..., Any]:
        def f(x: Any, power: int, *, scale: Any, mode: str = "sin") -> Any:
            y = n.sin(x) if mode == "sin" else n.cos(x)  # Python control flow on static values
            for _ in range(power):
                y = y * x
            return (y * scale).sum()
        return f

    x, s = RNG.normal(size=(3,)).astype(np.float32), np.float32(1.5)
    m_f = mlax.checkpoint(make(mnp), static_argnums=(1,), static_argnames="mode")
    for mode in ("sin", "cos"):
        # jax 0.10's checkpoint accepts static_argnames but traces the keyword anyway (a str is an
        # error there), so jax's side binds it instead; mlax keeps it static, as documented.
        j_f = jax.checkpoint(functools.partial(make(jnp), mode=mode), static_argnums=(1,))
        got = mlax.grad(lambda v, c, mode=mode: m_f(v, 2, scale=c, mode=mode), argnums=(0, 1))(x, s)
        assert_same(got, jax.grad(lambda v, c, j_f=j_f: j_f(v, 2, scale=c), argnums=(0, 1))(x, s))
    neg = mlax.checkpoint(make(mnp), static_argnums=-1)
    assert_same(mlax.jit(lambda v: neg(v, 1, scale=s))(x), jax.jit(lambda v: make(jnp)(v, 1, scale=s))(x))

    @functools.partial(mlax.checkpoint, policy=CP.nothing_saveable)
    def decorated(v: Any) -> Any:
        return mnp.exp(v).sum()

    assert_same(mlax.grad(decorated)(x), jax.grad(lambda v: jnp.exp(v).sum())(x))


@pytest.mark.parametrize("make,kind", [
    (lambda ckpt: ckpt(lambda x: x, prevent_cse=3), TypeError),
    (lambda ckpt: ckpt(lambda x, y: x, static_argnums=[1])(1.0, 2.0), TypeError),
    (lambda ckpt: ckpt(lambda x, y: x, static_argnums=5)(1.0, 2.0), ValueError),
    (lambda ckpt: ckpt(lambda x: x, concrete=True), NotImplementedError),
])
def test_errors_as_jax(make: Callable[[Any], Any], kind: type) -> None:
    with pytest.raises(kind) as mine:
        make(mlax.checkpoint)
    with pytest.raises(kind) as theirs:
        make(jax.checkpoint)
    assert str(mine.value).replace("mlax", "jax") == str(theirs.value)


def test_bad_function_or_policy() -> None:
    with pytest.raises(TypeError, match="fun of mlax.checkpoint"):
        mlax.checkpoint(3)
    with pytest.raises(TypeError, match="policy of mlax.checkpoint must be None or a callable"):
        mlax.checkpoint(lambda x: x, policy="dots")
    assert mlax.checkpoint(lambda x: x, prevent_cse=[True])(1.0) == 1.0


def test_checkpoint_name_is_the_identity() -> None:
    tree = {"a": mnp.arange(3.0), "b": (np.ones(2, np.float32), 2.0)}
    assert ad_checkpoint.checkpoint_name(tree, "n") is tree
    x = RNG.normal(size=(3,)).astype(np.float32)
    got = mlax.grad(lambda v: (ad_checkpoint.checkpoint_name(v * v, "sq") * v).sum())(x)
    assert_same(got, jax.grad(lambda v: (jax.ad_checkpoint.checkpoint_name(v * v, "sq") * v).sum())(x))
    with pytest.raises(TypeError) as mine:
        ad_checkpoint.checkpoint_name("s", "n")
    with pytest.raises(TypeError) as theirs:
        jax.ad_checkpoint.checkpoint_name("s", "n")
    assert str(mine.value) == str(theirs.value).strip()


# ---------------------------------------------------------------- print_saved_residuals

_LINE = re.compile(r"^(?P<type>\S+) (?:from the argument (?P<arg>.+)|(?P<literal>from a literal)"
                   r"|(?:output of (?P<op>\S+)|named '(?P<name>[^']+)')"
                   r"(?: from (?P<file>.+):(?P<line>\d+):(?P<col>\d+) \((?P<fn>.+)\))?)$")


def _report(printer: Callable[..., None], f: Callable[..., Any], *args: Any,
            capsys: pytest.CaptureFixture[str], **kwargs: Any) -> list[dict[str, str | None]]:
    capsys.readouterr()
    printer(f, *args, **kwargs)
    lines = capsys.readouterr().out.splitlines()
    matches = [_LINE.match(line) for line in lines]
    assert all(matches), lines
    return [m.groupdict() for m in matches if m is not None]


def _mul(x: Any, y: Any) -> Any:
    return x * y


def m_sin(x: Any) -> Any:
    return mnp.sin(x) * 2.0


def j_sin(x: Any) -> Any:
    return jnp.sin(x) * 2.0


def test_residuals_in_jax_format_and_agreeing_with_jax(capsys: pytest.CaptureFixture[str]) -> None:
    x, y = RNG.normal(size=(3,)).astype(np.float32), RNG.normal(size=(3,)).astype(np.float32)
    assert _report(ad_checkpoint.print_saved_residuals, _mul, x, y, capsys=capsys) == \
        _report(jax.ad_checkpoint.print_saved_residuals, _mul, x, y, capsys=capsys)
    mine = _report(ad_checkpoint.print_saved_residuals, m_sin, x, capsys=capsys)
    theirs = _report(jax.ad_checkpoint.print_saved_residuals, j_sin, x, capsys=capsys)
    # the literal 2.0: a scalar in jax, a splat of x's shape in mlax's program
    assert len(mine) == len(theirs) == 2 and mine[0]["literal"] and theirs[0]["literal"]
    assert {k: v for k, v in mine[1].items() if k not in ("line", "fn")} == \
        {k: v for k, v in theirs[1].items() if k not in ("line", "fn")}
    assert mine[1]["op"] == "cos" and mine[1]["type"] == "f32[3]" and mine[1]["fn"] == "m_sin"
    assert int(mine[1]["line"]) - int(theirs[1]["line"]) == m_sin.__code__.co_firstlineno - \
        j_sin.__code__.co_firstlineno


def test_residuals_name_pytree_and_keyword_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    p = {"w": RNG.normal(size=(2,)).astype(np.float32), "b": RNG.normal(size=(2,)).astype(np.float32)}

    def f(p: dict[str, Any], *, k: Any) -> Any:
        return p["w"] * p["b"] * k

    mine = _report(ad_checkpoint.print_saved_residuals, f, p, k=np.float32(2.0), capsys=capsys)
    arguments = [r["arg"] for r in mine if r["arg"] is not None]
    assert "p['b']" in arguments and "p['w']" in arguments
    theirs = _report(jax.ad_checkpoint.print_saved_residuals, f, p, k=np.float32(2.0), capsys=capsys)
    jax_arguments = [r["arg"] for r in theirs if r["arg"] is not None]
    assert set(jax_arguments) <= set(arguments) | {"k"}


def _kept(report: list[dict[str, str | None]]) -> list[tuple[str | None, ...]]:
    return [(r["type"], r["arg"], r["literal"], r["op"], r["name"]) for r in report]


@pytest.mark.parametrize("policy", ["none", "nothing_saveable", "dots_saveable",
                                    "dots_with_no_batch_dims_saveable", "save_only_these_names",
                                    "save_any_names_but_these"])
def test_checkpoint_keeps_what_jax_keeps(policy: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A checkpoint keeps its arguments and the values its policy saves, as jax's."""
    p, x = _params()
    mine = _report(ad_checkpoint.print_saved_residuals,
                   mlax.checkpoint(M_LOSS, policy=POLICIES[policy]), p, x, capsys=capsys)
    theirs = _report(jax.ad_checkpoint.print_saved_residuals, jax.checkpoint(J_LOSS, policy=POLICIES[policy]),
                     p, x, capsys=capsys)
    assert _kept(mine) == _kept(theirs)


def test_everything_saveable_keeps_what_plain_reverse_mode_keeps(capsys: pytest.CaptureFixture[str]) -> None:
    p, x = _params()
    plain = _report(ad_checkpoint.print_saved_residuals, M_LOSS, p, x, capsys=capsys)
    assert any(r["op"] is not None for r in plain)  # forward results are kept
    everything = mlax.checkpoint(M_LOSS, policy=CP.everything_saveable)
    assert _report(ad_checkpoint.print_saved_residuals, everything, p, x, capsys=capsys) == plain


def test_names_of_a_name_policy_are_kept_and_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """mlax keeps the named value itself: jax's save_from_both_policies(dots, names) also keeps
    the dot under the name (its name_p is a separate equation whose input tanh recomputes)."""
    p, x = _params()
    policy = CP.save_from_both_policies(CP.dots_saveable, CP.save_only_these_names("h"))
    mine = _report(ad_checkpoint.print_saved_residuals, mlax.checkpoint(M_LOSS, policy=policy), p, x,
                   capsys=capsys)
    assert [r["name"] for r in mine if r["name"]] == ["h"]
    # the batched product; tanh's input is not needed
    assert [r["op"] for r in mine if r["op"]] == ["dot_general"]
    assert sum(r["arg"] is not None for r in mine) == 3


def test_residuals_through_a_scan_are_jaxs(capsys: pytest.CaptureFixture[str]) -> None:
    """A scan keeps what jax's partial evaluation keeps: the per-step values its tangent scan
    reads, stacked by the forward scan (here three f32[4,3] outputs), not its xs to recompute."""
    def f(np_: Any, lax: Any) -> Callable[..., Any]:
        def loss(x: Any, ys: Any) -> Any:
            carry, outs = lax.scan(lambda c, v: (c * np_.sin(v), c), x, ys)
            return np_.sum(carry) + np_.sum(outs)
        return loss

    args = RNG.normal(size=(3,)).astype(np.float32), RNG.normal(size=(4, 3)).astype(np.float32)
    mine = _report(ad_checkpoint.print_saved_residuals, f(mnp, mlax.lax), *args, capsys=capsys)
    theirs = _report(jax.ad_checkpoint.print_saved_residuals, f(jnp, jax.lax), *args, capsys=capsys)
    assert [(r["type"], r["op"]) for r in mine] == [(r["type"], r["op"]) for r in theirs] == \
        [("f32[4,3]", "scan")] * 3
