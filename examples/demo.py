"""mlax demo: a JAX-style program compiled for the CPU, its IR, and its numbers checked against JAX.

Run with `make demo`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import mlax
import mlax.numpy as mnp
from mlax.passes.pipeline import run_pipeline


def mlp(params, x, np_=mnp):
    """A two-layer perceptron with a softmax head, written once for any NumPy-like module."""
    (w1, b1), (w2, b2) = params
    h = np_.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logits = logits - logits.max(axis=-1, keepdims=True)
    return np_.exp(logits) / np_.exp(logits).sum(axis=-1, keepdims=True)


def main() -> None:
    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=16).astype(np.float32)),
        (rng.normal(size=(16, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)),
    ]
    x = rng.normal(size=(5, 8)).astype(np.float32)

    forward = mlax.jit(mlp)
    probs = forward(params, x)
    print("mlax probabilities:\n", np.asarray(probs).round(4))

    expected = jax.jit(lambda p, x: mlp(p, x, jnp))(params, x)
    err = float(np.max(np.abs(np.asarray(probs) - np.asarray(expected))))
    print(f"max |mlax - jax| = {err:.2e}")
    assert err < 1e-5, "mlax disagrees with jax"

    print("\nThe program as mlax IR (mlax.make_mlir):")
    print(mlax.make_mlir(mlp)(params, x))

    print("After the mlax-cleanup pass (the duplicated exp is gone):")
    module = forward.lower(params, x).mlir_module()
    run_pipeline(module, "builtin.module(mlax-cleanup)")
    print(module.operation.get_asm(enable_debug_info=False))

    lowered = forward.lower(params, x)
    stage = "loops" if "loops" in lowered.STAGES else "stablehlo"
    print(f"The same program lowered by the {forward.backend!r} backend, at its {stage} stage (stages: "
          f"{', '.join(lowered.STAGES)}):")
    print(lowered.as_text(stage, debug_info=False))

    on_xla = mlax.jit(mlp, backend="xla")
    xla_err = float(np.max(np.abs(np.asarray(on_xla(params, x)) - np.asarray(expected))))
    print(f"Through StableHLO and XLA (backend='xla'): max |mlax - jax| = {xla_err:.2e}")
    assert xla_err < 1e-5, "mlax on XLA disagrees with jax"

    print(f"jit runs on the {forward.backend!r} backend; the first call compiled it, "
          "later calls reuse it.")

    def loss(params, x, np_=mnp):
        return -np_.log(mlp(params, x, np_)[:, 0]).mean()

    grads = mlax.jit(mlax.grad(loss))(params, x)
    expected_grads = jax.jit(jax.grad(lambda p, x: loss(p, x, jnp)))(params, x)
    leaves = jax.tree_util.tree_leaves
    pairs = zip(leaves(grads), leaves(expected_grads), strict=True)
    grad_err = max(float(np.max(np.abs(np.asarray(g) - np.asarray(e)))) for g, e in pairs)
    print(f"jit(grad(loss)) via the mlax-autodiff pass: max |mlax - jax| = {grad_err:.2e}")
    assert grad_err < 1e-4, "mlax's gradient disagrees with jax"

    def rollout(w, xs, lax, np_):  # a recurrence: traced once, compiled as one scf.for loop
        h, hs = lax.scan(lambda h, x: (np_.tanh(h * w + x), h), np_.zeros(4, np.float32), xs)
        return np_.sum(hs ** 2) + np_.sum(h)

    xs, w = rng.standard_normal((20, 4)).astype(np.float32), np.float32(0.9)
    ours = mlax.jit(mlax.grad(lambda w, xs: rollout(w, xs, mlax.lax, mnp)))(w, xs)
    theirs = jax.jit(jax.grad(lambda w, xs: rollout(w, xs, jax.lax, jnp)))(w, xs)
    print(f"jit(grad) through lax.scan (a reverse scan over the body's vjp): {float(ours):.6f}, "
          f"jax {float(theirs):.6f}")
    assert abs(float(ours) - float(theirs)) < 1e-4 * max(1.0, abs(float(theirs)))
    print("Quickstart check:", mlax.jit(lambda x: mnp.tanh(x) @ x.T)(mnp.ones((3, 4))))


if __name__ == "__main__":
    main()
