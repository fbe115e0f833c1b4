"""Probabilistic forecasts: pinball loss, quantile heads, split-conformal intervals, interval metrics, levels."""

import dataclasses
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TINY, TINY_PARAMS, make_series
from tsattn import Forecaster
from tsattn import metrics as M
from tsattn.cli.main import main
from tsattn.errors import ConfigError
from tsattn.config import RunConfig, model_quantiles
from tsattn.harness import fit
from tsattn.intervals import Conformal, check_levels, interval_columns, quantiles_for_levels


def ar1(n=3000, phi=0.6, seed=0):
    """A Gaussian AR(1) with unit innovations: the best one-step forecast is phi * y, its error N(0, 1)."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n)
    for t in range(1, n):
        y[t] = phi * y[t - 1] + rng.normal()
    return pd.Series(y + 10, index=pd.date_range("2000-01-01", periods=n, freq="D"), name="ar1")


# ----------------------------------------------------------------------------------------------------
# Pinball loss and interval metrics against hand computations
# ----------------------------------------------------------------------------------------------------
def test_pinball_loss_by_hand_numpy_and_keras():
    from tsattn.layers import PinballLoss

    actual = np.array([[1.0], [2.0]])
    forecasts = np.array([[[0.5, 1.0, 1.5]], [[2.5, 2.0, 1.0]]])  # (2, 1, 3) for quantiles 0.1, 0.5, 0.9
    # row 1: errors y - f = 0.5, 0, -0.5 -> 0.1*0.5, 0, (0.9-1)*(-0.5)=0.05 ; row 2: -0.5, 0, 1 -> 0.45, 0, 0.9
    by_hand = np.array([[0.05, 0.0, 0.05], [0.45, 0.0, 0.9]])
    for j, q in enumerate((0.1, 0.5, 0.9)):
        np.testing.assert_allclose(M.pinball_loss(actual[:, 0], forecasts[:, 0, j], q), by_hand[:, j])
    keras_loss = float(PinballLoss((0.1, 0.5, 0.9))(actual.astype("float32"), forecasts.astype("float32")))
    assert keras_loss == pytest.approx(by_hand.mean(), rel=1e-6)


def test_interval_metrics_by_hand():
    actual = np.array([[1.0, 5.0], [2.0, 0.0]])
    quantiles = {0.1: np.array([[0.0, 0.0], [0.0, 1.0]]), 0.5: np.array([[1.0, 1.0], [2.0, 2.0]]),
                 0.9: np.array([[2.0, 2.0], [3.0, 3.0]])}
    values = M.per_series_interval_metrics(actual, quantiles, [80], np.array([0, 0]), 1, np.array([2.0]))
    # inside: 1 in [0,2] yes, 5 in [0,2] no, 2 in [0,3] yes, 0 in [1,3] no
    assert values["coverage-80"][0] == pytest.approx(50.0)
    assert values["width-80"][0] == pytest.approx((2 + 2 + 3 + 2) / 4)
    # MSIS: widths + 2/0.2 * misses (5 - 2 = 3 above, 1 - 0 = 1 below) over 4 entries, over the scale 2
    assert values["msis-80"][0] == pytest.approx((9 + 10 * 3 + 10 * 1) / 4 / 2)
    pinball = {q: M.pinball_loss(actual, f, q).mean() for q, f in quantiles.items()}
    assert values["pinball-0.1"][0] == pytest.approx(pinball[0.1])
    assert values["scaled_crps"][0] == pytest.approx(2 * np.mean(list(pinball.values())) / 2)


# ----------------------------------------------------------------------------------------------------
# Levels and quantiles
# ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, 100, -5, "abc", 150, float("nan"), True, [80, "x"]])
def test_bad_levels_refused_with_one_line(bad):
    with pytest.raises(ConfigError, match="level must be a number between 0 and 100"):
        check_levels(bad)


@pytest.mark.parametrize("bad", ["0", "100", "-5", "abc"])
def test_cli_refuses_bad_levels_with_one_line_and_exit_2(tmp_path, bad):
    runner = CliRunner()
    result = runner.invoke(main, ["fit", "--model", "simple-rnn", "--dataset", "sunspots", "--level", bad,
                                  "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"Error: level must be a number between 0 and 100 (exclusive), e.g. 80 or 95; got {bad!r}"]
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()


def test_levels_choose_the_quantiles_and_explicit_quantiles_must_bound_them():
    assert check_levels("95,80") == (80, 95)
    assert quantiles_for_levels([80, 95]) == (0.025, 0.1, 0.5, 0.9, 0.975)
    assert interval_columns([95, 80]) == ["lo-80", "hi-80", "lo-95", "hi-95"]
    assert model_quantiles(RunConfig(loss="quantile", level=[80])) == (0.1, 0.5, 0.9)
    assert model_quantiles(RunConfig(loss="quantile", quantiles=[0.1, 0.9])) == (0.1, 0.5, 0.9)  # median added
    assert model_quantiles(RunConfig(loss="mse", level=[80])) is None
    with pytest.raises(ConfigError, match="level 95 needs quantiles 0.025, 0.975"):
        model_quantiles(RunConfig(loss="quantile", quantiles=[0.1, 0.5, 0.9], level=[80, 95]))
    with pytest.raises(ConfigError, match="quantiles is used with loss=quantile only"):
        model_quantiles(RunConfig(loss="mse", quantiles=[0.1, 0.9]))


# ----------------------------------------------------------------------------------------------------
# Quantiles never cross
# ----------------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=12, max_size=12),
       st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=3, max_size=3))
def test_quantile_head_output_is_sorted(network, base):
    from tsattn.layers import QuantileOutput

    layer = QuantileOutput(horizon=3, quantiles=(0.1, 0.3, 0.5, 0.9))
    out = np.asarray(layer([np.array([network], dtype="float32"), np.array([base], dtype="float32")]))
    assert out.shape == (1, 3, 4)
    assert (np.diff(out, axis=-1) >= 0).all()


@pytest.mark.parametrize("model", ["simple-rnn", "attention-rnn", "transformer"])
def test_every_model_gains_a_quantile_head_and_its_quantiles_never_cross(model):
    series = make_series(120)
    forecaster = Forecaster(model, window=8, horizon=3, epochs=2, loss="quantile", level=[50, 80],
                            **TINY_PARAMS[model]).fit(series, validation=0.2)
    assert forecaster.model_.output_shape == (None, 3, 5)
    frame = forecaster.predict(3, level=[50, 80])
    assert list(frame.columns) == ["demand", "demand-lo-50", "demand-hi-50", "demand-lo-80", "demand-hi-80"]
    values = frame[["demand-lo-80", "demand-lo-50", "demand", "demand-hi-50", "demand-hi-80"]].to_numpy()
    assert (np.diff(values, axis=1) >= 0).all()
    # the linear skip path still starts at the least-squares autoregression
    assert np.abs(forecaster.model_.get_layer("linear_skip").get_weights()[0]).sum() > 0


# ----------------------------------------------------------------------------------------------------
# Split conformal
# ----------------------------------------------------------------------------------------------------
def test_conformal_rank_is_the_finite_sample_one():
    errors = np.arange(1.0, 11.0)[:, None]  # ten validation errors 1..10, one step
    conformal = Conformal.calibrate(errors, np.zeros_like(errors), np.ones(10))
    assert conformal.radius(80)[0][0] == 9.0  # ceil((10 + 1) * 0.8) = 9th smallest
    assert conformal.radius(50)[0][0] == 6.0  # ceil(5.5) = 6
    with pytest.warns(UserWarning, match="too few validation forecasts.*half-normal quantile"):
        q = conformal.quantiles(np.zeros((1, 1)), np.array([2.0]), [95])  # ceil(10.45) = 11 > 10 scores
    # the larger of the largest error (10) and the half-normal 97.5% quantile of the errors: rms sqrt(38.5) x 1.96
    half = math.sqrt(38.5) * 1.959963984540054
    assert q[0.975][0, 0] == pytest.approx(2 * half) and q[0.025][0, 0] == pytest.approx(-2 * half)
    assert Conformal.from_state(json.loads(json.dumps(conformal.state()))).radius(80)[0][0] == 9.0


def test_too_few_scores_never_give_two_levels_the_same_band():
    """One validation window (a short series): the 80% and the 95% interval used to be the same band (its error)."""
    conformal = Conformal.from_scores(np.array([[3.0, 1.0]]))  # one window, two steps
    with pytest.warns(UserWarning, match="too few validation forecasts"):
        q = conformal.quantiles(np.zeros((1, 2)), np.ones(1), [80, 95])
    assert (q[0.975] > q[0.9]).all() and (q[0.9] >= np.array([[3.0, 1.0]])).all()


def test_the_thin_calibration_warning_names_the_steps_forecast_and_all_of_them():
    """It named steps [1, 2, 3, 4, 5] of a 6-step horizon when 3 were forecast (the first five of every step)."""
    from tsattn.intervals import steps_text

    conformal = Conformal.from_scores(np.ones((3, 8)))  # three windows, eight steps: too few for 95% at every step
    with pytest.warns(UserWarning, match=r"95% conformal interval at step\(s\) 1-3 \(need"):
        conformal.quantiles(np.zeros((1, 3)), np.ones(1), [95])
    with pytest.warns(UserWarning, match=r"at step\(s\) 1-8 \(need"):
        conformal.quantiles(np.zeros((1, 8)), np.ones(1), [95])
    assert steps_text([7, 1, 2, 3, 5, 8, 9, 10]) == "1-3, 5, 7-10" and steps_text([4]) == "4"


def test_conformal_intervals_cover_a_gaussian_ar1_at_their_level():
    """On AR(1) with N(0, 1) innovations the near-optimal linear AR's 80% interval is about +/- 1.28 and covers
    about 80% of the test part (~900 targets); any model's conformal interval covers about its level."""
    result = fit(RunConfig(model="simple-rnn", model_params={"units": 4}, dataset=None, window=4, epochs=2,
                           level=[80, 95], train_fraction=0.4, validation_fraction=0.3), series=ar1())
    test = result.metrics["test"]
    for key in ("linear", "model", "naive"):
        assert abs(test[key]["coverage-80"] - 80) < 4, (key, test[key]["coverage-80"])
        assert abs(test[key]["coverage-95"] - 95) < 2.5, (key, test[key]["coverage-95"])
    assert test["linear"]["width-80"] == pytest.approx(2 * 1.2816, rel=0.1)
    assert test["linear"]["width-95"] == pytest.approx(2 * 1.96, rel=0.1)
    assert test["naive"]["width-80"] > test["linear"]["width-80"]  # a worse forecast gets a wider interval
    from tsattn.verdicts import interval_verdict

    line = interval_verdict(result)
    assert line.startswith(f"The 80% interval covered {test['model']['coverage-80']:.1f}% of the test values, the 95% one")


def test_conformal_calibration_never_sees_the_test_part():
    series = ar1(600)
    changed = series.copy()
    changed.iloc[-120:] = changed.iloc[-120:] * 50 + 1000  # the test part (last 20%) only
    common = RunConfig(model="simple-rnn", model_params={"units": 4}, dataset=None, window=6, epochs=2,
                       level=[80], train_fraction=0.6, validation_fraction=0.2)
    first, second = fit(common, series=series), fit(common, series=changed)
    for key in first.calibration:
        assert first.calibration[key].state() == second.calibration[key].state()
    # the half-width at the first test origin is the same (a later origin's scale reads the test values before it,
    # known by then, as the default blend scale does); in the training part's scale every one is
    half = [r.forecasts["test"].intervals["model"][0.9] - r.forecasts["test"].predicted for r in (first, second)]
    np.testing.assert_allclose(half[0][0], half[1][0])
    assert not np.allclose(half[0], half[1])
    fixed = [fit(dataclasses.replace(common, interval_scale="insample"), series=s) for s in (series, changed)]
    half = [r.forecasts["test"].intervals["model"][0.9] - r.forecasts["test"].predicted for r in fixed]
    np.testing.assert_allclose(half[0], half[1])


def test_intervals_survive_save_and_load(tmp_path):
    series = make_series(150)
    for params in ({}, {"loss": "quantile", "level": [80, 95]}):
        forecaster = Forecaster("simple-rnn", window=8, horizon=2, epochs=2, units=4, **params).fit(series,
                                                                                                   validation=0.2)
        before = forecaster.predict(2, level=[80, 95])
        forecaster.save(tmp_path / "model.tsattn", overwrite=True)  # the second pass replaces the first's file
        after = Forecaster.load(tmp_path / "model.tsattn").predict(2, level=[80, 95])
        pd.testing.assert_frame_equal(before, after)
        assert (before["demand-lo-95"] <= before["demand-lo-80"]).all()
        assert (before["demand-hi-80"] <= before["demand-hi-95"]).all()


def test_baseline_forecasters_and_panels_get_intervals_too():
    frames = [pd.DataFrame({"unique_id": f"s{i}", "ds": s.index, "y": s.to_numpy()})
              for i, s in enumerate(make_series(80, seed=i) * (i + 1) for i in range(3))]
    frame = pd.concat(frames, ignore_index=True)
    naive = Forecaster("naive", window=8, horizon=4).fit(frame, validation=8)
    out = naive.predict(4, level=80)
    assert list(out.columns) == ["unique_id", "ds", "naive", "naive-lo-80", "naive-hi-80"] and len(out) == 12
    # scaled scores: a series three times as large gets an interval about three times as wide (same shape)
    widths = (out["naive-hi-80"] - out["naive-lo-80"]).groupby(out["unique_id"]).mean()
    assert widths["s2"] > widths["s0"]
    with pytest.raises(ConfigError, match=r"intervals reach the model's horizon \(4 steps\); got steps=5: forecast "
                                          r"at most 4 steps with level \(CLI --level\), or fit with horizon=5 "
                                          r"\(CLI --horizon 5\)$"):
        naive.predict(5, level=80)
    no_validation = Forecaster("naive", window=8).fit(make_series(80), validation=0)
    with pytest.raises(ConfigError, match="fit with validation > 0"):
        no_validation.predict(1, level=80)


def test_statsforecast_own_intervals_beside_conformal():
    pytest.importorskip("statsforecast")
    from statsforecast.models import AutoETS

    from tsattn.baselines import StatisticalModel

    series = make_series(72)
    values = series.to_numpy()
    model = StatisticalModel("ets", horizon=3, season=12)
    point, quantiles = model.forecast_distribution(values, np.array([59]), np.array([0]), np.array([0]), None, [80])
    direct = AutoETS(season_length=12).forecast(y=values[:60], h=3, level=[80])
    np.testing.assert_allclose(point[0], direct["mean"])
    np.testing.assert_allclose(quantiles[0.1][0], direct["lo-80"])
    np.testing.assert_allclose(quantiles[0.9][0], direct["hi-80"])


# ----------------------------------------------------------------------------------------------------
# What users see: predictions.csv, forecast.csv, the metrics
# ----------------------------------------------------------------------------------------------------
def test_cli_fit_and_predict_write_interval_columns(tmp_path, small_csv):
    runner = CliRunner()
    run = tmp_path / "run"
    result = runner.invoke(main, ["fit", "--model", "simple-rnn", "--csv", str(small_csv), "--column", "demand",
                                  "--date-column", "date", "--window", "8", "--epochs", "2", "--set", "units=4",
                                  "--level", "80", "--level", "95", "--out", str(run), "-q"])
    assert result.exit_code == 0, result.output
    predictions = pd.read_csv(run / "predictions.csv")
    assert {"lo-80", "hi-80", "lo-95", "hi-95"} <= set(predictions.columns)
    test = predictions[predictions["part"] == "test"]
    assert test["lo-80"].notna().all() and (test["lo-95"] <= test["lo-80"]).all()
    assert (test["lo-80"] <= test["predicted"]).all() and (test["predicted"] <= test["hi-80"]).all()
    metrics = json.loads((run / "metrics.json").read_text())
    for key in ("model", "naive", "seasonal_naive", "linear"):
        assert 0 <= metrics["test"][key]["coverage-80"] <= 100 and metrics["test"][key]["msis-95"] > 0
    out = tmp_path / "forecast"
    result = runner.invoke(main, ["predict", "--model-dir", str(run), "--level", "80", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    forecast = pd.read_csv(out / "forecast.csv")
    assert list(forecast.columns) == ["unique_id", "date", "simple-rnn", "simple-rnn-lo-80", "simple-rnn-hi-80"]
    written = json.loads((out / "forecast.json").read_text())
    assert written["level"] == [80] and "scores in the blend scale" in written["intervals"]


def test_conformalized_quantile_bands_by_hand():
    from tsattn.intervals import QuantileConformal

    ones = np.ones((10, 1))
    raw = {0.1: 0 * ones, 0.5: 0.5 * ones, 0.9: ones}
    actual = np.arange(1.0, 11.0)[:, None]  # scores max(0 - y, y - 1) = 0, 1, ..., 9
    calibration = QuantileConformal.calibrate(actual, raw, np.ones(10))
    adjusted = calibration.quantiles(raw, np.array([2.0]), [80])  # 9th smallest score (8) times the scale 2
    assert adjusted[0.1][0, 0] == -16.0 and adjusted[0.9][0, 0] == 17.0 and adjusted[0.5][0, 0] == 0.5
    # a band too wide for its targets narrows (negative margin), and the quantiles stay ordered
    tight = QuantileConformal.calibrate(np.full((10, 1), 0.5), raw, np.ones(10))
    narrowed = tight.quantiles(raw, np.ones(10), [80])
    assert narrowed[0.1][0, 0] == pytest.approx(0.5) and narrowed[0.9][0, 0] == pytest.approx(0.5)
    assert (narrowed[0.1] <= narrowed[0.5]).all() and (narrowed[0.5] <= narrowed[0.9]).all()
    restored = QuantileConformal.from_state(json.loads(json.dumps(calibration.state())))
    assert restored.quantiles(raw, np.array([2.0]), [80])[0.9][0, 0] == 17.0


@pytest.mark.parametrize("skip", ["none", "linear", "relative"])
def test_quantile_head_with_every_skip_path_reloads(tmp_path, skip):
    import keras

    from tsattn.models import get_model

    model = get_model("simple-rnn", window=6, horizon=2, quantiles=(0.1, 0.5, 0.9), skip=skip, units=3)
    X = np.random.default_rng(0).normal(size=(5, 6, 1)).astype("float32")
    out = np.asarray(model(X))
    assert out.shape == (5, 2, 3) and (np.diff(out, axis=-1) >= 0).all()
    model.save(tmp_path / "q.keras")
    np.testing.assert_allclose(np.asarray(keras.saving.load_model(tmp_path / "q.keras")(X)), out, rtol=1e-6)


def test_forecast_frames_are_nixtla_frames_that_utilsforecast_evaluates():
    """Issue 24: predict's long frame (unique_id, ds, <model>, <model>-lo-80, ...) merged with the actuals is what
    utilsforecast.evaluate takes, and its coverage and MAE agree with tsattn's own figures on the same forecasts."""
    pytest.importorskip("utilsforecast")  # a test dependency (tsattn[test])
    from utilsforecast.evaluation import evaluate
    from utilsforecast.losses import coverage, mae

    frames = [pd.DataFrame({"unique_id": f"q{i}", "ds": pd.date_range("2000-01-01", periods=40, freq="QS"),
                            "y": (make_series(40, seed=i) * (i + 1)).to_numpy()}) for i in range(4)]
    frame = pd.concat(frames, ignore_index=True)
    train = frame.groupby("unique_id").head(36)
    test = frame.groupby("unique_id").tail(4)
    f = Forecaster("naive", window=8, horizon=4).fit(train, validation=4)
    forecast = f.predict(4, level=[80, 95])
    assert list(forecast.columns) == ["unique_id", "ds", "naive", "naive-lo-80", "naive-hi-80", "naive-lo-95",
                                      "naive-hi-95"]
    scored = evaluate(forecast.merge(test, on=["unique_id", "ds"]), metrics=[mae, coverage], level=[80, 95])
    by_metric = scored.set_index(["unique_id", "metric"])["naive"]
    merged = forecast.merge(test, on=["unique_id", "ds"])
    inside = (merged["y"] >= merged["naive-lo-80"]) & (merged["y"] <= merged["naive-hi-80"])
    np.testing.assert_allclose(by_metric.xs("coverage_level80", level="metric").to_numpy(),
                               inside.groupby(merged["unique_id"]).mean().to_numpy())
    np.testing.assert_allclose(by_metric.xs("mae", level="metric").to_numpy(),
                               (merged["y"] - merged["naive"]).abs().groupby(merged["unique_id"]).mean().to_numpy())


def test_cross_validation_returns_the_nixtla_frame_with_honest_cutoffs():
    """Issue 24: cross_validation(df, h, n_windows, step_size) -> unique_id, ds, cutoff, y, <model> (+ intervals).
    The naive model makes every figure checkable: each window's forecast is the value at its cutoff, y the
    actual values after it; utilsforecast evaluates the frame per cutoff; a network runs the same path."""
    pytest.importorskip("utilsforecast")
    from utilsforecast.evaluation import evaluate
    from utilsforecast.losses import mae

    frames = [pd.DataFrame({"unique_id": f"q{i}", "ds": pd.date_range("2000-01-01", periods=40 + 4 * i, freq="QS"),
                            "y": (make_series(40 + 4 * i, seed=i) * (i + 1)).to_numpy()}) for i in range(3)]
    frame = pd.concat(frames, ignore_index=True)
    cv = Forecaster("naive", window=8, horizon=4).cross_validation(frame, n_windows=2, step_size=2, level=[80])
    assert list(cv.columns) == ["unique_id", "ds", "cutoff", "y", "naive", "naive-lo-80", "naive-hi-80"]
    assert len(cv) == 3 * 2 * 4
    actual = frame.set_index(["unique_id", "ds"])["y"]
    np.testing.assert_allclose(cv["y"], actual.loc[list(zip(cv["unique_id"], cv["ds"]))].to_numpy())
    np.testing.assert_allclose(cv["naive"], actual.loc[list(zip(cv["unique_id"], cv["cutoff"]))].to_numpy())
    assert (cv["ds"] > cv["cutoff"]).all()
    last = cv.groupby("unique_id")["ds"].max()
    assert (last == frame.groupby("unique_id")["ds"].max()).all()  # the last window ends at each series' end
    assert cv.groupby("unique_id")["cutoff"].nunique().eq(2).all()
    scored = evaluate(cv.drop(columns=["naive-lo-80", "naive-hi-80"]), metrics=[mae])
    assert set(scored["cutoff"]) == set(cv["cutoff"]) and np.isfinite(scored["naive"]).all()
    network = Forecaster("simple-rnn", window=8, horizon=4, units=3, epochs=1)
    once = network.cross_validation(frame, n_windows=2, step_size=4, refit=False)
    assert list(once.columns) == ["unique_id", "ds", "cutoff", "y", "simple-rnn"] and len(once) == 24
    assert not hasattr(network, "state_") or network.__dict__.get("state_") is None  # never fits itself
    with pytest.raises(ConfigError, match="need more than 41 values per series; the shortest series has 40"):
        Forecaster("naive", window=8, horizon=4).cross_validation(frame, n_windows=10, step_size=4)


def test_cross_validation_of_a_competition_frame_splits_each_fit_as_fit_does(monkeypatch):
    """A frame with a hold-out (a dataset's attrs["horizon"]) validates on its last h values in fit; the histories
    cross_validation refits on are made from it and keep that hold-out (they validated on the last 10% of each
    series: on the first 50 M3 other series 25 had no whole validation window, with a warning)."""
    import warnings

    import tsattn.harness
    from tsattn.panel import as_panel

    frame = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": np.arange(30 + i), "y": 50 + np.cumsum(
        np.random.default_rng(i).normal(0, 1, 30 + i))}) for i in range(3)], ignore_index=True)
    frame.attrs["horizon"] = 4
    splits = []
    real = tsattn.harness.window_config
    monkeypatch.setattr(tsattn.harness, "window_config", lambda data, config, *a, **k: splits.append(
        (config.split, as_panel(data).horizon)) or real(data, config, *a, **k))
    Forecaster("naive", horizon=4).fit(frame, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no "series have no whole window in their validation part"
        Forecaster("naive", horizon=4).cross_validation(frame, n_windows=2, refit=True, verbose=0)
    assert splits == [("auto", 4)] * 3
    assert as_panel(frame).heads(np.array([20, 21, 22])).to_frame().attrs["horizon"] == 4




def test_cross_validation_says_what_it_fits_in_one_line_and_verbose_chooses_how_much(capsys):
    """Refitting before every window printed every fit's "Fitting ...; fit(verbose=0) silences this" line (fifty
    windows: fifty lines, advising an argument cross_validation did not take); now one line, verbose as in fit."""
    frame = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=40, freq="MS"),
                          "y": make_series(40).to_numpy()})
    naive = Forecaster("naive", window=8, horizon=4)
    naive.cross_validation(frame, n_windows=3)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["Cross-validating naive on 1 series: 3 window(s) of 4 steps, 1 apart, 3 fits, a fresh one "
                     "before each window; cross_validation(verbose=0) silences this"]
    naive.cross_validation(frame, n_windows=3, refit=False)
    assert "one fit, before the first window" in capsys.readouterr().err
    naive.cross_validation(frame, n_windows=3, verbose=0)
    assert capsys.readouterr().err == ""
    naive.cross_validation(frame, n_windows=3, verbose=1)
    assert capsys.readouterr().err.count("Fitting naive on 1 series") == 3
    with pytest.raises(ConfigError, match="verbose must be None"):
        naive.cross_validation(frame, verbose="loud")
def test_a_users_first_hour_on_a_quarterly_panel_end_to_end():
    """Issue 24's task on a small panel, with every default: a quarterly panel of series of different lengths
    through the API, a network and Theta side by side, intervals, cross-validation with refits, utilsforecast's
    evaluate on the merged Nixtla frames, a plot and the network's attention."""
    pytest.importorskip("utilsforecast")
    pytest.importorskip("statsforecast")
    from matplotlib.figure import Figure
    from utilsforecast.evaluation import evaluate
    from utilsforecast.losses import coverage, smape

    frame = pd.concat([pd.DataFrame({"unique_id": f"Q{i}", "ds": pd.date_range("1990-01-01", periods=28 + 2 * i,
                                                                               freq="QS"),
                                     "y": (make_series(28 + 2 * i, seed=i) * (i + 1) + 100).to_numpy()})
                       for i in range(8)], ignore_index=True)
    network = Forecaster("attention-rnn", horizon=4, units=4, epochs=2, batch_size=16)
    theta = Forecaster("theta", horizon=4)
    frames = []
    for forecaster in (network, theta):
        forecaster.fit(frame)
        forecast = forecaster.predict(level=[80])
        first = forecast.groupby("unique_id")["ds"].min()
        assert len(forecast) == 8 * 4 and (first == frame.groupby("unique_id")["ds"].max() + pd.DateOffset(months=3)).all()
        frames.append(forecaster.cross_validation(frame, n_windows=2, level=[80]))
    cv = frames[0].merge(frames[1], on=["unique_id", "ds", "cutoff", "y"])
    assert len(cv) == 8 * 2 * 4 and {"attention-rnn-lo-80", "theta-hi-80"} <= set(cv.columns)
    scored = evaluate(cv.drop(columns="cutoff"), metrics=[smape, coverage], level=[80])
    by_metric = scored.groupby("metric")[["attention-rnn", "theta"]].mean()
    assert np.isfinite(by_metric.to_numpy()).all()
    assert 0 <= by_metric.loc["coverage_level80"].min() and by_metric.loc["coverage_level80"].max() <= 1
    assert isinstance(network.plot(ids=["Q0", "Q7"], level=[80]), Figure)
    weights = network.attention_weights()
    assert list(weights["unique_id"]) == [f"Q{i}" for i in range(8)]
    np.testing.assert_allclose(weights.drop(columns="unique_id").sum(axis=1), 1.0, rtol=1e-5)


class FixedWidth:
    """A toy interval method: the forecast +/- its series' scale at every level (for the registry test)."""

    def __init__(self, width=1.0):
        self.width = width

    @staticmethod
    def applies(quantiles):
        return quantiles is None

    @classmethod
    def fit(cls, actual, point, quantiles, scale, scores="absolute"):
        return cls()

    def apply(self, point, quantiles, scale, levels):
        half = self.width * np.asarray(scale, dtype=float)[:, None]
        out = {0.5: point}
        for level in levels:
            out[round(0.5 - level / 200, 6)], out[round(0.5 + level / 200, 6)] = point - half, point + half
        return out

    def state(self):
        return {"width": self.width}

    @classmethod
    def from_state(cls, state):
        return cls(state["width"])


def test_a_new_interval_method_is_one_entry_in_the_registry(monkeypatch, small_series, tmp_path):
    """Calibrated, used for intervals, saved and loaded by every path without a line elsewhere."""
    from tsattn import intervals

    monkeypatch.setitem(intervals.INTERVAL_METHODS, "fixed", FixedWidth)
    f = Forecaster("simple-rnn", window=8, units=3, epochs=1).fit(small_series, validation=0.2)
    assert list(f.calibration_.methods) == ["conformal", "fixed"]
    forecast = f.predict(1, level=[80])
    scale = f.state_.interval_scale_for(f.state_.tails, fitted=True)[0]
    np.testing.assert_allclose(forecast["demand-hi-80"] - forecast["demand"], scale)
    loaded = Forecaster.load(f.save(tmp_path / "m.tsattn"))
    pd.testing.assert_frame_equal(loaded.predict(1, level=[80]), forecast)


def test_intervals_of_non_negative_data_are_clipped_at_zero_unless_asked_not_to(tmp_path):
    from tsattn.forecaster import Forecaster

    rng = np.random.default_rng(0)
    counts = pd.Series(np.abs(rng.normal(0, 3, 80)).round(), index=pd.date_range("2020-01-01", periods=80, freq="D"))
    counts.iloc[-1] = 0.0  # the naive forecast is 0: its lower bounds would go below zero
    clipped = Forecaster("naive", horizon=3).fit(counts).predict(level=[95])
    kept = Forecaster("naive", horizon=3, clip_intervals=False).fit(counts).predict(level=[95])
    assert kept.iloc[:, 1].min() < 0 <= clipped.iloc[:, 1].min()  # the bound that went below zero is raised to it
    np.testing.assert_allclose(clipped.iloc[:, 2], kept.iloc[:, 2])  # upper bounds untouched
    forecaster = Forecaster("naive", horizon=3).fit(counts)
    forecaster.save(tmp_path / "m")
    pd.testing.assert_frame_equal(Forecaster.load(tmp_path / "m").predict(level=[95]), clipped)
    signed = Forecaster("naive", horizon=3).fit(counts - 1.0).predict(level=[95])  # a negative value: no floor
    assert signed.iloc[:, 1].min() < 0


def test_forecasts_of_non_negative_data_are_floored_at_zero_on_every_path(tmp_path):
    """A falling count series: the linear autoregression extrapolates it below zero (Tourism's yearly series gave
    attention-rnn forecasts of -4762 visitors, each outside its own 80% band [0, ...]). Point forecasts of data never
    below 0 are raised to 0 like the bounds, in predict, evaluate, backtest, cross_validation and a run's scored test
    part, for the network and the baselines scored beside it; clip_intervals=false keeps them; a reloaded model too."""
    from tsattn.forecaster import Forecaster

    falling = pd.Series(np.r_[np.linspace(400.0, 60.0, 44), [40.0, 20.0, 10.0, 4.0]],
                        index=pd.date_range("2000-01-01", periods=48, freq="MS"))
    kept = Forecaster("linear", window=6, horizon=4, clip_intervals=False).fit(falling).predict(level=[80])
    assert kept["forecast"].min() < 0  # what the floor is for
    f = Forecaster("linear", window=6, horizon=4).fit(falling)
    frame = f.predict(level=[80])
    assert frame["forecast"].min() == 0.0
    assert ((frame["forecast-lo-80"] <= frame["forecast"]) & (frame["forecast"] <= frame["forecast-hi-80"])).all()
    pd.testing.assert_frame_equal(Forecaster.load(f.save(tmp_path / "m")).predict(level=[80]), frame)
    later = pd.concat([falling, pd.Series([1.0, 0.0, 0.0, 0.0], index=pd.date_range("2004-01-01", periods=4,
                                                                                 freq="MS"))])
    cv = f.cross_validation(later, n_windows=2, step_size=1, refit=False, verbose=0)
    assert cv["linear"].min() >= 0
    backtest = f.backtest(later, start=46)
    assert backtest.select_dtypes("number").drop(columns=["y"], errors="ignore").min().min() >= 0, backtest
    assert f.evaluate(later)["model"]["mae"] <= Forecaster("linear", window=6, horizon=4, clip_intervals=False).fit(
        falling).evaluate(later)["model"]["mae"]
    # a network's run: every scored forecast, its own and the baselines', at or above 0
    result = fit(RunConfig(model="simple-rnn", dataset=None, window=6, horizon=4, epochs=1).updated(units=2),
                 series=falling)
    for part in result.forecasts.values():
        assert part.predicted.min() >= 0 and all(np.nanmin(points) >= 0 for points in part.baselines.values())
    assert result.forecasts["test"].predicted.min() == 0.0  # the network went below zero there


def test_interval_scales_are_seasonal_naive_maes_up_to_each_origin():
    from tsattn.intervals import recent_span, window_scale

    values = np.array([1.0, 2, 4, 7, 11, 16, 22, 10.0, 10, 13, 13, 17])  # series 0: 7 values, series 1: 5
    training = np.array([5.0, 6.0])[[0, 0, 1, 1]]
    origins, first = np.array([6, 4, 11, 7]), np.array([0, 0, 7, 7])
    assert recent_span(1, 2) == 4 and recent_span(12, 18) == 36 and recent_span(4, 8) == 16
    np.testing.assert_allclose(window_scale("insample", values, origins, first, 1, 2, training), [5, 5, 6, 6])
    # recent: the last 4 lag-1 differences up to each origin, never across the series boundary; a lone value: training
    np.testing.assert_allclose(window_scale("recent", values, origins, first, 1, 2, training),
                               [np.mean([3, 4, 5, 6]), np.mean([1, 2, 3, 4]), np.mean([0, 3, 0, 4]), 6.0])
    np.testing.assert_allclose(window_scale("expanding", values, origins, first, 1, 2, training),
                               [np.mean([1, 2, 3, 4, 5, 6]), np.mean([1, 2, 3, 4]), np.mean([0, 3, 0, 4]), 6.0])
    seasonal = window_scale("recent", values, np.array([6]), np.array([0]), 3, 1, np.array([5.0]))
    np.testing.assert_allclose(seasonal, [np.mean([6, 9, 12, 15])])  # lag 3: 7 - 1, 11 - 2, ... (span 9: all four)
    np.testing.assert_allclose(window_scale("blend", values, origins, first, 1, 2, training),  # their mean
                               (window_scale("recent", values, origins, first, 1, 2, training) +
                                window_scale("expanding", values, origins, first, 1, 2, training)) / 2)
    with pytest.raises(ConfigError, match="interval_scale must be one of expanding, insample, recent, blend"):
        window_scale("latest", values, origins, first, 1, 2, training)


def test_each_interval_scale_sizes_the_band_at_the_forecast_origin(tmp_path):
    """The band is the calibrated radius times the scale at the origin: every value of the series (expanding: from the
    figure kept at fit, as the tails hold only the last values), its last ones (recent), the mean of those two (blend,
    the default) or every value before the test part, here all of them (insample). Expanding calibrated its validation scores on the values
    before each validation origin, insample on the validation values too: a different radius. Predicting from the
    fitted data and from the same series passed again agree, and a reloaded model gives the same bands."""
    from tsattn.intervals import Calibration, recent_span

    rng = np.random.default_rng(3)
    noise = rng.normal(0, 1, 120)
    noise[-30:] *= 4  # the end swings four times as much as the training part
    series = pd.Series(50 + noise, index=pd.date_range("2020-01-01", periods=120, freq="D"), name="y")
    changes = np.abs(np.diff(series.to_numpy()))
    fits = {kind: Forecaster("naive", horizon=2, season=1, interval_scale=kind).fit(series, validation=0.2)
            for kind in ("expanding", "recent", "insample", "blend")}
    assert RunConfig().interval_scale == "blend"
    expected = {"expanding": changes.mean(), "recent": changes[-recent_span(1, 2):].mean(), "insample": changes.mean()}
    expected["blend"] = (expected["expanding"] + expected["recent"]) / 2
    assert fits["insample"].mase_scale_[0] == pytest.approx(changes.mean())
    radius = {kind: f.calibration_.get("conformal").radius(80)[0] for kind, f in fits.items()}
    assert not np.allclose(radius["expanding"], radius["insample"])
    assert not np.isclose(expected["recent"], expected["expanding"])
    for kind, forecaster in fits.items():
        assert forecaster.calibration_.scale == kind
        band = forecaster.predict(level=[80])
        np.testing.assert_allclose((band["y-hi-80"] - band["y"]).to_numpy(), radius[kind] * expected[kind],
                                   err_msg=kind)
        pd.testing.assert_frame_equal(forecaster.predict(series=series, level=[80]), band)
        pd.testing.assert_frame_equal(Forecaster.load(forecaster.save(tmp_path / kind)).predict(level=[80]), band)
    state = fits["recent"].calibration_.state()
    assert Calibration.from_state({k: v for k, v in state.items() if k != "scale"}).scale == "insample"  # older files
    with pytest.raises(ConfigError, match="interval_scale must be one of expanding, insample, recent, blend"):
        Forecaster("naive", interval_scale="latest").fit(series)


def test_signed_scores_give_each_side_of_the_band_its_own_tail():
    """interval_scores=signed: the lower and upper offsets are the floor((n + 1) a)-th and ceil((n + 1)(1 - a))-th
    smallest signed scores, a = (100 - L) / 200, clamped so the band holds its forecast; a step with too few scores for
    a tail gets the absolute band of their magnitudes (the same as interval_scores=absolute there); the kind is saved."""
    rng = np.random.default_rng(0)
    actual = rng.exponential(1.0, size=(199, 2)) - 0.2  # errors leaning up: the upper tail is the long one
    actual[:, 1] = actual[:, 1] + 3.0  # at step 2 every error is positive: the lower offset is clamped to 0
    point, scale = np.zeros_like(actual), np.ones(len(actual))
    signed = Conformal.calibrate(actual, point, scale, signed=True)
    below, above, short = signed.offsets(80)
    ordered = np.sort(actual[:, 0])
    assert not short and below[0] == ordered[19] and above[0] == ordered[179]  # ranks floor(200 * 0.1), ceil(200 * 0.9)
    assert below[1] == 0.0 and above[1] == np.sort(actual[:, 1])[179]
    absolute = Conformal.calibrate(actual, point, scale)
    width = absolute.radius(80)[0]
    assert above[0] - below[0] < 2 * width[0]  # narrower than the symmetric band of the same errors
    inside = (actual[:, 0] >= below[0]) & (actual[:, 0] <= above[0])
    assert inside.mean() >= 0.8
    again = Conformal.from_state(json.loads(json.dumps(signed.state())))
    assert again.signed and np.array_equal(again.offsets(80)[1], above)
    assert not Conformal.from_state({k: v for k, v in absolute.state().items()}).signed  # absent: absolute
    few = Conformal.calibrate(actual[:20], point[:20], scale[:20], signed=True)  # 20 scores: too few for a 5% tail
    low95, high95, short95 = few.offsets(95)
    np.testing.assert_allclose(high95, Conformal.calibrate(actual[:20], point[:20], scale[:20]).radius(95)[0])
    np.testing.assert_allclose(low95, -high95)
    assert short95 == []  # 20 magnitudes reach the 95% rank: nothing to warn about


def test_interval_scores_setting_reaches_every_forecaster(tmp_path):
    series = make_series(160).rename("y")
    bands = {}
    for scores in ("absolute", "signed"):
        forecaster = Forecaster("naive", horizon=3, interval_scores=scores).fit(series, validation=0.3)
        assert forecaster.calibration_.get("conformal").signed == (scores == "signed")
        bands[scores] = forecaster.predict(level=[50])
        reloaded = Forecaster.load(forecaster.save(tmp_path / scores)).predict(level=[50])
        pd.testing.assert_frame_equal(reloaded, bands[scores])
        assert (bands[scores]["y-lo-50"] <= bands[scores]["y"]).all()
        assert (bands[scores]["y"] <= bands[scores]["y-hi-50"]).all()
    assert not np.allclose(bands["absolute"]["y-hi-50"], bands["signed"]["y-hi-50"])
    assert RunConfig().interval_scores == "absolute"
    with pytest.raises(ConfigError, match="interval_scores must be one of absolute, signed"):
        Forecaster("naive", interval_scores="both").fit(series)


def test_the_ets_interval_scale_measures_scores_in_autoets_deviation_per_series_and_step(tmp_path):
    """interval_scale="ets": each score (and each band) is measured in sqrt(blend x AutoETS's own forecast deviation)
    at its origin, per step; a history AutoETS cannot fit keeps the blend figure. The band at the data's end reads the
    deviation kept at fit (the tails are too short to refit AutoETS): predicting from the fitted data, from the same
    series passed again and from a reloaded model give the same band."""
    pytest.importorskip("statsforecast")
    from tsattn.baselines import ets_deviation, interval_scale_at
    from tsattn.intervals import window_scale

    rng = np.random.default_rng(3)
    frame = pd.concat([pd.DataFrame({"unique_id": uid, "ds": pd.date_range("2020-01-01", periods=80, freq="D"),
                                     "y": 50 + np.cumsum(rng.normal(0, sd, 80))}) for uid, sd in (("a", 1.0), ("b", 5.0))],
                      ignore_index=True)
    values, first = frame["y"].to_numpy(), np.array([0, 0, 80, 80])
    origins = np.array([79, 2, 159, 120])  # the second: three values, too few for AutoETS
    blend = window_scale("blend", values, origins, first, 1, 3, np.ones(4))
    scale = interval_scale_at("ets", values, origins, first, 1, 3, np.ones(4))
    deviation = ets_deviation(values, origins, first, 1, 3)
    assert scale.shape == (4, 3) and np.isnan(deviation[1]).all() and np.isfinite(deviation[[0, 2, 3]]).all()
    np.testing.assert_allclose(scale[1], blend[1])  # no deviation: the blend figure
    np.testing.assert_allclose(scale[[0, 2, 3]], np.sqrt(blend[[0, 2, 3], None] * deviation[[0, 2, 3]]))
    assert (np.diff(deviation[[0, 2, 3]], axis=1) > 0).all()  # the random walk's deviation grows with the step
    with pytest.raises(ConfigError, match="interval_scale must be one of .*blend, ets"):
        window_scale("latest", values, origins, first, 1, 3, np.ones(4))
    with pytest.raises(ConfigError, match="the ets interval scale needs AutoETS's deviation"):
        window_scale("ets", values, origins, first, 1, 3, np.ones(4))

    fitted = Forecaster("naive", horizon=3, season=1, interval_scale="ets").fit(frame, validation=0.2)
    band = fitted.predict(level=[80])
    ends = np.array([79, 159])
    expected = interval_scale_at("ets", values, ends, np.array([0, 80]), 1, 3, fitted.mase_scale_)
    radius = fitted.calibration_.get("conformal").radius(80)[0]
    widths = (band["naive-hi-80"] - band["naive"]).to_numpy().reshape(2, 3)
    np.testing.assert_allclose(widths, radius[None, :] * expected)
    np.testing.assert_allclose(fitted.state_.end_deviation, ets_deviation(values, ends, np.array([0, 80]), 1, 3))
    assert widths[1, 0] / widths[0, 0] > 3  # the noisier series gets the wider band
    pd.testing.assert_frame_equal(fitted.predict(series=frame, level=[80]), band)
    pd.testing.assert_frame_equal(Forecaster.load(fitted.save(tmp_path / "m")).predict(level=[80]), band)


def test_the_ets_interval_scale_without_statsforecast_says_how_to_install_it(monkeypatch, small_series, small_csv,
                                                                             tmp_path):

    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "statsforecast" else real(name, *a))
    with pytest.raises(ConfigError, match=r"interval_scale ets fits statsforecast's AutoETS, which is not installed: "
                                          r"pip install 'tsattn\[bench\]'.*or use interval_scale blend"):
        Forecaster("naive", horizon=2, interval_scale="ets").fit(small_series)
    result = CliRunner().invoke(main, ["fit", "--model", "naive", "--csv", str(small_csv), "--column", "demand",
                                       "--set", "interval_scale=ets", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "interval_scale ets fits statsforecast's AutoETS" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()


def test_choose_scale_keeps_the_scale_that_sizes_each_series_errors_cross_fitted():
    """interval_scale auto's choice: each half of the series is scored by bands calibrated on the other half; the scale
    that matches how widely each window's errors spread wins, whichever is listed first, and a tie keeps the first."""
    from tsattn.intervals import CHOICE_MIN_WINDOWS, choice_folds, choose_scale

    rng = np.random.default_rng(0)
    n = 200
    spread = np.exp(rng.normal(0, 1, n))  # each window's own error spread, 20x from the smallest to the largest
    actual = rng.normal(0, 1, (n, 2)) * spread[:, None]
    point, flat, series = np.zeros((n, 2)), np.ones(n), np.arange(n)
    folds = choice_folds(series)
    assert folds is not None and set(folds) == {0, 1}
    assert choice_folds(np.arange(2 * CHOICE_MIN_WINDOWS - 1)) is None  # one half short of the minimum
    assert choice_folds(np.zeros(500, dtype=int)) is None  # one series: no halves
    chosen, ratios = choose_scale(actual, point, None, {"blend": flat, "ets": np.stack([spread, spread], 1)}, folds,
                                  flat)
    assert chosen == "ets" and ratios["blend"] == 1.0 and ratios["ets"] < 0.8
    chosen, ratios = choose_scale(actual, point, None, {"blend": spread, "ets": np.stack([flat, flat], 1)}, folds, flat)
    assert chosen == "blend" and ratios["ets"] > 1.25
    chosen, ratios = choose_scale(actual, point, None, {"blend": flat, "ets": np.stack([flat, flat], 1)}, folds, flat)
    assert chosen == "blend" and ratios == {"blend": 1.0, "ets": 1.0}
    # a quantile model whose own quantiles bound the 80% level only: scored there (conformalized quantiles)
    own = {0.1: point - 1.28, 0.5: point, 0.9: point + 1.28}
    chosen, ratios = choose_scale(actual, point, own, {"blend": flat, "ets": np.stack([spread, spread], 1)}, folds,
                                  flat)
    assert chosen == "ets" and np.isfinite(ratios["ets"]) and ratios["ets"] < 1


def test_interval_scale_auto_chooses_on_validation_and_keeps_its_choice(monkeypatch, tmp_path):
    """interval_scale="auto" on a panel of random walks and noise around a level: the naive forecast's errors grow
    with the step on the walks only, as AutoETS's deviation does, so the ets scale scores better on the validation
    forecasts and is chosen; the choice and its scores are saved, and a reloaded model gives the same bands. Without
    statsforecast (or with too few series) the scale is blend, with no choice made."""
    pytest.importorskip("statsforecast")
    rng = np.random.default_rng(5)
    frames = []
    for i in range(100):
        steps = rng.normal(0, 1 + i % 7, 40)
        y = 100 + (np.cumsum(steps) if i % 2 else 3 * steps)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2020-01-01", periods=40, freq="D"),
                                    "y": y}))
    frame = pd.concat(frames, ignore_index=True)
    fitted = Forecaster("naive", horizon=4, season=1, interval_scale="auto").fit(frame)
    calibration = fitted.calibration_
    assert calibration.scale == "ets" and calibration.scale_choice["blend"] == 1.0
    assert calibration.scale_choice["ets"] < 1.0
    assert calibration.describe_scale().startswith("the ets scale, chosen on the validation forecasts (interval "
                                                   "score against blend's: ets 0.")
    assert fitted.state_.end_deviation is not None and fitted.state_.end_deviation.shape == (100, 4)
    band = fitted.predict(level=[80, 95])
    again = Forecaster.load(fitted.save(tmp_path / "m"))
    assert again.calibration_.scale == "ets" and again.calibration_.scale_choice == calibration.scale_choice
    pd.testing.assert_frame_equal(again.predict(level=[80, 95]), band)
    from tsattn.verdicts import interval_verdict

    run = fit(RunConfig(model="naive", horizon=4, season=1, level=[80], interval_scale="auto"), series=frame)
    assert run.state.calibration.scale == "ets"
    assert "Scores in the ets scale, chosen on the validation forecasts" in interval_verdict(run)
    assert "Scores in" not in interval_verdict(fit(RunConfig(model="naive", horizon=4, season=1, level=[80]),
                                                   series=frame))
    short = frame[frame["unique_id"].isin([f"s{i}" for i in range(20)])]
    few = Forecaster("naive", horizon=4, season=1, interval_scale="auto").fit(short)
    assert few.calibration_.scale == "blend" and few.calibration_.scale_choice == {}
    assert few.calibration_.describe_scale() == ("the blend scale (interval_scale auto could not choose: it compares "
                                                 "scales on two halves of the series, each holding at least 40 "
                                                 "validation windows; these hold 10 and 10)")
    assert Forecaster.load(few.save(tmp_path / "few")).calibration_.describe_scale() == \
        few.calibration_.describe_scale()

    import tsattn.baselines

    monkeypatch.setattr(tsattn.baselines, "statsforecast_installed", lambda: False)
    without = Forecaster("naive", horizon=4, season=1, interval_scale="auto").fit(frame)
    assert without.calibration_.scale == "blend" and without.calibration_.scale_choice == {}
    assert without.calibration_.describe_scale().endswith("could not choose: statsforecast, which the ets scale fits, "
                                                          "is not installed: pip install 'tsattn[bench]' (or pip "
                                                          "install statsforecast))")
    assert without.state_.end_deviation is None


def test_the_ets_scale_stays_within_a_bounded_factor_of_blend():
    """An AutoETS deviation that explodes along the horizon (or collapses) moves the ets scale at most
    ETS_SCALE_BOUND times away from the blend figure; in between it is sqrt(blend x deviation), and a missing
    deviation gives blend."""
    from tsattn.intervals import ETS_SCALE_BOUND, ets_scale

    blended = np.array([2.0, 3.0])
    deviation = np.array([[2.0, 8.0, 1e6], [1e-9, np.nan, 3.0]])
    np.testing.assert_allclose(ets_scale(blended, deviation),
                               [[2.0, 4.0, 2.0 * ETS_SCALE_BOUND], [3.0 / ETS_SCALE_BOUND, 3.0, 3.0]])


def test_auto_chooses_its_interval_scale_by_default_under_the_recipe_and_other_models_keep_blend():
    """Under the N-BEATS recipe (a panel of 40 series or more, a horizon of 2 or more) auto's intervals default to
    interval_scale auto (chosen before the M3 and M1 hold-outs at two origins: benchmarks/results/
    intervals_scale_choice_auto*.md); every other model, and auto on one series or a few, keep blend; a scale the
    user names wins."""
    from tsattn.config import settle
    from tsattn.panel import as_panel

    frame = pd.DataFrame({"unique_id": np.repeat([f"s{i}" for i in range(40)], 30),
                          "ds": np.tile(pd.date_range("2020-01-01", periods=30, freq="D"), 40),
                          "y": np.random.default_rng(0).normal(10, 1, 1200)})
    many, few = as_panel(frame), as_panel(frame[frame["unique_id"].isin(["s0", "s1"])])
    assert settle(RunConfig(model="auto", horizon=4), many).interval_scale == "auto"
    assert RunConfig(model="auto", preset="nbeats-recipe").interval_scale == "auto"
    for model in ("nbeats", "patch-transformer", "naive", "ets"):
        assert settle(RunConfig(model=model, horizon=4), many).interval_scale == "blend", model
    assert settle(RunConfig(model="auto", horizon=4), few).interval_scale == "blend"
    assert settle(RunConfig(model="auto", horizon=1), many).interval_scale == "blend"
    assert settle(RunConfig(model="auto", horizon=4, interval_scale="blend"), many).interval_scale == "blend"
    assert Forecaster("auto", horizon=4, interval_scale="expanding").run_config().interval_scale == "expanding"


def _counted_statistical_fits(monkeypatch) -> list:
    """Empties the statistical memos and returns the list every StatisticalModel fit appends its method's key to."""
    import tsattn.baselines as baselines
    from tsattn.baselines import StatisticalModel

    monkeypatch.setattr(baselines, "_STATISTICAL_MEMO", {})
    monkeypatch.setattr(baselines, "ETS_DEVIATIONS", {})
    fits = []
    real_fit_each = StatisticalModel._fit_each
    monkeypatch.setattr(StatisticalModel, "_fit_each",
                        lambda self, *a, **k: fits.append(self.key) or real_fit_each(self, *a, **k))
    return fits


def test_autoets_on_the_same_histories_laid_out_as_forecast_contexts_is_one_fit(monkeypatch, tmp_path):
    """StatisticalModel's memo keys on the histories, not on the arrays' layout: a panel's values and the NaN-padded
    rows a predict passes a local model are one fit (a changed value or origin is another). So a local model with
    ets-scaled intervals keeps no end deviation at fit (its tails hold every value): its band at the data's end fits
    AutoETS once for both its points and its scale, and equals the band from the deviation computed directly."""
    pytest.importorskip("statsforecast")
    import tsattn.baselines as baselines
    from tsattn.baselines import StatisticalModel, interval_scale_at

    rng = np.random.default_rng(6)
    lengths = (60, 45)
    values = np.concatenate([40 + np.cumsum(rng.normal(0, sd, n)) for n, sd in zip(lengths, (1.0, 3.0))])
    fits = _counted_statistical_fits(monkeypatch)
    model = StatisticalModel("ets", 3, 1)
    point = model.forecast(values, np.array([59, 104]), np.array([0, 60]), None, None)
    rows = np.full((2, 60), np.nan)
    rows[0], rows[1, 15:] = values[:60], values[60:]
    again = model.forecast(rows.ravel(), np.array([59, 119]), np.array([0, 60]), None, None)
    assert fits == ["ets"]
    np.testing.assert_array_equal(again, point)
    changed = rows.copy()
    changed[1, -1] += 1.0
    model.forecast(changed.ravel(), np.array([59, 119]), np.array([0, 60]), None, None)
    model.forecast(values, np.array([58, 104]), np.array([0, 60]), None, None)
    assert fits == ["ets"] * 3

    frame = pd.DataFrame({"unique_id": np.repeat(["a", "b"], lengths), "y": values,
                          "ds": np.concatenate([pd.date_range("2020-01-01", periods=n, freq="D") for n in lengths])})
    monkeypatch.setattr(baselines, "_STATISTICAL_MEMO", {})  # the histories above are these series' own
    fitted = Forecaster("ets", horizon=3, season=1, interval_scale="ets").fit(frame, validation=0.2)
    assert fitted.state_.end_deviation is None
    fits.clear()
    band = fitted.predict(level=[80])
    assert fits == ["ets"]  # the points and the ets scale at the ends: one fit
    expected = interval_scale_at("ets", values, np.array([59, 104]), np.array([0, 60]), 1, 3, fitted.mase_scale_)
    radius = fitted.calibration_.get("conformal").radius(80)[0]
    widths = (band["ets-hi-80"] - band["ets-lo-80"]).to_numpy().reshape(2, 3) / 2
    np.testing.assert_allclose(widths, radius[None, :] * expected)
    pd.testing.assert_frame_equal(Forecaster.load(fitted.save(tmp_path / "m")).predict(level=[80]), band)


def test_autoets_points_carry_the_deviation_the_ets_scale_reads_without_a_second_fit(monkeypatch):
    """AutoETS fitted for its points (auto's candidate, the ets baseline) asks statsforecast for its 80% interval
    beside them, so ets_deviation at the same origins reads the remembered fit instead of fitting again; the points
    are those of a fit without levels even where the interval alone fails (it is NaN there, the scale falls back to
    blend), and a history AutoETS cannot fit is still said once in a warning."""
    pytest.importorskip("statsforecast")
    import tsattn.baselines as baselines
    from tsattn.baselines import StatisticalModel, ets_deviation

    rng = np.random.default_rng(4)
    values = np.concatenate([50 + np.cumsum(rng.normal(0, 1, 60)), 20 + rng.normal(0, 2, 60)])
    origins, first = np.array([59, 2, 119]), np.array([0, 0, 60])  # the second: three values, too few for AutoETS
    fits = _counted_statistical_fits(monkeypatch)
    model = StatisticalModel("ets", 3, 1)
    with pytest.warns(UserWarning, match="could not be fitted on 1 of 3 histories"):
        point = model.forecast(values, origins, first, None, None)
    deviation = ets_deviation(values, origins, first, 1, 3)
    assert fits == ["ets"]  # one fit served both
    assert np.isnan(deviation[1]).all() and np.isfinite(deviation[[0, 2]]).all()
    point_80, bounds = model.forecast_distribution(values, origins, first, None, None, levels=(80,))
    np.testing.assert_array_equal(point_80, point)
    np.testing.assert_allclose((bounds[0.9] - bounds[0.1])[[0, 2]] / (2 * 1.2815515655446004), deviation[[0, 2]])
    assert set(bounds) == {0.1, 0.5, 0.9}

    # where statsforecast's interval fails alone, the points stay AutoETS's (not the naive stand-in)
    monkeypatch.setattr(baselines, "_STATISTICAL_MEMO", {})
    monkeypatch.setattr(baselines, "ETS_DEVIATIONS", {})
    method = model._method().__class__
    real_forward = method.forward

    def forward(self, *args, level=None, **kwargs):
        if level:
            raise ValueError("no interval here")
        return real_forward(self, *args, **kwargs)

    monkeypatch.setattr(method, "forward", forward)
    with pytest.warns(UserWarning, match="could not be fitted on 1 of 3"):
        again = model.forecast(values, origins, first, None, None)
    np.testing.assert_array_equal(again, point)
    assert np.isnan(ets_deviation(values, origins, first, 1, 3)).all()
