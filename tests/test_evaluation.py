"""Evaluation and the shared model interface, on data small enough to check by hand: baselines' forecasts,
scoring of every part, conformal calibration, the typed batch, and a baseline's state round trip."""

import numpy as np
import pandas as pd
import pytest

from tsattn.baselines import Capabilities, LinearAR, Naive, SeasonalNaive, StatisticalModel, from_state
from tsattn.evaluation import calibrate, origins_of, score_windows
from tsattn.intervals import series_scale
from tsattn.windows import Scaler, SplitSpec, gather_batch, window_panel


def two_series():
    """a: 0, 1, ..., 23 (a line); b: 100 + a season of 4 repeated (100, 101, 102, 103, 100, ...)."""
    stamps = pd.date_range("2000-01-01", periods=24, freq="MS")
    return pd.DataFrame({"unique_id": ["a"] * 24 + ["b"] * 24, "ds": list(stamps) * 2,
                         "y": list(np.arange(24.0)) + [100.0 + i % 4 for i in range(24)]})


def windowed(window=4, horizon=2):
    return window_panel(two_series(), window, horizon, split=SplitSpec("holdout", holdout=4), scaling="minmax")


def test_naive_and_seasonal_naive_read_only_their_own_series():
    data = windowed()
    values = data.panel.values
    origins, first, series = origins_of(data, "test")
    naive = Naive(2).forecast(values, origins, first, series, data.scaler)
    np.testing.assert_array_equal(naive, np.repeat(values[origins][:, None], 2, axis=1))
    seasonal = SeasonalNaive(2, season=4).forecast(values, origins, first, series, data.scaler)
    b = series == 1
    np.testing.assert_array_equal(seasonal[b], data.y("test", scaled=False)[b])  # series b repeats every 4 steps


def test_linear_ar_is_exact_on_a_line_and_round_trips_through_its_state():
    data = windowed()
    model = LinearAR(window=4, horizon=2, fit="per-series").fit(data)  # pooled would mix in series b
    origins, first, series = origins_of(data, "test")
    a = series == 0
    forecast = model.forecast(data.panel.values, origins, first, series, data.scaler)
    np.testing.assert_allclose(forecast[a], data.y("test", scaled=False)[a], atol=1e-6)
    again = from_state(model.state())
    np.testing.assert_allclose(again.forecast(data.panel.values, origins, first, series, data.scaler), forecast)


def test_score_windows_scores_every_model_on_the_same_targets():
    data = windowed()

    class LastValue(Naive):  # the model under evaluation (the key "model"), here a naive forecast
        key = "model"

    evaluation = score_windows(LastValue(2), [SeasonalNaive(2, 4)], data, season=4)
    test = evaluation.forecasts["test"]
    np.testing.assert_array_equal(test.actual, data.y("test", scaled=False))
    frame = evaluation.frame
    smape = frame[(frame["part"] == "test") & (frame["metric"] == "smape")].set_index(["series", "model"])["value"]
    assert smape[("b", "seasonal_naive")] == 0.0                        # b is exactly seasonal
    mean = evaluation.metrics["test"]["seasonal_naive"]["smape"]
    assert mean == pytest.approx(smape.xs("seasonal_naive", level="model").mean())
    # the MASE denominator: in-sample seasonal-naive MAE over the 20 values before the test part
    assert evaluation.mase_scale[0] == pytest.approx(4.0)               # a line: |y_t - y_{t-4}| = 4
    # b is exactly seasonal (MAE 0), so the lag-1 MAE stands in: 19 steps of 1, 1, 1, 3, ... sum to 27
    assert evaluation.mase_scale[1] == pytest.approx(27 / 19)


def test_calibration_scores_validation_errors_in_the_series_scale():
    data = windowed()
    scale = series_scale(np.array([4.0, 1.0]), data.scaler.scale)
    data.interval_scale = "insample"  # the training part's scale, one per series
    calibration = calibrate(Naive(2), data, scale, season=1)
    assert list(calibration.methods) == ["conformal"]  # no quantiles of its own: no quantile calibration
    conformal = calibration.get("conformal")
    origins, first, series = origins_of(data, "validation")
    errors = np.abs(data.y("validation", scaled=False) - data.panel.values[origins][:, None]) / scale[series][:, None]
    for step, scores in enumerate(conformal.state()["scores"]):  # per step ahead: every score, sorted
        np.testing.assert_allclose(scores, np.sort(errors[:, step]))
    data.interval_scale = "recent"  # each window's own scale: the last 4 one-step changes up to its origin
    recent = calibrate(Naive(2), data, scale, season=1)
    assert recent.scale == "recent"
    values = data.panel.values
    own = np.array([np.mean(np.abs(np.diff(values[max(f, o - 4):o + 1]))) for o, f in zip(origins, first)])
    errors = np.abs(data.y("validation", scaled=False) - values[origins][:, None]) / own[:, None]
    for step, scores in enumerate(recent.get("conformal").state()["scores"]):
        np.testing.assert_allclose(scores, np.sort(errors[:, step]))


def test_gather_batch_scales_per_series_and_has_empty_covariate_slots():
    values = np.arange(10.0)
    scaler = Scaler("minmax", offset=np.array([0.0, 5.0]), scale=np.array([2.0, 5.0]))
    batch = gather_batch(values, np.array([0, 5]), window=3, horizon=2, series=np.array([0, 1]), scaler=scaler)
    np.testing.assert_allclose(batch.insample_y[:, :, 0], [[0, 0.5, 1.0], [0, 0.2, 0.4]])
    np.testing.assert_allclose(batch.target, [[1.5, 2.0], [0.6, 0.8]])
    assert batch.hist_exog.shape == (2, 3, 0) and batch.futr_exog.shape == (2, 3, 0) and batch.stat_exog.shape == (2, 0)
    assert batch.features == 1 and batch.network_input().shape == (2, 3, 1)
    np.testing.assert_array_equal(batch.scale, [2.0, 5.0])
    forecast_only = gather_batch(values, np.array([0]), window=3, with_target=False)
    assert forecast_only.target is None


def test_capabilities_say_what_each_model_does():
    assert Naive(1).capabilities == Capabilities()
    assert StatisticalModel("theta", 1, 1).capabilities.scope == "local"
    assert StatisticalModel("theta", 1, 1).capabilities.scored_on == ("test",)
    assert all(not model.capabilities.covariates for model in (Naive(1), SeasonalNaive(1, 4)))
    assert LinearAR(4).capabilities.covariates == ("hist", "futr", "stat")  # an ARX model with them


def test_network_forecasts_do_not_depend_on_how_windows_are_chunked():
    """Forecasts of many windows go through the traced graph in chunks; chunk edges change nothing. A misplaced
    chunk edge moves a forecast by the size of the data; float32 kernels chosen by batch size move it by a few
    units in the last place (once past rtol 1e-6 on an AVX2 EPYC), so the tolerance is a few ulp of the scale."""
    from tsattn.baselines import NetworkModel
    from tsattn.models import get_model

    data = windowed()
    model = NetworkModel(get_model("simple-rnn", window=4, horizon=2, units=3), "simple-rnn", 4, 2)
    origins, first, series = origins_of(data, "train")
    whole = model._outputs(data.panel.values, origins, first, series, data.scaler)
    for chunk_size in (1, 3, len(origins) - 1):
        np.testing.assert_allclose(model._outputs(data.panel.values, origins, first, series, data.scaler, chunk_size),
                                   whole, rtol=1e-5, atol=1e-5 * np.abs(whole).max())


def test_a_backtest_on_series_not_seen_in_fit_scores_mase_on_their_own_past():
    """MASE needs each series' in-sample scale; a series the model never saw had none, so a backtest (or
    evaluation) of a fitted model on other series reported MASE as n/a. Now its scale is M4's on its own values up
    to its first scored origin, nothing after it; the fitted series keep their fit-time scale."""
    import tsattn

    def monthly(uid, n, seed, start="2000-01-01"):
        rng = np.random.default_rng(seed)
        values = 50 + 10 * np.sin(2 * np.pi * np.arange(n) / 12) + rng.normal(0, 1 + seed, n).cumsum()
        return pd.DataFrame({"unique_id": uid, "ds": pd.date_range(start, periods=n, freq="MS"), "y": values})

    fitted = tsattn.Forecaster("naive", horizon=1).fit(pd.concat([monthly("a", 60, 0), monthly("b", 60, 1)]),
                                                        verbose=0)
    others = pd.concat([monthly("c", 48, 2, "2010-01-01"), monthly("d", 56, 3, "2009-01-01")], ignore_index=True)
    table = fitted.backtest(others, start=0.75)
    by_series = pd.DataFrame(table.attrs["metrics_by_series"])
    mase = by_series[(by_series["model"] == "model") & (by_series["metric"] == "mase")].set_index("series")["value"]
    assert mase.notna().all() and table.attrs["metrics"]["model"]["mase"] is not None
    for uid, rows in table.groupby("unique_id"):
        y = others.loc[others["unique_id"] == uid, "y"].to_numpy()
        past = y[:int(np.argmax(others.loc[others["unique_id"] == uid, "ds"].to_numpy() == rows["origin"].min())) + 1]
        scale = np.mean(np.abs(past[12:] - past[:-12]))  # seasonal naive, season 12, on values up to the origin
        np.testing.assert_allclose(mase[uid], np.mean(np.abs(rows["actual"] - rows["predicted"])) / scale, rtol=1e-6)


def test_a_series_not_seen_in_fit_is_scaled_on_its_values_up_to_its_first_origin_only():
    """Found while checking backtests of panels: a global model scored on a series it never saw (backtest, evaluate)
    min-max scaled that series on all its values, those after the origins too, so its forecast from 2001-08 changed
    when values in 2005 did. Its scaler now reads its values up to its first scored origin, as its MASE scale does."""
    import tsattn

    rng = np.random.default_rng(0)
    stamps = pd.date_range("2000-01-01", periods=60, freq="MS")

    def wave(k):
        return 50 + 5 * k + 10 * np.sin(np.arange(60) / 3) + rng.normal(0, 1, 60)

    fitted = tsattn.Forecaster("simple-rnn", window=8, horizon=2, epochs=1, units=3).fit(
        pd.concat([pd.DataFrame({"unique_id": uid, "ds": stamps, "y": wave(k)}) for k, uid in enumerate("ab")]),
        seed=0, verbose=0)
    new = wave(2)
    later = new.copy()
    later[40:] += 500.0  # after every origin before 2003
    forecasts = []
    for values in (new, later):
        table = fitted.backtest(pd.DataFrame({"unique_id": "c", "ds": stamps, "y": values}), start=12, stride=6)
        forecasts.append(table.loc[table["origin"] < stamps[38], "predicted"].to_numpy())
    assert len(forecasts[0]) > 0
    np.testing.assert_array_equal(forecasts[0], forecasts[1])
    scaler = fitted.state_.scaler_for(fitted.state_.panel_of(pd.DataFrame({"unique_id": "c", "ds": stamps, "y": new})),
                                      np.array([12]))
    np.testing.assert_allclose([scaler.offset[0], scaler.offset[0] + scaler.scale[0]], [new[:12].min(), new[:12].max()])


def test_a_panel_backtest_prints_and_concatenates():
    """Found by a user-path check: `print(table.head())` of a panel backtest (and of tsattn.compare's results) raised
    "The truth value of a DataFrame is ambiguous": pandas compares attrs when it combines frames, and a frame was kept
    there. The per-series metrics are records now (pd.DataFrame(...) makes the frame again)."""
    import tsattn

    frame = two_series()
    fitted = tsattn.Forecaster("naive", horizon=2).fit(frame[frame["ds"] < "2001-06-01"], verbose=0)
    table = fitted.backtest(frame, start=18, stride=2)
    assert "unique_id" in repr(table.head(3)) and len(pd.concat([table, table])) == 2 * len(table)
    by_series = pd.DataFrame(table.attrs["metrics_by_series"])
    assert set(by_series["series"]) == {"a", "b"} and {"model", "metric", "value"} <= set(by_series.columns)
