import numpy as np
import pandas as pd
import pytest
import keras

from conftest import TINY, TINY_PARAMS, make_series, registered_models
from tsattn.errors import ConfigError, TrainingError
from tsattn.config import PRESETS, RunConfig, check_config, preset_config
from tsattn.harness import fit, make_dataset
from tsattn.runs import predictions_frame, write_run


def tiny_config(model="simple-rnn", **changes):
    return RunConfig(model=model, model_params=dict(TINY_PARAMS[model]), dataset=None, **{**TINY, **changes})


@pytest.mark.parametrize("model", registered_models())
def test_fit_every_model_reports_metrics_and_baselines(model, small_series):
    result = fit(tiny_config(model), series=small_series)
    for part in ("train", "validation", "test"):
        block = result.metrics[part]
        for name in ("model", "naive", "seasonal_naive", "linear"):
            for key in ("mse", "rmse", "mae", "mape", "smape", "mase"):
                assert block[name][key] is not None and np.isfinite(block[name][key])
        assert set(block["scaled"]) == {"mse", "rmse"}
    assert result.season == 12  # monthly
    assert result.epochs_run == 3 and len(result.history) == 3
    test = result.forecasts["test"]
    origins = result.data.starts["test"] + result.data.window - 1
    np.testing.assert_array_equal(test.baselines["naive"][:, 0], small_series.to_numpy()[origins])
    np.testing.assert_allclose(test.actual[:, 0], small_series.to_numpy()[origins + 1])
    naive_rmse = np.sqrt(np.mean((test.actual - test.baselines["naive"]) ** 2))
    assert result.metrics["test"]["naive"]["rmse"] == pytest.approx(naive_rmse)


def test_same_seed_same_metrics_other_seed_differs(small_series):
    first = fit(tiny_config("attention-rnn"), series=small_series)
    again = fit(tiny_config("attention-rnn"), series=small_series)
    other = fit(tiny_config("attention-rnn", seed=1), series=small_series)
    assert first.metrics["test"]["model"] == again.metrics["test"]["model"]
    pd.testing.assert_frame_equal(first.history, again.history)
    assert first.metrics["test"]["model"]["rmse"] != other.metrics["test"]["model"]["rmse"]


def test_a_fit_leaves_no_gradient_function_and_graph_behind(small_series):
    """TensorFlow keeps each tf.custom_gradient's function, and with it the traced graph, until the process ends;
    Keras' optimizer registers one per compiled training function: 11-94 MB kept per fit
    (benchmarks/results/fit_memory.md). A fit releases those it registered, and the same seed still gives the same
    result after a release (the next fit traces its own)."""
    from tsattn._backend import _gradient_registry, custom_gradient_keys

    assert _gradient_registry() is not None  # where TensorFlow keeps them (else nothing here would be checked)
    before = custom_gradient_keys()
    first = fit(tiny_config("simple-rnn"), series=small_series)
    assert custom_gradient_keys() == before
    again = fit(tiny_config("simple-rnn"), series=small_series)
    pd.testing.assert_frame_equal(first.history, again.history)


def test_a_keras_model_trains_on_after_its_gradient_functions_are_released():
    """The release is safe for a model trained again: its traced step holds its gradient graph (same shapes), and a
    retrace (another batch size) registers its own."""
    from tsattn._backend import custom_gradient_keys, gradient_functions_released

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 4)).astype("float32"), rng.normal(size=(64, 1)).astype("float32")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    with gradient_functions_released():
        first = model.fit(x, y, batch_size=16, epochs=2, verbose=0).history["loss"]
    registered = custom_gradient_keys()
    later = model.fit(x, y, batch_size=16, epochs=3, verbose=0).history["loss"]  # the same traced step
    retraced = model.fit(x, y, batch_size=64, epochs=3, verbose=0).history["loss"]  # a new trace
    assert later[-1] < first[-1] and retraced[-1] < later[-1]
    assert len(custom_gradient_keys() - registered) >= 1  # the retrace registered its own (kept: outside the block)


def test_early_stopping_restores_best_weights(small_series):
    result = fit(tiny_config("simple-rnn", epochs=60, patience=2, learning_rate=0.05), series=small_series)
    assert result.epochs_run < 60
    best = result.history["val_loss"].min()
    assert result.best_epoch == int(result.history["val_loss"].idxmin())
    # the returned model is the best epoch's: its validation MSE equals the best logged val_loss
    assert result.metrics["validation"]["scaled"]["mse"] == pytest.approx(best, rel=1e-4)


def test_keep_start_keeps_the_start_when_no_epoch_beats_it_and_the_final_fit_trains_none(small_series):
    """keep_start: the starting weights (the least-squares start, the network's output at zero) compete with the
    trained epochs on the validation loss; a learning rate that only spoils the start keeps it (best epoch 0), and
    the final fit then trains no epoch. Without it the same trained epochs, the best of them kept."""
    settings = {"learning_rate": 0.3, "epochs": 4, "skip_init": "least-squares+zero-output", "final_fit": True}
    kept = fit(tiny_config("simple-rnn", keep_start=True, **settings), series=small_series)
    plain = fit(tiny_config("simple-rnn", **settings), series=small_series)
    start = kept.state.history.attrs["start_val_loss"]
    assert kept.best_epoch == 0 and start < kept.history["val_loss"].min()
    assert kept.history["val_loss"].equals(plain.history["val_loss"])  # the same training; only what is kept differs
    assert plain.best_epoch >= 1 and "start_val_loss" not in plain.state.history.attrs
    # the selection model is the start: its validation MSE is the start's loss, below every trained epoch's
    assert kept.metrics["validation"]["scaled"]["mse"] == pytest.approx(start, rel=1e-4)
    assert kept.metrics["validation"]["scaled"]["mse"] < plain.metrics["validation"]["scaled"]["mse"]
    assert kept.state.history.attrs["final_epochs"] == 0 and kept.state.history.attrs["final_loss"] == []
    assert np.isfinite(kept.forecasts["test"].predicted).all()
    from tsattn.plots import loss_figure  # the loss plot marks the start, not the best trained epoch

    labels = loss_figure(kept.history).axes[0].get_legend_handles_labels()[1]
    assert "validation loss at the start" in labels and "best validation epoch (0: the start, kept)" in labels


def test_multi_step_horizon_per_step_metrics(small_series):
    result = fit(tiny_config("simple-rnn", horizon=3), series=small_series)
    assert result.forecasts["test"].predicted.shape[1] == 3
    assert len(result.metrics["test"]["per_step"]) == 3
    frame = predictions_frame(result)
    assert list(frame.columns[:6]) == ["unique_id", "ds", "step", "actual", "predicted", "part"]  # long form


def test_non_finite_loss_stops_with_advice():
    huge = pd.Series(np.linspace(1e25, 3e25, 120))
    with pytest.raises(TrainingError, match="non-finite at epoch 1; lower the learning rate"):
        fit(tiny_config("simple-rnn", scaling="none"), series=huge)


def test_presets_reproduce_tutorial_setups():
    sun = preset_config("tutorial-sunspots")
    assert (sun.model, sun.window, sun.stride, sun.within_parts, sun.scaler_fit) == ("simple-rnn", 12, 12, True, "all")
    assert (sun.train_fraction, sun.validation_fraction, sun.epochs, sun.batch_size) == (0.8, 0.0, 20, 1)
    assert sun.model_params == {"units": 3, "activation": "tanh", "output_activation": "tanh", "skip": "none",
                                "center": "none"}
    fib = preset_config("tutorial-fibonacci", model="simple-rnn", epochs=2)
    assert (fib.model, fib.split, fib.shuffle_seed, fib.window, fib.epochs) == ("simple-rnn", "shuffled", 13, 20, 2)
    assert fib.model_params["units"] == 2
    assert set(PRESETS) == {"auto", "classic", "tutorial-sunspots", "tutorial-fibonacci", "tutorial-transformer",
                            "nbeats-recipe"}
    encoder = preset_config("tutorial-transformer")  # the tutorial's encoder, whatever the transformer's defaults
    assert (encoder.model, encoder.lr_schedule, encoder.dataset, encoder.window) == \
        ("transformer", "warmup-inverse-sqrt", "sunspots", 24)
    assert {key: encoder.model_params[key] for key in ("d_model", "num_blocks", "dropout", "normalise", "skip")} == \
        {"d_model": 32, "num_blocks": 2, "dropout": 0.1, "normalise": "none", "skip": "none"}
    recipe = preset_config("nbeats-recipe", model="attention-rnn", epochs=3, units=16)  # overrides after the preset
    assert (recipe.model, recipe.preset, recipe.loss, recipe.lookback, recipe.epochs) == \
        ("attention-rnn", "nbeats-recipe", "smape", 2, 3)
    assert recipe.model_params == {"normalise": "window", "units": 16}
    ensemble = preset_config("nbeats-recipe", ensemble_lookbacks=[2, 3])  # the members' lookbacks replace the preset's
    assert (ensemble.lookback, ensemble.ensemble_lookbacks) == (None, [2, 3])
    assert RunConfig(model="nbeats").updated(preset="nbeats-recipe", model="nbeats").to_dict() == \
        preset_config("nbeats-recipe", model="nbeats").to_dict()  # --preset and --set preset= agree
    with pytest.raises(ConfigError, match="unknown preset 'tutorial'; available: auto, classic, tutorial-sunspots"):
        preset_config("tutorial")


def test_tutorial_sunspots_preset_trains(tmp_path):
    result = fit(preset_config("tutorial-sunspots", epochs=1))
    assert result.data.count("train") == 187 and result.data.count("test") == 46
    assert result.data.count("validation") == 0 and result.best_epoch is None
    assert result.parameter_count == 3 * 3 + 3 * 1 + 3 + 4  # SimpleRNN(3) + Dense(1)
    assert 0 < result.metrics["test"]["scaled"]["rmse"] < 0.5


def test_updated_routes_model_parameters_and_refuses_unknown():
    config = RunConfig().updated(units=7, epochs=3, **{"model.attention": "bahdanau"})
    assert config.model_params == {"units": 7, "attention": "bahdanau"} and config.epochs == 3
    with pytest.raises(ConfigError, match="unknown setting 'unitz'"):
        RunConfig().updated(unitz=7)
    # another model's parameter: which models take it, first (it used to follow all sixty run settings)
    with pytest.raises(ConfigError, match=r"^'patch_length' is a parameter of patch-transformer, not of tft; tft "
                                          r"parameters: center, "):
        RunConfig(model="tft").updated(patch_length=4)
    with pytest.raises(ConfigError, match=r"^'units' is a parameter of simple-rnn, attention-rnn, nbeats, not of "
                                          r"auto; auto takes no model parameters"):
        RunConfig(model="auto").updated(units=4)
    with pytest.raises(ConfigError, match="epochs must be an integer in 1..100000; got 0"):
        fit(tiny_config(epochs=0), series=make_series())


def test_make_dataset_gathers_windows_without_copies():
    scaled = np.arange(20, dtype=np.float32)
    batches = list(make_dataset(scaled, np.array([0, 5, 10]), window=3, horizon=2, batch_size=2))
    X, y = batches[0]
    assert X.shape == (2, 3, 1) and y.shape == (2, 2)
    np.testing.assert_array_equal(X[1, :, 0], [5, 6, 7])
    np.testing.assert_array_equal(y[1], [8, 9])


def test_training_batches_are_made_with_tf_data_autotuning_off(monkeypatch):
    """Every pipeline the training reads (windows gathered once or per batch, epochs or sampled draws) has tf.data's
    autotuning off: with it on, half the patch-transformer trainings on M3 monthly waited ~55% longer (harness._untuned);
    off, the same batches in the same order."""
    import tensorflow as tf

    import tsattn.harness as H

    scaled = np.random.default_rng(2).random(300).astype(np.float32)
    starts = np.arange(0, 280, 2)

    def made(sampled=False, series=None):
        return make_dataset(scaled, starts, window=8, horizon=2, batch_size=16, shuffle_seed=1, sampled=sampled,
                            series=series)

    def first_epoch(dataset):  # each dataset fresh: a shuffled one reshuffles at its next iteration
        return [np.asarray(X) for X, _ in dataset]

    tuned = tf.data.Options()
    tuned.autotune.enabled = True
    for gathered in ("once", "per batch"):
        if gathered == "per batch":
            monkeypatch.setattr(H, "GATHER_ONCE_BYTES", 0)
        for dataset in (made(), made(sampled=True), made(sampled=True, series=starts // 70)):
            assert dataset.options().autotune.enabled is False, gathered
        untuned, with_tuning = first_epoch(made()), first_epoch(made().with_options(tuned))
        assert len(untuned) == len(with_tuning) == 9, gathered
        for a, b in zip(untuned, with_tuning):
            np.testing.assert_array_equal(a, b)


def test_make_dataset_same_batches_whether_windows_are_gathered_once_or_per_batch(monkeypatch):
    import tsattn.harness as H

    scaled = np.random.default_rng(1).random(400).astype(np.float32)
    starts = np.arange(0, 380, 3)

    def two_epochs():
        dataset = make_dataset(scaled, starts, window=12, horizon=3, batch_size=16, shuffle_seed=5)
        return [(np.asarray(X), np.asarray(y)) for _ in range(2) for X, y in dataset]

    once = two_epochs()
    monkeypatch.setattr(H, "GATHER_ONCE_BYTES", 0)  # every batch gathers its windows
    per_batch = two_epochs()
    assert len(once) == len(per_batch) == 2 * 8
    for (X1, y1), (X2, y2) in zip(once, per_batch):
        np.testing.assert_array_equal(X1, X2)
        np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(once[0][0], once[8][0])  # reshuffled each epoch


def _is_real_png(path):
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000
    pixels = mpimg.imread(path)
    assert pixels.shape[0] > 200 and pixels.shape[1] > 300 and pixels.std() > 0.01


@pytest.mark.parametrize("model, expected", [
    ("simple-rnn", {"forecast.png", "loss.png"}),
    ("attention-rnn", {"forecast.png", "loss.png", "attention.png"}),
    ("transformer", {"forecast.png", "loss.png", "attention.png", "attention_heads.png", "positional_encoding.png"}),
])
def test_write_run_files_and_plots(model, expected, small_series, tmp_path):
    result = fit(tiny_config(model), series=small_series)
    files = write_run(result, tmp_path / "run")
    assert {"metrics.json", "config.json", "model.keras", "history.csv", "predictions.csv", "tsattn.json"} <= set(files)
    assert {p.name for p in (tmp_path / "run" / "plots").iterdir()} == expected
    for name in expected:
        _is_real_png(tmp_path / "run" / "plots" / name)
    predictions = pd.read_csv(tmp_path / "run" / "predictions.csv")
    assert list(predictions.columns[:5]) == ["unique_id", "ds", "actual", "predicted", "part"]  # long form
    assert set(predictions["part"]) == {"train", "validation", "test"}
    reloaded = keras.saving.load_model(tmp_path / "run" / "model.keras")
    X = result.data.X("test")
    np.testing.assert_allclose(reloaded.predict(X, verbose=0), result.model.predict(X, verbose=0), rtol=1e-5, atol=1e-6)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_xla_auto_turns_on_for_long_epochs_only():
    from tsattn.errors import ConfigError
    from tsattn.config import RunConfig, check_config
    from tsattn.harness import XLA_MIN_STEPS, use_xla

    def xla(config, steps):
        network, _, training = config.parts()
        return use_xla(network, training, steps)

    assert not xla(RunConfig(), XLA_MIN_STEPS - 1) and xla(RunConfig(), XLA_MIN_STEPS)
    assert not xla(RunConfig(model="transformer"), 10**6)  # measured: not worth it there
    assert xla(RunConfig(jit_compile=True), 1) and not xla(RunConfig(jit_compile=False), 10**6)
    with pytest.raises(ConfigError, match="jit_compile must be true, false or auto; got 'maybe'"):
        check_config(RunConfig(jit_compile="maybe"))


def test_sampled_training_draws_batches_with_replacement_in_a_seeded_order():
    from conftest import make_series

    scaled = np.arange(100, dtype=np.float32)
    starts = np.arange(0, 80, 4)  # 20 windows

    def draws(seed):
        dataset = make_dataset(scaled, starts, window=5, horizon=2, batch_size=64, shuffle_seed=seed, sampled=True)
        return [np.asarray(X)[:, 0, 0] for X, _ in dataset.take(3)]

    first = draws(1)
    assert all(len(batch) == 64 for batch in first)                      # larger than the 20 windows: replacement
    assert set(np.concatenate(first)) <= set(starts.astype(np.float32))  # only training windows
    assert all(np.array_equal(a, b) for a, b in zip(first, draws(1)))    # seeded
    assert not np.array_equal(first[0], draws(2)[0])
    X, y = next(iter(make_dataset(scaled, starts, window=5, horizon=2, batch_size=8, shuffle_seed=1, sampled=True)))
    np.testing.assert_array_equal(np.asarray(y)[:, 0], np.asarray(X)[:, 0, 0] + 5)  # each target after its window
    result = fit(tiny_config(sampled_steps=7, epochs=3, batch_size=64, early_stopping=False), series=make_series())
    assert result.epochs_run == 3 and np.isfinite(result.history["loss"]).all()


def test_sampled_batches_are_the_per_draw_stream_of_earlier_versions_batched():
    """The draws are batched before they are mapped to windows (one tf.data call per batch, not per draw): the
    windows drawn are those of mapping each draw (the published figures' batches), pass after pass, both samplers."""
    import tensorflow as tf

    scaled = np.arange(1000, dtype=np.float32)
    starts = np.concatenate([np.arange(0, 900, 3), np.arange(900, 990)])
    series = (starts >= 900).astype(np.int64)
    count, batch = len(starts), 50
    by_window = tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True).map(
        lambda r: tf.math.floormod(r, count)).batch(batch)
    _, begin, sizes = np.unique(series, return_index=True, return_counts=True)

    def pick(a, b):
        group = tf.math.floormod(a, 2)
        return tf.gather(begin, group) + tf.math.floormod(b, tf.gather(sizes, group))

    by_series = tf.data.Dataset.zip((tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True),
                                     tf.data.Dataset.random(seed=5, rerandomize_each_iteration=True))).map(
        pick).batch(batch)
    for groups, expected in ((None, by_window), (series, by_series)):
        dataset = make_dataset(scaled, starts, window=5, horizon=2, batch_size=batch, shuffle_seed=4, sampled=True,
                               series=groups)
        for _ in range(2):  # a second pass draws anew, as before
            drawn = [np.asarray(X)[:, 0, 0] for X, _ in dataset.take(3)]
            want = [starts[np.asarray(i)].astype(np.float32) for i in expected.take(3)]
            assert all(np.array_equal(a, b) for a, b in zip(drawn, want))


def test_sampling_by_series_draws_each_series_equally_often_whatever_its_length():
    """sample_by="series": a series drawn uniformly, then one of its windows (N-BEATS' sampler); by window a long
    series is drawn in proportion to its windows."""
    scaled = np.arange(1000, dtype=np.float32)
    starts = np.concatenate([np.arange(0, 900), np.arange(900, 990)])  # series 0: 900 windows, series 1: 90
    series = (starts >= 900).astype(np.int64)

    def share_of_short(by_series):
        dataset = make_dataset(scaled, starts, window=5, horizon=2, batch_size=1000, shuffle_seed=3, sampled=True,
                               series=series if by_series else None)
        drawn = np.concatenate([np.asarray(X)[:, 0, 0] for X, _ in dataset.take(4)])
        assert set(drawn) <= set(starts.astype(np.float32))
        return np.mean(drawn >= 900)

    assert abs(share_of_short(True) - 0.5) < 0.05 and abs(share_of_short(False) - 90 / 990) < 0.03
    with pytest.raises(ConfigError, match="sample_by"):
        check_config(tiny_config(sample_by="uniform"))


def test_max_passes_caps_the_sampled_batches_by_the_number_of_training_windows():
    """max_passes: epochs x sampled_steps batches never draw more than max_passes x the training windows (fewer
    batches per epoch, at least one); without it, or when the cap is above the budget, sampled_steps is kept."""
    import math

    def steps(**changes):
        result = fit(tiny_config(epochs=2, batch_size=8, early_stopping=False, **changes), series=make_series())
        return result.state.history.attrs["optimizer_steps"] // 2, result.data.count("train")

    capped, windows = steps(sampled_steps=50, max_passes=1)
    assert capped == math.ceil(windows / 16) < 50
    assert steps(sampled_steps=5, max_passes=1000)[0] == steps(sampled_steps=5)[0] == 5
    with pytest.raises(ConfigError, match="max_passes"):
        check_config(tiny_config(max_passes=0))


@pytest.mark.parametrize("changes", [
    {"dropout": 0.2, "early_stopping": True, "patience": 1, "epochs": 8, "learning_rate": 1e-2},  # fewer final epochs
    {"dropout": 0.1, "sampled_steps": 4, "ensemble": 2, "early_stopping": False},  # members trained stacked
], ids=["early-stopping", "stacked-ensemble"])
def test_trainings_restart_earlier_compiled_models_to_the_weights_a_new_one_gets(changes, small_series, monkeypatch):
    """A training with the same traced step as an earlier one in the process (a fit's final fit, the same fit again)
    trains that training's compiled model, restarted from the new model's initial weights, dropout's random state and
    a fresh optimizer (no new trace): the same forecasts, to the bit, as newly compiled models, and no model a fit
    returned changes when a later training restarts its twin."""
    from tsattn import harness

    compiles = []
    original = keras.Model.compile
    monkeypatch.setattr(keras.Model, "compile", lambda self, *a, **k: compiles.append(1) or original(self, *a, **k))
    monkeypatch.setattr(harness, "TRAINED_GRAPHS", harness.TrainedGraphs())
    changes = dict(changes)
    dropout = changes.pop("dropout")  # nbeats with dropout: a random state to restart; it traces fastest
    config = tiny_config("nbeats", final_fit=True, level=[80], lr_schedule="halving", steps_per_execution=2,
                         **changes).updated(dropout=dropout)
    reused = fit(config, series=small_series)
    assert len(compiles) == 1  # the final fit restarted the first training's model
    kept = [w.copy() for w in reused.state.keras_model.get_weights()]
    again = fit(config, series=small_series)
    assert len(compiles) == 1 and harness.TRAINED_GRAPHS.restarts == 3  # the second fit compiled nothing
    monkeypatch.setattr(harness, "REUSE_TRAINED_GRAPH", False)
    compiles.clear()
    new = fit(config, series=small_series)
    assert len(compiles) == 2
    for other in (again, new):
        assert reused.metrics["test"] == other.metrics["test"]
        assert reused.metrics["validation"] == other.metrics["validation"]
        for model_of in (lambda r: r.state.keras_model, lambda r: r.state.selection[0].model):
            for a, b in zip(model_of(reused).get_weights(), model_of(other).get_weights(), strict=True):
                np.testing.assert_array_equal(a, b)
        assert reused.state.history.attrs["final_loss"] == other.state.history.attrs["final_loss"]
    for mine, before in zip(reused.state.keras_model.get_weights(), kept, strict=True):  # untouched by the later fits
        np.testing.assert_array_equal(mine, before)
    assert reused.state.selection[0].model is not reused.state.keras_model
    if "ensemble" not in changes:  # the final fit ran fewer epochs (the schedule's total set anew, not traced anew)
        assert reused.state.history.attrs["final_epochs"] < reused.epochs_run


def test_a_fit_traces_its_training_step_once(monkeypatch):
    """Keras' TensorFlow trainer (no distribution strategy) makes the optimizer's slots while it traces the first
    training step, and a tf.function that makes variables is traced again: every fit paid its largest trace twice
    (a tiny tft fit 30 s against 16 s). The harness builds the optimizer before fitting."""
    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer

    from tsattn import harness

    monkeypatch.setattr(harness, "TRAINED_GRAPHS", harness.TrainedGraphs())  # nothing compiled earlier to restart
    traces = []
    original = TensorFlowTrainer.train_step
    monkeypatch.setattr(TensorFlowTrainer, "train_step", lambda self, data: traces.append(1) or original(self, data))
    fit(tiny_config("nbeats", epochs=2, early_stopping=False), series=make_series())
    assert len(traces) == 1


@pytest.mark.parametrize("model, changes", [
    ("nbeats", {"lr_schedule": "halving", "clipnorm": 1.0, "clip_scope": "global"}),
    ("simple-rnn", {"lr_schedule": "warmup-cosine", "clipnorm": 0.5, "learning_rate": 1e-2}),
])
def test_the_lean_adam_trains_to_the_weights_of_keras_adam_to_the_bit(model, changes, monkeypatch):
    """tsattn's Adam (the step's scalars once, not once per weight: about half the trace of a small network's training
    step) trains to the same weights as Keras' Adam, to the bit, with clipping and each schedule, and takes its own
    path (Keras' per-variable update is never called)."""
    from keras.src.backend.tensorflow.optimizer import TFOptimizer

    from tsattn import harness, layers

    def weights(adam):
        monkeypatch.setattr(harness, "Adam", adam)
        monkeypatch.setattr(harness, "TRAINED_GRAPHS", harness.TrainedGraphs())
        result = fit(tiny_config(model, epochs=3, early_stopping=False, **changes), series=make_series())
        return result.state.keras_model.get_weights()

    calls = []
    original = TFOptimizer._backend_update_step
    monkeypatch.setattr(TFOptimizer, "_backend_update_step", lambda *a: calls.append(1) or original(*a))
    lean = weights(layers.Adam)  # the tiny network's weights all small: their moments in the shared vectors
    monkeypatch.setattr(layers.Adam, "SMALL", 8)  # the larger ones with moments of their own, as nbeats' are
    mixed = weights(layers.Adam)
    (trainer,) = harness.TRAINED_GRAPHS.models.values()  # the compiled twin of that training, kept for the next
    assert trainer.optimizer._large and trainer.optimizer._shared is not None  # both kinds of weight
    assert not calls
    keras_own = weights(keras.optimizers.Adam)
    assert calls
    for a, b, c in zip(lean, mixed, keras_own, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


@pytest.mark.parametrize("model, sampled", [("attention-rnn", None), ("nbeats", 3)])
def test_a_short_training_runs_one_step_a_call_and_trains_the_same_weights(model, sampled, small_series, monkeypatch):
    """At most SHORT_TRAINING steps in all: compiled with steps_per_execution=1 (no traced loop), which trains the same
    steps on the same batches as the loop does: the same weights to the bit; a longer training keeps the loop."""
    from tsattn import harness

    calls = []
    original = keras.Model.compile
    monkeypatch.setattr(keras.Model, "compile",
                        lambda self, *a, **k: calls.append(k["steps_per_execution"]) or original(self, *a, **k))
    monkeypatch.setattr(harness, "TRAINED_GRAPHS", harness.TrainedGraphs())
    config = tiny_config(model, epochs=3, early_stopping=False, sampled_steps=sampled, batch_size=8)
    short = fit(config, series=small_series)
    monkeypatch.setattr(harness, "SHORT_TRAINING", 0)
    looped = fit(config, series=small_series)
    assert calls == [1, config.steps_per_execution if sampled is None else sampled]
    assert short.state.history.attrs["optimizer_steps"] == looped.state.history.attrs["optimizer_steps"]
    for a, b in zip(short.state.keras_model.get_weights(), looped.state.keras_model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_sampled_epoch_trains_whole_calls_of_steps_per_execution_as_the_docs_say():
    """docs/cli.md: Keras runs an epoch of an endless stream in whole calls of steps_per_execution, so sampled_steps is
    rounded up to a multiple of it when it is more than one call (the recipe: 100 at 32 a call trains 128 an epoch);
    the halving schedule's thirds stay thirds of epochs x sampled_steps. Whoever makes the budget exact updates the
    docs (and reruns the figures measured this way)."""

    def per_epoch(**changes):
        result = fit(tiny_config(epochs=2, batch_size=8, early_stopping=False, **changes), series=make_series())
        return result.state.history.attrs["optimizer_steps"] // 2

    assert per_epoch(sampled_steps=5, steps_per_execution=2) == 6
    assert per_epoch(sampled_steps=5, steps_per_execution=5) == per_epoch(sampled_steps=5) == 5


def test_epoch_progress_eta_uses_the_pace_after_the_compiling_first_epoch(monkeypatch):
    """Issue 24: the first ETA said "<= 476 s" for an 11 s fit: the first epoch (tracing, compiling) set the pace."""
    import io

    from tsattn import harness

    clock = iter([0.0, 30.0, 31.0, 32.0])  # start; the first epoch takes 30 s, the next ones 1 s each
    monkeypatch.setattr(harness.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    progress = harness.EpochProgress(10, stream=stream, every=1)
    for epoch in range(3):
        progress.on_epoch_end(epoch, {"loss": 0.5})
    lines = stream.getvalue().splitlines()
    assert "ETA <=" not in lines[0] and "ETA after epoch 2" in lines[0]
    assert lines[1].endswith("ETA <= 8s") and lines[2].endswith("ETA <= 7s")


@pytest.mark.parametrize("model", ["simple-rnn", "linear"])
def test_the_final_fit_keeps_the_selection_and_retrains_on_the_validation_values(model, small_series):
    """final_fit: the validation part is scored (and the intervals calibrated) by the model fitted on the training part
    only, exactly what final_fit=false gives; the forecast model trained again, on training + validation values, for
    the epochs early stopping chose."""
    settings = {"early_stopping": True, "patience": 1, "epochs": 6, "level": [80, 95], "final_fit": True}
    config = tiny_config("simple-rnn", **settings) if model != "linear" else \
        RunConfig(model="linear", dataset=None, window=8, level=[80, 95], final_fit=True)
    final, only = fit(config, series=small_series), fit(config.updated(final_fit=False), series=small_series)
    assert only.state.selection is None and final.state.selection is not None
    assert final.metrics["validation"] == only.metrics["validation"]  # scored by the same (selection) model
    assert final.calibration["model"].state() == only.calibration["model"].state()
    assert final.metrics["test"]["model"]["rmse"] != only.metrics["test"]["model"]["rmse"]
    assert final.metrics["test"]["naive"] == only.metrics["test"]["naive"]
    if model != "linear":
        assert final.state.history.attrs["final_epochs"] == only.best_epoch
        assert len(final.state.history.attrs["final_loss"]) == only.best_epoch
        assert final.history.equals(only.history)  # the selection's history: loss and validation loss
    bounds = final.forecasts["test"].intervals["model"]
    assert (bounds[0.025] < bounds[0.1]).all()  # 95% wider than 80%


def test_a_tune_trial_never_final_fits(monkeypatch, small_series):
    """A trial is scored on the values it validates on: a final fit would train on them (and cost a second fit)."""
    import tsattn.harness as H
    from tsattn.panel import as_panel
    from tsattn.tuning import _validation_score

    seen = []
    real = H.fit_state
    monkeypatch.setattr(H, "fit_state", lambda config, *a, **k: seen.append(config.final_fit) or real(config, *a, **k))
    config = check_config(tiny_config().updated(preset="classic"))
    value = _validation_score(config, as_panel(small_series.iloc[:-24]), "rmse")
    assert np.isfinite(value) and seen == [False]


def test_a_statistical_model_is_scored_on_validation_and_test_only(small_series):
    """A model refitted at every origin (statsforecast's methods) skips the training part: one fit per training
    window would cost minutes on a panel (AutoETS on M3 monthly: over 10)."""
    pytest.importorskip("statsforecast")
    result = fit(RunConfig(model="theta", dataset=None, window=8, horizon=3), series=small_series)
    assert "train" not in result.metrics and "train" not in result.forecasts
    assert result.metrics["test"]["model"]["rmse"] > 0 and result.metrics["validation"]["model"]["rmse"] > 0


def test_a_stop_requested_inside_training_ends_the_steps_first_then_interrupts():
    """request_stop (the CLI's Ctrl-C) raises at once outside training; inside it only flags the request, so
    TensorFlow is never interrupted mid-step, and the fit raises KeyboardInterrupt once the steps end."""
    from tsattn import harness

    ended = []

    class StopAtFirstBatch(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if batch == 0:
                harness.request_stop()  # raising here would abort inside model.fit

        def on_train_batch_end(self, batch, logs=None):
            ended.append(batch)

    with pytest.raises(KeyboardInterrupt):
        fit(RunConfig(model="simple-rnn", dataset=None, window=6, epochs=3, early_stopping=False),
            series=make_series(60), progress=StopAtFirstBatch(), units=2)
    assert len(ended) == 1  # the steps under way ran to their end (one block of steps_per_execution), then it stopped
    assert harness._STOP == {"training": False, "requested": False}
    with pytest.raises(KeyboardInterrupt):
        harness.request_stop()


@pytest.mark.parametrize("settings", [
    {},                                                                      # epochs over seeded shuffled batches
    {"sampled_steps": 5, "sample_by": "series", "masked_targets": True},     # the N-BEATS sampler, overhanging targets
    {"split": "shuffled"},                                                   # the Fibonacci tutorial's split
], ids=["shuffled-batches", "sampler", "shuffled-split"])
def test_a_panel_fit_does_not_depend_on_the_order_its_series_come_in(settings):
    """Seeded draws go by sorted ids: the same series in another row order give the same forecasts (they did not:
    Tourism yearly, simple-rnn seed 0, 21.75 in the file's order against 22.10 sorted)."""
    from tsattn import Forecaster

    rng = np.random.default_rng(0)
    frames = {sid: pd.DataFrame({"unique_id": sid, "ds": pd.date_range("2000-01", periods=30 + 4 * k, freq="MS"),
                                 "y": 10 + np.cumsum(rng.normal(size=30 + 4 * k))})
              for k, sid in enumerate(["b", "c", "a"])}

    def forecasts(order):
        model = Forecaster("simple-rnn", horizon=3, seed=0, **TINY, **TINY_PARAMS["simple-rnn"], **settings)
        return model.fit(pd.concat([frames[sid] for sid in order]), verbose=0).predict().sort_values(["unique_id", "ds"])

    first = forecasts(["b", "c", "a"])
    for order in (["a", "b", "c"], ["c", "a", "b"]):
        again = forecasts(order)
        np.testing.assert_array_equal(again["simple-rnn"].to_numpy(), first["simple-rnn"].to_numpy())


def _windows(frame, horizon=4, window=8):
    from tsattn.config import resolve
    from tsattn.harness import windowed_or_fallback

    config, panel = resolve(RunConfig(model="simple-rnn", dataset=None, horizon=horizon, window=window), frame, None)
    return windowed_or_fallback(config, panel, with_test=True)[1]


def _panel(values: dict) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"unique_id": name, "ds": pd.date_range("2000-01-01", periods=len(v), freq="MS"),
                                    "y": v}) for name, v in values.items()], ignore_index=True)


def test_the_cross_series_start_keeps_a_fit_that_carries_to_other_series_and_shrinks_one_that_does_not():
    """skip_init="cross-series": the least-squares start shrunk by the ridge penalty that forecasts each series best
    when fitted on the others. Series sharing one seasonal pattern keep the plain fit (it carries over); one long
    series with a steady climb among short ones with none gets a shrunk start (the climb does not carry over);
    fewer than 3 series: the plain fit."""
    from tsattn.baselines import cross_series_coefficients, linear_coefficients

    rng = np.random.default_rng(0)
    t = np.arange(96)
    shared = _windows(_panel({f"s{k}": 50 + 20 * np.sin(2 * np.pi * (t + 3 * k) / 12) + rng.normal(0, 1, 96)
                              for k in range(5)}))
    coefficients, penalty = cross_series_coefficients(shared, relative=True)
    assert penalty <= 0.01
    plain = linear_coefficients(shared, shared.starts["train"], relative=True)
    assert np.abs(coefficients - plain).max() < 0.05 * np.abs(plain).max()
    climb = {"long": 10 + 0.002 * np.arange(160) ** 2 + rng.normal(0, 0.2, 160)}
    climb.update({f"flat{k}": 30 + rng.normal(0, 1, 40).cumsum() for k in range(4)})
    climbing = _windows(_panel(climb))
    coefficients, penalty = cross_series_coefficients(climbing, relative=True)
    assert penalty >= 1
    plain = linear_coefficients(climbing, climbing.starts["train"], relative=True)
    assert np.abs(coefficients).sum() < 0.5 * np.abs(plain).sum()
    two = _windows(_panel({"a": t * 1.0 + rng.normal(0, 1, 96), "b": 2.0 * t + rng.normal(0, 1, 96)}))
    coefficients, penalty = cross_series_coefficients(two, relative=True)
    assert penalty == 0
    np.testing.assert_allclose(coefficients, linear_coefficients(two, two.starts["train"], relative=True), atol=1e-6)


def test_the_recurrent_networks_start_a_small_panel_from_the_cross_series_fit_unless_told_otherwise():
    """The classic settings on a panel of 3 or more series without covariates start simple-rnn, attention-rnn and the
    transformer from the cross-series fit (said in the settings line), fitted alone or as auto's candidate; one
    series, covariates, another model or a named skip_init keep their start; named with covariates it is refused."""
    from tsattn.config import resolve, settings_text, settle
    from tsattn.selection import candidate_config

    rng = np.random.default_rng(0)
    panel_frame = _panel({f"s{k}": 50 + rng.normal(0, 1, 60).cumsum() for k in range(4)})
    config, panel = resolve(RunConfig(model="attention-rnn", dataset=None, horizon=4), panel_frame, None)
    settled = settle(config, panel)
    assert settled.preset == "classic" and settled.skip_init == "cross-series"
    assert "skip start cross-series" in settings_text(settled, panel, automatic=True)
    named = settle(*resolve(RunConfig(model="attention-rnn", dataset=None, horizon=4, skip_init="least-squares"),
                            panel_frame, None))
    assert named.skip_init == "least-squares" and "cross-series" not in settings_text(named, panel, automatic=True)
    assert settle(*resolve(RunConfig(model="nbeats", dataset=None, horizon=4), panel_frame, None)).skip_init == "auto"
    assert settle(*resolve(RunConfig(model="transformer", dataset=None, horizon=4), panel_frame,
                           None)).skip_init == "cross-series"
    auto = settle(*resolve(RunConfig(model="auto", dataset=None, horizon=4), panel_frame, None))
    assert [candidate_config(auto, name, panel).skip_init for name in ("attention-rnn", "simple-rnn", "nbeats")] == \
        ["cross-series", "cross-series", "auto"]
    named_auto = settle(*resolve(RunConfig(model="auto", dataset=None, horizon=4, skip_init="least-squares"),
                                 panel_frame, None))
    assert candidate_config(named_auto, "attention-rnn", panel).skip_init == "least-squares"
    driven = panel_frame.assign(x=rng.normal(0, 1, len(panel_frame)))
    assert settle(*resolve(RunConfig(model="simple-rnn", dataset=None, horizon=4, hist_exog=["x"]), driven,
                           None)).skip_init == "auto"
    with pytest.raises(ConfigError, match="^skip_init=cross-series .* with covariates use skip_init=least-squares"):
        check_config(RunConfig(model="simple-rnn", dataset=None, horizon=4, hist_exog=["x"], skip_init="cross-series"))
    one = panel_frame[panel_frame["unique_id"] == "s0"]
    assert settle(*resolve(RunConfig(model="simple-rnn", dataset=None, horizon=4), one, None)).skip_init == "auto"
    result = fit(RunConfig(model="simple-rnn", dataset=None, horizon=4, epochs=2, window=8), series=panel_frame)
    assert result.history.attrs["skip_penalty_chosen"] in {"0", "0.01", "0.1", "1", "10", "zero start"}
