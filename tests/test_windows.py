import time

import numpy as np
import pandas as pd
import pytest

import tsattn
from tsattn.errors import ConfigError, DataError
from tsattn.windows import Scaler, SplitSpec, make_windows, window_panel, window_series


def test_make_windows_shapes_values_and_no_copy():
    values = np.arange(10.0)
    X, y = make_windows(values, window=3, horizon=2)
    assert X.shape == (6, 3, 1) and y.shape == (6, 2)
    assert X[0, :, 0].tolist() == [0, 1, 2] and y[0].tolist() == [3, 4]
    assert X[-1, :, 0].tolist() == [5, 6, 7] and y[-1].tolist() == [8, 9]
    assert np.shares_memory(X, values) and np.shares_memory(y, values)
    Xs, ys = make_windows(values, window=3, stride=3)
    assert Xs[:, :, 0].tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and ys.ravel().tolist() == [3, 6, 9]


def test_make_windows_million_points_fast():
    values = np.random.default_rng(0).normal(size=1_000_000)
    start = time.perf_counter()
    X, y = make_windows(values, window=64)
    elapsed = time.perf_counter() - start
    assert X.shape == (1_000_000 - 64, 64, 1)
    assert np.shares_memory(X, values)
    assert elapsed < 0.5  # views only; a copy would take seconds and 500 MB


def test_make_windows_errors():
    with pytest.raises(DataError, match="window 10 \\+ horizon 1 needs at least 11 values but the series has 5; "
                                        "use a window of at most 4 \\(e.g. window=4\\)"):
        make_windows(np.arange(5.0), window=10)
    with pytest.raises(DataError, match="use a horizon of at most 3 or a longer series"):  # no window fits: the horizon
        make_windows(np.arange(5.0), window=2, horizon=4)
    with pytest.raises(DataError, match="has 2; give a series of at least 5 values$"):  # no horizon fits either
        make_windows(np.arange(2.0), window=2, horizon=3)
    for name in ("window", "horizon", "stride"):
        with pytest.raises(ConfigError, match=f"{name} must be an integer >= 1; got 0"):
            make_windows(np.arange(5.0), **{"window": 2, name: 0})


def test_tutorial_fibonacci_shuffled_split():
    # the tutorial's get_fib_XY(12, 3, 0.7) with RandomState(13): these rows and targets, before scaling
    data = window_series(tsattn.fibonacci(12), 3, split=SplitSpec("shuffled", 0.7, 0.0), scaler_fit="all")
    assert data.X("train", scaled=False)[:, :, 0].tolist() == [
        [8, 13, 21], [5, 8, 13], [2, 3, 5], [13, 21, 34], [21, 34, 55], [34, 55, 89]]
    assert data.y("train", scaled=False).ravel().tolist() == [34, 21, 8, 55, 89, 144]
    assert data.count("test") == 3 and data.count("validation") == 0
    # scaler fit on the whole series, as the tutorial does
    assert data.scaler.offset == 1 and data.scaler.scale == 232


def test_tutorial_sunspots_non_overlapping_windows():
    # the tutorial's get_XY: split the series 80/20, then windows of 12 with stride 12 inside each part
    s = tsattn.load_dataset("sunspots")
    data = window_series(s, 12, stride=12, split=SplitSpec(train=0.8, validation=0.0, within_parts=True),
                         scaler_fit="all")
    values = s.to_numpy()
    train, test = values[:2256], values[2256:]
    y_ind = np.arange(12, len(train), 12)
    np.testing.assert_array_equal(data.y("train", scaled=False).ravel(), train[y_ind])
    np.testing.assert_array_equal(data.X("train", scaled=False).reshape(len(y_ind), 12),
                                  train[: 12 * len(y_ind)].reshape(len(y_ind), 12))
    y_ind_test = np.arange(12, len(test), 12)
    np.testing.assert_array_equal(data.y("test", scaled=False).ravel(), test[y_ind_test])
    assert data.count("train") == 187 and data.count("test") == 46


def test_chronological_split_boundaries_no_shared_targets():
    s = tsattn.load_dataset("sunspots")
    data = window_series(s, 24, horizon=3)
    assert data.boundaries == (1974, 2256)
    targets = {part: set(data.target_positions(part).ravel()) for part in ("train", "validation", "test")}
    assert not targets["train"] & targets["validation"] and not targets["validation"] & targets["test"]
    assert max(targets["train"]) < 1974 <= min(targets["validation"])
    assert max(targets["validation"]) < 2256 <= min(targets["test"])
    assert (np.diff(data.starts["test"]) > 0).all()  # chronological order kept
    # inputs may reach back into earlier parts
    assert data.starts["test"].min() < 2256  # the first input of the first test window
    one_step = window_series(s, 24)
    assert one_step.count("test") == 564 and one_step.target_positions("test")[0, 0] == 2256


def test_scaler_fit_on_train_only_and_inverse():
    values = np.concatenate([np.linspace(0, 1, 80), np.linspace(5, 10, 20)])
    series = pd.Series(values)
    data = window_series(series, 5, split=SplitSpec(train=0.7, validation=0.1))
    assert data.scaler.offset == 0 and data.scaler.scale == pytest.approx(values[:70].max())
    assert data.y("test").max() > 1  # test values outside the training range are not squeezed into [0, 1]
    np.testing.assert_allclose(data.scaler.inverse_transform(data.y("test")), data.y("test", scaled=False),
                               rtol=1e-5)
    leaky = window_series(series, 5, scaler_fit="all")
    assert leaky.scaler.scale == 10
    standard = window_series(series, 5, scaling="standard")
    train_values = values[:70]
    assert standard.scaler.offset == pytest.approx(train_values.mean())
    restored = Scaler.from_dict(standard.scaler.to_dict())
    np.testing.assert_allclose(restored.inverse_transform(restored.transform(values)), values)


def test_split_errors():
    s = pd.Series(np.arange(30.0))
    with pytest.raises(ConfigError, match="leave no test part"):
        window_series(s, 3, split=SplitSpec(train=0.8, validation=0.2))
    with pytest.raises(DataError, match="too short for window 22.*the train part gets no window"):
        window_series(s, 22)
    with pytest.raises(ConfigError, match="split must be one of"):
        SplitSpec("random")
    with pytest.raises(ConfigError, match="train fraction must be a number between 0 and 1"):
        SplitSpec(train=1.5)
    with pytest.raises(ConfigError, match="scaling must be one of"):
        window_series(s, 3, scaling="log")


def test_train_history_keeps_only_recent_training_windows():
    from tsattn.windows import SplitSpec, window_panel

    frame = pd.DataFrame({"unique_id": ["a"] * 40 + ["b"] * 30, "ds": list(range(40)) + list(range(30)),
                          "y": np.arange(70.0)})
    split = SplitSpec("holdout", holdout=4)
    every = window_panel(frame, 5, 2, split=split)
    recent = window_panel(frame, 5, 2, split=split, train_history=6)
    assert set(recent.starts["train"]) < set(every.starts["train"])
    for start in recent.starts["train"]:  # every target inside the last 6 values of the series' training part
        series = recent.panel.series_of(np.array([start]))[0]
        train_end = recent.panel.offsets[series] + recent.part_bounds[series, 0]
        assert train_end - 6 <= start + 5 and start + 5 + 2 <= train_end
    assert len(recent.starts["train"]) == 2 * (6 - 2 + 1)  # 5 windows of 2 targets in 6 values, per series
    np.testing.assert_array_equal(recent.starts["validation"], every.starts["validation"])


def test_lookback_is_the_window_in_horizons():
    from tsattn.config import RunConfig, check_config, window_config
    from tsattn.errors import ConfigError

    series = pd.Series(np.arange(200.0), index=pd.date_range("2000-01-01", periods=200, freq="MS"))
    assert window_config(series, check_config(RunConfig(dataset=None, horizon=6, lookback=3, preset="classic"))).window == 18
    with pytest.raises(ConfigError, match="window .* or lookback .* not both"):
        window_config(series, check_config(RunConfig(dataset=None, horizon=6, lookback=3, window=12, preset="classic")))
    with pytest.raises(ConfigError, match="lookback must be an integer in 1..100"):
        check_config(RunConfig(lookback=0))


def test_padded_windows_start_before_their_series_and_repeat_its_first_value():
    """pad=True (N-BEATS pads): a series shorter than window + horizon is kept; a window reaching before its series
    holds the series' first value there, never the previous series' values; the scaler sees real values only."""
    from tsattn.panel import as_panel

    long_ = pd.Series(np.arange(100.0, 130.0), index=pd.date_range("2000-01-01", periods=30, freq="MS"))
    short = pd.Series(np.arange(1.0, 9.0), index=pd.date_range("2000-01-01", periods=8, freq="MS"))
    panel = as_panel({"long": long_, "short": short})
    split = SplitSpec("holdout", holdout=2)
    with pytest.warns(UserWarning, match="fewer than the 12 values a window needs \\(window 10, horizon 2\\)"):
        plain = window_series(panel, 10, 2, split=split, scaling="none")
    assert plain.panel.ids == ["long", "short"] and plain.dropped == ["short"]  # kept to be forecast, no window
    assert (plain.panel.series_of(np.concatenate(list(plain.starts.values())) + 10) == 0).all()
    padded = window_series(panel, 10, 2, split=split, scaling="none", pad=True)
    assert padded.panel.ids == ["long", "short"]
    numbers = padded.series_numbers("test")
    X = padded.X("test", scaled=False)[numbers == 1][0, :, 0]
    assert X.tolist() == [1.0] * 5 + [2.0, 3.0, 4.0, 5.0, 6.0]  # 4 pads, then the 6 values before the test part
    assert padded.y("test", scaled=False)[numbers == 1].tolist() == [[7.0, 8.0]]
    train = padded.X("train", scaled=False)[padded.series_numbers("train") == 1]
    assert len(train) and train.min() >= 1.0 and train.max() <= 4.0  # its own training values, none of "long"
    # the first training window of the short series has exactly one real value (the rest is its pad)
    assert train[0, :, 0].tolist() == [1.0] * 10
    minmax = window_series(panel, 10, 2, split=split, pad=True)
    assert minmax.scaler.offset[1] == 1.0 and minmax.scaler.scale[1] == 3.0  # min and range of its 4 training values
    with pytest.raises(ConfigError, match="pad works with the chronological and hold-out splits"):
        window_series(panel, 10, 2, split=SplitSpec("shuffled"), pad=True)


def test_a_padded_model_forecasts_short_series_through_every_path(tmp_path):
    """Forecaster(pad=True) on a panel with a series shorter than its window: fit, predict (with intervals),
    save/load and the harness all forecast it; the same model without pad trains and scores nothing on it, with a
    warning, and forecasts it from its padded values with another."""
    from tsattn.config import RunConfig
    from tsattn.harness import fit

    rng = np.random.default_rng(0)
    frame = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": pd.date_range("2000-01-01", periods=n, freq="MS"),
                                     "y": 100 + np.cumsum(rng.normal(size=n)) + 10 * i})
                       for i, n in enumerate([12, 20, 40, 60])])
    f = tsattn.Forecaster("simple-rnn", window=16, horizon=4, pad=True, epochs=1, units=4).fit(frame)
    forecast = f.predict(4, level=[80])
    assert forecast.groupby("unique_id").size().to_dict() == {"s0": 4, "s1": 4, "s2": 4, "s3": 4}
    assert np.isfinite(forecast[["simple-rnn", "simple-rnn-lo-80", "simple-rnn-hi-80"]].to_numpy()).all()
    g = tsattn.Forecaster.load(f.save(tmp_path / "pad.tsattn"))
    assert g.predict(4, level=[80]).equals(forecast)
    config = RunConfig(model="simple-rnn", dataset=None, window=16, horizon=4, epochs=1).updated(units=4)
    result = fit(config.updated(pad=True), series=frame)
    assert result.panel.n_series == 4 and np.isfinite(result.metrics["test"]["model"]["smape"])
    with pytest.warns(UserWarning, match="1 of 4 series have fewer than the 20 values a window needs"):
        plain = fit(config, series=frame)  # s0 trains and scores nothing, but is forecast (padded, with a warning)
    assert plain.data.dropped == ["s0"] and "s0" not in set(plain.metrics_frame["series"])
    with pytest.warns(UserWarning, match="'s0'\\) have fewer than the 16 values the window reads, so its inputs are "
                                         "padded with its first value, which this model never trained on"):
        unpadded = tsattn.Forecaster("simple-rnn", window=16, horizon=4, epochs=1, units=4).fit(frame).predict(4)
    assert np.isfinite(unpadded.query("unique_id == 's0'")["simple-rnn"]).sum() == 4


@pytest.mark.parametrize("split", [SplitSpec("chronological", 0.7, 0.1), SplitSpec("holdout", 0.7, 0.1, holdout=6),
                                   SplitSpec("holdout", 0.7, 0.1, holdout=6, holdout_test=False),
                                   SplitSpec("shuffled", 0.6, 0.2, shuffle_seed=13)])
def test_the_final_fit_trains_on_validation_values_never_on_test_ones(split):
    """with_validation_trained: every training and validation target of the split trains, the test part is the same
    windows, no test target is trained on, and the scaler is this data's (both fits read the same inputs)."""
    panel = tsattn.load_dataset("m3-monthly")
    panel = panel[panel["unique_id"].isin(panel["unique_id"].unique()[:5])]
    data = window_panel(panel, 6, horizon=3, split=split, require_test=split.test > 0)
    full = data.with_validation_trained()
    assert full.count("validation") == 0
    np.testing.assert_array_equal(full.starts["test"], data.starts["test"])
    trained = set(full.target_positions("train").ravel())
    before = set(data.target_positions("train").ravel()) | set(data.target_positions("validation").ravel())
    assert before <= trained
    if split.method == "shuffled":  # windows overlap across parts by design: no test window trains
        assert not set(full.starts["train"]) & set(data.starts["test"])
    else:
        assert not trained & set(data.target_positions("test").ravel())
    assert full.count("train") >= data.count("train") + data.count("validation")
    assert full.scaler is data.scaler and full.dropped == data.dropped
    if split.method != "shuffled":  # the training values now reach the test part (or the end)
        ends = data.panel.offsets[:-1] + data.insample_end()
        assert max(trained) == max(ends - 1) and (full.insample_end() == data.insample_end()).all()
    assert data.with_validation_trained().with_validation_trained().count("train") == full.count("train")


def test_validation_windows_roll_one_step_apart_before_the_test_part():
    """validation_windows=k: the validation part is k horizons before the test part, cut into (k - 1) h + 1 windows per
    series; the test part is unchanged and the final fit still trains on all of it."""
    from tsattn.config import RunConfig, settle, window_config

    frame = tsattn.load_dataset("m3-monthly")
    frame = frame[frame["unique_id"].isin(frame.groupby("unique_id").size().nlargest(3).index)]
    h = 18
    one, three = (window_config(frame, settle(RunConfig(dataset=None, horizon=h, validation_windows=k),
                                              tsattn.panel.as_panel(frame))) for k in (1, 3))
    assert one.count("validation") == 3 and three.count("validation") == 3 * (2 * h + 1)
    np.testing.assert_array_equal(one.starts["test"], three.starts["test"])
    assert (three.part_bounds[:, 1] - three.part_bounds[:, 0] == 3 * h).all()
    assert three.with_validation_trained().count("train") == one.with_validation_trained().count("train")


def test_masked_targets_keep_windows_running_past_the_training_part_and_never_read_beyond_it(monkeypatch):
    """masked_targets (the N-BEATS authors' sampler): the extra training windows have their first target inside the
    training part and at least one after its end; a batch of them repeats the last training value there (never a
    validation value) and its mask is 0 exactly at those steps, on both gather paths and the sampled one."""
    import tsattn.harness as H
    from tsattn.panel import as_panel

    panel = as_panel({"a": pd.Series(np.arange(1.0, 31.0)), "b": pd.Series(np.arange(101.0, 121.0))})
    split = SplitSpec("holdout", holdout=3)  # validation 3 and test 3 values at the end of each series
    plain = window_series(panel, 4, 3, split=split, scaling="none")
    masked = window_series(panel, 4, 3, split=split, scaling="none", masked_targets=True)
    for part in ("train", "validation", "test"):
        np.testing.assert_array_equal(masked.starts[part], plain.starts[part])  # the parts themselves unchanged
    starts, limits = masked.training_windows()
    extra, ends = starts[len(plain.starts["train"]):], limits[len(plain.starts["train"]):]
    assert len(extra) == 2 * 2  # horizon - 1 more cut points per series
    assert ((extra + 4 < ends) & (extra + 4 + 3 > ends)).all()  # first target inside, the last one past the end
    train_end = {0: 24, 1: 30 + 14}  # flat positions where each series' validation part starts
    assert sorted(ends.tolist()) == [24, 24, 44, 44] and set(ends.tolist()) <= set(train_end.values())
    values = panel.values.astype(np.float32)
    for gather_once in (True, False):
        if not gather_once:
            monkeypatch.setattr(H, "GATHER_ONCE_BYTES", 0)
        X, y = next(iter(H.make_dataset(values, starts, 4, 3, batch_size=len(starts), limits=limits)))
        X, y = np.asarray(X)[:, :, 0], np.asarray(y)
        target, mask = y[:, :3], y[:, 3:]
        last_known = values[limits - 1]
        expected = np.minimum(starts[:, None] + 4 + np.arange(3), limits[:, None] - 1)
        np.testing.assert_array_equal(target, values[expected])
        np.testing.assert_array_equal(mask, (starts[:, None] + 4 + np.arange(3) < limits[:, None]).astype(float))
        assert (target[mask == 0] == np.repeat(last_known, 3).reshape(-1, 3)[mask == 0]).all()
    X, y = next(iter(H.make_dataset(values, starts, 4, 3, batch_size=64, sampled=True, limits=limits)))
    assert np.asarray(y).shape == (64, 6) and set(np.unique(np.asarray(y)[:, 3:])) <= {0.0, 1.0}
    final = masked.with_validation_trained()  # the final fit: masked past the test part's start, never into it
    assert sorted(set(final.training_windows()[1][len(final.starts["train"]):].tolist())) == [27, 47]
    assert masked.rewindowed(2).overhang is not None
    with pytest.raises(ConfigError, match="masked_targets works with the chronological and hold-out splits"):
        window_series(panel, 4, 3, split=SplitSpec("shuffled"), masked_targets=True)


def test_the_nonnegative_floor_reads_only_the_values_before_each_test_part():
    """Intervals are floored at 0 when nothing a fit sees is negative: a negative value in one series' test part
    (unseen) keeps the floor, one before it removes it."""
    values = np.arange(70.0) + 1
    frame = pd.DataFrame({"unique_id": ["a"] * 40 + ["b"] * 30, "ds": list(range(40)) + list(range(30)), "y": values})
    split = SplitSpec("holdout", holdout=4)
    assert window_panel(frame, 5, 2, split=split).nonnegative_floor() == 0.0
    unseen = frame.assign(y=np.where(np.arange(70) == 68, -5.0, values))  # in b's last 4 values: its test part
    assert window_panel(unseen, 5, 2, split=split).nonnegative_floor() == 0.0
    seen = frame.assign(y=np.where(np.arange(70) == 65, -5.0, values))  # b's 26th value, before its test part
    assert window_panel(seen, 5, 2, split=split).nonnegative_floor() is None
    first = frame.assign(y=np.where(np.arange(70) == 37, -5.0, values))  # a's test part only
    assert window_panel(first, 5, 2, split=split).nonnegative_floor() == 0.0
