import numpy as np
import pytest
import keras

from tsattn.errors import ConfigError
from tsattn.layers import Adam
from tsattn.models import MODELS, attention_model, get_model, get_spec, list_models

VARIANTS = [(name, {}) for name in MODELS] + [
    ("attention-rnn", {"attention": "bahdanau", "readout": "context+last"}),
    ("attention-rnn", {"attention": "luong-dot", "cell": "gru"}),
    ("attention-rnn", {"attention": "luong-general", "cell": "lstm"}),
    ("transformer", {"positional": "learned", "pooling": "average", "causal": True}),
    ("transformer", {"norm": "batch", "residual_attention": True, "num_blocks": 2}),
    ("patch-transformer", {"norm": "batch", "residual_attention": True, "num_heads": 2}),  # PatchTST's encoder
    ("simple-rnn", {"cell": "lstm", "skip": "none"}),
    ("nbeats", {"blocks": 1, "layers": 1, "units": 8, "skip": "linear", "center": "none"}),
    ("nbeats", {"dropout": 0.1, "skip": "none"}),
]


def test_registry_names():
    assert list_models() == ["simple-rnn", "attention-rnn", "transformer", "patch-transformer", "tft", "nbeats"]


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("window, features, horizon", [(2, 1, 1), (7, 3, 4)])
def test_builds_and_predicts_shape(name, window, features, horizon):
    model = get_model(name, window=window, features=features, horizon=horizon)
    out = model.predict(np.zeros((5, window, features), "float32"), verbose=0)
    assert out.shape == (5, horizon)
    assert model.count_params() > 0
    symbolic = model(keras.Input((window, features)))
    assert tuple(symbolic.shape) == (None, horizon)


@pytest.mark.parametrize("name, params", VARIANTS)
def test_one_training_step_lowers_loss(name, params):
    keras.utils.set_random_seed(0)
    t = np.arange(64, dtype="float32")
    series = 0.5 + 0.4 * np.sin(t / 3)
    X = np.stack([series[i:i + 8] for i in range(48)])[..., None]
    y = series[8:56][:, None]
    model = get_model(name, window=8, **params)
    model.compile(optimizer=Adam(1e-4), loss="mse")  # the harness' Adam (Keras' updates, a shorter trace)
    model.optimizer.build(model.trainable_variables)  # as the harness does: otherwise made while the step traces,
    before = model.evaluate(X, y, verbose=0)           # which then traces twice (tft: 14 s against 4)
    model.train_on_batch(X, y)
    after = model.evaluate(X, y, verbose=0)
    assert after < before


@pytest.mark.parametrize("name, params", VARIANTS)
def test_keras_file_round_trip(name, params, tmp_path):
    model = get_model(name, window=6, features=2, horizon=3, **params)
    x = np.random.default_rng(1).normal(size=(4, 6, 2)).astype("float32")
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)  # no custom_objects needed
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    attention = attention_model(loaded)
    if MODELS[name].attention is None:
        assert attention is None
    else:
        scores = attention.predict(x, verbose=0)
        scores = scores if isinstance(scores, list) else [scores]
        for s in scores:
            np.testing.assert_allclose(s.sum(axis=-1), 1.0, rtol=1e-5)


def test_tutorial_attention_rnn_parameter_count():
    model = get_model("attention-rnn", window=20, features=1, horizon=1, units=2, activation="tanh",
                      output_activation="tanh", skip="none", center="none")
    counts = {layer.name: layer.count_params() for layer in model.layers}
    assert (counts["rnn"], counts["attention"], counts["output"]) == (8, 22, 3)
    assert model.count_params() == 33


def test_attention_rnn_readout_context_and_last_adds_the_last_state_to_the_context():
    """readout=context+last: the head reads [context, last state]; with the context's rows of the head at zero the
    forecast is simple-rnn's head on the last state, with the last state's rows at zero it is the tutorial's."""
    import keras

    x = np.random.default_rng(1).normal(size=(5, 6, 1)).astype("float32")
    model = get_model("attention-rnn", window=6, horizon=2, units=3, readout="context+last", skip="none",
                      center="none")
    states = keras.Model(model.input, model.get_layer("rnn").output).predict(x, verbose=0)  # (5, 6, 3)
    weights = keras.Model(model.input, model.get_layer("attention").output[1]).predict(x, verbose=0)  # (5, 6)
    kernel, bias = model.get_layer("output").get_weights()  # (6, 2): the context's 3 rows, then the last state's
    context, last = slice(0, 3), slice(3, 6)
    for zeroed_rows, kept_rows, summary in ((context, last, states[:, -1]),
                                            (last, context, (states * weights[..., None]).sum(axis=1))):
        zeroed = kernel.copy()
        zeroed[zeroed_rows] = 0.0
        model.get_layer("output").set_weights([zeroed, bias])
        np.testing.assert_allclose(model.predict(x, verbose=0), summary @ kernel[kept_rows] + bias, rtol=1e-4,
                                   atol=1e-5)
    tutorial = get_model("attention-rnn", window=6, horizon=2, units=3, readout="context", skip="none", center="none")
    assert tutorial.count_params() + 3 * 2 == model.count_params()  # three more inputs to a head of two outputs


def test_tutorial_simple_rnn_hand_computation():
    # the SimpleRNN tutorial: linear activations, x = [1, 2, 3], two hidden units
    model = get_model("simple-rnn", window=3, units=2, activation="linear", output_activation="linear", skip="none",
                      center="none")
    rng = np.random.default_rng(3)
    wx, wh, bh = rng.normal(size=(1, 2)), rng.normal(size=(2, 2)), rng.normal(size=2)
    wy, by = rng.normal(size=(2, 1)), rng.normal(size=1)
    model.get_layer("rnn").set_weights([wx, wh, bh])
    model.get_layer("output").set_weights([wy, by])
    x = np.array([1.0, 2.0, 3.0])
    h1 = x[0] * wx + bh
    h2 = x[1] * wx + h1 @ wh + bh
    h3 = x[2] * wx + h2 @ wh + bh
    o3 = h3 @ wy + by
    np.testing.assert_allclose(model.predict(x.reshape(1, 3, 1), verbose=0), o3, rtol=1e-5)


def test_center_feeds_the_network_relative_values():
    model = get_model("simple-rnn", window=5, units=3, skip="linear")
    x = np.random.default_rng(0).normal(size=(4, 5, 1)).astype("float32")
    model.get_layer("linear_skip").set_weights([np.zeros((5, 1)), np.zeros(1)])
    shifted = x + 7.0  # a level the network never saw: its output is unchanged, only the skip sees levels
    np.testing.assert_allclose(model.predict(shifted, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)
    plain = get_model("simple-rnn", window=5, units=3, center="none", skip="linear")
    assert "relative_window" not in [layer.name for layer in plain.layers]


def test_linear_skip_is_an_autoregression_on_the_window():
    model = get_model("simple-rnn", window=4, units=3, skip="linear")
    assert model.get_layer("linear_skip").count_params() == 4 + 1
    x = np.random.default_rng(0).normal(size=(2, 4, 1)).astype("float32")
    network_only = model.get_layer("output").output
    before = model.predict(x, verbose=0)
    kernel = np.array([[0.5], [0.0], [0.0], [1.0]])
    model.get_layer("linear_skip").set_weights([kernel, np.array([0.25])])
    after = model.predict(x, verbose=0)
    np.testing.assert_allclose(after - before, x[:, :, 0] @ kernel + 0.25, rtol=1e-5, atol=1e-6)
    assert network_only is not None


@pytest.mark.parametrize("call, message", [
    (lambda: get_model("lstm", window=4), "unknown model 'lstm' \\(an LSTM is simple-rnn or attention-rnn with cell=lstm"),
    (lambda: get_model("AutoETS", window=4), "unknown model 'AutoETS'; available: simple-rnn, attention-rnn, transformer"),
    (lambda: get_model("simple-rnn", window=1), "window must be an integer in 2..100000 for model 'simple-rnn'; got 1"),
    (lambda: get_model("simple-rnn", window=4, horizon=0), "horizon must be an integer in 1..10000"),
    (lambda: get_model("transformer", window=4, d_model=30, num_heads=4),
     r"d_model must be divisible by num_heads=4; got 30 \(e.g. d_model=28 or num_heads=3\)"),
    (lambda: get_model("transformer", window=4, dropout=-0.5), "dropout must be a number in \\[0, 1\\); got -0.5"),
    (lambda: get_model("attention-rnn", window=4, attention="cosine"), "attention must be one of additive, bahdanau"),
    (lambda: get_model("simple-rnn", window=4, cell="transformer"), "cell must be one of rnn, lstm, gru; got 'transformer'"),
    (lambda: get_model("simple-rnn", window=4, unit=3), "no parameter\\(s\\) unit; it takes: activation, cell, center, covariate_path, dropout"),
    (lambda: get_model("simple-rnn", window=4, units=0), "units must be an integer in 1..4096; got 0"),
])
def test_invalid_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_specs_list_what_the_layers_implement():
    """specs.py (no Keras) names the choices; the builders and layers must implement exactly those."""
    from tsattn import specs
    from tsattn.layers import ATTENTION_KINDS, PositionalEncoding
    from tsattn.models import BUILDERS, CELLS

    assert set(BUILDERS) == set(specs.MODELS)
    assert set(CELLS) == set(specs.CELLS)
    assert set(ATTENTION_KINDS) == set(specs.ATTENTIONS)
    assert set(PositionalEncoding.MODES) == set(specs.POSITIONAL)


def test_listing_models_does_not_import_tensorflow():
    import subprocess
    import sys

    code = ("import sys; from tsattn.cli.main import main; from click.testing import CliRunner; "
            "r = CliRunner().invoke(main, ['models', '--json']); assert r.exit_code == 0, r.output; "
            "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_attention_plots_share_one_lag_order(tmp_path):
    """Both attention plots draw lag 1 (the most recent input) first: a weight on the last window step
    lands in the first column of the RNN heatmap and the first row and column of a transformer head map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tsattn import plots

    window = 5
    rnn = np.zeros((3, window))
    rnn[:, -1] = 1.0
    head = np.zeros((1, window, window))
    head[0, -1, -1] = 1.0
    captured = []
    original = plt.Figure.savefig

    def capture(fig, *args, **kwargs):
        captured.append([np.asarray(image.get_array()) for ax in fig.axes for image in ax.get_images()])
        return original(fig, *args, **kwargs)

    plt.Figure.savefig = capture
    try:
        plots.plot_attention_rnn(rnn, ["a", "b", "c"], tmp_path / "a.png", "rnn")
        plots.plot_transformer_heads([head], tmp_path / "h.png", "transformer")
    finally:
        plt.Figure.savefig = original
    rnn_image, head_image = captured[0][0], captured[1][0]
    assert rnn_image[:, 0].tolist() == [1.0, 1.0, 1.0] and rnn_image[:, 1:].sum() == 0
    assert head_image[0, 0] == 1.0 and head_image.sum() == 1.0


def test_nbeats_is_doubly_residual():
    """Each block but the last takes its backcast away from the window the next block reads, and the forecast is
    one Dense over every block's last hidden layer (the sum of the blocks' forecasts)."""
    model = get_model("nbeats", window=6, horizon=2, blocks=3, layers=2, units=5, skip="none", center="none")
    names = [layer.name for layer in model.layers]
    assert [n for n in names if n.endswith("_residual")] == ["block0_residual", "block1_residual"]
    assert "block2_backcast" not in names
    assert model.get_layer("output").input.shape[-1] == 3 * 5
    # a block whose backcast equals its input leaves the next block a zero window
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(3, 6, 1)).astype("float32")
    first = model.get_layer("block0_backcast")
    kernel, bias = first.get_weights()
    first.set_weights([np.zeros_like(kernel), np.zeros_like(bias)])
    residual = keras.Model(model.inputs, model.get_layer("block0_residual").output)
    np.testing.assert_allclose(residual.predict(x, verbose=0), x.reshape(3, 6), rtol=1e-6)


@pytest.mark.parametrize("model", ["nbeats", "simple-rnn"])
def test_naive_skip_forecasts_the_last_value_plus_the_network(model):
    """skip=naive (nbeats' default): with the output layer at zero the forecast is the window's last value at every
    step; the network then only adds the change."""
    network = get_model(model, window=6, horizon=3, units=4, skip="naive", center="none")
    output = network.get_layer("output")
    output.set_weights([np.zeros_like(w) for w in output.get_weights()])
    x = np.random.default_rng(1).normal(size=(4, 6, 1)).astype("float32")
    np.testing.assert_allclose(network.predict(x, verbose=0), np.repeat(x[:, -1, :1], 3, axis=1), rtol=1e-6)
    assert get_spec("nbeats").resolve({})["skip"] == "naive" and get_spec("simple-rnn").resolve({})["skip"] == "relative"


# ----------------------------------------------------------------------------------------------------
# patch-transformer
# ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("window", [2, 3, 7, 8, 12, 13, 16, 36, 126])
def test_automatic_patches_tile_every_window(window):
    from tsattn.layers import patch_layout

    length, stride, count = patch_layout(window, "auto", "auto")
    assert stride == length and length * count == window  # side by side, every step read once
    model = get_model("patch-transformer", window=window, horizon=2)
    indices = model.get_layer("patches").indices
    assert indices.shape == (count, length) and sorted(indices.ravel()) == list(range(window))


def test_patches_are_the_window_cut_oldest_first():
    from tsattn.layers import Patches

    x = np.arange(2 * 8 * 2, dtype="float32").reshape(2, 8, 2)  # two features
    patches = keras.ops.convert_to_numpy(Patches(4, 2)(x))  # (2, 3, 8): starts 0, 2, 4
    assert patches.shape == (2, 3, 8)
    np.testing.assert_array_equal(patches[1, 2], x[1, 4:8].reshape(-1))
    side_by_side = keras.ops.convert_to_numpy(Patches(4, 4)(x))  # (2, 2, 8): the reshape path, the same cut
    np.testing.assert_array_equal(side_by_side, x[:, [[0, 1, 2, 3], [4, 5, 6, 7]]].reshape(2, 2, 8))


@pytest.mark.parametrize("width, asked, proposed", [(32, 3, 2), (30, 4, 3), (64, 5, 4), (7, 2, 1), (12, 5, 4), (8, 9, 8)])
def test_a_head_count_that_does_not_divide_the_width_gets_the_nearest_that_does(width, asked, proposed):
    from tsattn.layers import heads_dividing

    assert heads_dividing(width, asked) == proposed and width % proposed == 0


@pytest.mark.parametrize("params, message", [
    ({"patch_length": 40}, r"patch_length \(40\) is longer than the window \(36\); use at most 36"),
    ({"patch_length": 4, "patch_stride": 5}, r"patch_stride \(5\) is longer than patch_length \(4\)"),
    ({"patch_length": 5}, r"a window of 36 is not tiled by patches of 5 every 5 steps .* use patch_stride=1"),
    ({"num_heads": 3}, r"d_model must be divisible by num_heads=3; got 64 \(e.g. d_model=63 or num_heads=2\)"),
])
def test_patch_settings_that_cannot_work_name_one_that_does(params, message):
    from tsattn.layers import patch_layout

    with pytest.raises(ConfigError, match=message):
        get_model("patch-transformer", window=36, horizon=4, **params)
    if "patch_length" in params and "patch_stride" not in params and params["patch_length"] <= 36:
        patch_layout(36, params["patch_length"], 1)  # the stride the message names works


def test_instance_normalisation_makes_forecasts_follow_level_and_scale():
    """normalise=instance: each window standardised by its own mean and deviation, the forecast de-standardised, so
    a x + b forecasts a f(x) + b whatever the weights (a series' level and units never reach them)."""
    x = np.random.default_rng(0).normal(size=(4, 12, 1)).astype("float32")
    for name in ("patch-transformer", "simple-rnn"):
        model = get_model(name, window=12, horizon=3, normalise="instance", skip="none", center="none")
        base = model.predict(x, verbose=0)
        np.testing.assert_allclose(model.predict(7 * x + 100, verbose=0), 7 * base + 100, rtol=1e-4, atol=1e-2)
    quantiles = get_model("patch-transformer", window=12, horizon=3, quantiles=(0.1, 0.5, 0.9))
    np.testing.assert_allclose(quantiles.predict(3 * x - 5, verbose=0), 3 * quantiles.predict(x, verbose=0) - 5,
                               rtol=1e-4, atol=1e-3)


def test_patch_attention_reads_per_patch_and_per_lag():
    """One reader: per patch, the attention each patch receives (mean over heads and attending patches, summing to
    1); per lag, each patch's weight shared by its steps (sums to 1 over the window)."""
    from tsattn.models import attention_per_lag, attention_per_patch, read_attention

    model = get_model("patch-transformer", window=12, horizon=2, num_blocks=2, num_heads=4)  # (the default is 1)
    x = np.random.default_rng(1).normal(size=(5, 12, 1)).astype("float32")
    weights = read_attention(model, x)
    assert [w.shape for w in weights] == [(5, 4, 6, 6)] * 2  # 6 patches of 2 steps, 4 heads, per block
    per_patch = attention_per_patch(weights)
    per_lag = attention_per_lag(weights, model)
    assert per_patch.shape == (5, 6) and per_lag.shape == (5, 12)
    np.testing.assert_allclose(per_patch.sum(axis=1), 1, rtol=1e-5)
    np.testing.assert_allclose(per_lag.sum(axis=1), 1, rtol=1e-5)
    np.testing.assert_allclose(per_lag[:, 0::2], per_patch / 2, rtol=1e-5)  # the first step of each patch


def test_the_recipe_keeps_a_models_own_normalisation():
    from tsattn.config import RunConfig

    assert RunConfig(model="patch-transformer").updated(preset="nbeats-recipe").resolved_model_params()[
        "normalise"] == "auto"
    assert RunConfig(model="tft").updated(preset="nbeats-recipe").resolved_model_params()["normalise"] == "instance"
    assert RunConfig(model="nbeats").updated(preset="nbeats-recipe").resolved_model_params()["normalise"] == "window"


# ----------------------------------------------------------------------------------------------------
# tft
# ----------------------------------------------------------------------------------------------------
def test_fusion_inputs_put_each_value_at_its_own_time():
    """tsattn's window holds a future-known value ``horizon`` rows ahead; tft's inputs put it back at its own time:
    past step t reads the value of time t (zero for the first ``horizon`` steps, whose values no window holds),
    forecast step j the value of time window + j; the target and past-observed columns stay at the past steps and
    the static columns come out once."""
    from tsattn.layers import FusionInputs

    window, horizon = 5, 2
    x = np.zeros((1, window, 4), dtype="float32")  # target, one past-observed, one future-known, one static
    x[0, :, 0] = np.arange(window)
    x[0, :, 1] = 10 + np.arange(window)
    x[0, :, 2] = 100 + np.arange(window) + horizon  # row r: the future-known value of time r + horizon
    x[0, :, 3] = 7
    past, future, static = (keras.ops.convert_to_numpy(t) for t in FusionInputs(horizon, (1, 1, 1))(x))
    assert past.shape == (1, window, 4) and future.shape == (1, horizon, 2) and static.shape == (1, 1)
    np.testing.assert_array_equal(past[0, :, 0], np.arange(window))
    np.testing.assert_array_equal(past[0, :, 1], 10 + np.arange(window))
    np.testing.assert_array_equal(past[0, :, 2], [0, 0, 102, 103, 104])
    np.testing.assert_array_equal(future[0, :, 0], [105, 106])
    index = np.concatenate([past[0, :, 3], future[0, :, 1]])  # the relative time index, rising, 0 at the origin
    assert np.all(np.diff(index) > 0) and index[window - 1] == 0
    assert static[0, 0] == 7


def test_tft_attention_is_causal_over_past_and_forecast_steps_and_selection_sums_to_one():
    from tsattn.models import (attention_per_lag, attention_per_step, read_attention, read_variable_selection,
                               selection_names, variable_importance)

    model = get_model("tft", window=6, features=5, horizon=3, layout=(1, 2, 1), hidden_size=8, num_heads=2)
    x = np.random.default_rng(0).normal(size=(4, 6, 5)).astype("float32")
    steps = attention_per_step(read_attention(model, x))
    assert steps.shape == (4, 3, 9)
    np.testing.assert_allclose(steps.sum(axis=-1), 1, rtol=1e-5)
    assert steps[:, 0, 7:].max() < 1e-6 and steps[:, 1, 8].max() < 1e-6  # no step reads a later one
    np.testing.assert_allclose(attention_per_lag(read_attention(model, x), model).sum(axis=1), 1, rtol=1e-5)
    selection = read_variable_selection(model, x)
    assert {k: v.shape for k, v in selection.items()} == {"static": (4, 1), "past": (4, 6, 5), "future": (4, 3, 3)}
    names = selection_names((1, 2, 1))
    assert names["past"] == ["y", "past_1", "future_1", "future_2", "time index"]
    assert names["future"] == ["future_1", "future_2", "time index"] and names["static"] == ["static_1"]
    frame = variable_importance(model, x, names)
    assert list(frame["part"].unique()) == ["model", "past", "future", "static"]
    assert list(frame.loc[frame["part"] == "model", "variable"].sort_values()) == sorted(
        ["y", "past_1", "future_1", "future_2", "static_1", "time index"])
    np.testing.assert_allclose(frame.groupby("part")["importance"].sum(), 1, rtol=1e-5)
    assert read_variable_selection(get_model("nbeats", window=6, horizon=3), x[:, :, :1]) is None


@pytest.mark.parametrize("settings", [
    {"skip": "linear", "normalise": "instance", "skip_units": "data"},  # tft's default with covariates
    {"skip": "linear", "normalise": "instance", "skip_units": "normalised", "quantiles": (0.1, 0.5, 0.9)},
    {"skip": "relative", "normalise": "window", "covariate_path": "outside"},
    {"skip": "naive", "normalise": "none"}])
def test_tft_contributions_are_each_columns_exact_term_in_the_forecast(settings):
    """With the network's output at zero, the forecast is the linear paths alone: read_contributions leaves no
    network remainder, and each covariate's term is exactly what the forecast loses when that column is zeroed (the
    kernel read in the window's (step, column) order); the terms, intercept and remainder add up to the forecast."""
    from tsattn.models import read_contributions

    settings = dict(settings)
    quantiles = settings.pop("quantiles", None)
    model = get_model("tft", window=6, features=4, horizon=3, layout=(1, 2, 0), hidden_size=8, num_heads=2,
                      quantiles=quantiles, **settings)
    rng = np.random.default_rng(1)
    for name in ("linear_skip", "covariate_skip"):
        if name in {layer.name for layer in model.layers}:
            layer = model.get_layer(name)
            layer.set_weights([rng.normal(size=w.shape).astype("float32") for w in layer.get_weights()])
    x = rng.normal(size=(5, 6, 4)).astype("float32") + 3
    whole = read_contributions(model, x)
    forecast = np.asarray(model.predict(x, verbose=0), dtype=np.float64)
    forecast = forecast.mean(axis=-1) if forecast.ndim == 3 else forecast
    np.testing.assert_allclose(whole["linear"].sum(axis=-1) + whole["intercept"] + whole["network"], forecast,
                               rtol=1e-5, atol=1e-5)
    output = model.get_layer("output")
    output.set_weights([np.zeros_like(w) for w in output.get_weights()])
    split = read_contributions(model, x)
    np.testing.assert_allclose(split["network"], 0, atol=1e-4)
    assert np.abs(split["linear"][:, :, 0]).max() > 0.1  # the target's own term (level or slopes)
    base = np.asarray(model.predict(x, verbose=0), dtype=np.float64)
    base = base.mean(axis=-1) if base.ndim == 3 else base
    for column in (1, 2, 3):
        zeroed = x.copy()
        zeroed[:, :, column] = 0
        without = np.asarray(model.predict(zeroed, verbose=0), dtype=np.float64)
        without = without.mean(axis=-1) if without.ndim == 3 else without
        if settings["skip"] == "naive":  # no slopes: no covariate has a linear term
            assert np.abs(split["linear"][:, :, column]).max() == 0
        else:
            np.testing.assert_allclose(base - without, split["linear"][:, :, column], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("quantiles", [None, (0.1, 0.5, 0.9)])
def test_tft_per_step_head_is_one_dense_shared_by_the_forecast_steps(quantiles):
    """output_head=per-step: each forecast step's output is the same Dense of that step's own vector (TFT's
    position-wise output), so the head holds hidden_size x outputs-per-step weights whatever the horizon; flatten
    reads every step's vector for every output."""
    width = 1 if quantiles is None else len(quantiles)
    x = np.random.default_rng(0).normal(size=(2, 8, 2)).astype("float32")
    for horizon in (2, 5):
        per_step = get_model("tft", window=8, features=2, horizon=horizon, layout=(0, 1, 0), hidden_size=8,
                             num_heads=2, quantiles=quantiles, output_head="per-step")
        flat = get_model("tft", window=8, features=2, horizon=horizon, layout=(0, 1, 0), hidden_size=8,
                         num_heads=2, quantiles=quantiles, output_head="flatten")
        assert per_step.get_layer("output").kernel.shape == (8, width)
        assert flat.get_layer("output").kernel.shape == (8 * horizon, width * horizon)
        expected = (2, horizon) if quantiles is None else (2, horizon, width)
        assert keras.ops.convert_to_numpy(per_step(x)).shape == expected == keras.ops.convert_to_numpy(flat(x)).shape
    # the default, auto: per-step with future-known covariates, flatten without (past-observed ones only too)
    assert get_model("tft", window=8, features=2, horizon=2, layout=(0, 1, 0)).get_layer("output").kernel.shape == \
        (32, 1)
    assert get_model("tft", window=8, features=2, horizon=2, layout=(1, 0, 0)).get_layer("output").kernel.shape == \
        (64, 2)
    assert get_model("tft", window=8, horizon=2).get_layer("output").kernel.shape == (64, 2)


@pytest.mark.parametrize("params, message", [
    ({"num_heads": 3}, r"hidden_size must be divisible by num_heads=3; got 32 \(e.g. hidden_size=30 or num_heads=2\)"),
    ({"hidden_size": 0}, "hidden_size must be an integer in 1..1024"),
])
def test_tft_settings_that_cannot_work_name_one_that_does(params, message):
    with pytest.raises(ConfigError, match=message):
        get_model("tft", window=8, horizon=2, **params)


def test_tft_without_enough_history_names_a_window_that_fits():
    import pandas as pd

    from tsattn import Forecaster
    from tsattn.errors import DataError

    series = pd.Series(np.arange(30.0), index=pd.date_range("2000-01", periods=30, freq="MS"))
    with pytest.raises(DataError, match=r"window 40 \+ horizon 3 needs at least 43 values but the series has 30; use a "
                                        r"window of at most 27 \(e.g. window=27\)"):
        Forecaster("tft", window=40, horizon=3, epochs=1).fit(series)


def test_layout_must_count_the_features():
    with pytest.raises(ConfigError, match=r"layout \(1, 1, 0\) must count the 1 features after the target"):
        get_model("tft", window=8, features=2, horizon=2, layout=(1, 1, 0))
