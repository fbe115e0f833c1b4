"""Panels: many series through the one data path (windows, splits, scalers, metrics, forecasts, artefacts)."""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import tsattn
from conftest import TINY, TINY_PARAMS, make_series
from tsattn import metrics as M
from tsattn.cli.main import main
from tsattn.errors import DataError
from tsattn.forecaster import Forecaster
from tsattn.config import RunConfig
from tsattn.harness import fit
from tsattn.panel import as_panel, read_csv_panel
from tsattn.windows import SplitSpec, window_panel


def long_frame(lengths=(10, 7, 12), freq="MS", start="2000-01-01"):
    """Series a, b, c with values 100*k + position, so every value names its series and position."""
    rows = []
    for k, (sid, n) in enumerate(zip("abc", lengths)):
        stamps = pd.date_range(start, periods=n, freq=freq)
        rows += [(sid, stamp, 100.0 * (k + 1) + i) for i, stamp in enumerate(stamps)]
    return pd.DataFrame(rows, columns=["unique_id", "ds", "y"])


def panel_of(n_series=4, n=60, seed=0):
    """Seasonal monthly series of different levels and lengths, as a long frame."""
    frames = []
    for k in range(n_series):
        series = make_series(n=n - 5 * k, seed=seed + k) * (k + 1)
        frames.append(pd.DataFrame({"unique_id": f"s{k}", "ds": series.index, "y": series.to_numpy()}))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------------------------------
# Input
# ----------------------------------------------------------------------------------------------------
def test_inputs_long_frame_dict_and_single_series_share_one_model():
    frame = long_frame()
    panel = as_panel(frame)
    assert panel.ids == ["a", "b", "c"] and panel.offsets.tolist() == [0, 10, 17, 29] and panel.freq == "MS"
    assert panel.series(1).tolist() == [200.0 + i for i in range(7)]
    assert panel.series(2).index[0] == pd.Timestamp("2000-01-01") and panel.series(2).index.freqstr == "MS"
    from_dict = as_panel({sid: group.set_index("ds")["y"] for sid, group in frame.groupby("unique_id")})
    np.testing.assert_array_equal(from_dict.values, panel.values)
    renamed = frame.rename(columns={"unique_id": "shop", "ds": "day", "y": "units"})
    assert as_panel(renamed, "shop", "day", "units").n_series == 3
    single = as_panel(make_series())
    assert single.n_series == 1 and single.single_input and single.ids == ["demand"]
    pd.testing.assert_frame_equal(as_panel(panel.to_frame()).to_frame(), panel.to_frame())


def test_per_series_validation_names_the_series():
    frame = long_frame()
    nan = frame.copy()
    nan.loc[12, "y"] = np.nan
    with pytest.raises(DataError, match="1 series have missing \\(NaN\\) values, first series 'b' at 2000-03-01"):
        as_panel(nan)
    late = frame.copy()  # b starts later and ends earlier, as a wide file's column does: no gap, so the fix is to trim
    late.loc[late.index[late["unique_id"] == "b"][[0, 1, -1]], "y"] = np.nan
    with pytest.raises(DataError, match="1 series have missing \\(NaN\\) values only at their start or end \\(series "
                                        "'b': 2 before 2000-03-01 and 1 after 2000-06-01\\), as a wide file's series "
                                        "that start later or end earlier do; trim them with fill='drop' "
                                        "\\(CLI: --fill drop\\)"):
        as_panel(late)
    with pytest.warns(UserWarning, match="dropped 3 missing value"):
        assert as_panel(late, fill="drop").lengths.tolist() == [10, 4, 12]
    filled = as_panel(nan, fill="interpolate")
    assert filled.series(1).iloc[2] == pytest.approx(202.0)  # interpolated inside series b only
    duplicated = pd.concat([frame, frame.iloc[[11]]])
    with pytest.raises(DataError, match="series 'b' has a duplicate timestamp 2000-02-01"):
        as_panel(duplicated)
    with pytest.warns(UserWarning, match="rows were not sorted by series and time"):
        shuffled = as_panel(frame.sample(frac=1.0, random_state=0))
    assert shuffled.series(0).tolist() == [100.0 + i for i in range(10)]
    mixed = long_frame()
    mixed.loc[mixed["unique_id"] == "c", "ds"] = pd.date_range("2000-01-01", periods=12, freq="D")
    with pytest.raises(DataError, match="mixes frequencies: most series are MS but 1 differ \\(c \\(D\\)\\)"):
        as_panel(mixed)
    with pytest.raises(DataError, match="id column 'series' not found.*--id-column"):
        as_panel(frame, id_column="series")
    text = frame.astype({"y": object})
    text.loc[3, "y"] = "n/a"
    with pytest.raises(DataError, match="not numeric: 1 value\\(s\\) such as 'n/a' in series 'a'"):
        as_panel(text)


def test_short_series_get_no_window_with_a_warning_and_none_long_enough_is_an_error():
    frame = long_frame(lengths=(30, 6, 30))
    with pytest.warns(UserWarning, match="1 of 3 series have fewer than the 9 values a window needs \\(window 8, "
                                         "horizon 1\\), so they are left out of training and scoring and only "
                                         "forecast \\(b\\)"):
        data = window_panel(frame, 8, split=SplitSpec(train=0.6, validation=0.2))
    assert data.panel.ids == ["a", "b", "c"] and data.dropped == ["b"]  # kept, to be forecast
    windowed = np.concatenate([data.starts[part] for part in ("train", "validation", "test")])
    assert set(data.panel.series_of(windowed + 8)) == {0, 2}  # no window of b
    with pytest.raises(DataError, match="all 3 series are shorter than window 40 \\+ horizon 1"):
        window_panel(frame, 40)


def test_series_long_enough_for_a_window_but_not_for_the_split_are_named_and_not_scored(tmp_path):
    """A series with window + horizon values may still get no whole window inside any part of a fraction split (b,
    8 values: 5/1/2 for window 4 + horizon 3): left out like a too-short series; one with training windows but a test
    part shorter than the horizon (c) is trained on but not scored; the fit's verdict names both."""
    frame = long_frame(lengths=(60, 8, 12))
    split = SplitSpec(train=0.6, validation=0.2)
    with pytest.warns(UserWarning) as caught:
        data = window_panel(frame, 4, horizon=3, split=split)
    messages = [str(w.message) for w in caught]
    assert any("1 of 3 series have too few values for a whole window (window 4, horizon 3) inside any part of a "
               "0.6/0.2/0.2 split, so they are left out of training and scoring and only forecast (b)" in m
               for m in messages), messages
    assert any("1 of 3 series have no whole window (window 4, horizon 3) in their test part under a 0.6/0.2/0.2 "
               "split, so they are trained on but not scored (c)" in m for m in messages), messages
    assert data.dropped == ["b"] and data.unscored == ["c"]
    owners = {part: set(data.panel.series_of(data.starts[part] + 4)) for part in ("train", "validation", "test")}
    assert owners == {"train": {0, 2}, "validation": {0, 2}, "test": {0}}
    assert data.describe()["series_unscored"] == ["c"]
    with pytest.warns(UserWarning, match="1 of 2 series have no whole window \\(window 4, horizon 3\\) in their "
                                         "validation part under a 0.8/0.2/0 split, so they are trained on, but early "
                                         "stopping and the interval calibration read none of their values \\(c\\)"):
        validated = window_panel(frame[frame["unique_id"] != "b"], 4, horizon=3, require_test=False,
                                 split=SplitSpec(train=0.8, validation=0.2))
    assert validated.unscored == ["c"] and validated.dropped == []
    path = tmp_path / "short.csv"
    frame.to_csv(path, index=False)

    def fit_linear(*extra):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CliRunner().invoke(main, ["fit", "--model", "linear", "--csv", str(path), "--column", "y",
                                             "--date-column", "ds", "--id-column", "unique_id", "--horizon", "3",
                                             "--window", "4", "--set", "split=chronological",
                                             "--set", "train_fraction=0.6", "--set", "validation_fraction=0.2",
                                             "--out", str(tmp_path / "run"), *extra])

    result = fit_linear()
    assert result.exit_code == 0, result.output
    assert "Test sMAPE (mean over 1 of 3 series; the last 20% of each; not scored, too short for a test window: b, c)" \
        in result.output
    scored = pd.read_csv(tmp_path / "run" / "metrics_by_series.csv")
    assert set(scored.loc[scored["part"] == "test", "unique_id"]) == {"a"}  # as predictions.csv
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["series"] == 1
    document = fit_linear("--force", "--json")
    assert document.exit_code == 0, document.output
    assert json.loads(document.stdout)["series_not_scored"] == ["b", "c"]


def test_csv_with_id_column(tmp_path):
    path = tmp_path / "shops.csv"
    long_frame().rename(columns={"unique_id": "shop", "ds": "day", "y": "units"}).to_csv(path, index=False)
    panel = read_csv_panel(path, "units", "day", "shop")
    assert panel.ids == ["a", "b", "c"] and panel.lengths.tolist() == [10, 7, 12]
    with pytest.raises(DataError, match="--id-column needs --date-column"):
        read_csv_panel(path, "units", None, "shop")


# ----------------------------------------------------------------------------------------------------
# Windows, splits, scaling
# ----------------------------------------------------------------------------------------------------
def test_windows_never_cross_series_hand_checked():
    data = window_panel(long_frame(), window=3, horizon=2, split=SplitSpec(train=0.5, validation=0.2))
    every = np.concatenate([data.starts[p] for p in ("train", "validation", "test")])
    # by hand: a series of n values has n - 5 + 1 windows; a (10) 6, b (7) 3, c (12) 8, of which the split
    # drops those whose targets straddle a boundary
    X = data.X("train", scaled=False)[:, :, 0]
    y = data.y("train", scaled=False)
    for inputs, targets in zip(X, y):
        window = np.concatenate([inputs, targets])
        assert len({int(v) // 100 for v in window}) == 1  # one series in every window
        assert (np.diff(window) == 1).all()               # consecutive positions of that series
    assert sorted(set(int(v) // 100 for v in data.y("test", scaled=False).ravel())) == [1, 2, 3]
    ranges = [(0, 10), (10, 17), (17, 29)]
    for start in every:
        low, high = next(r for r in ranges if r[0] <= start < r[1])
        assert start + 5 <= high
    # the first training windows of a: inputs 100, 101, 102 -> targets 103, 104
    assert X[0].tolist() == [100, 101, 102] and y[0].tolist() == [103, 104]


def test_per_series_scaler_fit_on_training_parts_only():
    frame = long_frame(lengths=(20, 20, 20))
    data = window_panel(frame, window=3, split=SplitSpec(train=0.5, validation=0.2))
    # minmax per series on the first 10 values (train part) of each: offset = first value, scale = 9
    np.testing.assert_allclose(data.scaler.offset, [100, 200, 300])
    np.testing.assert_allclose(data.scaler.scale, [9, 9, 9])
    assert data.y("test").max() > 1  # later values are outside the training range, not squeezed
    np.testing.assert_allclose(data.scaler.inverse_transform(data.y("test"), data.series_numbers("test")),
                               data.y("test", scaled=False), rtol=1e-5)
    robust = window_panel(frame, window=3, scaling="robust", split=SplitSpec(train=0.5, validation=0.2))
    np.testing.assert_allclose(robust.scaler.offset, [104.5, 204.5, 304.5])
    np.testing.assert_allclose(robust.scaler.scale, [4.5, 4.5, 4.5])


def test_holdout_split_boundaries():
    frame = long_frame(lengths=(30, 25, 40))
    data = window_panel(frame, window=4, horizon=3, split=SplitSpec("holdout", holdout=3))
    assert data.part_bounds.tolist() == [[24, 27], [19, 22], [34, 37]]
    # one test window per series: its targets are exactly the last 3 values
    assert data.count("test") == 3
    np.testing.assert_array_equal(data.y("test", scaled=False),
                                  [[127, 128, 129], [222, 223, 224], [337, 338, 339]])
    np.testing.assert_array_equal(data.y("validation", scaled=False),
                                  [[124, 125, 126], [219, 220, 221], [334, 335, 336]])
    assert data.y("train", scaled=False).max(axis=1).tolist()[-1] < 334
    m3 = tsattn.load_dataset("m3-monthly")
    assert m3["unique_id"].nunique() == 1428 and m3.attrs["horizon"] == 18


# ----------------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------------
def test_metrics_on_a_hand_computed_panel():
    actual = np.array([[10.0, 20.0], [30.0, 40.0], [1.0, 1.0]])
    predicted = np.array([[12.0, 18.0], [30.0, 44.0], [2.0, 1.0]])
    series = np.array([0, 0, 1])
    frame = M.tidy_metrics(actual, {"model": predicted}, series, ["x", "y"], "test", scale=np.array([2.0, 0.5]))
    value = frame.set_index(["series", "metric"])["value"]
    # x: errors 2, -2, 0, 4 -> MAE 2, RMSE sqrt(6), sMAPE mean(2*2/22, 2*2/38, 0, 2*4/84) * 100
    assert value[("x", "mae")] == pytest.approx(2.0) and value[("x", "rmse")] == pytest.approx(np.sqrt(6))
    assert value[("x", "smape")] == pytest.approx(np.mean([4 / 22, 4 / 38, 0, 8 / 84]) * 100)
    assert value[("x", "mase")] == pytest.approx(1.0) and value[("y", "mase")] == pytest.approx(0.5 / 0.5)
    assert value[("y", "smape")] == pytest.approx(np.mean([2 / 3, 0]) * 100)
    table = M.aggregate(frame).set_index("metric")
    assert table.loc["smape", "mean"] == pytest.approx((value[("x", "smape")] + value[("y", "smape")]) / 2)
    assert table.loc["count", "mean"] == 6
    assert list(frame.columns) == ["series", "part", "model", "metric", "value"]


# ----------------------------------------------------------------------------------------------------
# One global model
# ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def panel_fit():
    frame = panel_of()
    config = RunConfig(model="attention-rnn", model_params=dict(TINY_PARAMS["attention-rnn"]), dataset=None,
                       horizon=2, split="holdout", holdout=4, **TINY)
    return frame, fit(config, series=frame)


def test_global_fit_reports_per_series_and_aggregate_metrics(panel_fit, tmp_path):
    frame, result = panel_fit
    assert result.panel.n_series == 4 and result.metrics["series"] == 4
    tidy = result.metrics_frame
    smape = tidy[(tidy["part"] == "test") & (tidy["model"] == "model") & (tidy["metric"] == "smape")]
    assert len(smape) == 4 and result.metrics["test"]["model"]["smape"] == pytest.approx(smape["value"].mean())
    assert result.metrics["median"]["test"]["model"]["smape"] == pytest.approx(smape["value"].median())
    for key in ("naive", "seasonal_naive", "linear"):
        assert result.metrics["test"][key]["smape"] is not None
    from tsattn.runs import write_run

    files = write_run(result, tmp_path / "run")
    assert {"metrics_by_series.csv", "predictions.csv", "plots/series_grid.png", "plots/smape_distribution.png",
            "plots/attention.png", "tsattn.json", "model.keras"} <= set(files)
    predictions = pd.read_csv(tmp_path / "run" / "predictions.csv")
    assert list(predictions.columns[:6]) == ["unique_id", "ds", "step", "actual", "predicted", "part"]
    test = predictions[predictions["part"] == "test"]
    assert sorted(test["unique_id"].unique()) == ["s0", "s1", "s2", "s3"] and len(test) == 4 * 2 * 3
    by_series = pd.read_csv(tmp_path / "run" / "metrics_by_series.csv")
    assert {"unique_id", "part", "model", "smape", "mase", "rmse"} <= set(by_series.columns)


def test_forecaster_panel_predict_timestamps_and_save_load(tmp_path):
    frame = panel_of()
    f = Forecaster("simple-rnn", window=8, horizon=2, units=4, epochs=2).fit(frame, validation=4)
    forecast = f.predict(3)
    assert list(forecast.columns) == ["unique_id", "ds", "simple-rnn"] and len(forecast) == 4 * 3
    ends = frame.groupby("unique_id")["ds"].max()
    for sid, group in forecast.groupby("unique_id"):
        expected = pd.date_range(ends[sid], periods=4, freq="MS")[1:]
        assert list(group["ds"]) == list(expected)  # each series continues after its own last timestamp
    loaded = Forecaster.load(f.save(tmp_path / "panel.tsattn"))
    pd.testing.assert_frame_equal(loaded.predict(3), forecast)
    renamed = frame.rename(columns={"unique_id": "id", "ds": "date", "y": "value"})  # predict takes no id_column=
    with pytest.raises(DataError, match=r"^id column 'unique_id' not found in the frame; available columns: id, date, "
                                        r"value; this model was fitted on the columns unique_id, ds, y: rename the "
                                        r"frame's columns to these$"):
        f.predict(3, series=renamed)
    assert loaded.predict(2, ids=["s2"])["unique_id"].unique().tolist() == ["s2"]
    with pytest.raises(DataError, match="series id 'zz' was not in the data the model was fitted on; pass its "
                                        "history"):
        f.predict(2, ids=["zz"])
    newcomer = panel_of(n_series=1, seed=9).assign(unique_id="new")
    after = f.predict(2, series=newcomer)
    assert after["unique_id"].unique().tolist() == ["new"]
    evaluation = f.evaluate(frame)
    assert evaluation["series"] == 4 and set(evaluation["by_series"]["series"]) == {"s0", "s1", "s2", "s3"}
    with pytest.warns(UserWarning, match=r"fitted on data up to [^ ]+, after some origins: these forecasts are "
                                         "optimistic") as caught:
        table = f.backtest(frame, start=0.8)
    assert not any("00:00:00" in str(w.message) for w in caught)  # a midnight is shown as its date
    assert table.columns[0] == "unique_id" and table.attrs["metrics"]["origins"] > 4


def test_single_series_results_unchanged_from_before_panels(small_series):
    # the same seed gives the metrics measured before panels existed (tsattn 20eecd1, same machine kind):
    # identical training history, forecasts equal up to float32 rounding (with that time's skip path)
    config = RunConfig(model="simple-rnn", model_params={**TINY_PARAMS["simple-rnn"], "skip": "linear"}, dataset=None,
                       **TINY)
    result = fit(config, series=small_series)
    np.testing.assert_allclose(result.history["loss"], [0.012166237458586693, 0.010212404653429985,
                                                        0.009048624895513058], rtol=1e-6)
    expected = {"validation": {"model": 5.056956247329034, "naive": 11.339077318261422,
                               "seasonal_naive": 6.558491345991144, "linear": 4.211624660675472},
                "test": {"model": 6.601855624051426, "naive": 12.820521031332412,
                         "seasonal_naive": 6.886432711200761, "linear": 5.8327198819132136}}
    for part, models in expected.items():
        for key, rmse in models.items():
            assert result.metrics[part][key]["rmse"] == pytest.approx(rmse, rel=1e-5), (part, key)
    assert result.metrics["test"]["model"]["smape"] == pytest.approx(15.15025377679507, rel=1e-5)


def test_a_file_in_the_peers_long_form_is_read_as_a_panel_without_naming_its_columns(tmp_path):
    """unique_id, ds, y (with a covariate beside them): the columns a long frame has in Python, so the CSV reader needs
    no id, time or value column named; a wide file and a single series are read as before."""
    frame = panel_of()
    frame["price"] = np.arange(len(frame), dtype=float)
    frame.to_csv(tmp_path / "long.csv", index=False)
    plain = read_csv_panel(tmp_path / "long.csv", exog=["price"])
    named = read_csv_panel(tmp_path / "long.csv", "y", "ds", "unique_id", exog=["price"])
    assert plain.ids == named.ids == ["s0", "s1", "s2", "s3"]
    np.testing.assert_array_equal(plain.values, named.values)
    np.testing.assert_array_equal(plain.exog, named.exog)
    assert plain.index.equals(named.index) and plain.freq == named.freq
    # one series: its dates and values beside the covariates need no column named either
    one = frame[frame["unique_id"] == "s0"].drop(columns="unique_id").rename(columns={"ds": "month", "y": "sales"})
    one.to_csv(tmp_path / "one.csv", index=False)
    read = read_csv_panel(tmp_path / "one.csv", exog=["price"])
    assert read.ids == ["sales"] and read.exog_names == ("price",) and read.freq == named.freq
    np.testing.assert_array_equal(read.values, named.values[:named.offsets[1]])


def test_cli_fit_panel_csv(tmp_path):
    path = tmp_path / "panel.csv"
    panel_of().to_csv(path, index=False)
    runner = CliRunner()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the peers' long form (unique_id, ds, y) needs no --id-column, --date-column nor --column (backtest gives them)
        result = runner.invoke(main, ["fit", "--model", "simple-rnn", "--csv", str(path), "--horizon", "2",
                                      "--window", "8", "--epochs", "2", "--set", "units=4", "--set", "split=holdout",
                                      "--set", "holdout=4", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    # which values of each series the test figures are on (a hold-out here, never confused with a file's last 20%)
    assert "Test sMAPE (mean over 4 series; the last 4 values of each)" in result.output and "better on" in result.output
    # two decimals beside the baselines' (a round figure reads 16.00, not 16)
    verdict = re.search(r"Test sMAPE \(mean over 4 series; the last 4 values of each\) (\d+\.\d\d) (beats|does NOT beat) the naive forecast "
                        r"\((\d+\.\d\d), [+-]\d+\.\d%; model better on \d of 4 series\); seasonal-naive \d+\.\d\d "
                        r"\(model better", result.output)
    assert verdict, result.output
    assert (verdict.group(2) == "beats") == (float(verdict.group(1)) < float(verdict.group(3)))
    predict = runner.invoke(main, ["predict", "--model-dir", str(tmp_path / "run"), "--steps", "2"])
    assert predict.exit_code == 0 and "unique_id" in predict.output and "s3" in predict.output
    with warnings.catch_warnings():  # (fitted on data after some origins: optimistic, warned)
        warnings.simplefilter("ignore")
        backtest = runner.invoke(main, ["backtest", str(tmp_path / "run"), "--csv", str(path), "--column", "y",
                                        "--date-column", "ds", "--id-column", "unique_id", "--start", "0.7",
                                        "--out", str(tmp_path / "bt")])
    assert backtest.exit_code == 0, backtest.output
    lines = backtest.output.splitlines()  # ranked as fit ranks a panel: sMAPE first, then MASE and RMSE
    assert re.match(r"\d+ origins over 4 series, 2 step\(s\) from each; means over series$", lines[-7]), lines
    assert lines[-6].split() == ["sMAPE", "MASE", "RMSE"] and lines[-5].split()[0] == "simple-rnn"
    bad = runner.invoke(main, ["fit", "--csv", str(path), "--column", "y", "--id-column", "unique_id",
                               "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "--id-column needs --date-column" in bad.output
    assert not (tmp_path / "bad").exists()
    # issue 24: a long file without --id-column (its time column not named ds) is refused with the fix, never glued
    # into one series
    panel_of().rename(columns={"ds": "week"}).to_csv(tmp_path / "weeks.csv", index=False)
    glued = runner.invoke(main, ["fit", "--csv", str(tmp_path / "weeks.csv"), "--column", "y",
                                 "--out", str(tmp_path / "glued")])
    assert glued.exit_code == 2 and "Traceback" not in glued.output
    assert "weeks.csv is a long frame of 4 series (its unique_id column); read it as a panel with --id-column " \
           "unique_id --date-column week" in glued.output, glued.output
    assert not (tmp_path / "glued").exists()
    # columns beside id, time and value are named, not dropped in silence
    extra = panel_of()
    extra["price"] = 1.0
    extra.to_csv(path, index=False)
    with pytest.warns(UserWarning, match=r"column\(s\) price are not used \(only y is forecast"):
        tsattn.config.read_csv_panel(path, "y", "ds", "unique_id")


def test_readme_panel_example():
    m3 = tsattn.load_dataset("m3-monthly")
    few = m3[m3["unique_id"].isin(m3["unique_id"].unique()[::100])]
    assert few["unique_id"].nunique() == 15
    f = tsattn.Forecaster("naive", window=24, horizon=18).fit(few, validation=18, seed=0)
    forecast = f.predict()
    assert list(forecast.columns) == ["unique_id", "ds", "naive"] and len(forecast) == 15 * 18
    assert f.evaluate(few)["model"]["smape"] > 0
    assert f.predict(6, ids=["N1402"])["unique_id"].unique().tolist() == ["N1402"]


def test_compare_on_a_panel_pairs_models_over_series(tmp_path):
    from tsattn.compare import compare

    path = tmp_path / "panel.csv"
    panel_of(n_series=12, n=100).to_csv(path, index=False)
    lines = []
    results = compare(models=["simple-rnn", "attention-rnn"], csv=[{"path": str(path), "column": "y",
                                                                    "date_column": "ds", "id_column": "unique_id",
                                                                    "name": "shops"}],
                      seeds=[0], window=8, horizon=2, epochs=1, settings={"units": 4, "split": "holdout", "holdout": 4},
                      out=tmp_path / "report", echo=lines.append)
    summary = pd.DataFrame(results.attrs["summary"])
    assert "shops" in repr(results.head())  # a frame in attrs made printing raise (test_evaluation)
    assert set(summary["headline"]) == {"test_smape"} and (summary["series"] == 12).all()
    assert summary["rank"].min() == 1 and "test sMAPE" in lines[-1]
    report = (tmp_path / "report" / "report.md").read_text()
    assert "12 series, tested on the last 4 values of each; ranked on test sMAPE, mean over series" in report
    assert results.attrs["tested_on"] == {"shops": ", tested on the last 4 values of each"}  # `tsattn compare` says it
    assert "Series by series (sMAPE averaged over seeds) it is better on" in report
    assert "better than seasonal naive on" in report and "Wilcoxon signed-rank p = " in report
    assert "Per-series test sMAPE of every model and baseline" in report


def with_zeros(frame: pd.DataFrame, last: int | None = None) -> pd.DataFrame:
    """``frame`` with series s0 intermittent (every other value 0), or with only its ``last`` values 0."""
    frame = frame.copy()
    rows = np.flatnonzero(frame["unique_id"] == "s0")
    frame.loc[rows[::2] if last is None else rows[-last:], "y"] = 0.0
    return frame


def test_the_headline_metric_is_mase_where_values_before_the_test_part_reach_0():
    """sMAPE is 200 for any forecast of a 0 but exactly 0, and swings where values cross 0: a panel with a value of 0
    or below before its test part (what the models learn from) is chosen, ranked and judged on MASE; zeros in the test
    part alone leave it on sMAPE (the choice never reads the test part; the fit verdict adds MASE then); one series
    stays on RMSE."""
    split = SplitSpec(method="holdout", holdout=4)

    def headline(frame):
        return window_panel(as_panel(frame), window=6, horizon=2, split=split).headline

    frame = panel_of()
    assert headline(frame) == "smape" and headline(with_zeros(frame)) == "mase"
    assert headline(with_zeros(frame, last=4)) == "smape"  # the test part only
    negative = frame.assign(y=frame["y"] - frame["y"].mean())
    assert headline(negative) == "mase"
    # every series constant before its test part (one at 0): MASE is undefined on each, so MAE, in the data's units
    constant = frame.assign(y=frame["unique_id"].map({"s0": 0.0, "s1": 3.0, "s2": 3.0, "s3": 5.0}))
    assert headline(constant) == "mae" and headline(constant.assign(y=constant["y"] + 1)) == "smape"
    constant.loc[constant.groupby("unique_id").tail(4).index, "y"] = 9.0  # the test part does not count
    assert headline(constant) == "mae"
    constant.loc[constant.index[0], "y"] = 1.0  # one series varies: MASE is defined on it
    assert headline(constant) == "mase"
    assert window_panel(as_panel(with_zeros(frame).query("unique_id == 's0'").set_index("ds")["y"]), window=6,
                        horizon=2, split=split).headline == "rmse"


def test_a_panel_with_zeros_is_ranked_and_judged_on_mase_through_fit_compare_and_backtest(tmp_path):
    """Found by a user-path check: on a panel with an all-zero and an intermittent series nbeats "did NOT beat the naive
    forecast (73.08 against 28.00)" on sMAPE while its MASE was 0.383 against 0.584. tsattn fit, compare and backtest
    now rank and judge such a panel on MASE, and say why; plots draw the MASE distribution."""
    from tsattn.compare import compare

    path = tmp_path / "panel.csv"
    with_zeros(panel_of()).to_csv(path, index=False)
    runner = CliRunner()
    data = ["--csv", str(path), "--column", "y", "--date-column", "ds", "--id-column", "unique_id"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = runner.invoke(main, ["fit", "--model", "simple-rnn", *data, "--horizon", "2", "--window", "8",
                                      "--epochs", "1", "--set", "units=4", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert re.search(r"Test MASE \(mean over 4 series; the last 20% of each; not sMAPE: some values before the test part are 0 or below\) "
                     r"\d\.\d{3} (beats|does NOT beat) the naive forecast \(\d\.\d{3}, ", result.output), result.output
    assert "sMAPE is 200" not in result.output  # the caution for zeros in the test part alone
    header = next(line for line in result.output.splitlines() if "validation MASE" in line)
    assert header.split()[:4] == ["validation", "MASE", "validation", "sMAPE"]
    assert (tmp_path / "run" / "plots" / "mase_distribution.png").is_file()
    assert not (tmp_path / "run" / "plots" / "smape_distribution.png").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backtest = runner.invoke(main, ["backtest", str(tmp_path / "run"), *data, "--start", "0.7",
                                        "--out", str(tmp_path / "bt")])
    assert backtest.exit_code == 0, backtest.output
    assert backtest.output.splitlines()[-6].split() == ["MASE", "sMAPE", "RMSE"], backtest.output
    lines = []
    compare(models=["simple-rnn"], csv=[{"path": str(path), "column": "y", "date_column": "ds",
                                         "id_column": "unique_id", "name": "shops"}],
            seeds=[0], window=8, horizon=2, epochs=1, settings={"units": 4}, out=tmp_path / "report",
            echo=lines.append)
    assert any("test MASE" in line for line in lines), lines
    report = (tmp_path / "report" / "report.md").read_text()
    assert "ranked on test MASE, mean over series (not sMAPE: some values before the test part are 0 or below" in report
    assert "Per-series test MASE of every model and baseline" in report
    summary = pd.read_csv(tmp_path / "report" / "summary.csv")
    assert set(summary["headline"]) == {"test_mase"}
    assert summary.sort_values("rank")["test_mase_mean"].is_monotonic_increasing


def test_stated_freq_puts_series_on_its_grid_or_names_the_fix():
    """Issue 24: freq= states a frequency the user knows (NeuralForecast's freq): series too short to infer it
    get it, missing steps are filled or refused, timestamps off the grid and mismatched kinds are refused."""
    import pytest

    from tsattn import Forecaster
    from tsattn.errors import ConfigError, DataError
    from tsattn.panel import as_panel

    stamps = pd.date_range("2000-01-01", periods=10, freq="MS")
    frame = pd.DataFrame({"unique_id": ["a"] * 10 + ["b"] * 2, "ds": list(stamps) + list(stamps[:2]),
                          "y": np.arange(12.0)})
    two = frame[frame["unique_id"] == "b"]  # two values: no frequency can be inferred
    assert as_panel(two).freq is None and as_panel(two, freq="MS").freq == "MS"
    holed = frame.drop(index=3)
    with pytest.raises(DataError, match="series 'a' misses 1 step\\(s\\) of freq=MS, first 2000-04-01; fill them.*fill="):
        as_panel(holed, freq="MS")
    filled = as_panel(holed, freq="MS", fill="interpolate")
    assert filled.lengths.tolist() == [10, 2] and filled.values[3] == 3.0
    with pytest.raises(DataError, match="off the grid of freq=QS"):
        as_panel(frame, freq="QS")
    with pytest.raises(DataError, match="not on the grid of freq=ME"):
        as_panel(frame, freq="ME")
    with pytest.raises(DataError, match="integer step but series 'a' has dates"):
        as_panel(frame, freq=1)
    with pytest.raises(ConfigError, match="'xx' is not a pandas frequency"):
        as_panel(frame, freq="xx")
    steps = pd.Series(np.arange(5.0), index=[0, 2, 4, 6, 8])
    assert as_panel(steps, freq=2).lengths.tolist() == [5]
    with pytest.raises(DataError, match="misses 4 step"):
        as_panel(steps, freq=1)
    # through the Forecaster: the stated freq is recorded, applied to the data and labels the forecasts
    forecaster = Forecaster("naive", freq="MS", fill="ffill").fit(holed, validation=0)
    assert forecaster.config_.freq == "MS"
    assert list(forecaster.predict(2)["ds"][:2]) == list(pd.date_range("2000-11-01", periods=2, freq="MS"))
    with pytest.raises(ConfigError, match="not a pandas frequency"):
        Forecaster("naive", freq="monthly").fit(frame)


def test_a_wide_csv_reads_one_series_per_named_column(tmp_path):
    """--column north,south,east on a file with one column per series (it said "column 'north,south,east' not
    found"): the same panel as the long file it melts into, through the library and the command line."""
    dates = pd.date_range("2015-01-01", periods=48, freq="MS")
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({"month": dates.strftime("%Y-%m-%d"),
                         **{name: 100 + 10 * k + rng.normal(0, 2, 48).round(2) for k, name in
                            enumerate(("north", "south", "east"))}, "note": "x"})
    path = tmp_path / "wide.csv"
    wide.to_csv(path, index=False)
    long = wide.melt(id_vars="month", value_vars=["north", "south", "east"], var_name="store", value_name="sales")
    long.to_csv(tmp_path / "long.csv", index=False)
    with pytest.warns(UserWarning, match="column\\(s\\) note are not used"):
        panel = read_csv_panel(path, "north,south,east", "month")
    expected = read_csv_panel(tmp_path / "long.csv", "sales", "month", "store")
    assert panel.ids == ["north", "south", "east"] == expected.ids and panel.freq == "MS"
    np.testing.assert_array_equal(panel.values, expected.values)
    assert (panel.index == expected.index).all()
    assert read_csv_panel(path, ["north", "east"], "month").ids == ["north", "east"]  # a list, in the API
    for column, says in (("north,nope", "--column north,nope: column\\(s\\) 'nope' not found"),
                         ("north,north", "a column named twice"), ("north,month", "also named in --column")):
        with pytest.raises(DataError, match=says):
            read_csv_panel(path, column, "month")
    with pytest.raises(DataError, match="covariates need a long file"):
        read_csv_panel(path, "north,south", "month", exog=["east"])
    with pytest.raises(DataError, match="names one series per column \\(a wide file\\), and --id-column 'east'"):
        read_csv_panel(path, "north,south", "month", "east")
    # the command line: fit, then predict on the same file, as a user of a wide spreadsheet would
    runner = CliRunner()
    fitted = runner.invoke(main, ["fit", "--model", "naive", "--csv", str(path), "--column", "north,south,east",
                                  "--date-column", "month", "--horizon", "3", "--out", str(tmp_path / "run"), "-q"])
    assert fitted.exit_code == 0, fitted.output
    predicted = runner.invoke(main, ["predict", str(tmp_path / "run"), "--csv", str(path), "--column",
                                     "north,south,east", "--date-column", "month", "--out", str(tmp_path / "fc")])
    assert predicted.exit_code == 0, predicted.output
    forecast = pd.read_csv(tmp_path / "fc" / "forecast.csv")
    assert forecast["unique_id"].unique().tolist() == ["north", "south", "east"] and len(forecast) == 9
    last = wide.iloc[-1]
    assert forecast.groupby("unique_id", sort=False)["naive"].first().tolist() == \
        [last["north"], last["south"], last["east"]]
    # the Python API names the wide frame and its two fixes
    frame = wide.drop(columns="note").set_index(pd.DatetimeIndex(dates)).drop(columns="month")
    with pytest.raises(DataError, match="one series per column \\(a wide frame\\)\\? \\(pass dict\\(frame.items\\(\\)\\)"):
        tsattn.Forecaster("naive").fit(frame)
    assert tsattn.Forecaster("naive", horizon=2).fit(dict(frame.items()), verbose=0).predict()["unique_id"].nunique() == 3


@pytest.mark.parametrize("model, scores, said", [
    # better on 2 of 3 series and still worse on the mean: the line says so in words
    ("transformer", {"a": (10.0, 12.0), "b": (10.0, 12.0), "c": (40.0, 20.0)}, "20.00 does NOT beat the naive forecast "
     "(14.67, +36.4%; model better on 2 of 3 series); seasonal-naive 15.00 (model better on 2 of 3 series)"),
    ("transformer", {"a": (10.0, 12.0), "b": (10.0, 12.0), "c": (10.0, 20.0)}, "10.00 beats the naive forecast "
     "(14.67, -31.8%; model better on 3 of 3 series)"),
    ("naive", {"a": (12.0, 12.0), "b": (12.0, 12.0), "c": (20.0, 20.0)}, "14.67; naive 14.67 (model better on 0 of "
     "3 series)"),  # the naive forecast itself is not measured against itself
])
def test_a_panel_verdict_says_in_words_whether_the_model_beats_the_naive_forecast(model, scores, said):
    from types import SimpleNamespace

    from tsattn.verdicts import panel_verdict

    rows = [{"part": "test", "metric": "smape", "series": series, "model": name, "value": value}
            for series, (own, naive) in scores.items()
            for name, value in (("model", own), ("naive", naive), ("seasonal_naive", naive + 1 / 3))]
    frame = pd.DataFrame(rows)
    means = frame.groupby("model")["value"].mean()
    result = SimpleNamespace(metrics_frame=frame, metrics={"test": {key: {"smape": means[key], "mase": 1.0}
                                                                   for key in means.index}},
                             data=SimpleNamespace(not_scored=[], target_positions=lambda part: np.arange(6)[:, None],
                                                  headline="smape"),
                             panel=SimpleNamespace(n_series=3, values=np.arange(1.0, 7.0)),
                             beside=["naive", "seasonal_naive"], config=SimpleNamespace(model=model))
    line = panel_verdict(result)
    assert line.startswith("Test sMAPE (mean over 3 series) ") and said in line, line
    assert "MASE" not in line  # no test value is 0
    # test values of 0 (intermittent demand), where sMAPE is 200 for any forecast but 0: MASE is said beside it
    result.panel.values = np.array([0.0, 0.0, 3.0, 4.0, 0.0, 6.0])
    result.metrics["test"]["model"]["mase"], result.metrics["test"]["naive"]["mase"] = 0.383, 0.584
    line = panel_verdict(result)
    if model == "naive":
        assert "MASE" not in line, line
    else:
        assert said in line and "; but 3 of 6 test values are 0, where sMAPE is 200 for any forecast but exactly 0: on " \
            "MASE, which has no such trap, the model is better than the naive forecast (0.383 against 0.584)." in line


def test_a_panel_with_values_of_0_or_below_is_judged_on_mase_saying_why_and_where_mase_is_undefined():
    """sMAPE is 200 for any forecast of a 0 but exactly 0: a panel whose values before the test part reach 0 or below
    is judged on MASE, and a series constant there (all zeros) has no MASE (its in-sample naive error is 0): the
    mean is over the others, said so."""
    from types import SimpleNamespace

    from tsattn.verdicts import panel_verdict

    rows = [{"part": "test", "metric": "mase", "series": series, "model": name, "value": value}
            for series, own, naive in (("a", 0.4, 0.8), ("b", 0.6, 0.5), ("zeros", np.nan, np.nan))
            for name, value in (("model", own), ("naive", naive))]
    result = SimpleNamespace(metrics_frame=pd.DataFrame(rows),
                             metrics={"test": {"model": {"mase": 0.5, "smape": 90.0}, "naive": {"mase": 0.65}}},
                             data=SimpleNamespace(not_scored=[], headline="mase"), panel=SimpleNamespace(n_series=3),
                             beside=["naive"], config=SimpleNamespace(model="nbeats"))
    assert panel_verdict(result) == (
        "Test MASE (mean over 2 of 3 series; MASE is undefined on zeros, constant before the test part; not sMAPE: "
        "some values before the test part are 0 or below) 0.500 beats the naive forecast (0.650, -23.1%; model "
        "better on 1 of 2 series)." + " One seed: compare several before concluding (tsattn compare).")


def test_a_panel_verdict_says_n_a_for_a_baseline_with_no_forecast():
    """Found by a user-path check: weekly series of 30-50 values (no 52-week season before the test part) have no
    seasonal-naive forecast; the fit verdict stopped with a traceback formatting its missing score."""
    from types import SimpleNamespace

    from tsattn.verdicts import panel_verdict

    rows = [{"part": "test", "metric": "smape", "series": series, "model": name, "value": value}
            for series, own in (("a", 10.0), ("b", 12.0)) for name, value in (("model", own), ("naive", 11.0),
                                                                              ("seasonal_naive", np.nan))]
    result = SimpleNamespace(metrics_frame=pd.DataFrame(rows),
                             metrics={"test": {"model": {"smape": 11.0}, "naive": {"smape": 11.0},
                                               "seasonal_naive": {"smape": None}}},
                             data=SimpleNamespace(not_scored=[], target_positions=lambda part: np.arange(2)[:, None],
                                                  headline="smape"),
                             panel=SimpleNamespace(n_series=2, values=np.ones(2)),
                             beside=["naive", "seasonal_naive"], config=SimpleNamespace(model="tft"))
    line = panel_verdict(result)
    assert "; seasonal-naive n/a (no forecast: too few values before the test part)." in line, line


def test_a_panel_backtest_with_retrain_refits_on_every_series_and_equals_cross_validation():
    """backtest(retrain=True) refused panels; it now refits on every series' values up to each origin time, and on a
    panel whose series end together its forecasts are exactly cross_validation(refit=True)'s (two paths, one answer)."""
    rng = np.random.default_rng(0)
    stamps = pd.date_range("2000-01-01", periods=40, freq="MS")
    frame = pd.concat([pd.DataFrame({"unique_id": uid, "ds": stamps, "y": 50 + 5 * k + 10 * np.sin(np.arange(40) / 2)
                                     + rng.normal(0, 1, 40)}) for k, uid in enumerate("abc")], ignore_index=True)
    settings = {"window": 6, "horizon": 2, "epochs": 1, "units": 3}
    fitted = tsattn.Forecaster("simple-rnn", **settings).fit(frame[frame["ds"] < stamps[30]], seed=0, verbose=0)
    table = fitted.backtest(frame, start=34, stride=2, retrain=True)
    assert (pd.to_datetime(table["trained_until"]) == table["origin"]).all() and table["origin"].nunique() == 3
    windows = tsattn.Forecaster("simple-rnn", **settings).cross_validation(frame, h=2, n_windows=3, step_size=2,
                                                                            refit=True, verbose=0)
    both = table.merge(windows, left_on=["unique_id", "origin", "ds"], right_on=["unique_id", "cutoff", "ds"])
    assert len(both) == len(table) == len(windows) == 3 * 3 * 2
    np.testing.assert_array_equal(both["predicted"], both["simple-rnn"])


def test_refit_blocks_take_every_k_origin_times_and_never_forecast_a_series_a_refit_did_not_read():
    from tsattn.backtesting import refit_blocks
    from tsattn.evaluation import origins_in
    from tsattn.panel import as_panel

    stamps = pd.date_range("2000-01-01", periods=30, freq="MS")
    frame = pd.concat([pd.DataFrame({"unique_id": "a", "ds": stamps, "y": np.arange(30.0)}),
                       pd.DataFrame({"unique_id": "b", "ds": stamps[12:], "y": np.arange(18.0)})])
    panel = as_panel(frame)
    origins = origins_in(panel, 4, 2, np.array([10, 4]), stride=1)  # a from 2000-10, b from 2001-04 (its 5th value)
    blocks = refit_blocks(panel, origins, every=8)
    times = [sorted(set(panel.index[origins[block]])) for block in blocks]
    # the first refit (at 2000-10) never read b, which starts in 2001-01: b's first origin (2001-04) opens the second
    assert [len(t) for t in times] == [6, 8, 5] and times[0][0] == stamps[9] and times[1][0] == stamps[15]
    assert panel.index[origins[panel.series_of(origins) == 1]].min() == stamps[15]
    assert sorted(np.concatenate(blocks)) == list(range(len(origins)))
    one = as_panel(frame[frame["unique_id"] == "a"])  # one series: every k origins, in order
    assert [list(b) for b in refit_blocks(one, np.arange(9, 28), 8)] == [list(range(0, 8)), list(range(8, 16)),
                                                                        list(range(16, 19))]


def test_the_series_grid_draws_enough_history_to_show_the_forecast(monkeypatch, tmp_path):
    """Found by a user-path check: series_grid.png of three hourly series of 504 values drew every value, so the
    6-step test forecast was a sliver at the right edge. It now draws the last runs.GRID_HISTORY values before it
    (or 8 horizons, 4 seasons when more), and says so; a short series (M3's) is drawn whole."""
    from tsattn import plots, runs

    drawn = []
    monkeypatch.setattr(plots, "plot_series_grid", lambda panels, path, title: drawn.append(panels) or path)
    hours = pd.date_range("2024-01-01", periods=504, freq="h")
    frame = pd.concat([pd.DataFrame({"unique_id": f"m{k}", "ds": hours,
                                     "y": 50 + 10 * np.sin(np.arange(504) * 2 * np.pi / 24) + k}) for k in range(3)])
    result = fit(RunConfig(model="naive", dataset=None, horizon=6), series=frame)
    runs.write_plots(result, tmp_path)
    keep = runs.grid_history(result)
    assert keep == max(runs.GRID_HISTORY, 4 * 24)
    for caption, history, forecast, _, _ in drawn[0]:
        assert len(history) == keep + 6 and history.index[-6:].equals(forecast.index)
        assert caption.endswith(f"; the last {keep + 6} of 504 values)")
    short = fit(RunConfig(model="naive", dataset=None, horizon=6), series=frame.groupby("unique_id").head(60))
    runs.write_plots(short, tmp_path / "short")
    assert [len(history) for _, history, *_ in drawn[1]] == [60] * 3 and "last" not in drawn[1][0][0]


def test_compare_ranks_a_panel_with_zeros_in_its_test_part_alone_on_smape_and_gives_the_mase_order(tmp_path):
    """Zeros in the test part alone leave a comparison on sMAPE (the ranking never reads the test part to choose its
    metric), where any forecast of a 0 but exactly 0 scores 200: the verdict says how many there are and the order
    on MASE, as the fit verdict does (session 106's open problem)."""
    from tsattn.compare import compare

    path = tmp_path / "panel.csv"
    with_zeros(panel_of(), last=2).to_csv(path, index=False)
    compare(models=["simple-rnn"], csv=[{"path": str(path), "column": "y", "date_column": "ds",
                                         "id_column": "unique_id", "name": "shops"}],
            seeds=[0], window=8, horizon=2, epochs=1, settings={"units": 4, "split": "holdout", "holdout": 2},
            out=tmp_path / "report", echo=lambda line: None)
    report = (tmp_path / "report" / "report.md").read_text()
    assert "ranked on test sMAPE, mean over series" in report
    line = next(line for line in report.splitlines() if "test values are 0" in line)
    assert re.search(r"But 2 of 8 test values are 0, where sMAPE is 200 for any forecast but exactly 0: on test MASE "
                     r"\(mean over series\), which has no such trap, the order is (\S+ \d[\d.]*(, )?)+\.", line), line
    summary = pd.read_csv(tmp_path / "report" / "summary.csv")
    order = re.findall(r"([\w-]+(?: [\w-]+)*) (\d[\d.]*)(?:, |\.$)", line.split("the order is ")[1])
    assert [name for name, _ in order] == list(summary.sort_values("test_mase_mean", kind="stable")["model"])


def test_a_panel_constant_before_its_test_part_is_judged_on_mae_through_fit_and_compare(tmp_path):
    """Found by a user-path check: on a panel of series that are all 0 until their test part, MASE is undefined on
    every series (it divides by the in-sample naive error) and the fit verdict, auto and compare stopped with a
    traceback formatting or ranking its missing mean. They rank and judge such a panel on MAE, and say why."""
    from tsattn.compare import compare

    frame = panel_of().assign(y=0.0)
    frame.loc[frame.groupby("unique_id").tail(2).index, "y"] = [1.0, 0.0] * 4
    path = tmp_path / "panel.csv"
    frame.to_csv(path, index=False)
    data = ["--csv", str(path), "--column", "y", "--date-column", "ds", "--id-column", "unique_id"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", *data, "--horizon", "2", "--window", "8",
                                           "--epochs", "1", "--set", "units=4", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    said = r"Test MAE \(mean over 4 series; the last 20% of each; not sMAPE: some values before the test part are 0 or below, and every " \
        r"series is constant there, where MASE is undefined\) \d\.\d{3} "
    assert re.search(said, result.output), result.output
    assert (tmp_path / "run" / "plots" / "mae_distribution.png").is_file()
    compare(models=["simple-rnn"], csv=[{"path": str(path), "column": "y", "date_column": "ds",
                                         "id_column": "unique_id", "name": "shops"}],
            seeds=[0], window=8, horizon=2, epochs=1, settings={"units": 4}, out=tmp_path / "report",
            echo=lambda line: None)
    report = (tmp_path / "report" / "report.md").read_text()
    assert "ranked on test MAE, mean over series (not sMAPE" in report and "Per-series test MAE of every" in report


def test_a_panel_of_mixed_lengths_is_validated_and_tested_on_the_last_horizons_of_every_series(tmp_path):
    """Found on a user path: the first 50 M3 other series read from a CSV (h = 8) split 70/10/20 per series, so the 10%
    of the short ones held no forecast (25 of 50 never validated nor calibrated on) and the panel was tested on the
    last 20% of each where the same series as a dataset are tested on their last 8. When a fraction of the shortest
    series holds less than one forecast, split "auto" is the hold-out of one horizon for every series."""
    from tsattn.config import settle, window_config

    def windowed(frame):
        return window_config(frame, settle(RunConfig(model="linear", horizon=5, window=8), as_panel(frame)))

    mixed = long_frame(lengths=(40, 120, 200))  # 10% of 40 = 4 values < horizon 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no series left without a validation window
        data = windowed(mixed)
    assert data.split.method == "holdout" and data.split.holdout == 5 and not data.unscored
    for part, first in (("validation", 10), ("test", 5)):  # the last 5 values of every series test, 5 before validate
        targets = data.starts[part] + 8
        owners = data.panel.series_of(targets)
        assert sorted(set(owners)) == [0, 1, 2]
        local = targets - data.panel.offsets[owners]  # the first target's place in its series
        assert (local >= data.panel.lengths[owners] - first).all()
    long_enough = long_frame(lengths=(60, 120, 200))  # 10% of 60 = 6 values: the fractions hold a forecast
    assert windowed(long_enough).split.method == "chronological"
    path = tmp_path / "mixed.csv"
    mixed.to_csv(path, index=False)
    result = CliRunner().invoke(main, ["fit", "--model", "linear", "--csv", str(path), "--column", "y", "--date-column",
                                       "ds", "--id-column", "unique_id", "--horizon", "5", "--window", "8",
                                       "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "(mean over 3 series; the last 5 values of each)" in result.output, result.output
    scored = pd.read_csv(tmp_path / "run" / "metrics_by_series.csv")
    assert set(scored.loc[scored["part"] == "validation", "unique_id"]) == {"a", "b", "c"}
