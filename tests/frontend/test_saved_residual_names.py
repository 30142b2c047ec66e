"""`print_saved_residuals` names a `checkpoint_name` residual where the name was given (the
``checkpoint_name`` call, as jax shows its ``name`` equation), not where the value was computed."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mlax
import mlax.numpy as jnp

RNG = np.random.default_rng(5)


def _layer(lib: Any, w: Any, x: Any) -> Any:
    return lib.sin(lib.dot(w, x))


def _named(api: Any, lib: Any) -> Any:
    def f(w1: Any, w2: Any, x: Any) -> Any:
        x = api.ad_checkpoint.checkpoint_name(_layer(lib, w1, x), name="a")
        x = api.ad_checkpoint.checkpoint_name(_layer(lib, w2, x), name="b")
        return lib.sum(x)

    return f


@pytest.mark.parametrize("saved", [("a",), ("b",), ("a", "b")])
def test_named_residuals_are_located_at_the_name(saved: tuple[str, ...],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    args = [RNG.normal(size=s).astype(np.float32) for s in ((3, 3), (3, 3), (3,))]
    lines = {}
    for api, lib in ((mlax, jnp), (jax, jjnp)):
        policy = api.checkpoint_policies.save_only_these_names(*saved)
        api.ad_checkpoint.print_saved_residuals(api.checkpoint(_named(api, lib), policy=policy), *args)
        lines[api] = capsys.readouterr().out.splitlines()
    named = [line for line in lines[mlax] if "named" in line]  # 'b' feeds only sum: never a residual
    assert len(named) == ("a" in saved) and all("(_named.<locals>.f)" in line for line in named)
    assert lines[mlax] == lines[jax]
