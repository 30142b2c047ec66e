"""Code from JAX's tutorials, as their readers write it; only the imports below change.

Run as ``python tutorials.py jax|mlax``: every line it prints must be the same on both,
except the lines make_jaxpr prints (mlax's program may differ), which start with "jaxpr".
"""

from functools import partial

from common import choose_jax

choose_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.ad_checkpoint import checkpoint_name  # noqa: E402

np.set_printoptions(precision=5, suppress=True)

# Working with pytrees.
tree = {"a": [jnp.arange(3.0), 2.0], "b": (jnp.ones((2, 2)), None), "c": {"d": jnp.array(5)}}
print("leaves", jax.tree.leaves(tree))
print("structure", jax.tree.structure(tree))
print("map", jax.tree.map(lambda x: x * 2, tree))
print("reduce", jax.tree.reduce(lambda a, b: a + jnp.sum(b), tree, 0.0))
flat, treedef = jax.tree.flatten(tree)
print("unflatten", jax.tree.unflatten(treedef, [x + 1 for x in flat]))
print("transpose", jax.tree.transpose(jax.tree.structure([0, 0]), jax.tree.structure((0, 0)),
                                      [(1, 2), (3, 4)]))


# make_jaxpr: the program's text may differ; its avals and the function's value may not.
def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = jnp.arange(5.0) - 2.0
closed = jax.make_jaxpr(selu)(x)
print("jaxpr", closed)
print("avals", closed.in_avals, closed.out_avals)
print("selu", selu(x))


# Python control flow under grad, outside jit (the derivative sees concrete values).
def f(x):
    if x < 3:
        return 3.0 * x ** 2
    return -4 * x


print("grad branches", jax.grad(f)(2.0), jax.grad(f)(4.0))


def g(x, n):
    y = 0.0
    for i in range(int(n)):
        y = y + x ** i
    return y


print("grad loop", jax.grad(g)(2.0, 3), jax.value_and_grad(g)(1.5, 4))


# jit on methods.
class ScaleClass:
    def __init__(self, scale):
        self.scale = scale

    @partial(jax.jit, static_argnums=0)
    def calc(self, x):
        return self.scale * jnp.sin(x)


print("method", ScaleClass(2.0).calc(x), ScaleClass(3.0).calc(x))


# debug.print inside jit and vmap.
@jax.jit
def debugged(x):
    jax.debug.print("x is {}", x)
    y = jnp.sin(x)
    jax.debug.print("y is {y} and its sum {s}", y=y, s=y.sum())
    return y * 2


print("debugged", debugged(jnp.arange(3.0)))
jax.vmap(lambda v: jax.debug.print("element {}", v))(jnp.arange(3))


# custom_jvp with defjvps.
@jax.custom_jvp
def fun(x, y):
    return jnp.sin(x) * y


fun.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
            lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)
print("defjvps", fun(3.0, 4.0), jax.grad(fun)(3.0, 4.0), jax.grad(fun, 1)(3.0, 4.0))
print("jvp", jax.jvp(fun, (3.0, 4.0), (2.0, 0.5)))


# Checkpoint policies.
def layer(w, x):
    h = checkpoint_name(jnp.tanh(w @ x), "hidden")
    return jnp.sum(jnp.sin(h) ** 2)


w = jnp.arange(12.0).reshape(3, 4) / 10
v = jnp.arange(4.0) / 4
for name, policy in [("dots", jax.checkpoint_policies.dots_saveable),
                     ("nothing", jax.checkpoint_policies.nothing_saveable),
                     ("names", jax.checkpoint_policies.save_only_these_names("hidden"))]:
    print("checkpoint", name, jax.grad(jax.checkpoint(layer, policy=policy))(w, v))

# Typed keys.
key = jax.random.key(0)
key, subkey = jax.random.split(key)
print("keys", jax.random.key_data(key), jax.random.normal(subkey, (3,)))
print("key dtype", jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key), key.shape)
