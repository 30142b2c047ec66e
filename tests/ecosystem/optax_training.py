"""optax on a small regression: adam, adamw, and chain(clip_by_global_norm, adamw) with a schedule."""

from common import choose_jax, report

choose_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402


def loss(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"] + params["b2"] - y) ** 2)


def train(optimizer, steps=20):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"w1": jax.random.normal(k1, (5, 8)) * 0.5, "b1": jnp.zeros(8),
              "w2": jax.random.normal(k2, (8, 2)) * 0.5, "b2": jnp.zeros(2)}
    x = jax.random.normal(k3, (32, 5))
    y = jnp.stack([jnp.sin(x[:, 0]), x[:, 1] * x[:, 2]], axis=1)
    state = optimizer.init(params)

    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    losses = []
    for _ in range(steps):
        params, state, value = step(params, state)
        losses.append(value)
    return losses, params


schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-2, 5, 20)
runs = {
    "adam": optax.adam(1e-2),
    "adamw": optax.adamw(1e-2, weight_decay=1e-3),
    "chain": optax.chain(optax.clip_by_global_norm(0.5), optax.adamw(schedule)),
}
results = {}
for name, optimizer in runs.items():
    losses, params = train(optimizer)
    results[name] = {"losses": losses, "w2": params["w2"]}
report(**results)
