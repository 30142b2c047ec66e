"""equinox: eqx.nn.MLP trained with filter_jit and filter_value_and_grad (and optax)."""

from common import choose_jax, report

choose_jax()

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

model = eqx.nn.MLP(in_size=3, out_size=1, width_size=16, depth=2, key=jax.random.PRNGKey(0))
x = jax.random.normal(jax.random.PRNGKey(1), (64, 3))
y = jnp.sum(jnp.sin(x), axis=1, keepdims=True)
optimizer = optax.adam(1e-2)
state = optimizer.init(eqx.filter(model, eqx.is_array))


@eqx.filter_value_and_grad
def loss(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


@eqx.filter_jit
def step(model, state, x, y):
    value, grads = loss(model, x, y)
    updates, state = optimizer.update(grads, state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), state, value


losses = []
for _ in range(20):
    model, state, value = step(model, state, x, y)
    losses.append(value)
report(losses=losses, prediction=jax.vmap(model)(x[:4]))
