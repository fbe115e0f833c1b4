"""The model registry: simple-rnn, attention-rnn and transformer, each (batch, window, features) -> (batch, horizon)
(or (batch, horizon, n_quantiles) for a quantile model).

Every model is a Keras functional model built from the layers in :mod:`tsattn.layers`: a builder maps the
window to a summary vector, and one shared head (Dense, plus the skip path, plus the quantile layer when the
loss asks for quantiles) turns it into the forecast, so every model gains an output kind at once. Models whose
layers produce attention weights keep them as extra outputs of those layers, so
:func:`attention_model` can read them from a trained or reloaded model without re-implementing anything.
"""

from __future__ import annotations

import numpy as np

from . import _backend  # noqa: F401  (quiet TensorFlow import)
import keras
from keras import layers

from .errors import ConfigError
from .losses import get_loss
from .layers import (ATTENTION_KINDS, Features, InstanceStats, LastStep, LastValue, Patches, PositionalEncoding,
                     QuantileOutput, ScaleBy, Standardise, SubtractLast, TransformerEncoderBlock, WindowScale,
                     heads_dividing, patch_layout)
from .specs import MODELS, ModelSpec, Param, get_spec, integer, list_models  # noqa: F401  (re-exported)

CELLS = {"rnn": layers.SimpleRNN, "lstm": layers.LSTM, "gru": layers.GRU}
# Recurrent layers over windows up to this length are unrolled: same arithmetic, no while loop, so a training step
# is no longer dispatch-bound (sunspots attention-rnn 15.8 -> 9.6 s, same epochs and forecasts to ~1e-7); tracing
# grows with the window (window 256: +7 s), so longer windows keep the loop (benchmarks/results/speed.md)
UNROLL_MAX_WINDOW = 128


def get_model(name: str, window: int, features: int = 1, horizon: int = 1, quantiles=None, loss: str | None = None,
              layout=None, **params) -> keras.Model:
    """Build a registered model.

    Args:
        name: one of :func:`list_models`.
        window: input length (>= 2). features: input features (>= 1). horizon: outputs (>= 1).
        quantiles: None for a point forecast, or the quantiles (in (0, 1)) of a quantile model.
        loss: the training loss (:data:`tsattn.losses.LOSSES`), which sizes the head
            (:meth:`tsattn.losses.LossSpec.output_width`); default: "quantile" with ``quantiles``, else "mse".
        layout: how many of the features after the target are past-observed, future-known and static
            (:class:`tsattn.covariates.Layout`); default: all past-observed. A model that treats the kinds
            differently (tft) reads it; the others see every feature at every step.
        **params: the model's hyper-parameters (see ``tsattn models``); unknown ones are refused.

    Returns:
        An uncompiled ``keras.Model`` mapping (batch, window, features) to (batch, horizon), or to
        (batch, horizon, len(quantiles)) with ``quantiles`` (sorted: they never cross);
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
    loss_spec = get_loss(loss if loss is not None else "quantile" if quantiles is not None else "mse")
    if loss_spec.quantile:
        from .intervals import check_quantiles

        if quantiles is None:
            raise ConfigError(f"loss {loss_spec.name!r} needs the quantiles its head outputs; got none")
        quantiles = check_quantiles(quantiles)
    elif quantiles is not None:
        raise ConfigError(f"quantiles size a quantile loss's head; loss {loss_spec.name!r} outputs one value per step")
    if layout is None:
        layout = (features - 1, 0, 0)
    layout = tuple(int(n) for n in layout)
    if len(layout) != 3 or min(layout) < 0 or 1 + sum(layout) != features:
        raise ConfigError(f"layout {layout} must count the {features - 1} features after the target as (past-observed, "
                          "future-known, static)")
    if resolved["normalise"] == "auto":  # the harness chooses on the data before it builds (choose_normalisation);
        resolved["normalise"] = "instance"  # built without data: its choice when the data says nothing
    raw = keras.Input(shape=(window, features), name="window")
    inputs, window_scale, stats = raw, None, None
    if resolved["normalise"] == "window":  # the whole model sees the window over its largest absolute value
        window_scale = WindowScale(name="window_scale")(raw)
        inputs = ScaleBy(inverse=True, name="normalised_window")([raw, window_scale])
    elif resolved["normalise"] == "instance":  # ... or standardised by its own mean and deviation
        stats = InstanceStats(name="instance_stats")(raw)
        inputs = Standardise(name="normalised_window")([raw, stats])
    body = SubtractLast(name="relative_window")(inputs) if resolved["center"] == "last" else inputs
    head_params = ("center", "output_activation", "skip", "normalise", "covariate_path",
                   "skip_units")  # read by the shared head
    outside = resolved["covariate_path"] == "outside" and features > 1  # the covariates' linear part after it
    # outside or none: the skip path reads the target alone (none: the covariates reach the network only)
    target = Features(0, 1, name="target_window") if resolved["covariate_path"] != "inside" and features > 1 else \
        (lambda x: x)
    context = {"horizon": horizon, "layout": layout} if spec.reads_layout else {}
    summary = BUILDERS[name](body, **context, **{k: v for k, v in resolved.items() if k not in head_params})
    # one shared head for every model: the loss decides the output's shape
    width = loss_spec.output_width(horizon, quantiles)
    if len(summary.shape) == 3:  # one vector per forecast step: one Dense shared by the steps
        network = layers.Flatten(name="flatten_output")(layers.Dense(
            width // horizon, activation=resolved["output_activation"], name="output")(summary))
    else:
        network = layers.Dense(width, activation=resolved["output_activation"], name="output")(summary)
    # skip_units="data" under a window normalisation: the skip path reads the window as given and is added after the
    # network's output is de-normalised (multiplied by the window's deviation, or its largest value, alone: the level
    # is the skip path's)
    data_units = resolved["skip_units"] == "data" and resolved["skip"] != "none" and inputs is not raw
    source = raw if data_units else inputs
    linear = None
    if resolved["skip"] == "linear":
        # LSTNet-style highway: a linear autoregression on the raw window, added to the network's output
        linear = layers.Dense(horizon, kernel_initializer="zeros", name="linear_skip")(
            layers.Flatten(name="flatten_window")(target(source)))
    elif resolved["skip"] == "relative":
        # level-invariant: the last value (naive forecast) plus a linear autoregression on the window relative
        # to its last value, plus the network; a level the model never saw in training changes nothing
        relative = body if resolved["center"] == "last" and not data_units else \
            SubtractLast(name="relative_data_window" if data_units else "relative_window")(source)
        autoregressive = layers.Dense(horizon, kernel_initializer="zeros", name="linear_skip")(
            layers.Flatten(name="flatten_window")(target(relative)))
        level = LastValue(horizon, name="level")(source)
        linear = layers.Add(name="linear_forecast")([autoregressive, level])
    elif resolved["skip"] == "naive":  # the forecast starts from the last value; the network adds the change
        linear = LastValue(horizon, name="level")(source)
    inner = None if data_units else linear  # the skip path joining the network before the de-normalisation
    if quantiles:
        head = QuantileOutput(horizon, quantiles, name="forecast")
        outputs = head(network) if inner is None else head([network, inner])
    elif inner is not None:
        outputs = layers.Add(name="forecast")([network, inner])
    else:
        outputs = network
    if window_scale is not None:
        outputs = ScaleBy(name="rescaled_forecast")([outputs, window_scale])
    if stats is not None:
        outputs = Standardise(inverse=True, shift=not data_units, name="rescaled_forecast")([outputs, stats])
    if data_units:
        if quantiles:
            linear = layers.Reshape((horizon, 1), name="skip_forecast")(linear)
        outputs = layers.Add(name="forecast_with_skip")([outputs, linear])
    if outside:  # in the units of the data the model reads (scaled target), whatever the window's normalisation
        effect = layers.Dense(horizon, kernel_initializer="zeros", name="covariate_skip")(
            layers.Flatten(name="flatten_covariates")(Features(1, name="covariates")(raw)))
        if quantiles:
            effect = layers.Reshape((horizon, 1), name="covariate_effect")(effect)
        outputs = layers.Add(name="forecast_with_covariates")([outputs, effect])
    return keras.Model(raw, outputs, name=name.replace("-", "_"))


# ----------------------------------------------------------------------------------------------------
# simple-rnn
# ----------------------------------------------------------------------------------------------------

def _recurrent(x, units, activation, cell, dropout, return_sequences):
    kwargs = {"activation": activation} if cell == "rnn" else {}
    unroll = x.shape[1] <= UNROLL_MAX_WINDOW
    return CELLS[cell](units, dropout=dropout, return_sequences=return_sequences, unroll=unroll, name=cell,
                       **kwargs)(x)


def _build_simple_rnn(inputs, units, activation, cell, dropout):
    return _recurrent(inputs, units, activation, cell, dropout, return_sequences=False)  # (batch, units)


# ----------------------------------------------------------------------------------------------------
# attention-rnn
# ----------------------------------------------------------------------------------------------------
def _build_attention_rnn(inputs, units, activation, cell, dropout, attention, readout):
    states = _recurrent(inputs, units, activation, cell, dropout, return_sequences=True)  # (batch, window, units)
    context, _weights = ATTENTION_KINDS[attention](units)(states, return_attention_scores=True)  # (batch, units)
    if readout == "context":
        return context
    last = LastStep(name="last_state")(states)  # (batch, units): what simple-rnn's head reads
    return layers.Concatenate(name="context_and_last")([context, last])  # (batch, 2 * units)


# ----------------------------------------------------------------------------------------------------
# transformer
# ----------------------------------------------------------------------------------------------------
def _build_transformer(inputs, d_model, num_heads, ff_dim, num_blocks, dropout, norm, residual_attention, pooling,
                       positional, positional_base, causal):
    x = layers.Dense(d_model, name="projection")(inputs)  # (batch, window, d_model)
    x = _encoder(x, "transformer", num_heads, ff_dim, num_blocks, dropout, positional, positional_base, causal, norm,
                 residual_attention)
    if pooling == "last":
        return LastStep(name="last_step")(x)  # (batch, d_model)
    return layers.GlobalAveragePooling1D(name="average_pool")(x)  # (batch, d_model)


def _encoder(x, model, num_heads, ff_dim, num_blocks, dropout, positional, positional_base, causal=False, norm="layer",
             residual_attention=False):
    """The tutorial's encoder over tokens (batch, tokens, d_model): positional encoding, dropout, encoder blocks
    (their attention weights, (batch, heads, tokens, tokens), are read by :func:`attention_model`); with
    ``residual_attention`` each block adds the previous block's pre-softmax scores to its own (PatchTST)."""
    d_model = int(x.shape[-1])
    if d_model % num_heads:
        raise ConfigError(f"{model} parameter d_model must be divisible by num_heads={num_heads}; got {d_model} (e.g. "
                          f"d_model={max(num_heads, d_model // num_heads * num_heads)} or "
                          f"num_heads={heads_dividing(d_model, num_heads)})")
    x = PositionalEncoding(positional, positional_base, name="positional_encoding")(x)
    x = layers.Dropout(dropout, name="input_dropout")(x)
    scores = None
    for block in range(num_blocks):
        encoder = TransformerEncoderBlock(d_model, num_heads, ff_dim, dropout, causal, norm, name=f"encoder_{block}")
        if residual_attention:
            x, _weights, scores = encoder(x, previous_scores=scores, return_attention_scores=True, return_scores=True)
        else:
            x, _weights = encoder(x, return_attention_scores=True)
    return x


# ----------------------------------------------------------------------------------------------------
# patch-transformer
# ----------------------------------------------------------------------------------------------------
def _build_patch_transformer(inputs, patch_length, patch_stride, d_model, num_heads, ff_dim, num_blocks, dropout,
                             norm, residual_attention, head_dropout, positional, positional_base):
    """PatchTST's encoder on tsattn's parts: patches as tokens, a linear embedding, the tutorial's positional
    encoding and encoder blocks, and a flatten head (every patch's vector reaches the forecast)."""
    length, stride, _ = patch_layout(int(inputs.shape[1]), patch_length, patch_stride)
    x = Patches(length, stride, name="patches")(inputs)  # (batch, patches, length * features)
    x = layers.Dense(d_model, name="patch_embedding")(x)  # (batch, patches, d_model)
    x = _encoder(x, "patch-transformer", num_heads, ff_dim, num_blocks, dropout, positional, positional_base,
                 norm=norm, residual_attention=residual_attention)
    x = layers.Flatten(name="flatten_patches")(x)  # (batch, patches * d_model)
    return layers.Dropout(head_dropout, name="head_dropout")(x) if head_dropout else x


# ----------------------------------------------------------------------------------------------------
# tft
# ----------------------------------------------------------------------------------------------------
def _build_tft(inputs, horizon, layout, hidden_size, num_heads, dropout, variable_dropout, variable_dropout_on,
               output_head):
    """Temporal Fusion Transformer (Lim et al. 2021) on tsattn's input layout: static covariates -> four context
    vectors (variable selection, enrichment, the LSTM's initial states); variable selection over the past inputs
    (target, past-observed, future-known, time index) and over the future-known inputs of the forecast steps; an
    LSTM encoder-decoder; a gated skip; static enrichment; interpretable multi-head attention of each forecast step
    over every earlier step; gated residual layers; the forecast steps' vectors, each read by one Dense shared by
    the steps (output_head=per-step, TFT's position-wise output) or flattened into the shared head (flatten;
    auto: per-step with future-known covariates, flatten without)."""
    from .layers import FusionInputs, GateAddNorm, GatedResidualNetwork, InterpretableAttention, VariableSelection

    if hidden_size % num_heads:
        raise ConfigError(f"tft parameter hidden_size must be divisible by num_heads={num_heads}; got {hidden_size} "
                          f"(e.g. hidden_size={max(num_heads, hidden_size // num_heads * num_heads)} or "
                          f"num_heads={heads_dividing(hidden_size, num_heads)})")
    window = int(inputs.shape[1])
    hist, futr, stat = layout
    past, future, static = FusionInputs(horizon, layout, name="fusion_inputs")(inputs)
    covariates_only = variable_dropout_on == "covariates"  # never drop the target (first) nor the time index (last)
    past_kept, future_kept = ((0, 1 + hist + futr), (futr,)) if covariates_only else ((), ())
    selection = enrichment = state = None
    if stat:
        encoded = VariableSelection(stat, hidden_size, dropout, variable_dropout, name="static_selection")(
            static, return_weights=True)[0]
        selection, enrichment, state_h, state_c = (
            GatedResidualNetwork(hidden_size, dropout, name=f"context_{part}")(encoded)
            for part in ("selection", "enrichment", "state_h", "state_c"))
        state = [state_h, state_c]

    def with_context(x, context):
        return x if context is None else [x, context]

    past_selected, _ = VariableSelection(2 + hist + futr, hidden_size, dropout, variable_dropout, past_kept,
                                         name="past_selection")(with_context(past, selection),
                                                                return_weights=True)  # (batch, window, hidden)
    future_selected, _ = VariableSelection(futr + 1, hidden_size, dropout, variable_dropout, future_kept,
                                           name="future_selection")(
        with_context(future, selection), return_weights=True)  # (batch, horizon, hidden)
    encoded, state_h, state_c = layers.LSTM(hidden_size, return_sequences=True, return_state=True,
                                            unroll=window <= UNROLL_MAX_WINDOW, name="encoder")(
        past_selected, initial_state=state)
    decoded = layers.LSTM(hidden_size, return_sequences=True, unroll=horizon <= UNROLL_MAX_WINDOW, name="decoder")(
        future_selected, initial_state=[state_h, state_c])
    temporal = GateAddNorm(hidden_size, dropout, name="lstm_gate")([
        layers.Concatenate(axis=1, name="lstm_steps")([encoded, decoded]),
        layers.Concatenate(axis=1, name="selected_steps")([past_selected, future_selected])])  # (batch, W + H, hidden)
    enriched = GatedResidualNetwork(hidden_size, dropout, name="static_enrichment")(with_context(temporal, enrichment))
    forecast_steps = layers.Cropping1D((window, 0), name="forecast_steps")(enriched)  # (batch, horizon, hidden)
    attended, _weights = InterpretableAttention(num_heads, hidden_size, dropout, name="fusion_attention")(
        [forecast_steps, enriched], return_attention_scores=True)  # weights: (batch, horizon, W + H)
    x = GateAddNorm(hidden_size, dropout, name="attention_gate")([attended, forecast_steps])
    x = GatedResidualNetwork(hidden_size, dropout, name="position_wise")(x)
    x = GateAddNorm(hidden_size, dropout, name="output_gate")([
        x, layers.Cropping1D((window, 0), name="temporal_forecast_steps")(temporal)])
    if output_head == "per-step" or (output_head == "auto" and futr):
        return x  # (batch, horizon, hidden): the shared head reads each step's vector with one Dense
    return layers.Flatten(name="flatten_steps")(x)  # (batch, horizon * hidden)


# ----------------------------------------------------------------------------------------------------
# nbeats
# ----------------------------------------------------------------------------------------------------
def _build_nbeats(inputs, units, layers, blocks, dropout):
    """N-BEATS generic: block k reads the residual window x_k, x_{k+1} = x_k - backcast_k, and adds the
    forecast W_k h_k. The sum of the blocks' forecasts is one Dense over the concatenated h_k, so the builder
    returns [h_1, ..., h_K] and the shared head (its Dense, skip path and quantiles) forms the forecast."""
    from keras import layers as layers_  # the parameter ``layers`` (per block) shadows the module's name here

    residual = layers_.Flatten(name="flatten")(inputs)  # (batch, window * features)
    size = residual.shape[-1]
    hidden = []
    for block in range(blocks):
        h = residual
        for layer in range(layers):
            h = layers_.Dense(units, activation="relu", name=f"block{block}_fc{layer}")(h)  # (batch, units)
            if dropout:
                h = layers_.Dropout(dropout, name=f"block{block}_dropout{layer}")(h)
        hidden.append(h)
        if block < blocks - 1:  # the last block's backcast would feed nothing
            backcast = layers_.Dense(size, name=f"block{block}_backcast")(h)  # (batch, window * features)
            residual = layers_.Subtract(name=f"block{block}_residual")([residual, backcast])
    return hidden[0] if blocks == 1 else layers_.Concatenate(name="block_outputs")(hidden)  # (batch, blocks * units)


BUILDERS = {
    "simple-rnn": _build_simple_rnn,
    "attention-rnn": _build_attention_rnn,
    "transformer": _build_transformer,
    "patch-transformer": _build_patch_transformer,
    "tft": _build_tft,
    "nbeats": _build_nbeats,
}


# ----------------------------------------------------------------------------------------------------
# Reading attention weights
# ----------------------------------------------------------------------------------------------------
def attention_layers(model: keras.Model) -> list[layers.Layer]:
    """The layers of a registered model that produce attention weights, in order."""
    from .layers import AdditiveAttention, BahdanauAttention, InterpretableAttention, LuongAttention

    kinds = (AdditiveAttention, BahdanauAttention, LuongAttention, TransformerEncoderBlock, InterpretableAttention)
    return [layer for layer in model.layers if isinstance(layer, kinds)]


def first_member(model: keras.Model) -> keras.Model:
    """The first member of a seed ensemble (``ensemble=k``), or the model itself."""
    members = [layer for layer in model.layers if isinstance(layer, keras.Model) and layer.name.startswith("member_")]
    return members[0] if members else model


def ensemble_members(model: keras.Model) -> list[keras.Model]:
    """Each member of an ensemble as a model of the ensemble's input (a shorter lookback reads its last steps),
    so members can be scored beside the ensemble on the same windows; [model] for a single model."""
    members = [layer for layer in model.layers if isinstance(layer, keras.Model) and layer.name.startswith("member_")]
    if not members:
        return [model]
    names = {layer.name for layer in model.layers}
    found = []
    for member in members:
        inputs = keras.Input(shape=model.input_shape[1:], name="window")
        index = member.name[len("member_"):]
        crop = f"lookback_{index}"
        x = model.get_layer(crop)(inputs) if crop in names else inputs
        found.append(keras.Model(inputs, member(x), name=member.name))
    return found


def attention_model(model: keras.Model) -> keras.Model | None:
    """A model mapping the same inputs to the attention weights of each attention layer, or None.

    For attention-rnn: one output (batch, window). For transformer: one (batch, heads, window, window)
    output per encoder block. For a seed ensemble (``ensemble=k``): the first member's. None for a baseline (no
    Keras model).
    """
    if model is None:
        return None
    model = first_member(model)
    found = attention_layers(model)
    if not found:
        return None
    outputs = [layer.output[1] for layer in found]
    return keras.Model(model.inputs, outputs, name=f"{model.name}_attention")



def read_attention(model: keras.Model, inputs) -> list | None:
    """The attention weights of every attention layer of ``model`` for ``inputs`` (windows, window, features): the
    one reader of attention (run plots, compare reports, ``Forecaster.attention_weights``). attention-rnn: one
    (windows, window) array; transformer: one (windows, heads, window, window) array per encoder block; None for a
    model without attention."""
    attention = attention_model(model)
    if attention is None:
        return None
    weights = attention.predict(inputs, verbose=0, batch_size=1024)
    return [np.asarray(w) for w in (weights if isinstance(weights, list) else [weights])]


def attention_per_lag(weights: list, model: keras.Model | None = None) -> np.ndarray:
    """(windows, window): the weight each window's forecast puts on each lag, summing to 1 over the window.

    attention-rnn: its weights. transformer: the last step's attention in the last block, mean over heads (what
    last-step pooling reads), so the two models' attention compare lag by lag. patch-transformer (``model`` has a
    ``patches`` layer): the attention each patch receives in the last block, mean over heads and the patches
    attending (its flatten head reads every patch), each patch's weight shared evenly by the steps it covers
    (:func:`attention_per_patch` gives the patches' own weights). tft: the forecast steps' attention over the
    window's steps, mean over heads (shared values) and forecast steps, as a share of the weight on the window (the
    rest is on earlier forecast steps; :func:`attention_per_step` gives all of it)."""
    last = weights[-1]
    if last.ndim == 2:
        return last
    if last.ndim == 3:  # tft: (windows, horizon, window + horizon)
        window = last.shape[2] - last.shape[1]
        lags = last[:, :, :window].mean(axis=1)
        return lags / lags.sum(axis=1, keepdims=True)
    patches = patches_layer(model)
    if patches is None:
        return last[:, :, -1, :].mean(axis=1)
    per_patch = attention_per_patch(weights)  # (windows, patches)
    count = patches.indices.shape[0]
    window = int(patches.indices.max()) + 1
    spread = np.zeros((count, window))
    for k, steps in enumerate(patches.indices):
        spread[k, steps] = 1.0 / patches.length
    lags = per_patch @ spread  # (windows, window)
    return lags / lags.sum(axis=1, keepdims=True)


def attention_per_step(weights: list) -> np.ndarray:
    """(windows, horizon, window + horizon): tft's attention of each forecast step (rows) over the window's steps and
    the forecast steps up to it (columns, oldest first), mean over heads; each row sums to 1."""
    last = weights[-1]
    if last.ndim != 3:
        raise ConfigError("per-step attention over past and future steps is tft's; this model attends over its window")
    return last


def attention_per_patch(weights: list) -> np.ndarray:
    """(windows, patches): the attention each patch receives in a patch transformer's last block, mean over heads
    and over the patches attending (sums to 1 over the patches)."""
    return weights[-1].mean(axis=(1, 2))


def patches_layer(model):
    """A patch transformer's ``Patches`` layer (its ``indices``: each patch's steps), or None for another model."""
    if model is None:
        return None
    member = first_member(model)
    names = {layer.name for layer in member.layers}
    return member.get_layer("patches") if "patches" in names else None

# ----------------------------------------------------------------------------------------------------
# Reading tft's variable selection
# ----------------------------------------------------------------------------------------------------
SELECTIONS = ("static_selection", "past_selection", "future_selection")  # tft's variable selection layers, by part
IMPORTANCE_PARTS = ("model", "past", "future", "static")  # variable_importance's parts, in its order


def selection_names(layout, covariates=None) -> dict:
    """The variables each of tft's selection networks weighs, by part ("static", "past", "future"), in input order:
    the target ``y``, the covariates by name (``covariates``: :class:`tsattn.covariates.Covariates`, or generic
    names from the layout alone), and the relative ``time index``."""
    hist, futr, stat = layout
    columns = covariates.columns if covariates is not None else \
        [f"past_{i + 1}" for i in range(hist)] + [f"future_{i + 1}" for i in range(futr)] + \
        [f"static_{i + 1}" for i in range(stat)]
    known = columns[hist:hist + futr] + ["time index"]
    return {"static": columns[hist + futr:], "past": ["y"] + columns[:hist] + known, "future": known}


def fusion_layer(model):
    """tft's interpretable attention layer (its weights: (batch, horizon, window + horizon)), or None for another
    model (the first member's for an ensemble)."""
    if model is None:
        return None
    from .layers import InterpretableAttention

    found = [layer for layer in first_member(model).layers if isinstance(layer, InterpretableAttention)]
    return found[0] if found else None


def read_variable_selection(model: keras.Model, inputs) -> dict | None:
    """tft's variable selection weights for ``inputs`` (windows, window, features), by part: "static" (windows,
    static), "past" (windows, window, variables), "future" (windows, horizon, variables); each sums to 1 over the
    variables. None for a model without variable selection (the first member's for an ensemble)."""
    if model is None:
        return None
    member = first_member(model)
    names = {layer.name for layer in member.layers}
    found = [name for name in SELECTIONS if name in names]
    if not found:
        return None
    outputs = [member.get_layer(name).output[1] for name in found]
    reader = keras.Model(member.inputs, outputs, name=f"{member.name}_selection")
    weights = reader.predict(inputs, verbose=0, batch_size=1024)
    weights = weights if isinstance(weights, list) else [weights]
    return {name.split("_")[0]: np.asarray(w) for name, w in zip(found, weights)}


def read_contributions(model: keras.Model, inputs) -> dict:
    """A forecast split into what each input column adds through the linear paths and what the network adds.

    ``inputs``: (windows, window, features), the network's input in its units (the target scaled, covariates
    standardised on the training part, so a covariate's term is measured from its training mean). Returns
    ``"linear"``: (windows, horizon, features) each column's exact term in the forecast: its slopes in the linear skip
    (and the covariate skip) times its values in the window; the target also gets the level (the last value of a
    relative or naive skip; the window's mean, put back by instance normalisation) and every inner term is
    de-normalised as the forecast is; ``"intercept"``: (windows, horizon) the skip paths' biases; ``"network"``:
    (windows, horizon) the rest of the forecast (the mean over a quantile head's quantiles), so the three add up to the
    forecast. The first member's for an ensemble."""
    member = first_member(model)
    names = {layer.name for layer in member.layers}
    probes = {"forecast": member.outputs[0]}
    for name in ("linear_skip", "covariate_skip"):  # the Dense layers' inputs: the (flattened) windows they read
        if name in names:
            probes[name] = member.get_layer(name).input
    for name in ("level", "instance_stats", "window_scale"):
        if name in names:
            probes[name] = member.get_layer(name).output
    reader = keras.Model(member.inputs, list(probes.values()), name=f"{member.name}_contributions")
    read = reader.predict(inputs, verbose=0, batch_size=1024)
    read = dict(zip(probes, [np.asarray(r, dtype=np.float64) for r in (read if isinstance(read, list) else [read])]))
    forecast = read["forecast"].mean(axis=-1) if read["forecast"].ndim == 3 else read["forecast"]
    count, window, features = np.shape(inputs)
    horizon = forecast.shape[1]
    # the skip path inside the normalisation (no forecast_with_skip): its forecast is de-normalised with the network's
    inner = "forecast_with_skip" not in names
    factor, shift = np.ones((count, 1)), None
    if inner and "instance_stats" in read:
        shift, factor = read["instance_stats"][:, :1], read["instance_stats"][:, 1:2]
    elif inner and "window_scale" in read:
        factor = read["window_scale"].reshape(count, 1)
    linear, intercept = np.zeros((count, horizon, features)), np.zeros((count, horizon))
    for name, first, scaled in (("linear_skip", 0, True), ("covariate_skip", 1, False)):
        if name not in read:
            continue
        kernel, bias = member.get_layer(name).get_weights()
        values = read[name].reshape(count, window, -1)
        columns = values.shape[-1]  # linear_skip: the target alone or every column; covariate_skip: the covariates
        terms = np.einsum("bwc,wch->bhc", values, kernel.reshape(window, columns, horizon).astype(np.float64))
        multiplier = factor if scaled else np.ones((count, 1))
        linear[:, :, first:first + columns] += terms * multiplier[:, :, None]
        intercept += bias[None, :] * multiplier
    if "level" in read:
        linear[:, :, 0] += read["level"] * factor
    if shift is not None:
        linear[:, :, 0] += shift
    return {"linear": linear, "intercept": intercept, "network": forecast - linear.sum(axis=-1) - intercept}


def variable_importance(model: keras.Model, inputs, names: dict) -> "pd.DataFrame":
    """A tidy frame of tft's variable importance for ``inputs`` (windows, window, features), ``names`` from
    :func:`selection_names`: one row per (part, variable), sorted by part then importance; each part sums to 1.

    Part "model", what the whole forecast took from each input: its share of the forecast's mean absolute
    contributions (:func:`read_contributions`): the input's exact term through the linear paths plus the network's
    remainder split by the input's mean selection weight over every step the selection networks weigh (the window's
    and the forecast steps'); a static input gets its linear term only (the network reads it through its context
    vectors, which the selection weights do not split). Parts "past", "future" and "static": the mean selection weight
    of each variable over the windows (and steps): what the network weighed, beside a linear path that may carry a
    driver the network then need not. None of it reads a model without variable selection (None then)."""
    import pandas as pd

    selection = read_variable_selection(model, inputs)
    if selection is None:
        return None
    columns = names["past"][:-1] + names["static"]  # the input's columns: target, past-observed, future-known, static
    variables = columns + ["time index"]
    weighed, steps = np.zeros(len(variables)), 0
    for part in ("past", "future"):
        if part in selection:
            weights = selection[part]  # (windows, steps, variables)
            weighed[[variables.index(name) for name in names[part]]] += weights.sum(axis=1).mean(axis=0)
            steps += weights.shape[1]
    weighed /= max(steps, 1)
    split = read_contributions(model, inputs)
    linear = np.append(np.abs(split["linear"]).mean(axis=(0, 1)), 0.0)  # the time index has no linear term
    network = float(np.abs(split["network"]).mean())
    total = linear.sum() + network
    shares = (linear + network * weighed) / total if total > 0 else weighed
    rows = [{"part": "model", "variable": name, "importance": float(value)} for name, value in zip(variables, shares)]
    for part in ("past", "future", "static"):
        if part not in selection:
            continue
        weights = selection[part]
        mean = weights.reshape(-1, weights.shape[-1]).mean(axis=0)
        rows += [{"part": part, "variable": name, "importance": float(value)}
                 for name, value in zip(names[part], mean)]
    frame = pd.DataFrame(rows, columns=["part", "variable", "importance"])
    order = {part: k for k, part in enumerate(IMPORTANCE_PARTS)}
    return frame.assign(_part=frame["part"].map(order)).sort_values(["_part", "importance"], ascending=[True, False]) \
        .drop(columns="_part").reset_index(drop=True)
