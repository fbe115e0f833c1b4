"""Statistical baselines (statsforecast) beside the networks, and seed ensembles."""

import dataclasses
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import TINY, TINY_PARAMS, make_series
from tsattn.cli.main import main
from tsattn.errors import ConfigError
from tsattn.config import RunConfig
from tsattn.harness import fit


def panel(n=6, length=60, horizon=6):
    frames = []
    for i in range(n):
        series = make_series(length, seed=i) + 50 * (i + 1)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": series.index, "y": series.to_numpy()}))
    frame = pd.concat(frames, ignore_index=True)
    frame.attrs["horizon"] = horizon
    return frame


def config(**changes):
    return RunConfig(model="simple-rnn", model_params=dict(TINY_PARAMS["simple-rnn"]), dataset=None,
                     **{**TINY, "horizon": 6, **changes})


def test_theta_scored_like_every_baseline_and_equal_to_statsforecast():
    from statsforecast.models import Theta

    frame = panel()
    result = fit(config(baselines=["theta", "ets"]), series=frame)
    test = result.metrics["test"]
    assert {"theta", "ets", "naive", "seasonal_naive", "linear"} <= set(test)
    assert "theta" not in result.metrics["train"]  # refitted per origin: scored on the test part only
    # the harness' theta forecast of a series is statsforecast's Theta on the values before the hold-out
    forecast = result.forecasts["test"]
    row = int(np.flatnonzero(forecast.series == 2)[0])
    history = frame[frame["unique_id"] == "s2"]["y"].to_numpy()[:-6]
    expected = Theta(season_length=12).forecast(y=history, h=6)["mean"]
    np.testing.assert_allclose(forecast.baselines["theta"][row], expected, rtol=1e-10)
    assert result.baseline_seconds["theta"] > 0
    by_series = result.metrics_frame
    assert set(by_series[by_series["part"] == "test"]["model"]) >= {"theta", "ets"}


def test_statistical_baseline_names_and_missing_statsforecast(monkeypatch):
    with pytest.raises(ConfigError, match="unknown baseline 'prophet'; --baselines takes theta, dynamic-theta, ets, arima"):
        fit(config(baselines=["prophet"]), series=panel())
    with pytest.raises(ConfigError, match="always on"):
        fit(config(baselines=["naive"]), series=panel())
    monkeypatch.setitem(sys.modules, "statsforecast", None)  # import statsforecast now fails
    with pytest.raises(ConfigError, match=r"need statsforecast, which is not installed: pip install 'tsattn\[bench\]'"):
        fit(config(baselines=["theta"]), series=panel())


def test_cli_baselines_option(tmp_path):
    path = tmp_path / "panel.csv"
    panel().to_csv(path, index=False)
    base = ["fit", "--model", "simple-rnn", "--csv", str(path), "--column", "y", "--date-column", "ds",
            "--id-column", "unique_id", "--window", "8", "--horizon", "6", "--epochs", "2", "--set", "units=3",
            "--set", "holdout=6"]
    bad = CliRunner().invoke(main, [*base, "--baselines", "theta,prophet", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "unknown baseline 'prophet'" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "bad").exists()
    good = CliRunner().invoke(main, [*base, "--baselines", "theta,dynamic-theta", "--out", str(tmp_path / "run")])
    assert good.exit_code == 0, good.output
    assert "theta" in good.output and "dynamic-theta" in good.output
    table = pd.read_csv(tmp_path / "run" / "metrics_by_series.csv")
    assert {"theta", "dynamic_theta"} <= set(table["model"])


def test_compare_reports_statistical_baselines(tmp_path):
    from tsattn.compare import compare

    path = tmp_path / "panel.csv"
    panel().to_csv(path, index=False)
    results = compare(models=["simple-rnn"], datasets=[], seeds=[0],
                      csv=[{"path": str(path), "column": "y", "date_column": "ds", "id_column": "unique_id"}],
                      window=8, horizon=6, epochs=2, settings={"units": 3, "holdout": 6, "baselines": ["theta"]},
                      out=tmp_path / "cmp")
    summary = pd.DataFrame(results.attrs["summary"])
    assert "theta" in set(summary["model"])
    report = (tmp_path / "cmp" / "report.md").read_text()
    verdict = [line for line in results.attrs["verdict"][str(path)] if line.startswith("theta (")] if str(path) in \
        results.attrs["verdict"] else [line for lines in results.attrs["verdict"].values() for line in lines
                                       if line.startswith("theta (")]
    assert len(verdict) == 1 and ("beaten on average by" in verdict[0] or "better on average than" in verdict[0])
    assert "of 6 series" in verdict[0] and verdict[0] in report


def test_seed_ensemble_is_the_median_of_its_members_and_survives_save(tmp_path):
    from tsattn.forecaster import Forecaster

    series = make_series(120)
    single = [fit(config(horizon=1, seed=seed), series=series) for seed in (0, 1, 2)]
    ensemble = fit(config(horizon=1, ensemble=3), series=series)
    members = np.stack([r.forecasts["test"].predicted for r in single])
    np.testing.assert_allclose(ensemble.forecasts["test"].predicted, np.median(members, axis=0), rtol=1e-4,
                               atol=1e-4)
    assert ensemble.parameter_count == 3 * single[0].parameter_count
    f = Forecaster("attention-rnn", window=8, units=3, ensemble=2).fit(series, epochs=2)
    path = f.save(tmp_path / "e.tsattn")
    g = Forecaster.load(path)
    assert g.predict(4).equals(f.predict(4))
    assert f.attention_weights().shape[1] == 8  # the first member's attention
    with pytest.raises(ConfigError, match="ensemble must be an integer in 1..100"):
        fit(config(ensemble=0), series=series)


@pytest.mark.slow  # trains 8 stacked members and 3 alone: about 40 s
def test_lookback_and_loss_ensemble_is_the_median_of_members_trained_alone(tmp_path):
    """ensemble_lookbacks x ensemble_losses x ensemble seeds: the ensemble's forecast is its members' median, and a
    member trained alone on its own window, loss and seed gives the same forecasts as inside the ensemble (checked
    for one member of each other value of the three); it saves exactly."""
    from tsattn.forecaster import Forecaster

    series = make_series(120)
    base = dict(horizon=2, window=None, epochs=2)
    # alone: the same window and split, but a member's scaler is the ensemble's (fitted on the longest windows);
    # with scaling=none they agree by construction, so compare there
    ensemble = fit(config(**base, ensemble_lookbacks=[3, 4], ensemble_losses=["mae", "mase"], ensemble=2,
                          scaling="none"), series=series)
    assert ensemble.data.window == 8  # the longest lookback; each member reads its own last steps
    members = ensemble.history.attrs["members"]
    assert [(m["window"], m["loss"], m["seed"]) for m in members] == [
        (8, "mae", 0), (8, "mae", 1), (8, "mase", 0), (8, "mase", 1),
        (6, "mae", 0), (6, "mae", 1), (6, "mase", 0), (6, "mase", 1)]
    from tsattn.models import ensemble_members

    X = ensemble.data.X("test")
    inside = np.stack([member.predict(X, verbose=0) for member in ensemble_members(ensemble.model)])
    np.testing.assert_allclose(ensemble.model.predict(X, verbose=0), np.median(inside, axis=0), rtol=1e-4, atol=1e-4)
    for k in (2, 5, 7):  # trained alone: the second loss; the shorter window, second seed; all three at once
        m = members[k]
        single = fit(config(**base, lookback=m["window"] // 2, loss=m["loss"], seed=m["seed"], scaling="none"),
                     series=series)
        alone = single.model.predict(X[:, -m["window"]:], verbose=0)
        np.testing.assert_allclose(inside[k], alone, rtol=1e-4, atol=1e-4)
    f = Forecaster("simple-rnn", horizon=2, units=3, ensemble_lookbacks=[3, 4], ensemble_losses=["mae", "mse"])
    f.fit(series, epochs=1)
    g = Forecaster.load(f.save(tmp_path / "e.tsattn"))
    assert g.predict(2).equals(f.predict(2))
    for bad, message in ((dict(ensemble_lookbacks=[2, 2]), "ensemble_lookbacks must be a list of distinct"),
                         (dict(ensemble_lookbacks=[2], lookback=2), "give ensemble_lookbacks .* or lookback"),
                         (dict(ensemble_lookbacks=[0]), "ensemble_lookbacks must be an integer in 1..100"),
                         (dict(ensemble_losses=["smape", "quantile"]), "ensemble_losses takes point losses"),
                         (dict(ensemble_losses=["mse"], loss="quantile"), "with loss=quantile drop ensemble_losses")):
        with pytest.raises(ConfigError, match=message):
            fit(config(**{"window": None, **bad}), series=series)


def test_members_without_early_stopping_train_stacked_and_equal_each_trained_alone(tmp_path):
    """Without early stopping the members train stacked in one model (one fit): members of one seed offset draw
    the same batches as alone, so each equals the model its loss trains alone; the history is their mean loss,
    and a lookback member reads the last steps of the longest window; the ensemble saves and loads exactly."""
    from tsattn.forecaster import Forecaster
    from tsattn.harness import trains_stacked
    from tsattn.models import ensemble_members

    frame = panel(n=4, length=40, horizon=3)
    base = dict(model_params={"units": 6, "blocks": 2}, horizon=3, window=6, epochs=2, early_stopping=False)

    def config(**changes):
        return RunConfig(model="nbeats", dataset=None, **{**TINY, **base, **changes})

    ensemble = fit(config(ensemble_losses=["mae", "mase", "smape"]), series=frame)
    assert trains_stacked(ensemble.data, ensemble.state.config.parts()[2])
    X = ensemble.data.X("test")
    inside = [member.predict(X, verbose=0) for member in ensemble_members(ensemble.model)]
    losses = []
    for name, member in zip(["mae", "mase", "smape"], inside):
        alone = fit(config(loss=name), series=frame)
        np.testing.assert_allclose(alone.model.predict(X, verbose=0), member, rtol=1e-4, atol=1e-4)
        losses.append(alone.history["loss"].to_numpy())
    np.testing.assert_allclose(ensemble.history["loss"].to_numpy(), np.mean(losses, axis=0), rtol=1e-4)
    np.testing.assert_allclose(ensemble.model.predict(X, verbose=0), np.median(inside, axis=0), rtol=1e-5, atol=1e-5)
    # lookbacks x seeds, stacked: the shorter lookback's members read the last 3 steps of the 6-step window
    f = Forecaster("nbeats", horizon=3, units=6, blocks=2, early_stopping=False, ensemble=2,
                   ensemble_lookbacks=[1, 2]).fit(frame, epochs=1)
    assert [m["window"] for m in f.state_.history.attrs["members"]] == [6, 6, 3, 3]
    g = Forecaster.load(f.save(tmp_path / "stacked.tsattn"))
    assert g.predict().equals(f.predict())


def test_window_normalisation_makes_a_model_scale_equivariant_and_the_schedule_halves():
    """normalise=window: a window times c gives the forecast times c, whatever the weights (quantile heads
    too); lr_schedule=halving halves the rate after each third of the steps; clipnorm reaches the optimiser."""
    from tsattn.config import RunConfig
    from tsattn.harness import _optimizer
    from tsattn.models import get_model

    x = np.random.default_rng(0).uniform(1, 100, size=(5, 12, 1)).astype("float32")
    for model, quantiles in (("nbeats", None), ("attention-rnn", (0.1, 0.5, 0.9))):
        network = get_model(model, window=12, horizon=3, quantiles=quantiles, normalise="window", units=8)
        np.testing.assert_allclose(network.predict(x * 40, verbose=0), 40 * network.predict(x, verbose=0),
                                   rtol=1e-4, atol=1e-3)
    zeros = get_model("nbeats", window=12, horizon=3, normalise="window", units=8).predict(np.zeros_like(x), verbose=0)
    assert np.isfinite(zeros).all()  # an all-zero window is divided by 1, not 0
    _, _, training = RunConfig(lr_schedule="halving", epochs=3, clipnorm=1.0).parts()
    optimizer = _optimizer(training, steps_per_epoch=10)
    assert [float(optimizer._learning_rate(step)) for step in (0, 9, 10, 19, 20, 29)] == \
        pytest.approx([1e-3, 1e-3, 5e-4, 5e-4, 2.5e-4, 2.5e-4])
    assert optimizer.clipnorm == 1.0
    result = fit(config(scaling="none", loss="smape", lr_schedule="halving", clipnorm=1.0).updated(normalise="window"),
                 series=make_series(120) + 500)
    assert np.isfinite(result.metrics["test"]["model"]["smape"])
    with pytest.raises(ConfigError, match=r"clipnorm must be a number in \(0, 1e\+06\]"):
        fit(config(clipnorm=0), series=make_series(120))


def test_relative_skip_is_level_invariant():
    """skip=relative: shifting a window by c shifts every forecast by exactly c, whatever the weights."""
    import keras

    from tsattn.models import get_model

    keras.utils.set_random_seed(3)
    for name, params in TINY_PARAMS.items():
        model = get_model(name, window=6, horizon=3, skip="relative", center="last", **params)  # nbeats: not its default
        for layer in model.layers:  # random non-zero weights everywhere, the skip path included
            layer.set_weights([np.random.default_rng(1).normal(size=w.shape).astype("float32")
                               for w in layer.get_weights()])
        x = np.random.default_rng(2).normal(size=(4, 6, 1)).astype("float32")
        shifted = np.asarray(model(x + 5.0)) - np.asarray(model(x))
        np.testing.assert_allclose(shifted, 5.0, atol=1e-4)


def test_default_window_shrinks_so_every_short_series_is_forecast():
    """M3 yearly-like panel: series of 20..40 values, horizon 6: the default window becomes 12, bounded by the
    shortest length minus the horizon (14) and by the median series' training part minus the horizon (18 - 6), and no
    series is left out (padding the shorter series instead was worse before the M3 hold-outs:
    benchmarks/results/ragged.md); with pad set, the median series (30 values) and the longest series' training part
    (40 - 6 - 6 - 6 = 22) bound it and the shorter series are padded; an explicit window is kept as given."""
    from tsattn.config import settle, window_config

    frames = []
    for i, length in enumerate(range(20, 41, 4)):
        values = 100 + np.cumsum(np.random.default_rng(i).normal(1, 2, size=length))
        frames.append(pd.DataFrame({"unique_id": f"y{i}", "ds": pd.period_range("1980", periods=length, freq="Y")
                                    .to_timestamp(), "y": values}))
    frame = pd.concat(frames, ignore_index=True)
    frame.attrs["horizon"] = 6
    data = window_config(frame, RunConfig(dataset=None, horizon=6, preset="classic"))
    assert data.window == 12 and data.panel.n_series == 6 and not data.dropped
    assert not settle(RunConfig(model="simple-rnn", dataset=None, horizon=6), data.panel).pad
    result = fit(RunConfig(model="simple-rnn", dataset=None, horizon=6, epochs=2, model_params={"units": 3}),
                 series=frame)
    assert result.panel.n_series == 6 and result.data.window == 12
    padded = fit(RunConfig(model="simple-rnn", dataset=None, horizon=6, epochs=2, model_params={"units": 3}, pad=True),
                 series=frame)
    assert padded.data.window == 22 and not padded.data.dropped
    with pytest.warns(UserWarning, match="left out"):
        assert window_config(frame, RunConfig(dataset=None, horizon=6, window=20, preset="classic")).dropped


def test_the_default_window_leaves_half_a_panels_series_a_training_window():
    """A small panel of short quarterly-like series (36-63 values, horizon 8, the hold-out split): the window that
    the shortest series' forecast allows (24) leaves half the series no training window (their training parts hold
    20-21 values); the default is bounded by the median series' training part instead (24 values -> 16). One series,
    an even panel, a window given and pad keep their windows."""
    from tsattn.config import window_config

    lengths = [36, 36, 36, 37, 37, 44, 44, 45, 58, 63]
    rng = np.random.default_rng(0)
    frame = pd.concat([pd.DataFrame({"unique_id": f"q{i}", "ds": pd.period_range("1990Q1", periods=n, freq="Q")
                                     .to_timestamp(), "y": 100 + rng.normal(0, 3, n).cumsum()})
                       for i, n in enumerate(lengths)], ignore_index=True)
    frame.attrs["horizon"] = 8
    config = RunConfig(dataset=None, horizon=8, preset="classic")
    data = window_config(frame, config)
    assert data.window == 16 and not data.dropped
    trained = set(np.unique(data.series_numbers("train")).tolist())
    assert len(trained) >= 5  # at least half the series hold a training window
    assert window_config(frame, dataclasses.replace(config, window=24)).window == 24
    assert window_config(frame, dataclasses.replace(config, pad=True)).window == 24
    one = frame[frame["unique_id"] == "q0"]
    assert window_config(one, config).window == 12  # one series: its own training part (36 - 16) minus the horizon
    even = frame[frame["unique_id"].isin(["q0", "q1", "q2"])]
    assert window_config(even, config).window == 12  # an even panel: the same


def test_loss_setting():
    series = make_series(120)
    result = fit(config(horizon=1, loss="mae"), series=series)
    assert np.isfinite(result.history["loss"]).all()
    with pytest.raises(ConfigError, match="loss must be one of mse, mae, huber, quantile, smape, mape, mase; got .l1."):
        fit(config(loss="l1"), series=series)


def quarterly_panel(n=3):
    rng = np.random.default_rng(0)
    frames = []
    for i in range(n):
        length = 30 + 5 * i  # different lengths: a local method reads each series' whole history
        steps = np.arange(length)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2000-01-01", periods=length, freq="QS"),
                                    "y": 100 + 10 * i + 0.5 * steps + 5 * np.sin(steps * np.pi / 2)
                                    + rng.normal(0, 1, length)}))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("name, method", [("theta", "Theta"), ("ets", "AutoETS"),
                                          ("dynamic-theta", "DynamicOptimizedTheta")])
def test_statistical_forecasters_through_the_forecaster_equal_statsforecast(name, method, tmp_path):
    """Issue 24: Forecaster("theta") etc. through the networks' interface: predict equals StatsForecast.forecast on
    every series' whole history (series of different lengths), cross_validation equals statsforecast's
    cross_validation, intervals come as <model>-lo-80 columns, and save/load keeps the forecasts."""
    from statsforecast import StatsForecast
    from statsforecast import models as sf_models

    from tsattn import Forecaster

    frame = quarterly_panel()
    method_model = getattr(sf_models, method)(season_length=4)
    forecaster = Forecaster(name, horizon=4).fit(frame)
    assert forecaster.season_ == 4 and forecaster.estimator_.capabilities.scope == "local"
    ours = forecaster.predict(level=[80])
    assert list(ours.columns) == ["unique_id", "ds", name, f"{name}-lo-80", f"{name}-hi-80"]
    theirs = StatsForecast(models=[method_model], freq="QS").forecast(df=frame, h=4)
    np.testing.assert_allclose(ours[name].to_numpy(), theirs[method].to_numpy(), rtol=1e-8)
    assert (ours[f"{name}-lo-80"] <= ours[name]).all() and (ours[name] <= ours[f"{name}-hi-80"]).all()

    cv = forecaster.cross_validation(frame, h=4, n_windows=2, step_size=4)
    reference = StatsForecast(models=[method_model], freq="QS").cross_validation(df=frame, h=4, n_windows=2,
                                                                                 step_size=4)
    reference = reference.sort_values(["unique_id", "cutoff", "ds"]).reset_index(drop=True)
    np.testing.assert_array_equal(cv["cutoff"].to_numpy(), reference["cutoff"].to_numpy())
    np.testing.assert_allclose(cv[name].to_numpy(), reference[method].to_numpy(), rtol=1e-8)

    path = forecaster.save(tmp_path / "stat.tsattn")
    np.testing.assert_allclose(Forecaster.load(path).predict()[name].to_numpy(), ours[name].to_numpy())


def test_statistical_forecaster_needs_statsforecast_and_says_how_to_install(monkeypatch, tmp_path):
    """Fitting a statistical method without statsforecast, and forecasting with one saved where it was installed and
    loaded where it is not, is one line naming the install (the loaded one forecast the naive value on every
    history, warned as 'could not be fitted on 8 of 8 histories')."""
    import warnings

    import tsattn.baselines
    from tsattn import Forecaster

    saved = Forecaster("theta", horizon=4).fit(quarterly_panel()).save(tmp_path / "theta.tsattn")
    monkeypatch.setitem(sys.modules, "statsforecast", None)
    monkeypatch.setitem(sys.modules, "statsforecast.models", None)
    with pytest.raises(ConfigError, match=r"need statsforecast, which is not installed: pip install 'tsattn\[bench\]'"):
        Forecaster("theta", horizon=4).fit(quarterly_panel())
    monkeypatch.setattr(tsattn.baselines, "_STATISTICAL_MEMO", {})  # as in a new process
    loaded = Forecaster.load(saved)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "could not be fitted" on the way
        with pytest.raises(ConfigError, match=r"the statistical methods \(theta, dynamic-theta, ets, arima; also as "
                                              r"auto's members\) need statsforecast, which is not installed"):
            loaded.predict()


def test_pooled_linear_baseline_fits_unscaled_series_of_every_size():
    """Under scaling=none (the N-BEATS recipe) the pooled AR shared one intercept in series units across series
    of very different sizes (M1: sMAPE 72.8 against 17.3 with minmax); it now fits each window over its largest
    value: scale-equivariant, and as accurate as with per-series min-max scaling."""
    from tsattn import Forecaster

    rng = np.random.default_rng(1)
    frames = []
    for i, size in enumerate((1.0, 30.0, 5_000.0, 2e5)):
        noise = np.cumsum(rng.normal(0, 0.02, 80)) + 1.0 + 0.1 * np.sin(np.arange(80) * np.pi / 6)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2000-01-01", periods=80, freq="MS"),
                                    "y": size * (5 + noise)}))
    frame = pd.concat(frames, ignore_index=True)
    unscaled = Forecaster("linear", window=12, scaling="none").fit(frame)
    scaled = Forecaster("linear", window=12).fit(frame)
    assert unscaled.estimator_.window_scaled and not scaled.estimator_.window_scaled
    smape = {name: f.evaluate(frame)["model"]["smape"] for name, f in (("none", unscaled), ("minmax", scaled))}
    assert smape["none"] < 1.5 * smape["minmax"] + 0.1, smape
    bigger = frame.assign(y=frame["y"] * 1000)
    np.testing.assert_allclose(unscaled.predict(1, series=bigger)["linear"],
                               1000 * unscaled.predict(1, series=frame)["linear"], rtol=1e-9)


def test_statistical_forecasts_are_remembered_across_runs_of_a_comparison(monkeypatch):
    """Every run of a comparison scores the same statistical baselines on the same targets: refitting AutoETS at
    every origin of a long series for each model and seed cost minutes per run. The second run reuses the
    forecasts (identical), and still reports what fitting cost."""
    from tsattn import baselines

    calls = []
    fit_each = baselines.StatisticalModel._fit_each
    monkeypatch.setattr(baselines.StatisticalModel, "_fit_each",
                        lambda self, *a: calls.append(self.key) or fit_each(self, *a))
    baselines._STATISTICAL_MEMO.clear()
    first = fit(config(baselines=["theta"], seed=0), series=panel())
    second = fit(config(baselines=["theta"], seed=1), series=panel())
    assert calls == ["theta"]
    np.testing.assert_array_equal(first.forecasts["test"].baselines["theta"], second.forecasts["test"].baselines["theta"])
    assert second.baseline_seconds["theta"] == first.baseline_seconds["theta"] > 0
    other = panel()
    other["y"] = other["y"] * 2
    fit(config(baselines=["theta"], seed=0), series=other)
    assert calls == ["theta", "theta"]  # other values: fitted again
