import copy
import json
import pickle
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from click.testing import CliRunner
from sklearn.base import clone

import tsattn
from conftest import TINY_PARAMS, make_series
from tsattn.cli.main import main
from tsattn.errors import ConfigError, DataError, NotFittedError
from tsattn.forecaster import Forecaster

TINY = {"units": 4, "epochs": 3, "batch_size": 16}


@pytest.fixture(scope="module")
def fitted():
    return Forecaster("attention-rnn", window=8, **TINY).fit(make_series(), seed=0)


def test_sklearn_protocol():
    f = Forecaster("simple-rnn", window=12, units=8, epochs=5)
    assert f.get_params() == {"model": "simple-rnn", "window": 12, "horizon": None, "units": 8, "epochs": 5}
    assert f.set_params(units=16, window=6) is f
    assert f.get_params()["units"] == 16 and f.window == 6
    copy = clone(f)
    assert copy is not f and copy.get_params() == f.get_params()
    assert not hasattr(copy, "model_")
    lazy = Forecaster("no-such-model", window=-3)  # stored verbatim, checked in fit
    with pytest.raises(ConfigError, match="unknown model 'no-such-model'; available: simple-rnn.*naive, seasonal-naive"):
        lazy.fit(make_series())
    for name, hint in (("LSTM", "an LSTM is simple-rnn or attention-rnn with cell=lstm: Forecaster(\"simple-rnn\", "
                                "cell=\"lstm\"), CLI --model simple-rnn --set cell=lstm"),
                       ("PatchTST", "the peer libraries' PatchTST is 'patch-transformer' here"),
                       ("AutoETS", "the peer libraries' AutoETS is 'ets' here"), ("nbeat", "did you mean 'nbeats'?")):
        with pytest.raises(ConfigError, match=re.escape(f"unknown model {name!r} ({hint}); available: simple-rnn")):
            Forecaster(name).fit(make_series())
    series = make_series(40)
    for call in (lambda f: f.predict(3), lambda f: f.backtest(series), lambda f: f.evaluate(series),
                 lambda f: f.attention_weights(), lambda f: f.plot(), lambda f: f.make_future_dataframe()):
        with pytest.raises(NotFittedError, match="not fitted yet; call fit"):  # backtest once: AttributeError 'state_'
            call(Forecaster())
    assert "Forecaster(model='simple-rnn'" in repr(f)


@pytest.mark.parametrize("freq, expected_next", [("MS", "2013-05-01"), ("D", "2000-06-09"), (None, 160)])
def test_predict_index_arithmetic(freq, expected_next):
    series = make_series(freq=freq)
    f = Forecaster("naive", window=4).fit(series)
    forecast = f.predict(3)
    assert len(forecast) == 3 and (forecast == series.iloc[-1]).all()
    if freq is None:
        assert list(forecast.index) == [160, 161, 162]
    else:
        assert forecast.index[0] == pd.Timestamp(expected_next) and forecast.index.freqstr == freq
    period = pd.Series(series.to_numpy(), index=pd.period_range("2000-01", periods=160, freq="M"))
    assert str(Forecaster("naive", window=4).fit(period).predict(2).index[0]) == "2013-05"


def test_inputs_dataframe_and_array():
    values = make_series().to_numpy()
    assert list(Forecaster("naive").fit(values).predict(2).index) == [160, 161]
    frame = pd.DataFrame({"v": values})
    assert Forecaster("naive").fit(frame).predict(1).iloc[0] == values[-1]
    with pytest.raises(DataError, match=r"^the data is a path \('sales.csv'\), not the values: read it first, "
                                        r"tsattn.read_csv_panel\('sales.csv'\)"):  # it said "an array of shape ()"
        Forecaster("naive").fit("sales.csv")


def test_seasonal_naive_recursion_by_hand():
    series = pd.Series(np.arange(36.0), index=pd.date_range("2000-01-01", periods=36, freq="MS"))
    f = Forecaster("seasonal-naive", window=4).fit(series)
    assert f.season_ == 12
    np.testing.assert_array_equal(f.predict(14).to_numpy(), list(range(24, 36)) + [24, 25])


def test_predict_direct_then_recursive(fitted):
    direct = Forecaster("simple-rnn", window=8, horizon=3, **TINY).fit(make_series(), seed=0)
    three, two = direct.predict(3), direct.predict(2)
    np.testing.assert_allclose(two.to_numpy(), three.to_numpy()[:2], rtol=1e-6)
    seven = direct.predict(7)
    np.testing.assert_allclose(seven.to_numpy()[:3], three.to_numpy(), rtol=1e-6)
    # the second block is the model applied to the history extended with the first block
    extended = pd.concat([make_series(), three])
    np.testing.assert_allclose(seven.to_numpy()[3:6], direct.predict(3, series=extended).to_numpy(), rtol=1e-5)
    assert fitted.predict().shape == (1,)


def test_predict_after_another_series(fitted):
    other = make_series(seed=5, n=40)
    other.index = pd.date_range("2020-01-01", periods=40, freq="MS")
    forecast = fitted.predict(2, series=other)
    assert forecast.index[0] == pd.Timestamp("2023-05-01")
    with pytest.raises(DataError, match="frequency D but the model was fitted on MS; resample"):
        fitted.predict(2, series=make_series(freq="D"))
    with pytest.raises(DataError, match="range index but the model was fitted on a datetime index"):
        fitted.predict(2, series=make_series(freq=None))
    with pytest.warns(UserWarning, match="the series has fewer than the 8 values the window reads, so its inputs are "
                                         "padded with its first value, which this model never trained on"):
        short = fitted.predict(2, series=other.iloc[:5])  # every series gets a forecast
    padded = pd.concat([pd.Series(other.iloc[0], index=pd.date_range("2019-10-01", periods=3, freq="MS")),
                        other.iloc[:5]])
    np.testing.assert_allclose(short.to_numpy(), fitted.predict(2, series=padded).to_numpy(), rtol=1e-5)
    with pytest.raises(ConfigError, match="steps must be an integer in 1..100000; got 0"):
        fitted.predict(0)


def test_evaluate_with_baselines(fitted):
    holdout = make_series(seed=7, n=40)
    result = fitted.evaluate(holdout)
    assert result["count"] == 40 - 8
    values = holdout.to_numpy()
    naive_rmse = np.sqrt(np.mean((values[8:] - values[7:-1]) ** 2))
    assert result["naive"]["rmse"] == pytest.approx(naive_rmse)
    assert result["seasonal_naive"]["count"] == 40 - 12  # only where one season back exists
    assert result["model"]["rmse"] > 0 and result["model"]["mase"] > 0


def test_backtest_no_leak_with_retrain():
    series = make_series(n=120)
    f = Forecaster("simple-rnn", window=8, **TINY).fit(series.iloc[:80], seed=0)
    table = f.backtest(series, start=100, stride=5, retrain=2, epochs=1)
    origins = table["origin"].drop_duplicates()
    assert len(origins) == len(range(99, 119, 5))
    assert (table["trained_until"] <= table["origin"]).all()  # a model / scaler never sees data after its origin
    assert table["trained_until"].nunique() == 2  # refit every 2 origins
    assert list(table.columns) == ["origin", "ds", "step", "actual", "predicted", "naive", "trained_until"]
    assert table.attrs["metrics"]["origins"] == 4 and table.attrs["metrics"]["retrain"] == 2
    long = f.long_backtest(table, series)  # a panel of one, as `tsattn backtest` writes it
    assert list(long.columns[:2]) == ["unique_id", "origin"] and set(long["unique_id"]) == {"demand"}
    assert f.long_backtest(long) is long


def test_backtest_without_retrain_warns_when_fitted_later(fitted):
    series = make_series()
    with pytest.warns(UserWarning, match=r"fitted on data up to \d{4}-\d\d-01, after the first origin \d{4}-\d\d-01: "
                                         "these forecasts are optimistic; use retrain=True"):  # dates, no 00:00:00
        table = fitted.backtest(series, start=0.8, steps=2)
    assert set(table["step"]) == {1, 2}
    assert len(table.attrs["metrics"]["per_step"]) == 2
    with pytest.raises(ConfigError, match="leaves 4 value\\(s\\) before the first origin, fewer than one window"):
        fitted.backtest(series, start=4)
    with pytest.raises(ConfigError, match="fraction must be in \\(0, 1\\)"):
        fitted.backtest(series, start=1.5)


def test_attention_weights(fitted):
    weights = fitted.attention_weights(make_series(n=30, seed=3))
    assert weights.shape == (30 - 8 + 1, 8) and list(weights.columns)[-1] == "lag_1"
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)
    assert weights.index[-1] == pd.Timestamp("2002-07-01")  # the forecast after the series
    transformer = Forecaster("transformer", window=8, d_model=8, num_heads=2, ff_dim=8, num_blocks=1, epochs=1)
    transformer.fit(make_series())
    np.testing.assert_allclose(transformer.attention_weights().sum(axis=1), 1.0, rtol=1e-5)
    with pytest.raises(ConfigError, match="has no attention weights"):
        Forecaster("naive").fit(make_series()).attention_weights()


def test_save_load_identity_and_plots(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.tsattn")
    loaded = Forecaster.load(path)
    assert loaded.predict(12).equals(fitted.predict(12))
    other = make_series(seed=9, n=30)
    assert loaded.predict(3, series=other).equals(fitted.predict(3, series=other))
    assert loaded.get_params() == fitted.get_params()
    assert loaded.evaluate(other)["model"] == fitted.evaluate(other)["model"]
    for kind in ("forecast", "attention", "loss"):
        figure = fitted.plot(tmp_path / f"{kind}.png", kind=kind, steps=6)
        assert isinstance(figure, Figure) and (tmp_path / f"{kind}.png").stat().st_size > 5000
    baseline = Forecaster("seasonal-naive").fit(make_series())
    again = Forecaster.load(baseline.save(tmp_path / "baseline.tsattn"))
    assert again.predict(13).equals(baseline.predict(13))
    # pickle, joblib and copy.deepcopy (it said "Can't pickle local object 'NetworkModel._compiled.<locals>.<lambda>'"
    # for a fitted network): the same forecasts and attention, before and after a forecast traced the forward pass
    for model in (fitted, loaded, baseline):
        for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            assert copied.predict(12).equals(model.predict(12))
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(fitted)).attention_weights(), fitted.attention_weights())


def test_load_errors(tmp_path, fitted):
    with pytest.raises(DataError, match="does not exist"):
        Forecaster.load(tmp_path / "missing.tsattn")
    junk = tmp_path / "junk.tsattn"
    junk.write_bytes(b"not a zip")
    with pytest.raises(DataError, match="is not a tsattn model \\(not a zip archive\\)"):
        Forecaster.load(junk)
    empty_zip = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty_zip, "w") as archive:
        archive.writestr("other.txt", "x")
    with pytest.raises(DataError, match="no tsattn.json inside"):
        Forecaster.load(empty_zip)
    directory = tmp_path / "dir"
    directory.mkdir()
    (directory / "tsattn.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(DataError, match="does not describe a tsattn forecaster"):
        Forecaster.load(directory)
    saved = fitted.save(tmp_path / "future.tsattn")
    with zipfile.ZipFile(saved) as archive:
        metadata = json.loads(archive.read("tsattn.json"))
        model_bytes = archive.read("model.keras")
    from tsattn.io import code_digest

    assert metadata["code"] == code_digest()  # which code fitted it
    metadata["format_version"] = 99
    future = tmp_path / "future2.tsattn"
    with zipfile.ZipFile(future, "w") as archive:
        archive.writestr("tsattn.json", json.dumps(metadata))
        archive.writestr("model.keras", model_bytes)
    with pytest.raises(DataError, match="artefact format 99 .* reads formats 1 and 2; refit"):
        Forecaster.load(future)
    metadata["format_version"] = 2
    broken = tmp_path / "broken.tsattn"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("tsattn.json", json.dumps(metadata))
        archive.writestr("model.keras", b"garbage")
    with pytest.raises(DataError, match="cannot be loaded"):
        Forecaster.load(broken)


def test_save_is_atomic(fitted, tmp_path, monkeypatch):
    target = tmp_path / "model.tsattn"
    fitted.save(target)
    before = target.read_bytes()

    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fitted.model_, "save", crash)
    with pytest.raises(RuntimeError):
        fitted.save(target, overwrite=True)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.tsattn"]


def test_one_series_forecast_as_a_panel_of_one():
    """long_forecast: what forecast.csv and plot take, one path for one series and many: the id column (the series'
    name; "series" for an unnamed one, as fit names it), the time column, the model's column and its bands."""
    series = make_series()
    f = Forecaster("linear", window=6, horizon=2).fit(series.rename(None))
    banded = f.long_forecast(f.predict(level=[80]))
    assert list(banded.columns) == ["unique_id", "ds", "linear", "linear-lo-80", "linear-hi-80"]
    assert set(banded["unique_id"]) == {"series"} and list(banded["ds"]) == list(f.predict().index)
    np.testing.assert_allclose(banded["linear"], f.predict().to_numpy())
    other = series.rename("north")
    assert set(f.long_forecast(f.predict(series=other), series=other)["unique_id"]) == {"north"}
    panel = pd.concat([other.rename_axis("ds").reset_index(name="y").assign(unique_id=k) for k in "ab"])
    g = Forecaster("linear", window=6, horizon=2).fit(panel)
    pd.testing.assert_frame_equal(g.long_forecast(g.predict()), g.predict())  # a panel's is already long


def test_cli_predict_and_backtest(tmp_path, fitted, small_csv):
    runner = CliRunner()
    path = fitted.save(tmp_path / "m.tsattn")
    out = tmp_path / "forecast"
    result = runner.invoke(main, ["predict", "--model-dir", str(path), "--steps", "4", "--out", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out / "forecast.csv")
    assert list(frame.columns) == ["unique_id", "ds", "attention-rnn"] and len(frame) == 4  # a panel of one
    np.testing.assert_allclose(frame["attention-rnn"], fitted.predict(4).to_numpy())
    after_csv = runner.invoke(main, ["predict", "--model-dir", str(path), "--steps", "2", "--csv", str(small_csv),
                                     "--column", "demand", "--date-column", "date"])
    assert after_csv.exit_code == 0 and "2013-05-01" in after_csv.output
    bad = runner.invoke(main, ["predict", "--model-dir", str(small_csv), "--steps", "2"])
    assert bad.exit_code == 2 and "is not a tsattn model" in bad.output and "Traceback" not in bad.output
    steps = runner.invoke(main, ["predict", "--model-dir", str(path), "--steps", "0"])
    assert steps.exit_code == 2 and "steps must be an integer in 1..100000" in steps.output
    backtest_out = tmp_path / "bt"
    result = runner.invoke(main, ["backtest", "--model-dir", str(path), "--csv", str(small_csv), "--column", "demand",
                                  "--date-column", "date", "--start", "0.9", "--out", str(backtest_out)])
    assert result.exit_code == 0, result.output
    assert {p.name for p in backtest_out.iterdir()} == {"backtest.csv", "metrics.json", "backtest.png"}
    assert "optimistic" in result.output
    early = runner.invoke(main, ["backtest", "--model-dir", str(path), "--csv", str(small_csv), "--column", "demand",
                                 "--date-column", "date", "--start", "3", "--out", str(tmp_path / "bt2")])
    assert early.exit_code == 2 and "fewer than one window" in early.output
    assert not (tmp_path / "bt2").exists()
    # the saved model as the one argument, as a user first types it (it said "Missing option '--model-dir'")
    positional = runner.invoke(main, ["predict", str(path), "--steps", "4", "--out", str(tmp_path / "forecast2")])
    assert positional.exit_code == 0, positional.output
    assert pd.read_csv(tmp_path / "forecast2" / "forecast.csv").equals(frame)
    assert runner.invoke(main, ["backtest", str(path), "--csv", str(small_csv), "--column", "demand", "--date-column",
                                "date", "--start", "0.9", "--out", str(tmp_path / "bt3")]).exit_code == 0
    assert pd.read_csv(tmp_path / "bt3" / "backtest.csv").equals(pd.read_csv(backtest_out / "backtest.csv"))
    for args, says in ((["predict"], "name the saved model: a run directory of `tsattn fit` or a file of "
                                     "Forecaster.save (tsattn predict runs/sun, or --model-dir runs/sun)"),
                       (["backtest", "--out", str(tmp_path / "bt4")], "(tsattn backtest runs/sun, or --model-dir"),
                       (["predict", str(path), "--model-dir", str(small_csv)], "two saved models named")):
        refused = runner.invoke(main, args)
        assert refused.exit_code == 2 and says in refused.output and "Traceback" not in refused.output, refused.output
    assert runner.invoke(main, ["predict", str(path), "--model-dir", str(path), "--steps", "1"]).exit_code == 0
    assert not (tmp_path / "bt4").exists()


def test_readme_example_shape():
    s = tsattn.load_dataset("sunspots")
    f = tsattn.Forecaster("naive", window=24).fit(s[:-120], seed=0)
    forecast = f.predict(12)
    assert forecast.index[0] == pd.Timestamp("1974-01-01") and forecast.index[-1] == pd.Timestamp("1974-12-01")
    assert f.evaluate(s[-144:])["count"] == 120


def test_plot_returns_figures_with_chosen_series_actuals_and_fans(tmp_path):
    """Issue 24: plots are Figures (no PNG needed), for the series asked for, with the actuals after the cut, the
    forecast and a fan per level, and titles that do not overlap (constrained layout); tsattn.plot_series draws
    NeuralForecast-style frames, cross-validation windows included."""
    import tsattn

    frame = pd.concat([pd.DataFrame({"unique_id": sid, "ds": pd.date_range("2001-01-01", periods=40, freq="MS"),
                                     "y": make_series(seed=k, n=40).to_numpy()}) for k, sid in enumerate("abcde")])
    history = frame.groupby("unique_id").head(34)
    forecaster = Forecaster("seasonal-naive", horizon=6).fit(history)
    figure = forecaster.plot(ids=["b", "d", "e"], level=[80, 95], actuals=frame)
    axes = [ax for ax in figure.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["b", "d", "e"]
    assert figure._suptitle.get_text() == "seasonal-naive: forecast of the next 6 steps"  # the series asked for
    assert forecaster.plot()._suptitle.get_text() == ("seasonal-naive: forecast of the next 6 steps (the first 4 of 5 "
                                                      "series)")  # by default: said that it is a few of them
    assert figure.get_layout_engine() is not None  # constrained: titles and labels never overlap
    lines = {line.get_label(): line for line in axes[0].get_lines()}
    assert set(lines) == {"actual", "seasonal-naive"}
    assert len(lines["actual"].get_xdata()) == 40  # history and the 6 actuals after the cut
    assert len(lines["seasonal-naive"].get_xdata()) == 6
    assert len(axes[0].collections) == 2  # one fan per level
    assert {text.get_text() for text in figure.legends[0].get_texts()} >= {"seasonal-naive 80% interval", "actual"}
    cv = forecaster.cross_validation(frame, h=6, n_windows=2)
    drawn = tsattn.plot_series(frame, cv, ids=["a"])
    assert sum(line.get_label() == "cutoff" for line in drawn.axes[0].get_lines()) == 2
    assert len(tsattn.plot_series(frame).axes) == 4  # max_ids series by default
    drawn.savefig(tmp_path / "cv.png")
    assert (tmp_path / "cv.png").stat().st_size > 5000


def test_plot_of_one_series_draws_its_actuals_after_the_cut():
    series = make_series(n=60)
    forecaster = Forecaster("naive").fit(series[:48])
    figure = forecaster.plot(steps=12, actuals=series)
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert len(lines["actual"].get_xdata()) == 60 and len(lines["naive"].get_xdata()) == 12


def test_patch_transformer_through_the_forecaster_and_the_cli(tmp_path):
    """patch-transformer on a panel through the one API: intervals, per-lag attention (summing to 1 over the
    window), save/load identical; a patch longer than the window is one clear line with exit code 2 and no run
    directory."""
    frame = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": s.index, "y": s.to_numpy() + 10 * i})
                       for i, s in enumerate(make_series(n=48, seed=i) for i in range(3))], ignore_index=True)
    f = Forecaster("patch-transformer", window=8, horizon=2, d_model=8, num_heads=2, ff_dim=8, num_blocks=1,
                   epochs=2).fit(frame, seed=0)
    forecast = f.predict(level=[80])
    assert list(forecast.columns) == ["unique_id", "ds", "patch-transformer", "patch-transformer-lo-80",
                                      "patch-transformer-hi-80"]
    weights = f.attention_weights()
    assert weights.shape == (3, 9) and list(weights.columns)[1:] == [f"lag_{k}" for k in range(8, 0, -1)]
    np.testing.assert_allclose(weights.iloc[:, 1:].sum(axis=1), 1.0, rtol=1e-5)
    patches = f.attention_weights(by="patch")  # window 8: 4 patches of 2 steps, oldest first
    assert list(patches.columns)[1:] == ["patch_1", "patch_2", "patch_3", "patch_4"]
    assert patches.attrs["lags"]["patch_4"] == [2, 1]
    np.testing.assert_allclose(patches.iloc[:, 1:].to_numpy() / 2, weights.iloc[:, 1::2].to_numpy(), rtol=1e-5)
    with pytest.raises(ConfigError, match="per-patch weights: patch-transformer"):
        Forecaster("attention-rnn", window=8, units=2, epochs=1).fit(make_series()).attention_weights(by="patch")
    assert Forecaster.load(f.save(tmp_path / "patch.tsattn")).predict().equals(f.predict())
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["fit", "--model", "patch-transformer", "--dataset", "sunspots", "--window",
                                       "12", "--set", "patch_length=13", "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "patch_length (13) is longer than the window (12); use at most 12" in result.output
    assert not out.exists()


def test_the_short_series_note_names_the_smallest_length_that_is_enough():
    """Issue 36: too little data for auto (or a network) says so in one line and names the smallest series length it
    needs; a series of that length is fitted as asked, one value fewer is not. The network's own parameters given
    beside it (units, blocks) do not stop the fallback (they raised AttributeError there before)."""
    import re
    import warnings

    def series(n):
        return pd.Series(np.arange(1.0, n + 1) + np.sin(np.arange(n)), index=pd.date_range("2020-01-01", periods=n,
                                                                                             freq="MS"))

    auto = Forecaster("auto", horizon=6).fit(series(8), verbose=0)
    assert re.search(r"too short for auto to train and validate on \(horizon 6; it needs at least \d+ values\)",
                     auto.note_), auto.note_
    tiny = {"horizon": 3, "epochs": 1, **TINY_PARAMS["nbeats"]}
    with pytest.warns(UserWarning, match="too short for nbeats"):
        short = Forecaster("nbeats", **tiny).fit(series(5), verbose=0)
    least = int(re.search(r"it needs at least (\d+) values", short.note_).group(1))
    assert least > 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no fallback warning at that length
        assert Forecaster("nbeats", **tiny).fit(series(least), verbose=0).note_ is None
    with pytest.warns(UserWarning, match=f"the series has {least - 1} values, too short for nbeats .*it needs at least "
                                         f"{least} values"):
        Forecaster("nbeats", **tiny).fit(series(least - 1), verbose=0)


@pytest.mark.parametrize("n", [2, 4, 7])
def test_one_series_too_short_for_a_network_is_forecast_by_a_baseline_and_says_so(n, tmp_path):
    from tsattn.selection import SHORT_FALLBACK, THETA_MIN_VALUES, statistical_candidates

    series = pd.Series(np.arange(1.0, n + 1), index=pd.date_range("2020-01-01", periods=n, freq="MS"))
    with pytest.warns(UserWarning, match=f"the series has {n} values, too short for nbeats"):
        forecaster = Forecaster("nbeats", horizon=3).fit(series)
    baseline = SHORT_FALLBACK[0] if statistical_candidates() and n >= THETA_MIN_VALUES else SHORT_FALLBACK[1]
    assert f"forecast with the {baseline} baseline instead of nbeats" in forecaster.note_
    assert forecaster.get_params()["model"] == "nbeats"  # the user's estimator, its forecast from the baseline
    # from 4 values: the last 3 validate it (a baseline needs no training window, a padded one 1 value before them)
    assert ("on all" in forecaster.note_) == (n < 4)
    direct = Forecaster(baseline, horizon=3).fit(series, validation=0 if n < 4 else "auto")
    np.testing.assert_allclose(np.asarray(forecaster.predict()), np.asarray(direct.predict()), rtol=1e-6)
    assert np.isfinite(np.asarray(forecaster.predict())).all()
    if n < 4:  # nothing was left to calibrate intervals: asking for them says why, not "refit with validation > 0"
        with pytest.raises(ConfigError, match=r"^no intervals for this model: the series has \d+ values, .*"
                                              r"give the series more values, or predict without level$"):
            forecaster.predict(level=[80])
    else:
        assert forecaster.predict(level=[80]).shape == (3, 3)
    forecaster.save(tmp_path / "short")
    assert Forecaster.load(tmp_path / "short").note_ == forecaster.note_
    # a window the user chose is not overridden: the error names a value that works
    with pytest.raises(DataError, match=r"window 4.*; (use|give) "):
        Forecaster("nbeats", window=4, horizon=3).fit(series)
    # a panel of short series keeps its padded global model (no fallback): as before
    assert Forecaster("naive", horizon=3).fit(pd.Series(np.arange(1.0, 21))).note_ is None


def test_one_short_series_with_future_covariates_falls_back_without_them_and_says_so(tmp_path):
    """A series too short for a window that holds the future-known steps is forecast by the baseline (which reads
    no covariates: the note names them), not refused with advice (window >= horizon) that cannot fit either; the
    futr_df the user's code passes at predict is accepted; a panel that short hears the length it needs."""
    from click.testing import CliRunner

    from tsattn.cli.main import main
    from tsattn.selection import SHORT_FALLBACK, statistical_candidates

    frame = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2020-01-01", periods=14, freq="MS"),
                          "y": np.arange(14.0) + 10, "x": np.arange(14) % 3})
    with pytest.warns(UserWarning, match="too short for nbeats"):
        forecaster = Forecaster("nbeats", horizon=6, futr_exog=["x"]).fit(frame)
    baseline = SHORT_FALLBACK[0] if statistical_candidates() else SHORT_FALLBACK[1]
    assert forecaster.note_.endswith(f"forecast with the {baseline} baseline instead of nbeats; {baseline} reads no "
                                     "covariates, so x is not used"), forecaster.note_
    future = forecaster.make_future_dataframe().assign(x=[0, 1, 2, 0, 1, 2])
    direct = Forecaster(baseline, horizon=6).fit(frame.drop(columns="x"))
    np.testing.assert_allclose(np.asarray(forecaster.predict(futr_df=future)["nbeats"]),
                               np.asarray(direct.predict()[baseline]), rtol=1e-6)
    assert forecaster.predict()["nbeats"].equals(forecaster.predict(futr_df=future)["nbeats"])
    panel = pd.concat([frame, frame.assign(unique_id="b")])
    with pytest.raises(DataError, match=r"^future-known covariates need a window of at least the horizon \(6\), .*"
                                        r"give series at least 18 values$"):
        Forecaster("nbeats", horizon=6, futr_exog=["x"]).fit(panel)
    frame.drop(columns="unique_id").to_csv(tmp_path / "short.csv", index=False)
    result = CliRunner().invoke(main, ["fit", "--model", "nbeats", "--csv", str(tmp_path / "short.csv"), "--column",
                                       "y", "--date-column", "ds", "--horizon", "5", "--futr-exog", "x", "--out",
                                       str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert f"{baseline} reads no covariates, so x is not used" in result.output


def test_a_series_of_one_value_and_a_panels_too_short_series_are_forecast():
    """Every series gets a forecast: one value (naive needs no training window; a network falls back to a baseline),
    and a panel's series too short for a training window (the global model reads its padded values)."""
    one = pd.DataFrame({"unique_id": "a", "ds": pd.to_datetime(["2020-01-01"]), "y": [5.0]})
    with pytest.raises(DataError, match=r"^the series has 1 timestamp\(s\), too few to infer their frequency; state "
                                        r"it \(e.g. freq=\"MS\" for monthly dates\)$"):
        Forecaster("naive", horizon=3).fit(one).predict()
    naive = Forecaster("naive", horizon=3, freq="MS").fit(one).predict()
    assert naive["naive"].tolist() == [5.0] * 3 and naive["ds"].iloc[0] == pd.Timestamp("2020-02-01")
    with pytest.warns(UserWarning, match="the series has 1 value, too short for nbeats"):
        network = Forecaster("nbeats", horizon=3, freq="MS").fit(one)
    assert "the naive baseline instead of nbeats, on its one value" in network.note_  # Theta needs 4 values
    assert network.predict()["nbeats"].tolist() == [5.0] * 3
    rng = np.random.default_rng(0)
    frame = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2000-01-01", periods=n, freq="MS"),
                                     "y": 10 + np.cumsum(rng.normal(size=n))}) for i, n in enumerate([30, 30, 2])])
    with pytest.warns(UserWarning, match=r"1 of 3 series have fewer than the 4 values a window needs .*\(s2\)"):
        model = Forecaster("simple-rnn", window=6, horizon=3, pad=True, units=2, epochs=1).fit(frame)
    forecast = model.predict()
    assert forecast.groupby("unique_id").size().to_dict() == {"s0": 3, "s1": 3, "s2": 3}
    assert np.isfinite(forecast["simple-rnn"]).all()
    alone = model.predict(series=frame.query("unique_id == 's2'"))  # the same model on its own padded values
    np.testing.assert_allclose(alone["simple-rnn"], forecast.query("unique_id == 's2'")["simple-rnn"], rtol=1e-5)


def test_the_peers_keywords_did_you_mean_and_sklearn_checks():
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError as SklearnNotFitted
    from sklearn.utils.validation import check_is_fitted

    frame = pd.concat([pd.DataFrame({"series": f"s{i}", "when": pd.date_range("2010-01-01", periods=40, freq="QS"),
                                     "value": np.sin(np.arange(40) / 2) + i}) for i in range(2)])
    forecaster = Forecaster("naive", h=4, input_size=8, random_seed=3)
    assert forecaster.get_params() == {"model": "naive", "window": 8, "horizon": 4, "seed": 3}  # one canonical name
    assert clone(forecaster).get_params() == forecaster.get_params()
    with pytest.raises(SklearnNotFitted):
        check_is_fitted(forecaster)
    forecaster.fit(df=frame, val_size=4, id_col="series", time_col="when", target_col="value")
    check_is_fitted(forecaster)
    ours = Forecaster("naive", horizon=4, window=8).fit(frame, validation=4, id_column="series", time_column="when",
                                                        value_column="value")
    pd.testing.assert_frame_equal(forecaster.predict(h=4), ours.predict(4))
    with pytest.raises(ConfigError, match="unknown setting 'horizn' for naive; did you mean 'horizon'"):
        Forecaster("naive", horizn=4).fit(frame, id_column="series", time_column="when", value_column="value")
    with pytest.raises(ConfigError, match="did you mean 'steps'"):
        forecaster.predict(stesp=3)
    with pytest.raises(ConfigError, match="did you mean 'epochs'"):
        Forecaster("nbeats").set_params(epoch=3)
    with pytest.raises(ConfigError, match="h=4 and horizon=2 name the same setting"):
        Forecaster("naive", h=4, horizon=2)
    with pytest.raises(ConfigError, match="val_size= and validation= name the same argument"):
        forecaster.fit(df=frame, val_size=4, validation=8)


def test_in_sample_forecasts_are_the_fitted_model_at_every_window_of_its_data(tmp_path):
    """NeuralForecast's predict_insample (statsforecast's fitted values): every window of the fitted data, step_size
    apart and ending at its last value, forecast by the fitted model exactly as predict forecasts after that cut."""
    from tsattn.errors import ConfigError

    series = make_series(n=60)
    model = Forecaster("simple-rnn", window=6, horizon=3, units=3, epochs=2).fit(series, verbose=0)
    every = model.predict_insample()
    assert list(every.columns) == ["unique_id", "ds", "cutoff", "y", "simple-rnn"]
    assert every["cutoff"].nunique() == 60 - 6 - 3 + 1 and len(every) == 3 * every["cutoff"].nunique()
    assert every["cutoff"].max() == series.index[-4] and (every["ds"] > every["cutoff"]).all()
    assert np.allclose(every["y"], series.loc[every["ds"]].to_numpy())
    cut = every["cutoff"].iloc[30]
    assert np.allclose(every.loc[every["cutoff"] == cut, "simple-rnn"], model.predict(series=series[:cut]), rtol=1e-5)
    sparse = model.predict_insample(step_size=4)
    assert sparse["cutoff"].max() == every["cutoff"].max() and sparse["cutoff"].nunique() == 13
    model.save(tmp_path / "m.tsattn")
    loaded = Forecaster.load(tmp_path / "m.tsattn")
    with pytest.raises(ConfigError, match=r"pass the data it was fitted on, predict_insample\(df=frame\)"):
        loaded.predict_insample()
    assert np.allclose(loaded.predict_insample(df=series)["simple-rnn"], every["simple-rnn"], rtol=1e-5)
    with pytest.raises(ConfigError, match="step_size"):
        model.predict_insample(step_size=0)


def test_tsattn_fit_forecasts_one_short_series_as_the_api_does(tmp_path):
    """The CLI's fit (with its test part) falls back to the same baseline as Forecaster.fit, says so, writes no
    loss chart for a model that trains no epochs; a series too short even for that names the length it needs."""
    import json

    from click.testing import CliRunner

    from tsattn.cli.main import main
    from tsattn.selection import SHORT_FALLBACK, statistical_candidates

    baseline = SHORT_FALLBACK[0] if statistical_candidates() else SHORT_FALLBACK[1]
    path = tmp_path / "short.csv"
    pd.DataFrame({"ds": pd.date_range("2020-01-01", periods=7, freq="MS"), "y": np.arange(1.0, 8)}).to_csv(
        path, index=False)
    args = ["fit", "--model", "nbeats", "--csv", str(path), "--column", "y", "--date-column", "ds", "--horizon", "3"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["model"] == baseline and document["note"].endswith(f"forecast with the {baseline} baseline "
                                                                        "instead of nbeats")
    assert "Warning: the series has 7 values, too short for nbeats to train, validate and test" in result.stderr
    assert not (tmp_path / "run" / "plots" / "loss.png").exists() and "history.csv" not in document["files"]
    forecasts = pd.read_csv(tmp_path / "run" / "predictions.csv")
    assert forecasts.query("part == 'test'")["predicted"].notna().sum() == 3
    pd.DataFrame({"ds": pd.date_range("2020-01-01", periods=3, freq="MS"), "y": np.arange(1.0, 4)}).to_csv(
        path, index=False)  # 3 values: all of them the test part, none before it to forecast from
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "three")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "for the naive baseline that forecasts series too short for a network" in result.output  # Theta needs 4
    assert "needs at least 4 values); give the series more values" in result.output
    assert not (tmp_path / "three").exists()


@pytest.mark.parametrize("name", ["verbose", "static_df"])
def test_a_fit_argument_given_to_the_constructor_says_where_it_belongs(name, capsys):
    """The fit line ends "fit(verbose=0) silences this"; a user who writes Forecaster(..., verbose=0) is told in one
    line that verbose belongs to fit(), before any work, instead of the list of every run setting."""
    f = tsattn.Forecaster("naive", window=4, **{name: 0})
    with pytest.raises(tsattn.ConfigError, match=rf"^{name} is an argument of fit\(\), not a setting of the "
                                                  rf"Forecaster: Forecaster\('naive', \.\.\.\)\.fit\(df, {name}=\.\.\.\)$"):
        f.fit(make_series(40))
    assert "Fitting" not in capsys.readouterr().err


@pytest.mark.parametrize("model, params", [("naive", {}), ("seasonal-naive", {}), ("linear", {}),
                                           ("simple-rnn", {"units": 4, "epochs": 1, "horizon": 2}),
                                           ("theta", {"horizon": 2})])
def test_a_long_recursive_forecast_reads_no_more_history_than_the_model_needs(model, params, monkeypatch):
    """A window model's rows are cut to its lookback after every block (a long forecast is linear in its steps,
    was quadratic), with the forecasts of the full growing history; a local statistical method still reads it all."""
    series = make_series(n=60)
    f = Forecaster(model, window=6, **params).fit(series, seed=0)
    state, estimator = f.state_, f.state_.estimator
    widths, forecast = [], estimator.forecast
    monkeypatch.setattr(estimator, "forecast", lambda values, origins, *rest: (
        widths.append(len(values) // len(origins)), forecast(values, origins, *rest))[1])
    got = f.predict(9).to_numpy()
    blocks = -(-9 // estimator.horizon)
    if state.local:
        assert widths == [60 + k * estimator.horizon for k in range(blocks)]
    else:
        assert widths == [state.lookback] + [state.lookback + estimator.horizon] * (blocks - 1)
    history, expected = series.to_numpy(), []  # the untrimmed recursion, by hand
    while len(expected) < 9:
        block = f.predict(estimator.horizon, series=pd.Series(history, index=pd.date_range(
            series.index[0], periods=len(history), freq="MS"))).to_numpy()
        expected.extend(block)
        history = np.concatenate([history, block])
    np.testing.assert_allclose(got, expected[:9], rtol=1e-6)
