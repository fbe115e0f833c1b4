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
