import math

import numpy as np
import pytest

from tsattn import metrics as M


def test_forecast_metrics_hand_computed():
    actual = np.array([1.0, 2.0, 0.0, 4.0])
    predicted = np.array([2.0, 2.0, 1.0, 2.0])
    scale = M.naive_scale([1.0, 3.0, 2.0, 6.0])  # |2| |1| |4| -> 7/3
    assert scale == pytest.approx(7 / 3)
    result = M.forecast_metrics(actual, predicted, scale)
    assert result["mse"] == pytest.approx(1.5)
    assert result["rmse"] == pytest.approx(math.sqrt(1.5))
    assert result["mae"] == pytest.approx(1.0)
    assert result["mape"] == pytest.approx(50.0)  # the zero actual is skipped: (1 + 0 + 0.5) / 3
    assert result["mape_count"] == 3
    assert result["smape"] == pytest.approx((2 / 3 + 0 + 2 + 4 / 6) / 4 * 100)
    assert result["mase"] == pytest.approx(3 / 7)
    assert M.forecast_metrics(actual, predicted)["mase"] is None


def test_metrics_edge_cases():
    zeros = M.forecast_metrics(np.zeros(3), np.zeros(3), scale=1.0)
    assert zeros["mape"] is None and zeros["smape"] == 0 and zeros["rmse"] == 0
    huge = M.forecast_metrics(np.array([1e200, 2e200]), np.array([0.0, 0.0]))
    assert huge["mse"] is None  # overflows float64: reported as missing, not inf
    assert huge["rmse"] == pytest.approx(math.sqrt((1 + 4) / 2) * 1e200)
    assert M.scaled_metrics([0.0, 1.0], [0.5, 1.0]) == {"mse": 0.125, "rmse": pytest.approx(math.sqrt(0.125))}
    steps = [M.forecast_metrics(np.array([1.0, 3.0]), np.array([1.0, 3.0])),
             M.forecast_metrics(np.array([2.0, 4.0]), np.array([0.0, 0.0]))]  # per step ahead
    assert steps[0]["rmse"] == 0 and steps[1]["mae"] == 3


def test_baselines():
    values = np.arange(30.0)
    origins = np.array([23, 25])
    np.testing.assert_array_equal(M.naive_forecast(values, origins, 2), [[23, 23], [25, 25]])
    np.testing.assert_array_equal(M.seasonal_naive_forecast(values, origins, 3, 12), [[12, 13, 14], [14, 15, 16]])
    long = M.seasonal_naive_forecast(values, np.array([25]), 14, 12)
    assert long[0, 12] == 14 and long[0, 13] == 15  # steps 13 and 14 reach back two seasons
    early = M.seasonal_naive_forecast(values, np.array([3]), 1, 12)
    assert np.isnan(early[0, 0])
    X = np.random.default_rng(0).normal(size=(50, 3, 1))
    y = X[:, :, 0] @ np.array([[0.5], [-1.0], [2.0]]) + 3.0
    coefficients = M.fit_linear_autoregression(X, y)
    np.testing.assert_allclose(coefficients.ravel(), [0.5, -1.0, 2.0, 3.0], atol=1e-10)
    np.testing.assert_allclose(M.predict_linear_autoregression(coefficients, X), y, atol=1e-10)


@pytest.mark.parametrize("freq, season", [("MS", 12), ("ME", 12), ("M", 12), ("D", 7), ("h", 24), ("QS-OCT", 4),
                                          ("W-SUN", 52), ("YS-JAN", 1), (None, 1), ("2D", 1), ("BQE-DEC", 4),
                                          ("BQS-JAN", 4), ("BYE-DEC", 1), ("15min", 96), ("30min", 48), ("min", 60),
                                          ("s", 60), ("H", 24), ("B", 5), ("2MS", 6), ("nonsense", 1)])
def test_season_from_frequency(freq, season):
    assert M.season_from_frequency(freq) == season


def test_mase_scale_at_rounding_level_falls_back_instead_of_dividing_by_noise():
    """Found by a user-path check: an exactly periodic series (50 + 5 cos(2 pi t / 12)) has seasonal differences of
    ~1e-15, and MASE divided by them (409,378,118,280,107.5 in tsattn fit's table); such a scale is zero, so the lag-1
    scale is used as for an exact zero, and a series constant up to rounding gets none (MASE undefined)."""
    t = np.arange(48)
    periodic = 50 + 5 * np.cos(2 * np.pi * t / 12)
    seasonal = np.abs(periodic[12:] - periodic[:-12]).mean()
    assert 0 < seasonal < 1e-12  # the rounding noise the old scale divided by
    scale = M.insample_scale(periodic, np.array([0, 48]), np.array([48]), 12)
    assert scale[0] == pytest.approx(np.abs(np.diff(periodic)).mean())
    flat = np.tile([0.1, np.nextafter(0.1, 1.0)], 15)  # constant but for the last bit
    assert 0 < np.abs(np.diff(flat)).mean() < 1e-15
    assert M.insample_scale(flat, np.array([0, 30]), np.array([30]), 12)[0] == 0.0
    exact = np.arange(24.0) % 12  # an exact seasonal zero: the lag-1 scale, as before
    assert M.insample_scale(exact, np.array([0, 24]), np.array([24]), 12)[0] == pytest.approx(np.abs(np.diff(exact)).mean())
