"""Custom Keras 3 layers: attention over RNN states, positional encoding, transformer encoder, warm-up.

All computation uses ``keras.ops`` so nothing ties the layers to one backend; every layer is registered
under the ``tsattn`` package and returns all its constructor arguments from ``get_config`` so a ``.keras``
file reloads without ``custom_objects``.
"""

from __future__ import annotations

import math

from . import _backend  # noqa: F401  (quiet TensorFlow import)
import keras
import numpy as np
from keras import layers, ops

from .errors import ConfigError
from .specs import ENCODER_NORMS, ENSEMBLE_METHODS


def _require(condition: bool, name: str, value, expected: str):
    if not condition:
        raise ConfigError(f"{name} must be {expected}; got {value!r}")


def heads_dividing(width: int, num_heads: int) -> int:
    """The head count nearest ``num_heads`` that divides ``width`` (fewer heads on a tie): what a message proposes
    when the asked one does not divide it (32 wide, 3 heads: 2; 30 wide, 4 heads: 3)."""
    return min((k for k in range(1, width + 1) if width % k == 0), key=lambda k: (abs(k - num_heads), k))


def _static_window(input_shape, layer_name: str) -> int:
    window = input_shape[1]
    if window is None:
        raise ConfigError(f"{layer_name} needs a fixed window length; got input shape {tuple(input_shape)}")
    return int(window)


# ----------------------------------------------------------------------------------------------------
# Attention over the hidden states of an RNN: (batch, window, units) -> context (batch, units)
# ----------------------------------------------------------------------------------------------------
@keras.saving.register_keras_serializable(package="tsattn")
class AdditiveAttention(layers.Layer):
    """The tutorial's additive attention over time.

    e = tanh(h W + b) with W: (units, 1) and b: (window, 1); a = softmax(e) over time;
    context = sum_t a_t * h_t.

    Call args:
        inputs: hidden states h, (batch, window, units).
        return_attention_scores: also return a, (batch, window).
    """

    def build(self, input_shape):
        window = _static_window(input_shape, "AdditiveAttention")
        self.W = self.add_weight(name="attention_weight", shape=(input_shape[-1], 1), initializer="random_normal")
        self.b = self.add_weight(name="attention_bias", shape=(window, 1), initializer="zeros")

    def call(self, inputs, return_attention_scores=False):
        scores = ops.tanh(ops.matmul(inputs, self.W) + self.b)  # (batch, window, 1)
        weights = ops.softmax(ops.squeeze(scores, axis=-1), axis=-1)  # (batch, window)
        context = ops.sum(inputs * ops.expand_dims(weights, -1), axis=1)  # (batch, units)
        return (context, weights) if return_attention_scores else context


@keras.saving.register_keras_serializable(package="tsattn")
class BahdanauAttention(layers.Layer):
    """Bahdanau attention with the last hidden state as the query.

    score_t = v^T tanh(W1 h_t + W2 h_T); a = softmax(score) over time; context = sum_t a_t h_t.

    Args:
        attention_units: size of the tanh layer (default: the RNN's units).
    """

    def __init__(self, attention_units: int | None = None, **kwargs):
        super().__init__(**kwargs)
        if attention_units is not None:
            _require(isinstance(attention_units, int) and attention_units >= 1, "attention_units",
                     attention_units, "an integer >= 1 or None")
        self.attention_units = attention_units

    def build(self, input_shape):
        units = input_shape[-1]
        size = self.attention_units or units
        self.W1 = self.add_weight(name="W1", shape=(units, size), initializer="glorot_uniform")
        self.W2 = self.add_weight(name="W2", shape=(units, size), initializer="glorot_uniform")
        self.v = self.add_weight(name="v", shape=(size, 1), initializer="glorot_uniform")

    def call(self, inputs, return_attention_scores=False):
        query = ops.matmul(inputs[:, -1, :], self.W2)  # (batch, size)
        keys = ops.matmul(inputs, self.W1)  # (batch, window, size)
        scores = ops.squeeze(ops.matmul(ops.tanh(keys + ops.expand_dims(query, 1)), self.v), -1)  # (batch, window)
        weights = ops.softmax(scores, axis=-1)
        context = ops.sum(inputs * ops.expand_dims(weights, -1), axis=1)  # (batch, units)
        return (context, weights) if return_attention_scores else context

    def get_config(self):
        return {**super().get_config(), "attention_units": self.attention_units}


@keras.saving.register_keras_serializable(package="tsattn")
class LuongAttention(layers.Layer):
    """Luong attention with the last hidden state h_T as the query.

    score_t = h_t . h_T ("dot") or h_t^T W h_T ("general"); a = softmax(score); context = sum_t a_t h_t.
    """

    SCORES = ("dot", "general")

    def __init__(self, score: str = "dot", **kwargs):
        super().__init__(**kwargs)
        _require(score in self.SCORES, "score", score, f"one of {', '.join(self.SCORES)}")
        self.score = score

    def build(self, input_shape):
        if self.score == "general":
            units = input_shape[-1]
            self.W = self.add_weight(name="W", shape=(units, units), initializer="glorot_uniform")

    def call(self, inputs, return_attention_scores=False):
        query = inputs[:, -1, :]  # (batch, units)
        if self.score == "general":
            query = ops.matmul(query, ops.transpose(self.W))  # W h_T
        scores = ops.sum(inputs * ops.expand_dims(query, 1), axis=-1)  # (batch, window)
        weights = ops.softmax(scores, axis=-1)
        context = ops.sum(inputs * ops.expand_dims(weights, -1), axis=1)  # (batch, units)
        return (context, weights) if return_attention_scores else context

    def get_config(self):
        return {**super().get_config(), "score": self.score}


# ----------------------------------------------------------------------------------------------------
# Transformer pieces
# ----------------------------------------------------------------------------------------------------
def sinusoidal_encoding(seq_len: int, d: int, n: float = 10000.0) -> np.ndarray:
    """P(k, 2i) = sin(k / n^(2i/d)), P(k, 2i+1) = cos(k / n^(2i/d)); shape (seq_len, d)."""
    positions = np.arange(seq_len, dtype=np.float64)[:, None]  # k
    pair = np.arange(d) // 2  # i for columns 2i and 2i+1
    angles = positions / np.power(float(n), 2.0 * pair / d)[None, :]
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


@keras.saving.register_keras_serializable(package="tsattn")
class PositionalEncoding(layers.Layer):
    """Adds a position signal to (batch, window, d) inputs.

    Args:
        mode: "sinusoidal" (fixed, :func:`sinusoidal_encoding`, not trained) or "learned" (a trained
            (window, d) embedding).
        n: the base of the sinusoidal encoding (10000 in "Attention is all you need").
    """

    MODES = ("sinusoidal", "learned")

    def __init__(self, mode: str = "sinusoidal", n: float = 10000.0, **kwargs):
        super().__init__(**kwargs)
        _require(mode in self.MODES, "positional", mode, f"one of {', '.join(self.MODES)}")
        _require(isinstance(n, (int, float)) and n > 1, "positional_base", n, "a number > 1")
        self.mode = mode
        self.n = float(n)

    def build(self, input_shape):
        window = _static_window(input_shape, "PositionalEncoding")
        d = int(input_shape[-1])
        if self.mode == "learned":
            self.embedding = self.add_weight(name="position_embedding", shape=(window, d),
                                             initializer=keras.initializers.RandomNormal(stddev=0.02))
        else:
            self.embedding = ops.convert_to_tensor(sinusoidal_encoding(window, d, self.n), dtype=self.compute_dtype)

    def call(self, inputs):
        return inputs + ops.expand_dims(ops.cast(self.embedding, inputs.dtype), 0)  # (batch, window, d)

    def encoding_matrix(self) -> np.ndarray:
        """The (window, d) matrix added to the inputs."""
        return np.asarray(ops.convert_to_numpy(self.embedding))

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "n": self.n}


def scaled_dot_product_attention(query, key, value, mask=None, previous_scores=None, return_scores=False):
    """softmax(Q K^T / sqrt(d_k) [+ previous scores]) V.

    Args:
        query: (..., q_len, d_k); key: (..., k_len, d_k); value: (..., k_len, d_v).
        mask: optional boolean (q_len, k_len) or broadcastable; False positions get no weight.
        previous_scores: optional (..., q_len, k_len) scores of an earlier block added before the softmax
            (residual attention, as in PatchTST's encoder).
        return_scores: also return the scores the softmax read (to carry to the next block).

    Returns:
        output (..., q_len, d_v) and weights (..., q_len, k_len) [and the scores (..., q_len, k_len)].
    """
    d_k = ops.cast(ops.shape(key)[-1], query.dtype)
    scores = ops.matmul(query, ops.swapaxes(key, -1, -2)) / ops.sqrt(d_k)  # (..., q_len, k_len)
    if previous_scores is not None:
        scores = scores + previous_scores
    if mask is not None:
        scores = ops.where(mask, scores, ops.full_like(scores, -1e9))
    weights = ops.softmax(scores, axis=-1)
    output = ops.matmul(weights, value)
    return (output, weights, scores) if return_scores else (output, weights)


@keras.saving.register_keras_serializable(package="tsattn")
class MultiHeadSelfAttention(layers.Layer):
    """Multi-head self-attention: heads of scaled dot-product attention over projected inputs.

    Q = x Wq, K = x Wk, V = x Wv split into ``num_heads`` heads of ``key_dim``; each head computes
    softmax(Q K^T / sqrt(key_dim)) V; the heads are concatenated and projected back with Wo.
    """

    def __init__(self, num_heads: int, key_dim: int, causal: bool = False, **kwargs):
        super().__init__(**kwargs)
        _require(isinstance(num_heads, int) and num_heads >= 1, "num_heads", num_heads, "an integer >= 1")
        _require(isinstance(key_dim, int) and key_dim >= 1, "key_dim", key_dim, "an integer >= 1")
        self.num_heads, self.key_dim, self.causal = num_heads, key_dim, bool(causal)

    def build(self, input_shape):
        d_model, inner = int(input_shape[-1]), self.num_heads * self.key_dim
        for name in ("query", "key", "value"):
            setattr(self, f"{name}_kernel", self.add_weight(name=f"{name}_kernel", shape=(d_model, inner),
                                                              initializer="glorot_uniform"))
            setattr(self, f"{name}_bias", self.add_weight(name=f"{name}_bias", shape=(inner,), initializer="zeros"))
        self.output_kernel = self.add_weight(name="output_kernel", shape=(inner, d_model), initializer="glorot_uniform")
        self.output_bias = self.add_weight(name="output_bias", shape=(d_model,), initializer="zeros")

    def _heads(self, x, kernel, bias):
        projected = ops.matmul(x, kernel) + bias  # (batch, window, heads * key_dim)
        shape = ops.shape(x)
        split = ops.reshape(projected, (-1, shape[1], self.num_heads, self.key_dim))
        return ops.transpose(split, (0, 2, 1, 3))  # (batch, heads, window, key_dim)

    def call(self, inputs, previous_scores=None, return_attention_scores=False, return_scores=False):
        """``previous_scores`` (batch, heads, window, window): an earlier block's pre-softmax scores, added to this
        one's (residual attention); ``return_scores`` appends this block's scores to the outputs."""
        query = self._heads(inputs, self.query_kernel, self.query_bias)
        key = self._heads(inputs, self.key_kernel, self.key_bias)
        value = self._heads(inputs, self.value_kernel, self.value_bias)
        mask = None
        if self.causal:
            steps = ops.shape(inputs)[1]
            mask = ops.tril(ops.ones((steps, steps), dtype="bool"))  # position k sees positions <= k
        attended, weights, scores = scaled_dot_product_attention(query, key, value, mask, previous_scores,
                                                                 return_scores=True)  # weights: (b, h, w, w)
        shape = ops.shape(inputs)
        merged = ops.reshape(ops.transpose(attended, (0, 2, 1, 3)), (-1, shape[1], self.num_heads * self.key_dim))
        output = ops.matmul(merged, self.output_kernel) + self.output_bias  # (batch, window, d_model)
        found = (output,) + ((weights,) if return_attention_scores else ()) + ((scores,) if return_scores else ())
        return found if len(found) > 1 else output

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim, "causal": self.causal}


@keras.saving.register_keras_serializable(package="tsattn")
class TransformerEncoderBlock(layers.Layer):
    """One post-norm transformer encoder block.

    x = Norm(x + Dropout(MultiHeadSelfAttention(x)))
    x = Norm(x + Dropout(Dense(d_model)(Dense(ff_dim, relu)(x))))

    ``norm``: "layer" (LayerNormalization over each token's features, the tutorial's) or "batch"
    (BatchNormalization of each feature over the batch and the tokens, PatchTST's). Residual attention
    (PatchTST's; the models' ``residual_attention``): ``previous_scores`` are an earlier block's pre-softmax scores,
    added to this block's; ``return_scores`` returns this block's scores for the next block.
    """

    NORMS = ENCODER_NORMS  # the models' `norm` setting (specs.py) offers the same

    def __init__(self, d_model: int, num_heads: int, ff_dim: int, dropout: float = 0.0, causal: bool = False,
                 norm: str = "layer", **kwargs):
        super().__init__(**kwargs)
        _require(isinstance(d_model, int) and d_model >= 1, "d_model", d_model, "an integer >= 1")
        _require(isinstance(num_heads, int) and num_heads >= 1, "num_heads", num_heads, "an integer >= 1")
        _require(d_model % num_heads == 0, "d_model", d_model,
                 f"divisible by num_heads={num_heads} (num_heads={heads_dividing(d_model, num_heads)} divides it)")
        _require(isinstance(ff_dim, int) and ff_dim >= 1, "ff_dim", ff_dim, "an integer >= 1")
        _require(isinstance(dropout, (int, float)) and 0 <= dropout < 1, "dropout", dropout, "in [0, 1)")
        _require(norm in self.NORMS, "norm", norm, f"one of {', '.join(self.NORMS)}")
        self.d_model, self.num_heads, self.ff_dim = d_model, num_heads, ff_dim
        self.dropout, self.causal, self.norm = float(dropout), bool(causal), norm
        self.attention = MultiHeadSelfAttention(num_heads, d_model // num_heads, causal=causal, name="attention")
        self.attention_dropout = layers.Dropout(self.dropout)
        self.attention_norm = self._norm("attention_norm")
        self.ff_hidden = layers.Dense(ff_dim, activation="relu", name="ff_hidden")
        self.ff_output = layers.Dense(d_model, name="ff_output")
        self.ff_dropout = layers.Dropout(self.dropout)
        self.ff_norm = self._norm("ff_norm")

    def _norm(self, name):
        if self.norm == "batch":  # PyTorch's BatchNorm1d defaults (PatchTST): momentum 0.1 there is 0.9 here
            return layers.BatchNormalization(axis=-1, momentum=0.9, epsilon=1e-5, name=name)
        return layers.LayerNormalization(epsilon=1e-6, name=name)

    def build(self, input_shape):
        _require(int(input_shape[-1]) == self.d_model, "input features", input_shape[-1], f"d_model={self.d_model}")
        self.attention.build(input_shape)
        self.attention_norm.build(input_shape)
        self.ff_hidden.build(input_shape)
        self.ff_output.build((*input_shape[:-1], self.ff_dim))
        self.ff_norm.build(input_shape)

    def call(self, inputs, previous_scores=None, training=None, return_attention_scores=False, return_scores=False):
        attended, weights, scores = self.attention(inputs, previous_scores, return_attention_scores=True,
                                                   return_scores=True)  # weights, scores: (b, heads, w, w)
        x = self.attention_norm(inputs + self.attention_dropout(attended, training=training), training=training)
        feed_forward = self.ff_output(self.ff_hidden(x))
        x = self.ff_norm(x + self.ff_dropout(feed_forward, training=training), training=training)
        found = (x,) + ((weights,) if return_attention_scores else ()) + ((scores,) if return_scores else ())
        return found if len(found) > 1 else x

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "num_heads": self.num_heads,
                "ff_dim": self.ff_dim, "dropout": self.dropout, "causal": self.causal, "norm": self.norm}


@keras.saving.register_keras_serializable(package="tsattn")
class Adam(keras.optimizers.Adam):
    """Keras' Adam with the same updates, to the bit, built from far fewer operations. The moments of the small
    weights (biases, norms, the matrices of a small network) live in one shared momentum and one velocity vector: the
    step updates them and computes those weights' changes in one pass over their gradients laid end to end, then cuts
    each weight's change off it; a large weight keeps moments of its own, updated on their own. The step's scalars (the
    bias corrections, ``alpha``, ``1 - beta``) are computed once. Each number goes through the operations of Keras'
    ``Adam.update_step`` in its order, so the weights are the same to the bit. Keras' per-weight update, some 15
    operations per weight, took about half of tracing a small network's training step (0.5 s of ~1 s a trace for
    nbeats or simple-rnn), which is most of a small fit, and as many kernel launches a step. Anything else Adam can do
    (amsgrad, weights of several dtypes, a distribution strategy) takes Keras' own path; tests/test_harness.py checks
    that both train to the same weights."""

    SMALL = 2 ** 15  # a weight of at most this many numbers has its moments in the shared vectors (below)

    def build(self, var_list):
        from ._backend import tf

        if self.built:
            return
        dtypes = {variable.dtype for variable in var_list}
        self._lean = bool(var_list) and not self.amsgrad and len(dtypes) == 1 and not tf.distribute.has_strategy()
        if not self._lean:
            return super().build(var_list)
        super(keras.optimizers.Adam, self).build(var_list)  # the optimizer's own variables (steps, the rate)
        self._dtype = dtype = dtypes.pop()
        sizes = [int(np.prod(variable.shape)) for variable in var_list]
        # the small weights (biases, norms, the matrices of a small network) share one momentum and one velocity
        # vector, updated in one pass; a large weight keeps its own (one pass over it while it is in the cache: one
        # pass over the vectors of a network of millions of weights, each operation over all of them, took nbeats'
        # sunspots fit from 5.2 s to 8.0 s)
        self._small = [(index, size) for index, size in enumerate(sizes) if size <= self.SMALL]
        self._large = {index: tuple(self.add_variable_from_reference(var_list[index], name)
                                    for name in ("momentum", "velocity"))
                       for index, size in enumerate(sizes) if size > self.SMALL}
        total = sum(size for _, size in self._small)
        self._shared = tuple(self.add_variable((total,), initializer="zeros", dtype=dtype, name=name)
                             for name in ("momentum", "velocity")) if total else None

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        from ._backend import tf

        if not getattr(self, "_lean", False):
            return super()._backend_update_step(grads, trainable_variables, learning_rate)
        dtype = self._dtype
        # Keras' Adam.update_step, in its order of operations
        rate = ops.cast(learning_rate, dtype)
        local_step = ops.cast(self.iterations + 1, dtype)
        beta_1_power = ops.power(ops.cast(self.beta_1, dtype), local_step)
        beta_2_power = ops.power(ops.cast(self.beta_2, dtype), local_step)
        alpha = rate * ops.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        decay_1, decay_2, epsilon = (ops.convert_to_tensor(value, dtype)
                                     for value in (1 - self.beta_1, 1 - self.beta_2, self.epsilon))

        def update(m, v, gradient, kept=None):  # Keras' Adam step for one weight, or the small ones laid end to end
            # (kept: 1 where a small weight has a gradient, 0 where Keras skips it; x * 1 is x, to the bit)
            moved = [ops.multiply(ops.subtract(gradient, m), decay_1),
                     ops.multiply(ops.subtract(ops.square(gradient), v), decay_2)]
            if kept is not None:
                moved = [ops.multiply(each, kept) for each in moved]
            m.assign_add(moved[0])
            v.assign_add(moved[1])
            return ops.divide(ops.multiply(m, alpha), ops.add(ops.sqrt(v), epsilon))

        def own(variable):
            return variable.value if isinstance(variable, keras.Variable) else variable

        given = {self._get_variable_index(variable): (ops.cast(tf.convert_to_tensor(gradient), dtype), variable)
                 for gradient, variable in zip(grads, trainable_variables) if gradient is not None}
        for index, (m, v) in self._large.items():
            if index in given:  # Keras skips a weight without a gradient
                gradient, variable = given[index]
                own(variable).assign_sub(update(m.value, v.value, gradient))
        if self._shared is None:
            return
        # a small weight without a gradient this step (Keras skips it): zeros in its place, its moments kept as they
        # are and the weight not changed
        flat = [ops.reshape(given[index][0], (-1,)) if index in given else ops.zeros((size,), dtype)
                for index, size in self._small]
        kept = None
        if any(index not in given for index, _ in self._small):
            kept = ops.concatenate([ops.full((size,), 1.0 if index in given else 0.0, dtype)
                                    for index, size in self._small])
        changes = update(*(each.value for each in self._shared), ops.concatenate(flat) if len(flat) > 1 else flat[0],
                         kept)
        pieces = tf.split(changes, [size for _, size in self._small]) if len(flat) > 1 else [changes]
        for (index, _), piece in zip(self._small, pieces):
            if index in given:
                variable = own(given[index][1])
                variable.assign_sub(ops.reshape(piece, variable.shape))


@keras.saving.register_keras_serializable(package="tsattn")
class HalvingSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """N-BEATS' schedule: ``learning_rate`` halved after each third of ``total_steps`` (step <= total // 3 - 1: the
    rate; then half of it up to 2 * total // 3 - 1; then a quarter): the same rates, to the bit, as Keras'
    ``PiecewiseConstantDecay`` with those boundaries. The total is a variable, read when the traced training step
    runs: a second training of the same compiled model for another number of steps (a final fit) sets it with
    :meth:`set_total_steps` instead of tracing the training step again."""

    def __init__(self, learning_rate: float = 1e-3, total_steps: int = 3):
        _require(learning_rate > 0, "learning_rate", learning_rate, "> 0")
        _require(isinstance(total_steps, int) and total_steps >= 3, "total_steps", total_steps, "an integer >= 3")
        self.learning_rate = float(learning_rate)
        self.total_steps = keras.Variable(total_steps, dtype="int64", trainable=False, name="total_steps")

    def set_total_steps(self, total_steps: int) -> None:
        _require(isinstance(total_steps, int) and total_steps >= 3, "total_steps", total_steps, "an integer >= 3")
        self.total_steps.assign(total_steps)

    def __call__(self, step):
        step = ops.convert_to_tensor(step)
        total = ops.cast(self.total_steps, step.dtype)
        first, second = total // 3 - 1, 2 * total // 3 - 1
        values = [ops.convert_to_tensor(v) for v in (self.learning_rate, self.learning_rate / 2,
                                                     self.learning_rate / 4)]
        dtype = values[0].dtype
        return (ops.cast(step <= first, dtype) * values[0] + ops.cast(step > second, dtype) * values[2]
                + ops.cast((step > first) & (step <= second), dtype) * values[1])

    def get_config(self):
        return {"learning_rate": self.learning_rate, "total_steps": int(ops.convert_to_numpy(self.total_steps))}


@keras.saving.register_keras_serializable(package="tsattn")
class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up to ``peak_learning_rate`` over ``warmup_steps``, then a decay.

    decay "inverse_sqrt": peak * sqrt(warmup_steps / step) (as in "Attention is all you need");
    decay "cosine": from peak down to ``min_learning_rate`` at ``decay_steps``; "constant": stay at peak.
    """

    DECAYS = ("inverse_sqrt", "cosine", "constant")

    def __init__(self, peak_learning_rate: float = 1e-3, warmup_steps: int = 100, decay: str = "inverse_sqrt",
                 decay_steps: int = 10000, min_learning_rate: float = 0.0):
        _require(peak_learning_rate > 0, "learning_rate", peak_learning_rate, "> 0")
        _require(isinstance(warmup_steps, int) and warmup_steps >= 1, "warmup_steps", warmup_steps, "an integer >= 1")
        _require(decay in self.DECAYS, "decay", decay, f"one of {', '.join(self.DECAYS)}")
        _require(isinstance(decay_steps, int) and decay_steps > warmup_steps, "decay_steps", decay_steps,
                 f"an integer > warmup_steps={warmup_steps}")
        self.peak_learning_rate, self.warmup_steps = float(peak_learning_rate), warmup_steps
        self.decay, self.decay_steps, self.min_learning_rate = decay, decay_steps, float(min_learning_rate)

    def __call__(self, step):
        step = ops.cast(step, "float32") + 1.0
        warmup = float(self.warmup_steps)
        rising = self.peak_learning_rate * step / warmup
        if self.decay == "inverse_sqrt":
            after = self.peak_learning_rate * ops.sqrt(warmup / step)
        elif self.decay == "cosine":
            progress = ops.clip((step - warmup) / float(self.decay_steps - self.warmup_steps), 0.0, 1.0)
            after = self.min_learning_rate + (self.peak_learning_rate - self.min_learning_rate) * 0.5 * (
                1.0 + ops.cos(math.pi * progress))
        else:
            after = ops.full_like(step, self.peak_learning_rate)
        return ops.where(step < warmup, rising, after)

    def get_config(self):
        return {"peak_learning_rate": self.peak_learning_rate, "warmup_steps": self.warmup_steps,
                "decay": self.decay, "decay_steps": self.decay_steps, "min_learning_rate": self.min_learning_rate}


@keras.saving.register_keras_serializable(package="tsattn")
class LastStep(layers.Layer):
    """(batch, window, d) -> (batch, d): the representation of the last time step."""

    def call(self, inputs):
        return inputs[:, -1, :]


@keras.saving.register_keras_serializable(package="tsattn")
class SubtractLast(layers.Layer):
    """(batch, window, features) -> the target minus each window's last target value: values relative to the
    present (covariate columns unchanged).

    The network then sees the shape of the recent past, not its level, so it behaves the same on levels it
    never saw in training (a trend, a higher cycle); the level reaches the forecast through the linear skip.
    """

    def call(self, inputs):
        target = inputs[:, :, :1] - inputs[:, -1:, :1]  # covariates keep their values (a promotion is 0 or 1)
        return ops.concatenate([target, inputs[:, :, 1:]], axis=-1)


@keras.saving.register_keras_serializable(package="tsattn")
class Features(layers.Layer):
    """(batch, window, features) -> (batch, window, stop - start): the features ``start``..``stop`` (None: to the
    last) of every step; ``Features(0, 1)`` is the target, ``Features(1)`` the covariates."""

    def __init__(self, start: int = 0, stop: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.start, self.stop = int(start), None if stop is None else int(stop)

    def call(self, inputs):
        return inputs[:, :, self.start:self.stop]

    def compute_output_shape(self, input_shape):
        width = len(range(input_shape[-1])[self.start:self.stop])
        return (*input_shape[:-1], width)

    def get_config(self):
        return {**super().get_config(), "start": self.start, "stop": self.stop}


ATTENTION_KINDS = {
    "additive": lambda units: AdditiveAttention(name="attention"),
    "bahdanau": lambda units: BahdanauAttention(units, name="attention"),
    "luong-dot": lambda units: LuongAttention("dot", name="attention"),
    "luong-general": lambda units: LuongAttention("general", name="attention"),
}


@keras.saving.register_keras_serializable(package="tsattn")
class EnsembleCombine(layers.Layer):
    """The median (or mean) over an ensemble's member forecasts: a list of (batch, horizon) -> (batch, horizon)."""

    METHODS = ENSEMBLE_METHODS

    def __init__(self, method: str = "median", **kwargs):
        super().__init__(**kwargs)
        if method not in self.METHODS:
            raise ValueError(f"method must be one of {self.METHODS}; got {method!r}")
        self.method = method

    def call(self, inputs):
        stacked = ops.stack(inputs, axis=0)
        return ops.median(stacked, axis=0) if self.method == "median" else ops.mean(stacked, axis=0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])

    def get_config(self):
        return {**super().get_config(), "method": self.method}


@keras.saving.register_keras_serializable(package="tsattn")
class StackMembers(layers.Layer):
    """Members' forecasts, a list of (batch, horizon[, quantiles]) -> (batch, members, horizon[, quantiles]): the
    output of an ensemble whose members train stacked in one model (each member's loss on its own slice)."""

    def call(self, inputs):
        return ops.stack(inputs, axis=1)

    def compute_output_shape(self, input_shape):
        first = tuple(input_shape[0])
        return (first[0], len(input_shape), *first[1:])


@keras.saving.register_keras_serializable(package="tsattn")
class WindowScale(layers.Layer):
    """(batch, window, features) -> (batch, 1): each window's largest absolute value of the first feature (the
    target), 1 where the window is all zeros. A model with ``normalise="window"`` divides its input by it and
    multiplies its forecast by it (N-BEATS-style scale-free inputs: a series' level and units never reach the
    weights)."""

    def call(self, inputs):
        largest = ops.max(ops.abs(inputs[:, :, 0]), axis=1, keepdims=True)
        return ops.where(largest > 0, largest, ops.ones_like(largest))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], 1)


@keras.saving.register_keras_serializable(package="tsattn")
class ScaleBy(layers.Layer):
    """[values, scale (batch, 1)] -> values with the target multiplied by the scale (``inverse``: divided by it).

    On a window (batch, window, features) only the first feature (the target) is scaled; on a forecast
    (batch, horizon) or (batch, horizon, quantiles) every value is."""

    def __init__(self, inverse: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.inverse = bool(inverse)

    def call(self, inputs):
        values, scale = inputs
        factor = 1.0 / scale if self.inverse else scale  # (batch, 1)
        if len(values.shape) == 3 and self.inverse:  # a window: only the target column
            target = values[:, :, :1] * ops.expand_dims(factor, -1)
            return ops.concatenate([target, values[:, :, 1:]], axis=-1)
        if len(values.shape) == 3:
            return values * ops.expand_dims(factor, -1)
        return values * factor

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])

    def get_config(self):
        return {**super().get_config(), "inverse": self.inverse}


@keras.saving.register_keras_serializable(package="tsattn")
class LastValue(layers.Layer):
    """(batch, window, features) -> (batch, horizon): the window's last value of the first feature, repeated
    for every step ahead (the naive forecast, the level a relative skip path adds back)."""

    def __init__(self, horizon: int = 1, **kwargs):
        super().__init__(**kwargs)
        self.horizon = int(horizon)

    def call(self, inputs):
        return ops.repeat(inputs[:, -1, :1], self.horizon, axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.horizon)

    def get_config(self):
        return {**super().get_config(), "horizon": self.horizon}


@keras.saving.register_keras_serializable(package="tsattn")
class QuantileOutput(layers.Layer):
    """The quantile head: [(batch, horizon * n_quantiles), optional (batch, horizon)] -> (batch, horizon, n_quantiles).

    The network's outputs become one value per step and quantile; the linear skip path's forecast (the second
    input, if any) is added to every quantile, so the least-squares start and the level invariance of the
    relative skip carry over. Quantiles are then sorted along the last axis, so they never cross in anything a
    user sees (sorting keeps the pinball loss's gradient: each output gets the gradient of the quantile it
    lands on).
    """

    def __init__(self, horizon: int = 1, quantiles=(0.1, 0.5, 0.9), **kwargs):
        super().__init__(**kwargs)
        self.horizon = int(horizon)
        self.quantiles = [float(q) for q in quantiles]
        _require(len(self.quantiles) >= 1 and all(0 < q < 1 for q in self.quantiles), "quantiles", quantiles,
                 "numbers between 0 and 1")

    def call(self, inputs):
        network, base = inputs if isinstance(inputs, (list, tuple)) else (inputs, None)
        values = ops.reshape(network, (-1, self.horizon, len(self.quantiles)))  # (batch, horizon, quantiles)
        if base is not None:
            values = values + ops.expand_dims(base, -1)
        return ops.sort(values, axis=-1)

    def compute_output_shape(self, input_shape):
        first = input_shape[0] if isinstance(input_shape, (list, tuple)) and isinstance(input_shape[0], (list, tuple)) \
            else input_shape
        return (first[0], self.horizon, len(self.quantiles))

    def get_config(self):
        return {**super().get_config(), "horizon": self.horizon, "quantiles": self.quantiles}


@keras.saving.register_keras_serializable(package="tsattn")
class PinballLoss(keras.losses.Loss):
    """Mean pinball (quantile) loss: y_true (batch, horizon), y_pred (batch, horizon, n_quantiles).

    For quantile q and error e = y - f: max(q e, (q - 1) e), averaged over quantiles and steps.
    """

    def __init__(self, quantiles=(0.1, 0.5, 0.9), name: str = "pinball", **kwargs):
        super().__init__(name=name, **kwargs)
        self.quantiles = [float(q) for q in quantiles]

    def call(self, y_true, y_pred):
        return self.of_errors(ops.expand_dims(ops.cast(y_true, y_pred.dtype), -1) - y_pred)

    def of_errors(self, error):
        """The loss of errors y - f (batch, horizon, quantiles): (batch,)."""
        q = ops.convert_to_tensor(self.quantiles, dtype=error.dtype)  # (quantiles,)
        return ops.mean(ops.maximum(q * error, (q - 1.0) * error), axis=(-2, -1))

    def get_config(self):
        return {**super().get_config(), "quantiles": self.quantiles}


@keras.saving.register_keras_serializable(package="tsattn")
class SeriesUnitsLoss(keras.losses.Loss):
    """sMAPE, MAPE or MASE of scaled forecasts, computed in series units.

    y_true (batch, horizon + 3) packs each window's targets (scaled) with its series' scaler offset and scale and
    its MASE scale (the in-sample seasonal-naive MAE, series units); y_pred (batch, horizon) is scaled. With
    y = y_true * scale + offset and f = y_pred * scale + offset, per window:
    smape = mean 200 |y - f| / (|y| + |f|) (the denominator without gradient, as in N-BEATS),
    mape = mean 100 |y - f| / |y|, mase = mean |y - f| / mase_scale; a zero denominator counts 0.
    """

    KINDS = ("smape", "mape", "mase")

    def __init__(self, kind: str = "smape", name: str | None = None, **kwargs):
        _require(kind in self.KINDS, "kind", kind, f"one of {', '.join(self.KINDS)}")
        super().__init__(name=name or kind, **kwargs)
        self.kind = kind

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, y_pred.dtype)
        horizon = ops.shape(y_pred)[-1]
        target, offset, scale, mase = (y_true[:, :horizon], y_true[:, horizon:horizon + 1],
                                       y_true[:, horizon + 1:horizon + 2], y_true[:, horizon + 2:horizon + 3])
        actual, forecast = target * scale + offset, y_pred * scale + offset  # (batch, horizon), series units
        error = ops.abs(actual - forecast)
        if self.kind == "smape":
            ratio = ops.divide_no_nan(2.0 * error, ops.stop_gradient(ops.abs(actual) + ops.abs(forecast)))
            return 100.0 * ops.mean(ratio, axis=-1)
        if self.kind == "mape":
            return 100.0 * ops.mean(ops.divide_no_nan(error, ops.abs(actual)), axis=-1)
        return ops.mean(ops.divide_no_nan(error, mase), axis=-1)

    def get_config(self):
        return {**super().get_config(), "kind": self.kind}


class MaskedTargets(keras.losses.Loss):
    """A training loss with some targets masked out (``masked_targets``: windows whose targets run past the end of
    the training part). y_true (batch, horizon [+ 3] + horizon) carries a mask after the target and its series
    units, 1 for a known target and 0 for a masked one; a masked step contributes zero loss and zero gradient (its
    target is the forecast itself, or a pinball error of 0), and the mean still runs over every step, as the
    N-BEATS authors' masked losses. Used only while training, so not serialisable."""

    def __init__(self, loss, horizon: int, needs_scale: bool, name: str = "masked", **kwargs):
        super().__init__(name=name, **kwargs)
        self.loss = keras.losses.get(loss) if isinstance(loss, str) else loss
        self.horizon, self.needs_scale = horizon, needs_scale

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, y_pred.dtype)
        h = self.horizon
        target, mask = y_true[:, :h], y_true[:, -h:]
        if isinstance(self.loss, PinballLoss):  # y_pred (batch, horizon, quantiles)
            error = ops.expand_dims(target, -1) - y_pred
            return self.loss.of_errors(ops.where(ops.expand_dims(mask, -1) > 0, error, ops.zeros_like(error)))
        target = ops.where(mask > 0, target, ops.stop_gradient(y_pred))
        if self.needs_scale:  # the series units after the target
            target = ops.concatenate([target, y_true[:, h:-h]], axis=1)
        return self.loss.call(target, y_pred) if isinstance(self.loss, keras.losses.Loss) else self.loss(target, y_pred)


class MemberLosses(keras.losses.Loss):
    """The sum of each stacked ensemble member's own loss: y_pred (batch, members, ...) holds every member's output,
    y_true (batch, horizon [+ 3] [+ horizon]) the targets, then the series units a series-units loss reads and the
    mask a :class:`MaskedTargets` loss reads; ``whole`` says, per loss, whether it takes y_true whole or the targets
    alone. The members share no weights, so each gets exactly the gradient of its own loss. Used only while
    training (the trained ensemble is saved with its members and their median), so not serialisable."""

    def __init__(self, losses: list, whole: list, horizon: int, name: str = "member_losses", **kwargs):
        super().__init__(name=name, **kwargs)
        self.losses = [keras.losses.get(loss) if isinstance(loss, str) else loss for loss in losses]
        self.whole, self.horizon = list(whole), horizon

    def call(self, y_true, y_pred):
        total = 0.0
        for i, (loss, whole) in enumerate(zip(self.losses, self.whole)):
            target = y_true if whole else y_true[:, :self.horizon]
            member = y_pred[:, i]
            value = loss.call(target, member) if isinstance(loss, keras.losses.Loss) else loss(target, member)
            total = total + value
        return total


@keras.saving.register_keras_serializable(package="tsattn")
class InstanceStats(layers.Layer):
    """(batch, window, features) -> (batch, 2): each window's mean and standard deviation of the first feature (the
    target); a constant window's deviation is 1. With ``normalise="instance"`` a model standardises its input by them
    and de-standardises its forecast (reversible instance normalisation, as PatchTST: each series in its own units,
    its level and scale never reach the weights)."""

    def __init__(self, epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = float(epsilon)

    def call(self, inputs):
        target = inputs[:, :, 0]
        mean = ops.mean(target, axis=1, keepdims=True)
        deviation = ops.sqrt(ops.mean(ops.square(target - mean), axis=1, keepdims=True) + self.epsilon)
        deviation = ops.where(deviation > 2 * math.sqrt(self.epsilon), deviation, ops.ones_like(deviation))
        return ops.concatenate([mean, deviation], axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], 2)

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon}


@keras.saving.register_keras_serializable(package="tsattn")
class Standardise(layers.Layer):
    """[values, stats (batch, 2) = (mean, deviation)] -> standardised values (``inverse``: back in the window's
    units; ``shift=False``: multiplied by the deviation only). On a window (batch, window, features) only the first
    feature (the target) changes; on a forecast (batch, horizon) or (batch, horizon, quantiles) every value does."""

    def __init__(self, inverse: bool = False, shift: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.inverse, self.shift = bool(inverse), bool(shift)

    def call(self, inputs):
        values, stats = inputs
        mean, deviation = stats[:, :1], stats[:, 1:2]  # (batch, 1) each
        if len(values.shape) == 3:
            mean, deviation = ops.expand_dims(mean, -1), ops.expand_dims(deviation, -1)
        if self.inverse:  # shift=False: the deviation alone (a change from a level another path gives)
            return values * deviation + mean if self.shift else values * deviation
        if len(values.shape) == 3:  # a window: only the target column
            return ops.concatenate([(values[:, :, :1] - mean) / deviation, values[:, :, 1:]], axis=-1)
        return (values - mean) / deviation

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])

    def get_config(self):
        return {**super().get_config(), "inverse": self.inverse, **({} if self.shift else {"shift": False})}


def patch_layout(window: int, length, stride) -> tuple[int, int, int]:
    """(patch length, stride, patches) covering a window exactly, the last patch ending at the last step.

    "auto" length: the divisor of the window nearest an eighth of it (one step per token under 8 steps); "auto"
    stride: the length (patches side by side; PatchTST overlaps them by half). Raises ConfigError naming a value that works when a given
    length or stride cannot."""
    if length == "auto":  # the divisor of the window nearest an eighth of it (one step per token under 8 steps)
        target = window / 8
        length = min((d for d in range(1, window + 1) if window % d == 0 and (d > 1 or window < 8 or window % 2)),
                     key=lambda d: (abs(d - target), d))
    if length > window:
        raise ConfigError(f"patch-transformer parameter patch_length ({length}) is longer than the window ({window}); "
                          f"use at most {window} (e.g. patch_length={max(1, window // 4)}) or a longer window")
    if stride == "auto":  # side by side (M3 quarterly, validation sMAPE 9.50 against 9.63 for half-overlapping
        stride = length     # patches, with half the tokens)
    if stride > length:
        raise ConfigError(f"patch-transformer parameter patch_stride ({stride}) is longer than patch_length "
                          f"({length}): values between patches would never be read; use at most {length}")
    if (window - length) % stride:
        fits = [s for s in range(stride, 0, -1) if (window - length) % s == 0][0]
        raise ConfigError(f"a window of {window} is not tiled by patches of {length} every {stride} steps "
                          f"(({window} - {length}) is not a multiple of {stride}); use patch_stride={fits}, or a "
                          f"window of {window - (window - length) % stride} or {window + stride - (window - length) % stride}")
    return length, stride, (window - length) // stride + 1


@keras.saving.register_keras_serializable(package="tsattn")
class Patches(layers.Layer):
    """(batch, window, features) -> (batch, patches, length * features): the window cut into patches of ``length``
    steps every ``stride`` steps (:func:`patch_layout`), oldest first; each patch is one token of a patch
    transformer (PatchTST, Nie et al. 2023)."""

    def __init__(self, length: int, stride: int, **kwargs):
        super().__init__(**kwargs)
        _require(isinstance(length, int) and length >= 1, "patch_length", length, "an integer >= 1")
        _require(isinstance(stride, int) and stride >= 1, "patch_stride", stride, "an integer >= 1")
        self.length, self.stride = length, stride

    def build(self, input_shape):
        window = _static_window(input_shape, "Patches")
        _, _, count = patch_layout(window, self.length, self.stride)
        self.indices = np.arange(count)[:, None] * self.stride + np.arange(self.length)[None, :]  # (patches, length)

    def call(self, inputs):
        count, features = self.indices.shape[0], inputs.shape[-1]
        if self.stride == self.length:  # side by side, tiling the window: a reshape (no gather and no scatter-add
            return ops.reshape(inputs, (-1, count, self.length * features))  # in its gradient), the same values
        patches = ops.take(inputs, ops.convert_to_tensor(self.indices.reshape(-1), dtype="int32"), axis=1)
        return ops.reshape(patches, (-1, count, self.length * features))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.indices.shape[0] if hasattr(self, "indices") else None,
                self.length * input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "length": self.length, "stride": self.stride}


# ----------------------------------------------------------------------------------------------------
# Temporal fusion (Lim et al. 2021): gated residual networks, variable selection, interpretable attention
# ----------------------------------------------------------------------------------------------------
FUSION_EPSILON = 1e-6  # the layer normalisations of the gated residual networks and gates (stacked ones too)


def _with_context(inputs):
    """(values, context or None) from a layer's input: a tensor, or [tensor, context]."""
    if isinstance(inputs, (list, tuple)):
        return inputs[0], (inputs[1] if len(inputs) > 1 else None)
    return inputs, None


def _shapes(input_shape):
    """(values' shape, context's shape or None) from ``build``'s argument."""
    if isinstance(input_shape, (list, tuple)) and input_shape and isinstance(input_shape[0], (list, tuple)):
        return tuple(input_shape[0]), (tuple(input_shape[1]) if len(input_shape) > 1 else None)
    return tuple(input_shape), None


@keras.saving.register_keras_serializable(package="tsattn")
class GatedResidualNetwork(layers.Layer):
    """TFT's gated residual network: LayerNorm(skip(a) + GLU(W1 ELU(W2 a + W3 c))), c an optional context vector
    (batch, d) added at every step of a sequence (batch, time, d). ``output_units`` (default ``units``) sizes the
    output; the skip path is a Dense when the input's width differs."""

    def __init__(self, units: int, dropout: float = 0.0, output_units: int | None = None, **kwargs):
        super().__init__(**kwargs)
        _require(isinstance(units, int) and units >= 1, "units", units, "an integer >= 1")
        _require(isinstance(dropout, (int, float)) and 0 <= dropout < 1, "dropout", dropout, "in [0, 1)")
        self.units, self.dropout = units, float(dropout)
        self.output_units = int(output_units) if output_units is not None else units
        self.hidden = layers.Dense(units, name="hidden")
        self.context_projection = layers.Dense(units, use_bias=False, name="context")
        self.intermediate = layers.Dense(units, name="intermediate")
        self.gate = layers.Dense(2 * self.output_units, name="gate")  # GLU: values, then gates
        self.drop = layers.Dropout(self.dropout)
        self.skip = layers.Dense(self.output_units, name="skip")
        self.norm = layers.LayerNormalization(epsilon=FUSION_EPSILON, name="norm")
        self.projects = False

    def build(self, input_shape):
        values, context = _shapes(input_shape)
        self.hidden.build(values)
        if context is not None:
            self.context_projection.build(context)
        inner = (*values[:-1], self.units)
        self.intermediate.build(inner)
        self.gate.build(inner)
        self.projects = int(values[-1]) != self.output_units
        if self.projects:
            self.skip.build(values)
        self.norm.build((*values[:-1], self.output_units))

    def call(self, inputs, training=None):
        values, context = _with_context(inputs)
        h = self.hidden(values)
        if context is not None:
            c = self.context_projection(context)
            for _ in range(len(values.shape) - len(c.shape)):
                c = ops.expand_dims(c, 1)
            h = h + c
        h = self.drop(self.intermediate(ops.elu(h)), training=training)
        value, gate = ops.split(self.gate(h), 2, axis=-1)
        residual = self.skip(values) if self.projects else values
        return self.norm(residual + value * ops.sigmoid(gate))

    def compute_output_shape(self, input_shape):
        values, _ = _shapes(input_shape)
        return (*values[:-1], self.output_units)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "dropout": self.dropout,
                "output_units": self.output_units}


@keras.saving.register_keras_serializable(package="tsattn")
class GateAddNorm(layers.Layer):
    """[x, skip] -> LayerNorm(skip + GLU(Dropout(x))): TFT's gated skip connection."""

    def __init__(self, units: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.units, self.dropout = int(units), float(dropout)
        self.drop = layers.Dropout(self.dropout)
        self.gate = layers.Dense(2 * self.units, name="gate")
        self.norm = layers.LayerNormalization(epsilon=FUSION_EPSILON, name="norm")

    def build(self, input_shape):
        values, skip = _shapes(input_shape)
        self.gate.build(values)
        self.norm.build(skip)

    def call(self, inputs, training=None):
        values, skip = inputs
        value, gate = ops.split(self.gate(self.drop(values, training=training)), 2, axis=-1)
        return self.norm(skip + value * ops.sigmoid(gate))

    def compute_output_shape(self, input_shape):
        return _shapes(input_shape)[1]

    def get_config(self):
        return {**super().get_config(), "units": self.units, "dropout": self.dropout}


def _per_variable(x, kernels):
    """(..., variables, i) times (variables, i, j) -> (..., variables, j): each variable's vectors by its own kernel, as
    one batched matrix product over the variables (an einsum over "..." broadcasts the kernels over the batch and
    builds a per-example kernel gradient: ten times slower a step)."""
    variables, width = int(kernels.shape[0]), int(kernels.shape[-1])
    lead = ops.shape(x)[:-2]
    rows = ops.transpose(ops.reshape(x, (-1, variables, int(x.shape[-1]))), (1, 0, 2))  # (variables, n, i)
    out = ops.transpose(ops.matmul(rows, kernels), (1, 0, 2))  # (n, variables, j)
    return ops.reshape(out, (*lead, variables, width))


@keras.saving.register_keras_serializable(package="tsattn")
class VariableSelection(layers.Layer):
    """TFT's variable selection network over ``variables`` scalar inputs (batch, [time,] variables), with an
    optional context vector: each variable embedded linearly to ``units`` and passed through its own GRN, the
    selection weights a softmax of one GRN over all the embeddings; returns the weighted sum (batch, [time,] units)
    and, with ``return_weights``, the weights (batch, [time,] variables): which input mattered.

    The variables' own GRNs are one stack of weights (variables, ...) run as batched matrix products: a tft traces
    in fewer operations and updates fewer variables, the more so the more covariates it reads. The stack draws its
    initial weights and dropout masks from the seeds one GatedResidualNetwork layer per variable drew, so a seed
    gives the model it gave before; ``stacked=False`` is that layout, of the models saved before, kept so they load.

    ``variable_dropout``: in training, each variable's embedding is dropped for a whole window (every step) with
    this chance (the rest scaled up, as Dropout does), so no forecast can lean on one column alone; the variables
    at the positions ``kept`` are never dropped."""

    def __init__(self, variables: int, units: int, dropout: float = 0.0, variable_dropout: float = 0.0,
                 kept=(), stacked: bool = True, **kwargs):
        super().__init__(**kwargs)
        _require(isinstance(variables, int) and variables >= 1, "variables", variables, "an integer >= 1")
        _require(isinstance(variable_dropout, (int, float)) and 0 <= variable_dropout < 1, "variable_dropout",
                 variable_dropout, "in [0, 1)")
        _require(all(isinstance(i, int) and 0 <= i < variables for i in kept), "kept", list(kept),
                 f"positions in 0..{variables - 1}")
        self.count, self.units, self.dropout = variables, int(units), float(dropout)
        self.variable_dropout, self.kept = float(variable_dropout), tuple(sorted(set(kept)))
        self.stacked = bool(stacked)
        self.selection = GatedResidualNetwork(self.units, self.dropout, output_units=variables, name="selection")
        grns = [GatedResidualNetwork(self.units, self.dropout, name=f"variable_{i}") for i in range(variables)]
        self.each, self.variable_seeds, self._initialisers = grns, [], []
        if self.stacked:  # the draws of one GRN layer per variable: a seed gives the weights and masks it gave before
            self.each = []
            self._initialisers = [(g.hidden.kernel_initializer, g.intermediate.kernel_initializer,
                                   g.gate.kernel_initializer) for g in grns]
            self.variable_seeds = [g.drop.seed_generator for g in grns] if self.dropout else []
        self.drop_variables = self.keep = None

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.setdefault("stacked", False)  # saved before the stack: one GRN layer per variable
        return cls(**config)

    def build(self, input_shape):
        values, context = _shapes(input_shape)
        _require(int(values[-1]) == self.count, "input variables", values[-1], f"{self.count}")
        self.kernel = self.add_weight(name="embedding_kernel", shape=(self.count, self.units),
                                      initializer="glorot_uniform")
        self.bias = self.add_weight(name="embedding_bias", shape=(self.count, self.units), initializer="zeros")
        flat = (*values[:-1], self.count * self.units)
        if self.variable_dropout and self.count > 1 and len(self.kept) < self.count:  # one mask per window, variable
            noise = (None,) + (1,) * (len(values) - 2) + (self.count, 1)
            self.drop_variables = layers.Dropout(self.variable_dropout, noise_shape=noise, name="variable_dropout")
            if self.kept:  # 1 at the variables that pass whole (never dropped nor scaled), per variable and unit
                self.keep = np.zeros((self.count, 1), dtype="float32")
                self.keep[list(self.kept)] = 1.0
        if self.count > 1:  # one variable is always selected whole
            self.selection.build(flat if context is None else [flat, context])
        if not self.stacked:
            for grn in self.each:
                grn.build((*values[:-1], self.units))
            return
        v, u = self.count, self.units  # each variable's GRN: LayerNorm(a + GLU(W_i ELU(W_h a + b_h) + b_i))

        def stack_of(name, shape, part):
            weight = self.add_weight(name=name, shape=(v, *shape), initializer="zeros")
            weight.assign(np.stack([ops.convert_to_numpy(initialisers[part](shape=shape, dtype="float32"))
                                    for initialisers in self._initialisers]))
            return weight

        self.hidden_kernel = stack_of("hidden_kernel", (u, u), 0)
        self.hidden_bias = self.add_weight(name="hidden_bias", shape=(v, u), initializer="zeros")
        self.intermediate_kernel = stack_of("intermediate_kernel", (u, u), 1)
        self.intermediate_bias = self.add_weight(name="intermediate_bias", shape=(v, u), initializer="zeros")
        self.gate_kernel = stack_of("gate_kernel", (u, 2 * u), 2)
        self.gate_bias = self.add_weight(name="gate_bias", shape=(v, 2 * u), initializer="zeros")
        self.norm_gamma = self.add_weight(name="norm_gamma", shape=(v, u), initializer="ones")
        self.norm_beta = self.add_weight(name="norm_beta", shape=(v, u), initializer="zeros")

    def _variables_grns(self, embedded, training=None):
        """Each variable's own GRN on its embedding: (batch, [time,] variables, units) -> the same shape."""
        if not self.stacked:
            return ops.stack([grn(embedded[..., i, :], training=training) for i, grn in enumerate(self.each)],
                             axis=-2)
        h = _per_variable(embedded, self.hidden_kernel) + self.hidden_bias
        h = _per_variable(ops.elu(h), self.intermediate_kernel) + self.intermediate_bias
        if training and self.variable_seeds:  # each variable's own dropout draws, as its own layer made them
            h = ops.stack([keras.random.dropout(h[..., i, :], self.dropout, seed=seed)
                           for i, seed in enumerate(self.variable_seeds)], axis=-2)
        value, gate = ops.split(_per_variable(h, self.gate_kernel) + self.gate_bias, 2, axis=-1)
        x = embedded + value * ops.sigmoid(gate)
        mean, variance = ops.moments(x, axes=[-1], keepdims=True)  # Keras's LayerNormalization, gamma per variable
        inv = ops.rsqrt(variance + FUSION_EPSILON) * self.norm_gamma
        return x * inv + (-mean * inv + self.norm_beta)

    def call(self, inputs, training=None, return_weights=False):
        values, context = _with_context(inputs)
        embedded = ops.expand_dims(values, -1) * self.kernel + self.bias  # (batch, [time,] variables, units)
        if self.drop_variables is not None:
            dropped = self.drop_variables(embedded, training=training)
            embedded = dropped if self.keep is None else self.keep * embedded + (1.0 - self.keep) * dropped
        flat_shape = (-1, self.count * self.units) if len(values.shape) == 2 else \
            (-1, int(values.shape[1]), self.count * self.units)
        if self.count > 1:
            flat = ops.reshape(embedded, flat_shape)
            logits = self.selection(flat if context is None else [flat, context], training=training)
            weights = ops.softmax(logits, axis=-1)  # (batch, [time,] variables)
        else:
            weights = ops.ones_like(values)
        processed = self._variables_grns(embedded, training=training)  # (batch, [time,] variables, units)
        selected = ops.sum(processed * ops.expand_dims(weights, -1), axis=-2)
        return (selected, weights) if return_weights else selected

    def get_config(self):
        return {**super().get_config(), "variables": self.count, "units": self.units, "dropout": self.dropout,
                "variable_dropout": self.variable_dropout, "kept": list(self.kept), "stacked": self.stacked}


@keras.saving.register_keras_serializable(package="tsattn")
class InterpretableAttention(layers.Layer):
    """TFT's interpretable multi-head attention: each head has its own query and key projections, all heads share
    one value projection, so the heads' outputs average into one (mean over heads of softmax(QK^T) V = (mean of the
    weights) V) and the mean weights are exactly what the forecast read. [queries (batch, q, d), keys (batch, k, d)]
    -> (batch, q, d); query i sits at key position k - q + i and sees keys up to it (causal). With
    ``return_attention_scores`` also the mean weights (batch, q, k)."""

    def __init__(self, num_heads: int, units: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        _require(isinstance(num_heads, int) and num_heads >= 1, "num_heads", num_heads, "an integer >= 1")
        _require(isinstance(units, int) and units >= 1, "hidden_size", units, "an integer >= 1")
        _require(units % num_heads == 0, "hidden_size", units,
                 f"divisible by num_heads={num_heads} (num_heads={heads_dividing(units, num_heads)} divides it)")
        self.num_heads, self.units, self.dropout = num_heads, units, float(dropout)
        self.key_dim = units // num_heads
        self.query = layers.Dense(units, use_bias=False, name="query")
        self.key = layers.Dense(units, use_bias=False, name="key")
        self.value = layers.Dense(self.key_dim, use_bias=False, name="value")  # shared by the heads
        self.projection = layers.Dense(units, name="projection")
        self.drop = layers.Dropout(self.dropout)

    def build(self, input_shape):
        queries, keys = _shapes(input_shape)
        self.query.build(queries)
        self.key.build(keys)
        self.value.build(keys)
        self.projection.build((*queries[:-1], self.key_dim))

    def call(self, inputs, training=None, return_attention_scores=False):
        queries, keys = inputs
        q_len, k_len = int(queries.shape[1]), int(keys.shape[1])
        q = ops.transpose(ops.reshape(self.query(queries), (-1, q_len, self.num_heads, self.key_dim)), (0, 2, 1, 3))
        k = ops.transpose(ops.reshape(self.key(keys), (-1, k_len, self.num_heads, self.key_dim)), (0, 2, 1, 3))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / math.sqrt(self.key_dim)  # (batch, heads, q, k)
        allowed = np.arange(k_len)[None, :] <= (k_len - q_len + np.arange(q_len))[:, None]  # (q, k)
        scores = ops.where(ops.convert_to_tensor(allowed), scores, ops.full_like(scores, -1e9))
        weights = ops.mean(ops.softmax(scores, axis=-1), axis=1)  # (batch, q, k)
        attended = ops.matmul(self.drop(weights, training=training), self.value(keys))  # (batch, q, key_dim)
        output = self.projection(attended)
        return (output, weights) if return_attention_scores else output

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "units": self.units, "dropout": self.dropout}


@keras.saving.register_keras_serializable(package="tsattn")
class FusionInputs(layers.Layer):
    """A window in tsattn's input layout (batch, window, 1 + past + future-known + static; future-known values
    ``horizon`` rows ahead) -> TFT's three inputs on one time axis of window + horizon steps:

    - past (batch, window, 1 + past + future-known + 1): the target, the past-observed columns, the future-known
      values at each past step (zero, their mean, for the first ``horizon`` steps, whose values no window holds)
      and the relative time index;
    - future (batch, horizon, future-known + 1): the future-known values at each forecast step and the time index;
    - static (batch, static): the static columns (the same on every row).

    The relative time index ((t - window + 1) / (window + horizon), a known input of every step, as Darts'
    ``add_relative_index``) gives the decoder an input when there are no future-known covariates."""

    def __init__(self, horizon: int, layout, **kwargs):
        super().__init__(**kwargs)
        self.horizon = int(horizon)
        self.layout = tuple(int(n) for n in layout)

    def call(self, inputs):
        hist, futr, stat = self.layout
        window = int(inputs.shape[1])
        length = window + self.horizon
        target, past = inputs[:, :, :1], inputs[:, :, 1:1 + hist]
        known = ops.pad(inputs[:, :, 1 + hist:1 + hist + futr], [[0, 0], [self.horizon, 0], [0, 0]])
        index = (np.arange(length, dtype="float32") - window + 1) / length
        index = ops.zeros_like(inputs[:, :1, :1]) + ops.convert_to_tensor(index.reshape(1, length, 1))
        known = ops.concatenate([known, index], axis=-1)  # (batch, window + horizon, futr + 1)
        return (ops.concatenate([target, past, known[:, :window]], axis=-1), known[:, window:],
                inputs[:, 0, 1 + hist + futr:])

    def compute_output_shape(self, input_shape):
        hist, futr, stat = self.layout
        batch, window = input_shape[0], input_shape[1]
        return (batch, window, 2 + hist + futr), (batch, self.horizon, futr + 1), (batch, stat)

    def get_config(self):
        return {**super().get_config(), "horizon": self.horizon, "layout": list(self.layout)}
