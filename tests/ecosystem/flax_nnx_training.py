"""flax.nnx: an MLP with nnx.Rngs and dropout, nnx.Optimizer, nnx.jit and nnx.grad."""

from common import choose_jax, report

choose_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(4, 16, rngs=rngs)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)
        self.out = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x):
        return self.out(self.dropout(nnx.relu(self.hidden(x))))


model = MLP(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
x = jax.random.normal(jax.random.PRNGKey(1), (32, 4))
y = jnp.stack([jnp.sin(x[:, 0]), x[:, 1] * x[:, 2]], axis=1)


@nnx.jit
def step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    value, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return value


@nnx.jit
def gradient_norm(model, x, y):
    grads = nnx.grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    return optax.global_norm(jax.tree.leaves(grads))


losses = [step(model, optimizer, x, y) for _ in range(20)]
model.eval()
report(losses=losses, prediction=model(x[:3]), gradient_norm=gradient_norm(model, x, y))
