"""Real training steps, mlax against jax: time per step, peak memory, and a check of mlax's result.

    .venv/bin/python bench/train.py [--cases KEY,...] [--repeats N] [--loaded] [--backend cpu|xla]

Cases (keys for ``--cases``): ``transformer`` (a pre-LN transformer block with causal attention,
jit(value_and_grad) and an AdamW update in numpy ops, one jitted step), ``flax_transformer``
(the same in flax.linen with optax's adamw, unchanged library code), ``decoder`` (4 such blocks,
sequence 256) and ``decoder_scan`` (the same blocks stacked and run by ``lax.scan``), ``per_example``
(jit(vmap(grad)) of an MLP's loss: one gradient per example), ``cnn`` (three 3x3 convolutions
with max pooling on 32x32x3 images, + SGD), ``rnn`` (examples/rnn.py's Elman RNN over a
1,000-step ``lax.scan``, + SGD), ``mlp16`` / ``mlp16_remat`` (16 tanh layers of 1024, + SGD,
without and with ``checkpoint`` around each layer), ``compile`` (the first call of a fresh jit of
the transformer step). Each case is written once against a module namespace (``lib`` is mlax or
jax, ``np_`` its numpy), so both systems run the same code on the same seeded NumPy inputs.

Every (case, system) runs in a fresh interpreter (``--one``), so that each process's memory is
its own. It puts the inputs on the device (``lib.device_put``), jits the step and calls it once
(trace, compile, run; that result is the one checked), then frees what it can (``gc.collect``,
``malloc_trim``) and resets the kernel's high-water mark of the resident set (VmHWM, by writing
5 to /proc/self/clear_refs). The parent then asks the mlax and the jax process in turn for one
timed call each, ``--repeats`` times (interleaved, as bench/run.py does, so that a change in the
machine's load hits both systems alike; the idle one waits on a pipe), each call on the same
inputs and its result dropped before the next, and reports the median time. The peak column is
VmHWM after those calls minus the resident set just before them: what one step needs beyond
what is already held (the interpreter, the libraries, the inputs, the compiled program),
i.e. its temporaries plus its outputs, in MB (2**20 bytes); it includes any memory the
allocator or XLA's thread pools keep after the step. The ``compile`` row times the first call
(trace + compile + one run) of a fresh jit of a fresh function object after clearing every
compile cache (``mlax.clear_caches()``, ``jax.clear_caches()``), once the backend is initialized
by a tiny jit; its peak is the rise of VmHWM during that first call; time and peak are medians
over the repeats. mlax's result (loss and updated parameters and state, or the per-example
gradients) is checked against jax's with ``assert_allclose``-style tolerances for f32 (leaves
over 1M elements are compared on an evenly strided subset of 1M). A system that fails shows
the last line of its error in its column.

``--profile DIR`` runs each case's mlax step (native CPU) ``--repeats`` times (default 3) under
``mlax.profiler.kernel_profile()`` instead, after one untimed call, and writes where its time
went, kernel by kernel (``DIR/<case>.txt``), and its trace (``DIR/<case>.trace.json``, Perfetto).

``--loaded`` starts one spinning process pinned to the last core for the whole run (the
benchmarked processes are not pinned): the times of a machine where another job holds a core.
Not part of the tests: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import harness
import numpy as np

Params = dict[str, Any]
_RNN = harness.load_example("rnn")


# -- model pieces, written once for mlax and jax -----------------------------------------------


def _normal(rng: np.random.Generator, *shape: int, scale: float) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _cross_entropy(lib: Any, logits: Any, labels: Any) -> Any:
    """Mean softmax cross-entropy of ``logits`` (..., classes) against integer ``labels`` (...)."""
    np_ = lib.numpy
    shifted = logits - np_.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - np_.log(np_.sum(np_.exp(shifted), axis=-1, keepdims=True))
    return -np_.mean(np_.take_along_axis(log_probs, labels[..., None], axis=-1))


def _sgd(lib: Any, loss: Callable[..., Any], lr: float = 0.01) -> Callable[..., Any]:
    """A train step: the loss and its gradient by ``value_and_grad``, then ``p - lr * g``."""
    value_and_grad = lib.value_and_grad(loss)

    def step(params: Params, *data: Any) -> tuple[Any, Params]:
        value, grads = value_and_grad(params, *data)
        return value, lib.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return step


def _adamw(lib: Any, loss: Callable[..., Any], lr: float = 1e-3, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8, weight_decay: float = 0.01) -> Callable[..., Any]:
    """A train step with AdamW written in numpy ops: params and optimizer state in and out."""
    np_, tree_map = lib.numpy, lib.tree_util.tree_map
    value_and_grad = lib.value_and_grad(loss)

    def step(params: Params, state: Params, *data: Any) -> tuple[Any, Params, Params]:
        value, grads = value_and_grad(params, *data)
        t = state["t"] + 1.0
        m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        m_scale = 1.0 / (1.0 - np_.power(np.float32(b1), t))
        v_scale = 1.0 / (1.0 - np_.power(np.float32(b2), t))
        params = tree_map(
            lambda p, m, v: p - lr * (m * m_scale / (np_.sqrt(v * v_scale) + eps) + weight_decay * p),
            params, m, v)
        return value, params, {"t": t, "m": m, "v": v}
    return step


# -- 1. transformer blocks ---------------------------------------------------------------------

BATCH, SEQ, WIDTH, HEADS, HIDDEN, VOCAB = 8, 128, 256, 4, 1024, 256
DECODER_LAYERS, DECODER_SEQ = 4, 256


def _transformer_loss(lib: Any, seq: int = SEQ, scan: bool = False) -> Callable[..., Any]:
    """Token + position embedding, pre-LN blocks (causal attention, tanh-GELU MLP; as many as
    the parameters have: a list, or with ``scan`` one stack run by ``lax.scan``), a final layer
    norm and a readout to VOCAB classes, softmax cross-entropy on the labels."""
    np_ = lib.numpy
    causal = np.tril(np.ones((seq, seq), bool))

    def layer_norm(x: Any, gain: Any, bias: Any) -> Any:
        mean = np_.mean(x, axis=-1, keepdims=True)
        var = np_.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) / np_.sqrt(var + 1e-5) * gain + bias

    def gelu(x: Any) -> Any:
        return 0.5 * x * (1.0 + np_.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    def attention(x: Any, p: Params) -> Any:
        b, t, d = x.shape
        q, k, v = (y.reshape(b, t, HEADS, d // HEADS) for y in np_.split(x @ p["wqkv"], 3, axis=-1))
        scores = np_.einsum("bthd,bshd->bhts", q, k) / np.float32(np.sqrt(d // HEADS))
        scores = np_.where(causal, scores, -1e9)
        scores = np_.exp(scores - np_.max(scores, axis=-1, keepdims=True))
        weights = scores / np_.sum(scores, axis=-1, keepdims=True)
        return np_.einsum("bhts,bshd->bthd", weights, v).reshape(b, t, d) @ p["wo"]

    def block(x: Any, p: Params) -> Any:
        x = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]), p)
        return x + gelu(layer_norm(x, p["ln2_g"], p["ln2_b"]) @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    def loss(p: Params, tokens: Any, labels: Any) -> Any:
        x = p["embed"][tokens] + p["pos"]
        if scan:
            x, _ = lib.lax.scan(lambda h, block_params: (block(h, block_params), None), x, p["blocks"])
        for block_params in () if scan else p["blocks"]:
            x = block(x, block_params)
        return _cross_entropy(lib, layer_norm(x, p["lnf_g"], p["lnf_b"]) @ p["head"], labels)
    return loss


def _transformer_step(lib: Any, seq: int = SEQ, scan: bool = False) -> Callable[..., Any]:
    return _adamw(lib, _transformer_loss(lib, seq, scan))


def _transformer_inputs(layers: int = 1, seq: int = SEQ, scan: bool = False) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    d = WIDTH
    ones, zeros = np.ones(d, np.float32), np.zeros(d, np.float32)
    blocks = [{"ln1_g": ones, "ln1_b": zeros, "ln2_g": ones, "ln2_b": zeros,
               "wqkv": _normal(rng, d, 3 * d, scale=d ** -0.5), "wo": _normal(rng, d, d, scale=d ** -0.5),
               "w1": _normal(rng, d, HIDDEN, scale=d ** -0.5), "b1": np.zeros(HIDDEN, np.float32),
               "w2": _normal(rng, HIDDEN, d, scale=HIDDEN ** -0.5), "b2": zeros} for _ in range(layers)]
    if scan:  # one stack of layers, leading axis the layer
        blocks = {key: np.stack([block[key] for block in blocks]) for key in blocks[0]}
    params = {"embed": _normal(rng, VOCAB, d, scale=0.02), "pos": _normal(rng, seq, d, scale=0.02),
              "blocks": blocks, "lnf_g": ones, "lnf_b": zeros,
              "head": _normal(rng, d, VOCAB, scale=d ** -0.5)}
    # the optimizer state of a run some steps in, so the update is not Adam's sign-like first step
    state = {"t": np.float32(10.0), "m": _map_arrays(lambda v: _normal(rng, *v.shape, scale=1e-3), params),
             "v": _map_arrays(lambda v: rng.uniform(1e-7, 1e-6, v.shape).astype(np.float32), params)}
    tokens = rng.integers(0, VOCAB, (BATCH, seq)).astype(np.int32)
    labels = rng.integers(0, VOCAB, (BATCH, seq)).astype(np.int32)
    return params, state, tokens, labels


def _map_arrays(f: Callable[[np.ndarray], np.ndarray], tree: Any) -> Any:
    """``f`` on each array of a tree of dicts and lists (inputs are made before either system
    is imported, so without their tree_map)."""
    if isinstance(tree, dict):
        return {k: _map_arrays(f, v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_map_arrays(f, v) for v in tree]
    return f(tree)


# -- 1b. a flax.linen transformer trained with optax (library code, unchanged) ------------------


def _flax_model_and_optimizer(lib: Any) -> tuple[Any, Any]:
    """Two pre-LN flax.linen blocks (SelfAttention with a causal mask, Dense-GELU-Dense),
    embeddings and a readout, and optax's adamw; ``lib`` is jax, or mlax installed as jax."""
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> Any:
            mask = nn.make_causal_mask(lib.numpy.ones(x.shape[:2], lib.numpy.int32))
            x = x + nn.SelfAttention(num_heads=HEADS, qkv_features=WIDTH)(nn.LayerNorm()(x), mask=mask)
            return x + nn.Dense(WIDTH)(nn.gelu(nn.Dense(HIDDEN)(nn.LayerNorm()(x))))

    class Transformer(nn.Module):
        @nn.compact
        def __call__(self, tokens: Any) -> Any:
            x = nn.Embed(VOCAB, WIDTH)(tokens) + self.param("pos", nn.initializers.normal(0.02), (SEQ, WIDTH))
            for _ in range(2):
                x = Block()(x)
            return nn.Dense(VOCAB)(nn.LayerNorm()(x))

    return Transformer(), optax.adamw(1e-3, weight_decay=0.01)


def _flax_step(lib: Any) -> Callable[..., Any]:
    import optax

    model, optimizer = _flax_model_and_optimizer(lib)

    def loss(params: Any, tokens: Any, labels: Any) -> Any:
        logits = model.apply(params, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    def step(params: Any, state: Any, tokens: Any, labels: Any) -> tuple[Any, Any, Any]:
        value, grads = lib.value_and_grad(loss)(params, tokens, labels)
        updates, state = optimizer.update(grads, state, params)
        return value, optax.apply_updates(params, updates), state
    return step


def _flax_inputs(lib: Any) -> tuple[Any, ...]:
    """Parameters from the model's own init (jax's PRNG: the same bits on both systems), adam's
    state as some steps in (seeded, so the update is not Adam's sign-like first step), and
    seeded tokens and labels."""
    model, optimizer = _flax_model_and_optimizer(lib)
    rng = np.random.default_rng(0)
    tokens, labels = (rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32) for _ in range(2))
    params = lib.tree_util.tree_map(np.asarray, model.init(lib.random.PRNGKey(0), tokens))
    adam, *rest = optimizer.init(params)
    tree_map = lib.tree_util.tree_map
    adam = adam._replace(count=np.int32(10),
                         mu=tree_map(lambda p: _normal(rng, *p.shape, scale=1e-3), params),
                         nu=tree_map(lambda p: rng.uniform(1e-7, 1e-6, p.shape).astype(np.float32), params))
    return params, (adam, *rest), tokens, labels


# -- 2. per-example gradients ------------------------------------------------------------------

_PER_EXAMPLE_SIZES = (784, 512, 512, 10)


def _mlp_params(rng: np.random.Generator, sizes: tuple[int, ...]) -> Params:
    """Layers ``w00``/``b00``, ``w01``/``b01``, ... (zero-padded so they sort in layer order)."""
    params = {}
    for i, (n, m) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        params[f"w{i:02d}"] = _normal(rng, n, m, scale=n ** -0.5)
        params[f"b{i:02d}"] = np.zeros(m, np.float32)
    return params


def _mlp_loss(lib: Any, layers: int, remat: bool = False, shared: bool = False) -> Callable[..., Any]:
    """tanh layers then a linear readout, cross-entropy; with ``remat``, each hidden layer under
    ``lib.checkpoint`` (only its input is saved for the backward pass); with ``shared``, the
    layer is a nested ``lib.jit`` (one function called at every layer, derived once)."""
    np_ = lib.numpy

    def layer(h: Any, w: Any, b: Any) -> Any:
        return np_.tanh(h @ w + b)
    if remat:
        layer = lib.checkpoint(layer)
    if shared:
        layer = lib.jit(layer)

    def loss(p: Params, x: Any, labels: Any) -> Any:
        for i in range(layers):
            x = layer(x, p[f"w{i:02d}"], p[f"b{i:02d}"])
        return _cross_entropy(lib, x @ p[f"w{layers:02d}"] + p[f"b{layers:02d}"], labels)
    return loss


def _per_example_step(lib: Any) -> Callable[..., Any]:
    return lib.vmap(lib.grad(_mlp_loss(lib, len(_PER_EXAMPLE_SIZES) - 2)), in_axes=(None, 0, 0))


def _per_example_inputs() -> tuple[Any, ...]:
    rng = np.random.default_rng(1)
    return (_mlp_params(rng, _PER_EXAMPLE_SIZES), _normal(rng, 256, 784, scale=1.0),
            rng.integers(0, 10, 256).astype(np.int32))


# -- 3. CNN ------------------------------------------------------------------------------------

_CNN_CHANNELS = (3, 32, 64, 128)


def _cnn_loss(lib: Any) -> Callable[..., Any]:
    """Three SAME 3x3 convolutions (NHWC, HWIO), each relu then 2x2 max pooling, dense to 10."""
    lax, np_ = lib.lax, lib.numpy

    def loss(p: Params, images: Any, labels: Any) -> Any:
        x = images
        for i in range(len(_CNN_CHANNELS) - 1):
            x = lax.conv_general_dilated(x, p[f"k{i}"], (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = np_.maximum(x + p[f"c{i}"], 0.0)
            x = lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return _cross_entropy(lib, x.reshape(x.shape[0], -1) @ p["w"] + p["b"], labels)
    return loss


def _cnn_inputs() -> tuple[Any, ...]:
    rng = np.random.default_rng(2)
    params = {}
    for i, (n, m) in enumerate(zip(_CNN_CHANNELS[:-1], _CNN_CHANNELS[1:], strict=True)):
        params[f"k{i}"] = _normal(rng, 3, 3, n, m, scale=(2.0 / (9 * n)) ** 0.5)
        params[f"c{i}"] = np.zeros(m, np.float32)
    flat = 4 * 4 * _CNN_CHANNELS[-1]
    params["w"], params["b"] = _normal(rng, flat, 10, scale=flat ** -0.5), np.zeros(10, np.float32)
    return params, _normal(rng, 128, 32, 32, 3, scale=1.0), rng.integers(0, 10, 128).astype(np.int32)


# -- 4. RNN, 5. deep MLP -----------------------------------------------------------------------


def _rnn_inputs() -> tuple[Any, ...]:
    rng = np.random.RandomState(3)
    return (_RNN.init_params(rng, hidden=128), *_RNN.make_data(rng, batch=16, sequence=1000))


def _mlp16_inputs() -> tuple[Any, ...]:
    rng = np.random.default_rng(4)
    return (_mlp_params(rng, (1024,) * 17 + (10,)), _normal(rng, 256, 1024, scale=1.0),
            rng.integers(0, 10, 256).astype(np.int32))


# -- the suite ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    key: str
    name: str
    step: Callable[[Any], Callable[..., Any]]  # lib (mlax or jax) -> the function to jit
    inputs: Callable[..., tuple[Any, ...]]  # seeded NumPy arguments (pytrees); of lib if ``library``
    repeats: int  # timed calls by default (the compile row: fresh jits)
    rtol: float = 1e-4
    atol: float = 1e-5
    library: bool = False  # runs jax's libraries (flax, optax): mlax is installed as jax first

    def arguments(self, lib: Any) -> tuple[Any, ...]:
        return self.inputs(lib) if self.library else self.inputs()


CASES = [
    Case("transformer", "transformer block train step, AdamW: B8 T128 D256 H4 MLP1024, 256 classes",
         _transformer_step, _transformer_inputs, 20),
    Case("flax_transformer", "flax.linen transformer train step, optax adamw: 2 blocks, B8 T128 D256 H4",
         _flax_step, _flax_inputs, 20, library=True),
    Case("decoder", f"{DECODER_LAYERS}-layer decoder train step, AdamW: B8 T{DECODER_SEQ} D256 H4 MLP1024",
         lambda lib: _transformer_step(lib, DECODER_SEQ),
         lambda: _transformer_inputs(DECODER_LAYERS, DECODER_SEQ), 10),
    Case("decoder_scan", "the same decoder with its layers stacked and run by lax.scan",
         lambda lib: _transformer_step(lib, DECODER_SEQ, scan=True),
         lambda: _transformer_inputs(DECODER_LAYERS, DECODER_SEQ, scan=True), 10),
    Case("per_example", "per-example grads jit(vmap(grad)), MLP 784-512-512-10, batch 256",
         _per_example_step, _per_example_inputs, 5),
    Case("cnn", "CNN train step, SGD: 128x32x32x3, conv 32-64-128 + max pool, dense 10",
         lambda lib: _sgd(lib, _cnn_loss(lib)), _cnn_inputs, 10),
    Case("rnn", "RNN train step, SGD: 1000-step scan, hidden 128, batch 16",
         lambda lib: _sgd(lib, _RNN.loss_fn(lib)), _rnn_inputs, 20),
    Case("mlp16", "16-layer MLP train step, SGD: 1024 wide, batch 256, tanh",
         lambda lib: _sgd(lib, _mlp_loss(lib, 16)), _mlp16_inputs, 10),
    Case("mlp16_remat", "16-layer MLP train step as above, checkpoint around each layer",
         lambda lib: _sgd(lib, _mlp_loss(lib, 16, remat=True)), _mlp16_inputs, 10),
    Case("compile", "first call (trace + compile + run) of the transformer step",
         _transformer_step, _transformer_inputs, 3),
]
_BY_KEY = {case.key: case for case in CASES}
_CHECKED = 1 << 20  # elements of a leaf compared at most
SYSTEMS = ("mlax", "jax")


def _import(system: str, case: Case) -> Any:
    """mlax or jax; for a case of jax's libraries, ``jax`` itself (mlax installed as jax first)."""
    if case.library:
        if system == "mlax":
            importlib.import_module("mlax").install_as_jax()
        return importlib.import_module("jax")
    return importlib.import_module(system)


def _jit(lib: Any, function: Callable[..., Any], backend: str | None) -> Any:
    return lib.jit(function, backend=backend) if backend and lib.jit.__module__.startswith("mlax") \
        else lib.jit(function)


def _save(result: Any, lib: Any, path: str) -> None:
    """The result's leaves, those over _CHECKED elements on an evenly strided subset."""
    leaves = [np.asarray(leaf).ravel() for leaf in lib.tree_util.tree_leaves(result)]
    np.savez(path, *(leaf[:: max(1, -(-leaf.size // _CHECKED))] for leaf in leaves))


def serve(case: Case, system: str, out: str, backend: str | None) -> None:
    """The worker (``--one``): builds and warms the case, saves the checked result to ``out``
    (.npz) and says ``ready``; then each ``step`` line on stdin is answered with the seconds of
    one timed call, and when stdin closes it prints the peak memory in MB and exits."""
    lib = _import(system, case)
    args = lib.device_put(case.arguments(lib))
    peaks: list[int] = []
    if case.key == "compile":
        harness.block(lib.jit(lambda x: x * 2 + 1)(np.ones(8, np.float32)))  # initializes the backend
        saved = False

        def call() -> float:
            nonlocal saved
            lib.clear_caches()
            step = _jit(lib, case.step(lib), backend)  # a fresh function object each time
            baseline = harness.start_peak()
            start = time.perf_counter()
            result = harness.block(step(*args))
            seconds = time.perf_counter() - start
            peaks.append(harness.peak_since(baseline))
            if not saved:
                _save(result, lib, out)
                saved = True
            return seconds
    else:
        step = _jit(lib, case.step(lib), backend)
        _save(harness.block(step(*args)), lib, out)  # trace, compile, run

        def call() -> float:
            return harness.time_call(step, args)
        baseline = harness.start_peak()
    print(json.dumps("ready"), flush=True)
    for line in sys.stdin:
        assert line.strip() == "step", line
        print(json.dumps(call()), flush=True)
    if case.key != "compile":
        peaks.append(harness.peak_since(baseline))
    print(json.dumps(statistics.median(peaks) / 2 ** 20), flush=True)


@dataclass
class Row:
    name: str
    results: dict[str, dict[str, float] | str]  # system -> {"seconds", "peak_mb"}, or the error
    check: str


class _Worker:
    """The parent's end of one ``serve`` subprocess. Once it fails, ``error`` holds the last line
    of its stderr and every request answers None."""

    def __init__(self, case: Case, system: str, out: str, backend: str | None, folder: str) -> None:
        command = [sys.executable, __file__, "--one", case.key, system, "--out", out]
        self.stderr = open(os.path.join(folder, f"{case.key}-{system}.err"), "w+")
        self.process = subprocess.Popen(command + (["--backend", backend] if backend else []),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                        text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
        self.error = ""

    def _request(self, line: str | None) -> Any:
        if self.error:
            return None
        try:
            if line is None:
                self.process.stdin.close()
            elif line:
                self.process.stdin.write(line + "\n")
                self.process.stdin.flush()
            answer = self.process.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if answer:
            return json.loads(answer)
        self.process.wait()
        self.stderr.seek(0)
        lines = self.stderr.read().strip().splitlines() or [f"exit status {self.process.returncode}"]
        self.error = "ERROR " + lines[-1][:300]
        return None

    def ready(self) -> None:
        self._request("")  # sends nothing: reads the worker's "ready"

    def step(self) -> float | None:
        return self._request("step")

    def peak_mb(self) -> float | None:
        return self._request(None)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


def _check(case: Case, mine: str, theirs: str) -> str:
    with np.load(mine) as a, np.load(theirs) as b:
        got, expected = [a[k] for k in a.files], [b[k] for k in b.files]
    if [x.shape for x in got] != [x.shape for x in expected]:
        return f"MISMATCH structure: {len(got)} leaves, jax {len(expected)}"
    worst, where = 0.0, None
    for i, (x, y) in enumerate(zip(got, expected, strict=True)):
        error = float(np.max(np.abs(x.astype(np.float64) - y))) if x.size else 0.0
        if not np.allclose(x, y, rtol=case.rtol, atol=case.atol) and (where is None or error > worst):
            worst, where = error, i
    if where is not None:
        return f"MISMATCH max abs err {worst:.3g} (leaf {where}, rtol {case.rtol:g}, atol {case.atol:g})"
    return "ok"


def run_case(case: Case, repeats: int | None, backend: str | None, folder: str) -> Row:
    """Both systems in fresh subprocesses (warmed up side by side), their timed calls interleaved
    one by one, as bench/run.py does, so that a change of load hits both; then the check."""
    outs = {system: os.path.join(folder, f"{case.key}-{system}.npz") for system in SYSTEMS}
    workers = {system: _Worker(case, system, outs[system], backend, folder) for system in SYSTEMS}
    seconds: dict[str, list[float]] = {system: [] for system in SYSTEMS}
    try:
        for worker in workers.values():
            worker.ready()
        for _ in range(repeats or case.repeats):
            for system, worker in workers.items():
                seconds[system].append(worker.step())
        peaks = {system: worker.peak_mb() for system, worker in workers.items()}
    finally:
        for worker in workers.values():
            worker.close()
    results: dict[str, dict[str, float] | str] = {
        system: worker.error or {"seconds": statistics.median(seconds[system]), "peak_mb": peaks[system]}
        for system, worker in workers.items()}
    failed = any(worker.error for worker in workers.values())
    check = "not checked: a system failed" if failed else _check(case, outs["mlax"], outs["jax"])
    return Row(case.name, results, check)


def _cells(result: dict[str, float] | str) -> tuple[str, str]:
    if isinstance(result, str):
        return result, "-"
    return harness.format_seconds(result["seconds"]), f"{result['peak_mb']:.0f}"


def table(rows: list[Row]) -> str:
    lines = ["| case | mlax | jax | mlax/JAX | mlax peak MB | jax peak MB | check |", "|---" * 7 + "|"]
    for row in rows:
        (mine, my_peak), (theirs, their_peak) = _cells(row.results["mlax"]), _cells(row.results["jax"])
        ok = not any(isinstance(r, str) for r in row.results.values())
        ratio = f"{row.results['mlax']['seconds'] / row.results['jax']['seconds']:.2f}" if ok else "-"
        lines.append(f"| {row.name} | {mine} | {theirs} | {ratio} | {my_peak} | {their_peak} | {row.check} |")
    return "\n".join(lines)


def profile_case(case: Case, repeats: int, folder: str) -> None:
    """Where the time of ``case``'s mlax step goes: its kernels over ``repeats`` calls."""
    import json as json_module

    import mlax

    lib = _import("mlax", case)
    args = lib.device_put(case.arguments(lib))
    step = lib.jit(case.step(lib))
    harness.block(step(*args))
    with mlax.profiler.kernel_profile() as profile:
        for _ in range(repeats):
            harness.block(step(*args))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{case.key}.txt"), "w") as f:
        f.write(f"{case.name}\n{profile.table(top=30)}\n")
    with open(os.path.join(folder, f"{case.key}.trace.json"), "w") as f:
        json_module.dump(profile.chrome_trace(), f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(_BY_KEY),
                        help="comma-separated keys, from: " + ", ".join(_BY_KEY))
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed calls per case and system (default: per case)")
    parser.add_argument("--loaded", action="store_true", help="one spinning process pinned to the last core")
    parser.add_argument("--backend", choices=("cpu", "xla"), default=None, help="mlax's backend")
    parser.add_argument("--profile", metavar="DIR", help="profile mlax's steps' kernels into DIR instead")
    parser.add_argument("--one", nargs=2, metavar=("CASE", "SYSTEM"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        harness.die_with_parent()
        serve(_BY_KEY[args.one[0]], args.one[1], args.out, args.backend)
        return
    unknown = [key for key in args.cases.split(",") if key not in _BY_KEY]
    if unknown:
        parser.error(f"unknown cases {unknown}; known: {', '.join(_BY_KEY)}")
    if args.profile:
        for key in args.cases.split(","):
            if key != "compile":
                profile_case(_BY_KEY[key], args.repeats or 3, args.profile)
                print(open(os.path.join(args.profile, f"{key}.txt")).read())
        return
    began = time.perf_counter()
    rows = []
    with harness.load(args.loaded) as mode, tempfile.TemporaryDirectory() as folder:
        for key in args.cases.split(","):
            rows.append(run_case(_BY_KEY[key], args.repeats, args.backend, folder))
            print(f"{key}: done at {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    print(harness.machine_line() + f"; mlax backend {args.backend or 'default'}")
    print(mode)
    print(table(rows))


if __name__ == "__main__":
    main()
