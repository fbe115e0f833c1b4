"""The loss registry: each loss sizes the head, builds its Keras loss, and the series-units losses (sMAPE, MAPE,
MASE) equal the metrics of the same name on the same forecasts."""

import numpy as np
import pytest

from tsattn import metrics as M
from tsattn.config import RunConfig, check_config
from tsattn.errors import ConfigError
from tsattn.layers import SeriesUnitsLoss
from tsattn.losses import LOSSES, get_loss, loss_quantiles


def test_every_loss_sizes_the_head_and_builds_a_keras_loss():
    for name, spec in LOSSES.items():
        quantiles = loss_quantiles(name, None, (80,))
        assert spec.output_width(6, quantiles) == (6 * 3 if name == "quantile" else 6)
        assert spec.keras_loss(quantiles) is not None
    with pytest.raises(ConfigError, match="loss must be one of"):
        check_config(RunConfig(loss="smapee"))


@pytest.mark.parametrize("kind", ["smape", "mape", "mase"])
def test_series_units_losses_equal_the_metrics(kind):
    rng = np.random.default_rng(0)
    actual = rng.uniform(50, 150, size=(8, 3))
    forecast = actual + rng.normal(0, 10, size=(8, 3))
    offset, scale, mase_scale = 40.0, 120.0, 7.5
    packed = np.concatenate([(actual - offset) / scale, np.tile([[offset, scale, mase_scale]], (8, 1))], axis=1)
    value = float(SeriesUnitsLoss(kind)(packed.astype("float32"), ((forecast - offset) / scale).astype("float32")))
    expected = M.forecast_metrics(actual.ravel(), forecast.ravel(), scale=mase_scale)[kind]
    assert value == pytest.approx(expected, rel=1e-4)


def test_a_series_units_loss_trains_end_to_end():
    from conftest import make_series
    from tsattn.harness import fit

    result = fit(RunConfig(model="simple-rnn", dataset=None, loss="smape", window=8, epochs=3, batch_size=16,
                           model_params={"units": 4}), series=make_series(120))
    history = result.history["loss"]
    assert np.isfinite(history).all() and history.iloc[-1] < history.iloc[0]
    assert "val_loss" in result.history  # early stopping reads the same sMAPE on the validation windows
    assert get_loss("mase").needs_scale and not get_loss("mse").needs_scale


@pytest.mark.parametrize("buffer", [None, 10])
def test_extras_travel_with_their_window_on_both_gather_paths(monkeypatch, buffer):
    """Each window's target carries its own extras, in the same shuffled order whether windows are gathered once
    or per batch, and above the shuffle buffer (a seeded permutation first)."""
    import tsattn.harness as H

    if buffer:
        monkeypatch.setattr(H, "SHUFFLE_BUFFER", buffer)
    scaled = np.arange(400, dtype=np.float32)
    starts = np.arange(0, 380, 3)
    extras = np.stack([starts, starts * 2, starts * 3], axis=1).astype(np.float32)  # names its window

    def epoch():
        dataset = H.make_dataset(scaled, starts, window=12, horizon=3, batch_size=16, shuffle_seed=5, extras=extras)
        return [(np.asarray(X), np.asarray(y)) for X, y in dataset]

    once = epoch()
    monkeypatch.setattr(H, "GATHER_ONCE_BYTES", 0)
    per_batch = epoch()
    for (X1, y1), (X2, y2) in zip(once, per_batch):
        np.testing.assert_array_equal(X1, X2)
        np.testing.assert_array_equal(y1, y2)
    for X, y in once:
        start = X[:, 0, 0]
        np.testing.assert_array_equal(y[:, :3], start[:, None] + 12 + np.arange(3))   # the targets after the window
        np.testing.assert_array_equal(y[:, 3:], np.stack([start, start * 2, start * 3], axis=1))


def test_a_series_units_model_saves_and_loads(tmp_path):
    from conftest import make_series
    from tsattn.forecaster import Forecaster

    f = Forecaster("simple-rnn", window=8, loss="mase", epochs=2, units=4).fit(make_series(100))
    g = Forecaster.load(f.save(tmp_path / "mase.tsattn"))
    np.testing.assert_allclose(g.predict(3), f.predict(3))


@pytest.mark.parametrize("name", ["mse", "mae", "huber", "smape", "mase", "quantile"])
def test_masked_targets_add_no_loss_and_no_gradient_at_masked_steps(name):
    """MaskedTargets: with every target known it is the loss itself; a masked step contributes 0 to the loss and
    nothing to the gradient, whatever its target holds."""
    import keras
    import tensorflow as tf

    from tsattn.layers import MaskedTargets

    spec = get_loss(name)
    quantiles = loss_quantiles(name, None, ())
    inner = spec.keras_loss(quantiles)
    rng = np.random.default_rng(1)
    target = rng.uniform(0.5, 1.5, size=(5, 4)).astype("float32")
    units = np.tile([[10.0, 100.0, 3.0]], (5, 1)).astype("float32") if spec.needs_scale else np.zeros((5, 0), "float32")
    width = (5, 4, len(quantiles)) if quantiles else (5, 4)
    prediction = tf.Variable(rng.uniform(0.5, 1.5, size=width).astype("float32"))
    mask = np.ones((5, 4), "float32")
    masked = MaskedTargets(inner, 4, spec.needs_scale)
    function = keras.losses.get(inner) if isinstance(inner, str) else inner

    def plain(y_true, y_pred):  # the loss itself, mean over the batch
        return float(np.mean(np.asarray(function(y_true, y_pred))))

    full = np.concatenate([target, units, mask], axis=1)
    assert float(masked(full, prediction)) == pytest.approx(plain(np.concatenate([target, units], 1), prediction),
                                                            rel=1e-6)
    mask[:, 2:] = 0.0
    garbage = target.copy()
    garbage[:, 2:] = 1e6  # what a masked step's target holds does not matter
    with tf.GradientTape() as tape:
        value = masked(np.concatenate([garbage, units, mask], axis=1), prediction)
    gradient = tape.gradient(value, prediction).numpy()
    assert np.all(gradient[:, 2:] == 0) and np.any(gradient[:, :2] != 0)
    known = np.concatenate([target[:, :2], units], axis=1) if spec.needs_scale else target[:, :2]
    if not quantiles:  # the known steps' loss over all 4 steps (the authors' mean over the whole horizon)
        assert float(value) == pytest.approx(plain(known, prediction[:, :2]) * 2 / 4, rel=1e-5)


def test_a_stacked_ensemble_trains_with_masked_targets():
    """masked_targets through Forecaster: a stacked ensemble (one loss per member, MemberLosses over MaskedTargets)
    trains, refits on everything, and forecasts every series, the shortest included."""
    import pandas as pd

    from tsattn import Forecaster

    frame = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2000-01-01", periods=n, freq="QS"),
                                     "y": np.sin(np.arange(n) / 3) * 10 + 50 + i}) for i, n in enumerate([12, 30])])
    f = Forecaster("nbeats", horizon=4, preset="nbeats-recipe", pad=True, masked_targets=True, sampled_steps=2,
                   epochs=1, ensemble_losses=["smape", "mse"], units=8).fit(frame, verbose=0)
    forecast = f.predict()
    assert len(forecast) == 8 and np.isfinite(forecast["nbeats"]).all()
