"""The model registry: simple-rnn, attention-rnn and transformer, each (batch, window, features) -> (batch, horizon).

Every model is a Keras functional model built from the layers in :mod:`tsattn.layers`. Models whose
layers produce attention weights keep them as extra outputs of those layers, so
:func:`attention_model` can read them from a trained or reloaded model without re-implementing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from . import _backend  # noqa: F401  (quiet TensorFlow import)
import keras
from keras import layers

from .errors import ConfigError
from .layers import ATTENTION_KINDS, LastStep, PositionalEncoding, SubtractLast, TransformerEncoderBlock

CELLS = {"rnn": layers.SimpleRNN, "lstm": layers.LSTM, "gru": layers.GRU}
ACTIVATIONS = ("tanh", "relu", "sigmoid", "linear", "elu", "selu", "softsign", "gelu")
SKIPS = ("linear", "none")
CENTERS = ("last", "none")


# ----------------------------------------------------------------------------------------------------
# Parameter specifications
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One hyper-parameter of a model: its default, what it accepts, and a one-line help."""

    default: Any
    accepts: str
    check: Callable[[Any], bool]
    help: str


def integer(minimum: int, maximum: int | None = None) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum and \
        (maximum is None or v <= maximum)


def boolean(v) -> bool:
    return isinstance(v, bool)


def fraction(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1


def choice(*options) -> Callable[[Any], bool]:
    return lambda v: v in options


def positive_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: name, description, parameters and the function that builds it."""

    name: str
    description: str
    params: dict[str, Param]
    build: Callable[..., keras.Model] = field(repr=False)
    attention: str | None = None  # what its attention weights are: None, "rnn" or "transformer"

    def resolve(self, params: dict) -> dict:
        """Defaults updated with ``params``, each checked; errors list what is accepted."""
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise ConfigError(
                f"model {self.name!r} has no parameter(s) {', '.join(unknown)}; it takes: "
                f"{', '.join(sorted(self.params))}"
            )
        resolved = {key: spec.default for key, spec in self.params.items()}
        resolved.update(params)
        for key, value in resolved.items():
            spec = self.params[key]
            if not spec.check(value):
                raise ConfigError(f"{self.name} parameter {key} must be {spec.accepts}; got {value!r}")
        return resolved


MODELS: dict[str, ModelSpec] = {}

_COMMON = {
    "output_activation": Param("linear", f"one of {', '.join(ACTIVATIONS)}", choice(*ACTIVATIONS),
                               "activation of the output Dense layer (the tutorials use tanh)"),
    "skip": Param("linear", f"one of {', '.join(SKIPS)}", choice(*SKIPS),
                  "add a linear autoregressive path (Dense on the raw window) to the network's output"),
    "center": Param("last", f"one of {', '.join(CENTERS)}", choice(*CENTERS),
                    "feed the network each window minus its last value (the level goes through the skip path)"),
}


def register(spec: ModelSpec) -> ModelSpec:
    MODELS[spec.name] = spec
    return spec


def list_models() -> list[str]:
    """Names of the registered models."""
    return list(MODELS)


def get_spec(name: str) -> ModelSpec:
    if name not in MODELS:
        raise ConfigError(f"unknown model {name!r}; available: {', '.join(MODELS)}")
    return MODELS[name]


def get_model(name: str, window: int, features: int = 1, horizon: int = 1, **params) -> keras.Model:
    """Build a registered model.

    Args:
        name: one of :func:`list_models`.
        window: input length (>= 2). features: input features (>= 1). horizon: outputs (>= 1).
        **params: the model's hyper-parameters (see ``tsattn models``); unknown ones are refused.

    Returns:
        An uncompiled ``keras.Model`` mapping (batch, window, features) to (batch, horizon);
        ``model.count_params()`` gives its size.

    Example:
        >>> model = get_model("attention-rnn", window=20, units=2, skip="none", output_activation="tanh")
        >>> model.count_params()
        33
    """
    spec = get_spec(name)
    for key, value, minimum, maximum in (("window", window, 2, 100_000), ("features", features, 1, 10_000),
                                         ("horizon", horizon, 1, 10_000)):
        if not integer(minimum, maximum)(value):
            raise ConfigError(f"{key} must be an integer in {minimum}..{maximum} for model {name!r}; got {value!r}")
    resolved = spec.resolve(params)
    inputs = keras.Input(shape=(window, features), name="window")
    body = SubtractLast(name="relative_window")(inputs) if resolved["center"] == "last" else inputs
    network = spec.build(body, horizon=horizon, **{k: v for k, v in resolved.items() if k != "center"})
    if resolved["skip"] == "linear":
        # LSTNet-style highway: a linear autoregression on the raw window, added to the network's output
        autoregressive = layers.Dense(horizon, kernel_initializer="zeros", name="linear_skip")(
            layers.Flatten(name="flatten_window")(inputs))
        outputs = layers.Add(name="forecast")([network, autoregressive])
    else:
        outputs = network
    return keras.Model(inputs, outputs, name=name.replace("-", "_"))


def _output(x, horizon: int, output_activation: str):
    return layers.Dense(horizon, activation=output_activation, name="output")(x)


# ----------------------------------------------------------------------------------------------------
# simple-rnn
# ----------------------------------------------------------------------------------------------------
_RNN_PARAMS = {
    "units": Param(32, "an integer in 1..4096", integer(1, 4096), "hidden units of the recurrent layer"),
    "activation": Param("tanh", f"one of {', '.join(ACTIVATIONS)}", choice(*ACTIVATIONS),
                        "activation of the recurrent layer (rnn cell)"),
    "cell": Param("rnn", f"one of {', '.join(CELLS)}", choice(*CELLS), "recurrent cell: SimpleRNN, LSTM or GRU"),
    "dropout": Param(0.0, "a number in [0, 1)", fraction, "dropout on the recurrent layer's inputs"),
}


def _recurrent(x, units, activation, cell, dropout, return_sequences):
    kwargs = {"activation": activation} if cell == "rnn" else {}
    return CELLS[cell](units, dropout=dropout, return_sequences=return_sequences, name=cell, **kwargs)(x)


def _build_simple_rnn(inputs, horizon, units, activation, cell, dropout, output_activation, skip):
    hidden = _recurrent(inputs, units, activation, cell, dropout, return_sequences=False)  # (batch, units)
    return _output(hidden, horizon, output_activation)


register(ModelSpec(
    "simple-rnn",
    "recurrent layer (SimpleRNN, LSTM or GRU) -> Dense(horizon), as in the sunspots tutorial",
    {**_RNN_PARAMS, **_COMMON},
    _build_simple_rnn,
))


# ----------------------------------------------------------------------------------------------------
# attention-rnn
# ----------------------------------------------------------------------------------------------------
def _build_attention_rnn(inputs, horizon, units, activation, cell, dropout, attention, output_activation, skip):
    states = _recurrent(inputs, units, activation, cell, dropout, return_sequences=True)  # (batch, window, units)
    context, _weights = ATTENTION_KINDS[attention](units)(states, return_attention_scores=True)  # (batch, units)
    return _output(context, horizon, output_activation)


register(ModelSpec(
    "attention-rnn",
    "recurrent layer returning all states -> attention over time -> Dense(horizon), as in the attention tutorial",
    {
        **_RNN_PARAMS,
        "attention": Param("additive", f"one of {', '.join(ATTENTION_KINDS)}", choice(*ATTENTION_KINDS),
                           "additive (the tutorial's tanh(hW+b)), bahdanau, luong-dot or luong-general"),
        **_COMMON,
    },
    _build_attention_rnn,
    attention="rnn",
))


# ----------------------------------------------------------------------------------------------------
# transformer
# ----------------------------------------------------------------------------------------------------
POOLINGS = ("last", "average")


def _build_transformer(inputs, horizon, d_model, num_heads, ff_dim, num_blocks, dropout, pooling, positional,
                       positional_base, causal, output_activation, skip):
    if d_model % num_heads:
        raise ConfigError(f"transformer parameter d_model must be divisible by num_heads={num_heads}; got {d_model}")
    x = layers.Dense(d_model, name="projection")(inputs)  # (batch, window, d_model)
    x = PositionalEncoding(positional, positional_base, name="positional_encoding")(x)
    x = layers.Dropout(dropout, name="input_dropout")(x)
    for block in range(num_blocks):
        x, _weights = TransformerEncoderBlock(d_model, num_heads, ff_dim, dropout, causal, name=f"encoder_{block}")(
            x, return_attention_scores=True)  # weights: (batch, heads, window, window)
    if pooling == "last":
        pooled = LastStep(name="last_step")(x)  # (batch, d_model)
    else:
        pooled = layers.GlobalAveragePooling1D(name="average_pool")(x)  # (batch, d_model)
    return _output(pooled, horizon, output_activation)


register(ModelSpec(
    "transformer",
    "Dense projection -> positional encoding -> encoder blocks (multi-head self-attention + ReLU FFN) -> pooling -> Dense",
    {
        "d_model": Param(32, "an integer in 1..1024 divisible by num_heads", integer(1, 1024), "width of the encoder"),
        "num_heads": Param(4, "an integer in 1..64", integer(1, 64), "attention heads (key_dim = d_model / num_heads)"),
        "ff_dim": Param(64, "an integer in 1..8192", integer(1, 8192), "hidden units of the ReLU feed-forward network"),
        "num_blocks": Param(2, "an integer in 1..32", integer(1, 32), "encoder blocks"),
        "dropout": Param(0.0, "a number in [0, 1)", fraction, "dropout after attention and feed-forward"),
        "pooling": Param("last", f"one of {', '.join(POOLINGS)}", choice(*POOLINGS),
                         "summary of the window: the last step's vector or the average over steps"),
        "positional": Param("sinusoidal", "one of sinusoidal, learned", choice(*PositionalEncoding.MODES),
                            "fixed sinusoidal encoding or learned position embeddings"),
        "positional_base": Param(10000.0, "a number in (1, 1e9]", lambda v: positive_number(v) and 1 < v <= 1e9,
                                 "n in P(k, 2i) = sin(k / n^(2i/d))"),
        "causal": Param(False, "true or false", boolean, "mask attention to earlier steps only"),
        **_COMMON,
    },
    _build_transformer,
    attention="transformer",
))


# ----------------------------------------------------------------------------------------------------
# Reading attention weights
# ----------------------------------------------------------------------------------------------------
def attention_layers(model: keras.Model) -> list[layers.Layer]:
    """The layers of a registered model that produce attention weights, in order."""
    from .layers import AdditiveAttention, BahdanauAttention, LuongAttention

    kinds = (AdditiveAttention, BahdanauAttention, LuongAttention, TransformerEncoderBlock)
    return [layer for layer in model.layers if isinstance(layer, kinds)]


def attention_model(model: keras.Model) -> keras.Model | None:
    """A model mapping the same inputs to the attention weights of each attention layer, or None.

    For attention-rnn: one output (batch, window). For transformer: one (batch, heads, window, window)
    output per encoder block.
    """
    found = attention_layers(model)
    if not found:
        return None
    outputs = [layer.output[1] for layer in found]
    return keras.Model(model.inputs, outputs, name=f"{model.name}_attention")
