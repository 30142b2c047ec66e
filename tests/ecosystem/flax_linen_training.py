"""flax.linen: an MLP and a small CNN with dropout and batch norm (init, apply, train loop)."""

from common import choose_jax, report

choose_jax()

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(16)(x))
        return nn.Dense(2)(x)


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(4, (3, 3), use_bias=False)(x)  # a bias before batch norm has a zero gradient,
        # which adam turns into steps of the sign of rounding noise: the runs would not be comparable
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dropout(0.25, deterministic=not train)(x)
        return nn.Dense(3)(x)


def train_mlp():
    x = jax.random.normal(jax.random.PRNGKey(1), (32, 4))
    y = jnp.stack([jnp.sin(x[:, 0]), jnp.cos(x[:, 1])], axis=1)
    model = MLP()
    params = model.init(jax.random.PRNGKey(0), x)
    optimizer = optax.sgd(0.1, momentum=0.9)
    state = optimizer.init(params)

    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(lambda p: jnp.mean((model.apply(p, x) - y) ** 2))(params)
        updates, state = optimizer.update(grads, state)
        return optax.apply_updates(params, updates), state, value

    losses = []
    for _ in range(20):
        params, state, value = step(params, state)
        losses.append(value)
    return losses, jax.jit(model.apply)(params, x[:3])


def train_cnn():
    x = jax.random.normal(jax.random.PRNGKey(2), (8, 8, 8, 1))
    labels = jnp.arange(8) % 3
    model = CNN()
    variables = model.init({"params": jax.random.PRNGKey(0)}, x, train=False)
    params, batch_stats = variables["params"], variables["batch_stats"]
    optimizer = optax.adam(1e-2)
    state = optimizer.init(params)

    def loss_fn(params, batch_stats, key):
        logits, updates = model.apply({"params": params, "batch_stats": batch_stats}, x, train=True,
                                      rngs={"dropout": key}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates["batch_stats"]

    @jax.jit
    def step(params, batch_stats, state, key):
        (value, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, batch_stats, key)
        updates, state = optimizer.update(grads, state)
        return optax.apply_updates(params, updates), batch_stats, state, value

    losses = []
    key = jax.random.PRNGKey(3)
    for _ in range(20):
        key, dropout_key = jax.random.split(key)
        params, batch_stats, state, value = step(params, batch_stats, state, dropout_key)
        losses.append(value)
    logits = model.apply({"params": params, "batch_stats": batch_stats}, x, train=False)
    return losses, logits, batch_stats["BatchNorm_0"]["mean"]


mlp_losses, mlp_out = train_mlp()
cnn_losses, cnn_logits, running_mean = train_cnn()
report(mlp_losses=mlp_losses, mlp_out=mlp_out, cnn_losses=cnn_losses, cnn_logits=cnn_logits,
       running_mean=running_mean)
