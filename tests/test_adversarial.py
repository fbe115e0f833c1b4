"""Property-based adversarial tests: generated CSVs, settings and tampered artefacts either work or fail
with one TsattnError line; nothing else escapes (no traceback for the CLI, exit code 2)."""

import io
import json
import math
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import make_series
from tsattn.errors import ConfigError, DataError, TsattnError
from tsattn.forecaster import Forecaster
from tsattn.config import RunConfig, check_config
from tsattn.panel import read_csv_panel
from tsattn.windows import SplitSpec, window_panel

QUICK = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])

cells = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30),
                  st.sampled_from(["", "n/a", "1e400", "-", "2020-01-01", "x,y", '"', "NaN", "inf"]),
                  st.text(max_size=6))
dates = st.one_of(st.dates(min_value=pd.Timestamp("1900-01-01").date(), max_value=pd.Timestamp("2200-01-01").date())
                  .map(str), st.sampled_from(["", "not a date", "2020-13-01", "0", "1e9"]),
                  st.integers(-5, 10**6).map(str))


@st.composite
def csv_files(draw):
    rows = draw(st.integers(0, 40))
    ids = draw(st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=rows, max_size=rows))
    regular = draw(st.booleans())
    if regular:
        stamps = [str(d.date()) for d in pd.date_range("2000-01-01", periods=rows, freq="MS")]
    else:
        stamps = draw(st.lists(dates, min_size=rows, max_size=rows))
    values = draw(st.lists(cells, min_size=rows, max_size=rows))
    frame = pd.DataFrame({"id": ids, "ds": stamps, "y": values})
    text = frame.to_csv(index=False)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]  # truncated anywhere
    return text


@QUICK
@given(text=csv_files(), with_id=st.booleans(), fill=st.sampled_from([None, "interpolate", "ffill", "drop"]))
def test_generated_csvs_load_or_fail_with_one_line(tmp_path, text, with_id, fill):
    path = tmp_path / "data.csv"
    path.write_text(text)
    try:
        panel = read_csv_panel(path, "y", "ds", "id" if with_id else None, fill=fill)
        data = window_panel(panel, 3, split=SplitSpec(train=0.6, validation=0.2))
    except TsattnError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert np.isfinite(panel.values).all()
    assert np.isfinite(data.scaled).all() or not np.isfinite(data.scaled).all() and False
    for part in ("train", "validation", "test"):  # windows stay inside one series
        starts = data.starts[part]
        series = panel.series_of(starts)
        assert (starts + data.window + data.horizon <= panel.offsets[series + 1]).all()


setting_values = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=True),
                           st.text(max_size=8), st.lists(st.integers(), max_size=2),
                           st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@QUICK
@given(name=st.sampled_from([f for f in RunConfig.fields() if f != "model"]), value=setting_values)
def test_generated_settings_are_checked_before_work(name, value):
    config = RunConfig()
    setattr(config, name, value)
    try:
        check_config(config)
    except TsattnError as exc:
        assert name in str(exc) or "model" in str(exc) or "dataset" in str(exc)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("artefact") / "m.tsattn"
    Forecaster("simple-rnn", window=6, units=3, epochs=1).fit(make_series(n=60), seed=0).save(path)
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("tsattn.json")), archive.read("model.keras")


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                           max_leaves=6)


def _paths(state, prefix=()):
    if isinstance(state, dict):
        for key, value in state.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))


@QUICK
@given(data=st.data())
def test_tampered_artefacts_load_and_forecast_or_fail_with_one_line(tmp_path, saved, data):
    state, model_bytes = saved
    state = json.loads(json.dumps(state))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = sorted(p for p in _paths(state) if p[0] not in ("versions", "history"))
        path = data.draw(st.sampled_from(paths))
        target = state
        for key in path[:-1]:
            target = target.get(key) if isinstance(target, dict) else None
        if isinstance(target, dict) and path[-1] in target:
            if data.draw(st.booleans()):
                target[path[-1]] = data.draw(json_values)
            else:
                del target[path[-1]]
    artefact = tmp_path / "tampered.tsattn"
    with zipfile.ZipFile(artefact, "w") as archive:
        archive.writestr("tsattn.json", json.dumps(state))
        archive.writestr("model.keras", model_bytes)
    try:
        forecaster = Forecaster.load(artefact)
        forecast = forecaster.predict(3)
    except TsattnError as exc:
        assert "\n" not in str(exc)
        return
    assert np.isfinite(np.asarray(forecast, dtype=np.float64)).all()  # never NaN forecasts with exit 0


def test_artefact_members_are_checked_before_reading(tmp_path, saved, monkeypatch):
    from tsattn import artefacts

    state, model_bytes = saved
    link = tmp_path / "link.tsattn"
    with zipfile.ZipFile(link, "w") as archive:
        info = zipfile.ZipInfo("tsattn.json")
        info.external_attr = (0o120777 << 16)  # a symbolic link entry
        archive.writestr(info, "/dev/zero")
    with pytest.raises(TsattnError, match="tsattn.json inside is not a regular file"):
        Forecaster.load(link)
    monkeypatch.setattr(artefacts, "METADATA_MAX_BYTES", 1000)
    bomb = tmp_path / "bomb.tsattn"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("tsattn.json", " " * 100_000 + json.dumps(state))
        archive.writestr("model.keras", model_bytes)
    with pytest.raises(TsattnError, match="unpacks to .* bytes, over the 1000 that tsattn reads"):
        Forecaster.load(bomb)
    directory = tmp_path / "run"
    directory.mkdir()
    (directory / "tsattn.json").symlink_to("/dev/zero")
    with pytest.raises(TsattnError, match="tsattn.json is not a regular file"):
        Forecaster.load(directory)


def test_fifo_csv_is_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(TsattnError, match="is not a regular file"):
        read_csv_panel(fifo, "y")
    with pytest.raises(TsattnError, match="is not a regular file"):
        read_csv_panel("/dev/zero", "y")


@pytest.mark.parametrize("values", [np.full(80, 3.0), np.zeros(80)])
def test_constant_series_fit_and_report(values, tmp_path):
    from click.testing import CliRunner

    from tsattn.cli.main import main

    path = tmp_path / "flat.csv"
    pd.DataFrame({"v": values}).to_csv(path, index=False)
    result = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", "--csv", str(path), "--window", "6",
                                       "--epochs", "2", "--set", "units=3", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "no model can beat it" in result.output
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["test"]["model"]["rmse"] is not None and math.isfinite(metrics["test"]["model"]["rmse"])


def test_tz_aware_forecasts_keep_the_named_zone(tmp_path):
    index = pd.date_range("2024-03-30", periods=48, freq="h", tz="Europe/Paris")
    series = pd.Series(np.arange(48.0), index=index)
    f = Forecaster("naive", window=4).fit(series)
    forecast = f.predict(30)  # crosses nothing new, but the labels must stay in Europe/Paris
    assert str(forecast.index.tz) == "Europe/Paris" and forecast.index[0] == index[-1] + pd.Timedelta("1h")
    assert Forecaster.load(f.save(tmp_path / "tz.tsattn")).predict(30).index.equals(forecast.index)
    spring = pd.date_range("2024-03-28", periods=3, freq="D", tz="Europe/Paris")
    daily = Forecaster("naive", window=2).fit(pd.Series([1.0, 2.0, 3.0], index=spring), validation=0)
    labels = daily.predict(3).index  # across the DST change: local midnight every day
    assert [t.hour for t in labels] == [0, 0, 0] and str(labels.tz) == "Europe/Paris"


def test_missing_steps_refused_with_advice_or_filled():
    import warnings

    index = pd.date_range("2000-01-01", periods=40, freq="MS").delete([5, 6])
    series = pd.Series(np.arange(38.0), index=index)
    with pytest.raises(TsattnError, match="misses 2 step\\(s\\) of its MS frequency, first 2000-06-01; insert and fill.*--fill"):
        Forecaster("naive").fit(series)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = Forecaster("naive", fill="interpolate").fit(series)
    assert f.predict(1).index[0] == pd.Timestamp("2003-05-01")


# ----------------------------------------------------------------------------------------------------
# Issue 25: hardening, round 2 (one test per defect class)
# ----------------------------------------------------------------------------------------------------
def _cli(args):
    from click.testing import CliRunner

    from tsattn.cli.main import main

    return CliRunner().invoke(main, args)


def test_json_errors_are_one_json_object_on_stdout(tmp_path):
    """Class 2: with --json every outcome is JSON on stdout, library errors and usage errors alike."""
    from click.testing import CliRunner

    from tsattn.cli.main import main

    (tmp_path / "nan.csv").write_text("date,v\n2000-01-01,1\n2000-02-01,\n2000-03-01,3\n")
    runner = CliRunner()
    for args, kind in ((["fit", "--json", "--csv", str(tmp_path / "nan.csv"), "--column", "v", "--out",
                         str(tmp_path / "x")], "DataError"),
                       (["fit", "--json", "--bogus"], "usage"),
                       (["predict", "--json", "--model-dir", str(tmp_path / "missing"), "--out",
                         str(tmp_path / "fc")], "DataError")):
        result = runner.invoke(main, args)
        stdout = result.stdout if hasattr(result, "stdout") else result.output
        document = json.loads(stdout.strip().splitlines()[-1])
        assert result.exit_code == 2 and document["exit_code"] == 2 and document["kind"] == kind
        assert document["error"] and "Traceback" not in result.output
    assert not (tmp_path / "x").exists() and not (tmp_path / "fc").exists()


def test_far_future_forecasts_are_refused_before_any_work_or_labelled_as_periods(monkeypatch):
    """Class 3: timestamps past what pandas holds crashed after the work; periods past 2262 broke the plot."""
    from tsattn import state as state_module

    series = pd.Series(np.arange(100.0), index=pd.date_range("1900-01-01", periods=100, freq="MS"))
    forecaster = Forecaster("naive").fit(series)
    monkeypatch.setattr(state_module.FittedState, "forecast", lambda *a, **k: pytest.fail("forecast ran"))
    with pytest.raises(TsattnError, match=r"reach past 2262-04-11.*forecast at most 4248 steps"):
        forecaster.predict(100_000)
    monkeypatch.undo()
    periods = pd.Series(np.arange(100.0), index=pd.period_range("1900-01", periods=100, freq="M"))
    far = Forecaster("naive").fit(periods)
    assert str(far.predict(100_000).index[-1]) == "10241-08"
    far.plot(steps=100_000).savefig(io.BytesIO(), format="png")  # drawn by year number past 2262


def test_a_figure_that_cannot_be_drawn_is_skipped_and_the_run_kept(monkeypatch, tmp_path):
    """Class 4: series ids with $ signs are shown literally; a figure that fails (values near 1e308) is skipped
    with one warning and the run is kept."""
    from tsattn import plots

    frame = pd.DataFrame({"unique_id": ["store #3 $$"] * 40 + ["b $x^2$"] * 40,
                          "ds": list(pd.date_range("2000-01-01", periods=40, freq="MS")) * 2,
                          "y": np.r_[np.arange(40.0), 2 * np.arange(40.0)]})
    figure = Forecaster("naive").fit(frame).plot()
    figure.savefig(io.BytesIO(), format="png")  # math text would fail on "$$"
    assert [ax.get_title() for ax in figure.axes if ax.get_visible()] == ["store #3 $$", "b $x^2$"]
    huge = pd.Series(np.linspace(1e307, 1.7e308, 60), index=pd.date_range("2000-01-01", periods=60, freq="MS"))
    with pytest.warns(UserWarning, match=r"huge.png was not drawn \(.*\); everything else is kept"):
        assert plots.kept(Forecaster("naive").fit(huge).plot)(tmp_path / "huge.png") is None

    network = Forecaster("attention-rnn", window=8, horizon=2, units=2, epochs=1).fit(frame)
    attention = network.plot(kind="attention")  # the ids are the heatmap's tick labels there (issue 39, class 6)
    attention.savefig(io.BytesIO(), format="png")
    history = pd.DataFrame({"loss": np.geomspace(6e-3, 1e-3, 20)}, index=pd.RangeIndex(1, 21))
    loss = plots.save_figure(plots.loss_figure(history, "store #3 $$ loss"), tmp_path / "loss.png")
    assert loss.stat().st_size > 5000  # the title literal; the log axis' ticks plain numbers (0.001)

    def broken(*args, **kwargs):
        raise ValueError("dates must be between year 0001 and 9999")

    monkeypatch.setattr(plots, "loss_figure", broken)
    small = tmp_path / "small.csv"
    pd.DataFrame({"date": pd.date_range("2000-01-01", periods=80, freq="MS"), "v": np.sin(np.arange(80.0))}) \
        .to_csv(small, index=False)
    result = _cli(["fit", "--model", "simple-rnn", "--csv", str(small), "--column", "v", "--window", "12",
                   "--epochs", "1", "--set", "units=4", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "loss.png was not drawn (dates must be between year 0001 and 9999)" in result.output
    assert (tmp_path / "run" / "model.keras").exists() and (tmp_path / "run" / "plots" / "forecast.png").exists()
    assert not (tmp_path / "run" / "plots" / "loss.png").exists()


def test_cli_warnings_are_one_plain_line_and_quiet_silences_them(tmp_path):
    """Class 13: an unsorted CSV printed `.../tsattn/data.py:280: UserWarning:` and a source line, even with -q."""
    frame = pd.DataFrame({"date": pd.date_range("2000-01-01", periods=60, freq="MS"), "v": np.sin(np.arange(60.0))})
    path = tmp_path / "unsorted.csv"
    frame.iloc[::-1].to_csv(path, index=False)
    common = ["fit", "--model", "simple-rnn", "--csv", str(path), "--column", "v", "--date-column", "date",
              "--window", "6", "--epochs", "1", "--set", "units=2"]
    loud = _cli(common + ["--out", str(tmp_path / "a")])
    assert loud.exit_code == 0, loud.output
    lines = [line for line in loud.output.splitlines() if "sorted them" in line]
    assert len(lines) == 1 and lines[0].startswith("Warning: ") and "UserWarning" not in loud.output
    assert ".py:" not in loud.output
    quiet = _cli(common + ["--out", str(tmp_path / "b"), "-q"])
    assert quiet.exit_code == 0 and quiet.output == ""


def test_integer_date_columns_are_time_steps_not_nanoseconds(tmp_path):
    """Class 5: a CSV with years (1900, 1901, ...) as --date-column gave forecasts dated 1970-01-01 00:00:00.0000019."""
    path = tmp_path / "years.csv"
    pd.DataFrame({"year": np.arange(1900, 1980), "v": np.sin(np.arange(80.0)) + 5}).to_csv(path, index=False)
    series = read_csv_panel(path, "v", "year").series(0)
    assert list(series.index[:2]) == [1900, 1901]
    fitted = _cli(["fit", "--model", "simple-rnn", "--csv", str(path), "--column", "v", "--date-column", "year",
                   "--window", "6", "--epochs", "1", "--set", "units=2", "--out", str(tmp_path / "run"), "-q"])
    assert fitted.exit_code == 0, fitted.output
    predicted = _cli(["predict", "--model-dir", str(tmp_path / "run"), "--steps", "2", "--out", str(tmp_path / "fc"),
                      "-q"])
    assert predicted.exit_code == 0, predicted.output
    forecast = pd.read_csv(tmp_path / "fc" / "forecast.csv")  # a panel of one, named as the data and the model
    assert list(forecast.columns) == ["unique_id", "year", "simple-rnn"] and forecast["year"].tolist() == [1980, 1981]


def test_numeric_looking_series_ids_stay_as_written(tmp_path):
    """Class 6: ids 007, 07 and 7 came back as 7 and merged into one series."""
    path = tmp_path / "ids.csv"
    ids = ["007", "07", "7", "0042"]
    pd.DataFrame({"unique_id": np.repeat(ids, 30), "ds": list(range(30)) * 4,
                  "y": np.arange(120.0)}).to_csv(path, index=False)
    panel = read_csv_panel(path, "y", "ds", "unique_id")
    assert panel.ids == ids and panel.lengths.tolist() == [30] * 4


def test_fill_fills_only_interior_gaps_and_drops_missing_ends_with_a_warning():
    """Class 7: --fill interpolate turned trailing empty months into copies of the last value, scored as actuals."""
    from tsattn.data import as_series

    index = pd.date_range("2020-01-01", periods=7, freq="MS")
    series = pd.Series([np.nan, 1.0, np.nan, 3.0, 4.0, np.nan, np.nan], index=index)
    for fill, inside in (("interpolate", 2.0), ("ffill", 1.0)):
        with pytest.warns(UserWarning, match=r"dropped 3 missing value\(s\) at its start or end"):
            filled = as_series(series, fill=fill)
        assert filled.tolist() == [1.0, inside, 3.0, 4.0] and filled.index[-1] == index[4]
    with pytest.raises(TsattnError, match="fill='drop' would leave a gap"):
        as_series(series, fill="drop")
    with pytest.warns(UserWarning, match="dropped 1"):
        assert as_series(pd.Series([1.0, 2.0, 3.0, np.nan], index=index[:4]), fill="drop").tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(TsattnError, match="at its start or end: drop them with fill='drop'"):
        as_series(pd.Series([1.0, 2.0, 3.0, np.nan], index=index[:4]))
    panel = pd.DataFrame({"unique_id": ["a"] * 7, "ds": index, "y": series.to_numpy()})
    with pytest.warns(UserWarning, match="dropped 3"):
        from tsattn.panel import as_panel

        assert as_panel(panel, fill="interpolate").lengths.tolist() == [4]


def test_a_csv_across_a_daylight_saving_change_reads_as_the_api_reads_it(tmp_path):
    """Class 8: a CSV whose UTC offsets change (+01:00 -> +02:00) was refused by the CLI with a pandas warning."""
    stamps = pd.date_range("2021-03-27", periods=72, freq="h", tz="Europe/Berlin")
    path = tmp_path / "tz.csv"
    pd.DataFrame({"time": [t.isoformat() for t in stamps], "v": np.sin(np.arange(72) / 3)}).to_csv(path, index=False)
    series = read_csv_panel(path, "v", "time").series(0)
    assert len(series) == 72 and (np.diff(series.index.asi8) == 3_600 * 10 ** 9).all()  # hourly, in UTC
    long = pd.DataFrame({"unique_id": "a", "ds": [t.isoformat() for t in stamps], "y": np.arange(72.0)})
    long.to_csv(tmp_path / "long.csv", index=False)
    assert read_csv_panel(tmp_path / "long.csv", "y", "ds", "unique_id").freq == "h"
    result = _cli(["fit", "--model", "simple-rnn", "--csv", str(path), "--column", "v", "--date-column", "time",
                   "--window", "6", "--epochs", "1", "--set", "units=2", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0 and "Warning" not in result.output, result.output
    # daily dates with their offsets (a database's timestamptz): regular in local time, not in UTC (midnight is 23:00
    # UTC in winter, 22:00 in summer), so read in local time (they were refused as "irregular timestamps")
    days = pd.date_range("2022-03-01", periods=60, freq="D", tz="Europe/Berlin")
    daily = tmp_path / "daily.csv"
    pd.DataFrame({"ds": [t.isoformat() for t in days], "y": np.arange(60.0)}).to_csv(daily, index=False)
    series = read_csv_panel(daily).series(0)
    assert series.index.freqstr == "D" and series.index[0] == pd.Timestamp("2022-03-01") and len(series) == 60


def test_two_levels_never_share_a_column():
    """Class 10: --level 99.99999999 --level 99.999999999 wrote one lo-100/hi-100 pair."""
    from tsattn.intervals import interval_columns

    columns = interval_columns([99.99999999, 99.999999999, 80, 97.5])
    assert columns == ["lo-80", "hi-80", "lo-97.5", "hi-97.5", "lo-99.99999999", "hi-99.99999999",
                       "lo-99.999999999", "hi-99.999999999"]
    assert len(set(columns)) == len(columns)


def test_two_runs_on_one_new_out_exactly_one_wins(tmp_path):
    """Class 11: two fits started at once on the same new folder both exited 0; the later replaced the earlier."""
    from tsattn.errors import ConfigError
    from tsattn.io import atomic_directory

    out = tmp_path / "new"
    first = atomic_directory(out, kind="run")
    second = atomic_directory(out, kind="run")
    staging_a, staging_b = first.__enter__(), second.__enter__()  # both checked out as new, both working
    (staging_a / "metrics.json").write_text(json.dumps({"run": "a"}))
    (staging_b / "metrics.json").write_text(json.dumps({"run": "b"}))
    first.__exit__(None, None, None)
    with pytest.raises(ConfigError, match="was written by another run while this one ran"):
        second.__exit__(None, None, None)
    assert json.loads((out / "metrics.json").read_text()) == {"run": "a"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]  # the loser's staging is gone


@pytest.mark.parametrize("args, named", [
    (["--model", "simple-rnn", "--set", "model=transformer"], "--model simple-rnn and --set model=transformer"),
    (["--level", "80", "--set", "level=[95]"], "--level [80] and --set level=[95]"),
    (["--set", "units=4", "--set", 'model_params={"units": 2}'], "--set units=4 and --set model_params="),
    (["--set", "units=4", "--set", "units=2"], "--set units=4 and --set units=2"),
])
def test_conflicting_options_are_refused_naming_both(args, named, tmp_path):
    """Class 12: --model simple-rnn --set model=transformer trained the transformer, silently."""
    result = _cli(["fit", "--dataset", "sunspots", "--epochs", "1", "--out", str(tmp_path / "run"), *args])
    assert result.exit_code == 2 and named in result.output and "give it once" in result.output, result.output
    assert not (tmp_path / "run").exists()


def test_python_api_edges_give_one_clear_error():
    """Class 14: documented functions exported; empty ids, short series for attention and a retrain given as
    text give a clear error naming the argument, not an IndexError / UnboundLocalError / int() message."""
    import tsattn
    from tsattn.errors import ConfigError, DataError

    assert tsattn.read_csv_panel and tsattn.as_panel and tsattn.window_panel and tsattn.plot_series
    series = make_series(n=60)
    naive = Forecaster("naive").fit(series)
    with pytest.raises(ConfigError, match="ids must be a non-empty list"):
        naive.predict(1, ids=[])
    with pytest.raises(ConfigError, match="retrain must be True, False or an integer >= 1.*'yes'"):
        naive.backtest(series, retrain="yes")
    network = Forecaster("attention-rnn", window=12, units=2, epochs=1).fit(series)
    with pytest.raises(DataError, match="has 5 values, fewer than the window \\(12\\)"):
        network.attention_weights(series[:5])


def test_messages_name_the_real_problem_and_a_fix_that_works(tmp_path):
    """Class 9: each message names the real problem (not a symptom of it) and a fix that works."""
    from tsattn.data import read_csv_series, time_text
    from tsattn.errors import ConfigError, DataError

    series = make_series(n=60)  # monthly
    naive = Forecaster("naive").fit(series)
    with pytest.raises(ConfigError, match=r"start '2030-01-01' is after the series' last timestamp 2004-12-01; start "
                                          r"at a timestamp between 2000-02-01 and 2004-12-01$"):  # dates, as written
        naive.backtest(series, start="2030-01-01")
    with pytest.raises(ConfigError, match=r"at or before the series' first timestamp 2000-01-01; start at a timestamp "
                                          r"between 2000-02-01 and 2004-12-01$"):
        naive.backtest(series, start="1999-01-01")
    # with a time zone the message names each timestamp with its offset, and what it names works written back
    aware = series.copy()
    aware.index = aware.index.tz_localize("Europe/Paris")
    with pytest.raises(ConfigError, match=r"between 2000-02-01 00:00:00\+01:00 and 2004-12-01 00:00:00\+01:00$") as raised:
        naive.backtest(aware, start="2030-01-01")
    written_back = str(raised.value).split("between ")[1].split(" and ")[0]
    assert pd.Timestamp(written_back) == aware.index[1]  # the same instant, not a date in another zone
    assert naive.backtest(aware, start=time_text(aware.index[40]))["ds"].iloc[0] == aware.index[40]
    long = tmp_path / "long.csv"
    pd.DataFrame({"store": np.repeat(["a", "b"], 30), "date": list(pd.date_range("2000-01-01", periods=30,
                                                                               freq="MS")) * 2,
                  "sales": np.arange(60.0)}).to_csv(long, index=False)
    with pytest.raises(DataError, match="long.csv holds several series told apart by 'store' \\(its 'date' values "
                                        "repeat\\); read it as a panel with --id-column store --date-column date "
                                        "--column sales"):
        read_csv_series(long, "sales", "date")
    with pytest.raises(DataError, match="--id-column and --column both name the column 'sales'"):
        read_csv_panel(long, "sales", "date", "sales")
    # a model fitted on one series forecasts a Nixtla frame of many (here: two) series, scaled on their own history
    frame = pd.DataFrame({"unique_id": np.repeat(["x", "y"], 30),
                          "ds": list(pd.date_range("2010-01-01", periods=30, freq="MS")) * 2, "y": np.arange(60.0)})
    assert list(naive.predict(1, series=frame)["naive"]) == [29.0, 59.0]
    # a damaged comparison.json is named as damaged, not as "a different comparison"
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "comparison.json").write_text("{not json")
    result = _cli(["compare", "--models", "simple-rnn", "--seeds", "0", "--epochs", "1", "--out", str(out)])
    assert result.exit_code == 2 and "comparison.json is damaged" in result.output, result.output


def test_a_date_column_left_out_is_named_in_a_warning(tmp_path):
    """A first-hour trap: `--csv f.csv --column v` without --date-column indexed the series 0..n-1 silently."""
    from tsattn.data import read_csv_series

    path = tmp_path / "monthly.csv"
    pd.DataFrame({"month": pd.date_range("2000-01-01", periods=24, freq="MS").strftime("%Y-%m-%d"),
                  "v": np.arange(24.0)}).to_csv(path, index=False)
    with pytest.warns(UserWarning, match="column 'month' looks like timestamps but is not used.*--date-column month"):
        assert read_csv_series(path, "v").index[-1] == 23
    assert read_csv_series(path, "v", "month").index.freqstr == "MS"


def test_far_future_refusal_counts_fixed_steps_without_building_them():
    """The refusal's "at most N steps" was counted by listing every timestamp up to 2262: billions for seconds."""
    from tsattn.io import describe_index, future_index

    seconds = pd.date_range("2020-01-01", periods=5, freq="s")
    with pytest.raises(TsattnError, match=r"forecast at most 7645363196 steps"):
        future_index(describe_index(seconds), 10 ** 11)


# -- round 3 (issue 39) -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    ["fit", "--config", "{special}", "--dataset", "sunspots", "--epochs", "1"],
    ["compare", "--tuned", "{special}", "--models", "naive", "--datasets", "sunspots"],
    ["tune", "--space", "{special}", "--dataset", "sunspots", "--trials", "1"],
])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_settings_files_that_are_pipes_or_devices_are_refused_without_blocking(command, special, tmp_path):
    """Class 1: `fit --config FIFO` and `compare --tuned FIFO` blocked for ever; /dev/zero was read without end."""
    import os

    if special == "fifo":
        special = str(tmp_path / "pipe.json")
        os.mkfifo(special)
    args = [part.format(special=special) for part in command] + ["--out", str(tmp_path / "out")]
    result = _cli(args)
    assert result.exit_code == 2 and "is not a regular file" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_a_tuned_seed_does_not_replace_the_seeds_of_a_comparison(tmp_path):
    """Class 2: compare --tuned best.json holding a seed ran every --seeds value with that one seed."""
    from tsattn.tuning import tuned_settings

    best = tmp_path / "best.json"
    best.write_text(json.dumps({"model": "simple-rnn", "seed": 4, "units": 8, "horizon": 3}))
    assert tuned_settings([best]) == {"simple-rnn.units": 8}


def test_a_setting_fixed_with_set_is_left_out_of_the_search_and_said():
    """Class 2: tune --set units=4 was overridden by the search space without a word (best.json: units=117)."""
    from tsattn import tuning

    lines = []
    result = tuning.tune("simple-rnn", data=make_series(n=80), trials=2, settings={"units": 4, "epochs": 1},
                         space={"units": {"int": [8, 256]}, "learning_rate": None, "batch_size": None, "window": None,
                                "cell": None, "dropout": [0.0, 0.1], "skip": None},
                         refit=False, echo=lines.append)
    assert "units=4 fixed by the settings (--set): left out of the search" in lines
    assert result.best_settings["units"] == 4 and "units" not in result.trials.columns.str.replace("param_", "")


@pytest.mark.parametrize("args, named", [
    (["--seed", "3", "--set", "seed=5"], "the seed is given twice (seed=3 and settings seed=5)"),
    (["--set", "model=nbeats"], "the model is given twice"),
])
def test_tune_refuses_settings_the_search_would_override(args, named, tmp_path):
    """Class 2: --seed 3 --set seed=5 and --model vs --set model were accepted."""
    result = _cli(["tune", "--model", "simple-rnn", "--dataset", "sunspots", "--trials", "1",
                   "--out", str(tmp_path / "tune"), *args])
    assert result.exit_code == 2 and named in result.output, result.output
    assert not (tmp_path / "tune").exists()


def test_ids_of_mixed_types_that_read_the_same_are_refused():
    """Class 2: ids 7 (integer) and "7" (text) in one frame became two series both named "7"."""
    from tsattn.errors import DataError
    from tsattn.panel import as_panel

    frame = pd.DataFrame({"unique_id": [7] * 20 + ["7"] * 20,
                          "ds": list(pd.date_range("2020-01-01", periods=20, freq="D")) * 2, "y": np.arange(40.0)})
    with pytest.raises(DataError, match="ids of mixed types that read the same, such as '7'.*astype\\(str\\)"):
        as_panel(frame)
    frame["unique_id"] = [7] * 20 + ["8"] * 20  # mixed types that read differently are two series, as before
    assert list(as_panel(frame).ids) == ["7", "8"]


def test_static_features_without_stat_exog_and_an_empty_out_are_refused(tmp_path):
    """Class 2: static_df / --static-csv without stat_exog was ignored silently; predict --out '' wrote nothing."""
    from tsattn.errors import ConfigError

    series = make_series(n=60)
    frame = pd.DataFrame({"unique_id": "a", "ds": series.index, "y": series.to_numpy()})
    with pytest.raises(ConfigError, match="static_df is given but no static feature is named.*stat_exog"):
        Forecaster("naive").fit(frame, static_df=pd.DataFrame({"unique_id": ["a"], "size": [1.0]}))
    Forecaster("naive").fit(series).save(tmp_path / "model")
    result = _cli(["predict", "--model-dir", str(tmp_path / "model"), "--out", ""])
    assert result.exit_code == 2 and "--out is empty" in result.output, result.output


def test_settings_of_the_wrong_shape_and_frames_with_a_column_twice_are_one_line(tmp_path):
    """Issue 39, class 3: --set dataset_options={n:100} and --preset classic --set preset=nbeats-recipe gave
    TypeErrors; a long frame with two y columns and a futr_df with a covariate twice gave TypeError /
    AttributeError; a negative --timeout was accepted and a YAML bound 1e-4 was 'not a number'."""
    from tsattn.errors import DataError
    from tsattn.specs import Search

    for args, named in ((["--set", "dataset_options={n:100}"], "dataset_options must be a table of settings"),
                        (["--preset", "classic", "--set", "preset=nbeats-recipe"], "name two presets; give it once")):
        result = _cli(["fit", "--dataset", "sunspots", "--epochs", "1", "--out", str(tmp_path / "run"), *args])
        assert result.exit_code == 2 and named in result.output and "Traceback" not in result.output, result.output
    result = _cli(["tune", "--dataset", "sunspots", "--timeout", "-5", "--out", str(tmp_path / "tune")])
    assert result.exit_code == 2 and "timeout must be a number of seconds above 0" in result.output
    assert not (tmp_path / "run").exists() and not (tmp_path / "tune").exists()
    assert Search.from_value("learning_rate", {"float": ["1e-4", "1e-2"], "log": True}).low == 1e-4
    series = make_series(n=60)
    frame = pd.DataFrame({"unique_id": "a", "ds": series.index, "y": series.to_numpy(), "promo": np.arange(60) % 2})
    with pytest.raises(DataError, match="has two columns named 'y'; rename or drop one"):
        Forecaster("naive").fit(pd.concat([frame, frame[["y"]]], axis=1))
    fitted = Forecaster("simple-rnn", window=4, horizon=2, futr_exog=["promo"], units=2, epochs=1).fit(frame)
    future = fitted.make_future_dataframe().assign(promo=1)
    with pytest.raises(DataError, match="futr_df has two columns named 'promo'"):
        fitted.predict(futr_df=pd.concat([future, future[["promo"]]], axis=1))


def test_fit_config_of_a_search_on_a_csv_file_fits_that_file(tmp_path, small_csv):
    """Class 5: `fit --config best.json` of a CSV search was refused with "give either a dataset or a CSV file, not
    both" though no dataset was given (the default dataset was merged in)."""
    best = tmp_path / "best.json"
    best.write_text(json.dumps({"model": "simple-rnn", "csv": str(small_csv), "column": "demand",
                                "date_column": "date", "epochs": 1, "units": 2}))
    result = _cli(["fit", "--config", str(best), "--out", str(tmp_path / "run"), "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "run" / "config.json").read_text())["config"]["csv"] == str(small_csv)


def test_backtesting_a_panel_fitted_model_on_one_of_its_series_warns_that_it_saw_later_data():
    """Class 2: backtesting a panel-fitted model on one of its own series gave no warning that the model had seen
    the data after the origins (a single-series fit did)."""
    frame = pd.DataFrame({"unique_id": ["a"] * 60 + ["b"] * 60,
                          "ds": list(pd.date_range("2000-01-01", periods=60, freq="MS")) * 2,
                          "y": np.r_[np.sin(np.arange(60.0)), np.cos(np.arange(60.0))] + 5})
    model = Forecaster("naive").fit(frame)
    one = frame[frame["unique_id"] == "a"].set_index("ds")["y"]
    with pytest.warns(UserWarning, match="the model was fitted on data up to .* after the first origin"):
        model.backtest(one, start=0.8)


def test_backtesting_and_evaluating_a_panel_name_the_series_too_short_to_score():
    """Class 2: a panel series with fewer values from start than the steps got no origin and vanished from the
    backtest without a word (the CLI said "74 origins" of the long series only); evaluate counted it in "series"."""
    frame = pd.DataFrame({"unique_id": ["long"] * 60 + ["short"] * 20,
                          "ds": list(pd.date_range("2000-01-01", periods=60, freq="MS"))
                          + list(pd.date_range("2000-01-01", periods=20, freq="MS")),
                          "y": np.r_[np.sin(np.arange(60.0)), np.cos(np.arange(20.0))] + 5})
    model = Forecaster("naive", horizon=5).fit(frame, validation=0)
    with pytest.warns(UserWarning, match="1 of 2 series have fewer than 5 value\\(s\\) from start 0.8, so they get "
                                         "no origin and are not backtested \\(short\\)"):
        table = model.backtest(frame, start=0.8)
    assert set(table["unique_id"]) == {"long"}
    assert table.attrs["metrics"]["series_not_scored"] == ["short"] and table.attrs["metrics"]["series"] == 1
    lookback = model.state_.lookback
    with pytest.warns(UserWarning, match=f"1 of 2 series have fewer than the {lookback + 5} values one window of "
                                         f"{lookback} and 5 step\\(s\\) needs, so they are not scored \\(short\\)"):
        summary = model.evaluate(frame[(frame["unique_id"] == "long") | (frame["ds"] >= "2000-09-01")])  # short: 12
    assert summary["series"] == 1 and summary["series_not_scored"] == ["short"]


def test_an_id_given_where_the_data_goes_names_the_argument_that_takes_ids():
    """Class 1: plot(series="B") or predict(series="B") (an id where the data goes) said "expected a 1-D series but got
    an array of shape ()"; the line now names ids=."""
    frame = pd.DataFrame({"unique_id": ["a"] * 30 + ["b"] * 30,
                          "ds": list(pd.date_range("2000-01-01", periods=30, freq="MS")) * 2,
                          "y": np.r_[np.arange(30.0), np.arange(30.0) * 2] + 1})
    model = Forecaster("naive", horizon=2).fit(frame)
    for call in (lambda: model.predict(series="b"), lambda: model.plot(series="b"), lambda: model.evaluate("b")):
        with pytest.raises(ConfigError, match="series takes the data to forecast after .* not an id; got 'b': to "
                                              "choose fitted series by id, pass ids=\\['b'\\]"):
            call()
    assert list(model.predict(ids=["b"])["unique_id"].unique()) == ["b"]


@st.composite
def long_frames(draw):
    """Long frames a user might pass: the usual columns or some missing, a column twice, odd types in each."""
    rows = draw(st.integers(0, 30))
    columns = draw(st.lists(st.sampled_from(["unique_id", "ds", "y", "price", "y", "ds", "other"]), max_size=6))
    data = {}
    stamps = pd.date_range("2000-01-01", periods=rows, freq="MS")
    kinds = {"unique_id": st.sampled_from([["a"] * rows, [1] * rows, ["a", 1] * (rows // 2) + ["a"] * (rows % 2),
                                           [None] * rows]),
             "ds": st.sampled_from([list(stamps), list(range(rows)), ["x"] * rows, list(stamps[::-1])]),
             "y": st.sampled_from([list(np.arange(rows, dtype=float)), ["1"] * rows, [np.nan] * rows,
                                   list(np.full(rows, 1e308)), [True] * rows])}
    frame = pd.DataFrame(index=range(rows))
    for name in columns:
        values = draw(kinds.get(name, st.just(list(np.linspace(0, 1, rows)))))
        frame = pd.concat([frame, pd.Series(values, name=name, dtype=object if name == "unique_id" else None)], axis=1)
    return frame


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(frame=long_frames(), exog=st.sampled_from([(), ("price",), ("nope",), ("y",)]))
def test_generated_long_frames_are_read_or_refused_in_one_line(frame, exog):
    """Every API entry reads frames through as_panel: a frame of the wrong shape, a column twice or odd types is
    refused with one TsattnError line, never an AttributeError, TypeError or IndexError."""
    from tsattn.panel import as_panel

    try:
        panel = as_panel(frame, exog=exog)
    except TsattnError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert np.isfinite(panel.values).all() and panel.n_series >= 1


@pytest.fixture(scope="module")
def fitted_on_frame():
    series = make_series(n=40)
    frame = pd.DataFrame({"unique_id": "a", "ds": series.index, "y": series.values, "price": np.linspace(0, 1, 40)})
    return Forecaster("simple-rnn", window=6, horizon=3, units=3, epochs=1).fit(frame, seed=0, verbose=0)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(frame=long_frames())
def test_generated_frames_given_to_a_fitted_forecaster_are_forecast_or_refused_in_one_line(fitted_on_frame, frame):
    for call in (lambda: fitted_on_frame.predict(df=frame), lambda: fitted_on_frame.predict(futr_df=frame)):
        try:
            call()
        except TsattnError as exc:
            assert "\n" not in str(exc) and str(exc)


def test_round_3_messages_name_the_real_cause_and_a_fix_that_works(tmp_path):
    """Class 5 of issue 39: a backtest start that cannot work names the start (or --steps) that does; a covariate
    too wide to scale is named (not the least-squares start); the internal id column is never listed; a --tuned
    file's problem names the file, not a --set."""
    from click.testing import CliRunner

    from tsattn.cli.main import main

    series = make_series(n=24)
    frame = pd.DataFrame({"date": series.index.strftime("%Y-%m-%d"), "demand": series.values,
                          "big": np.where(np.arange(24) % 2, 1e300, -1e300)})
    frame.to_csv(tmp_path / "one.csv", index=False)
    base = ["--csv", str(tmp_path / "one.csv"), "--column", "demand", "--date-column", "date"]
    run = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", *base, "--window", "6", "--horizon", "3",
                                    "--epochs", "1", "--set", "units=3", "--out", str(tmp_path / "run"), "-q"])
    assert run.exit_code == 0, run.output
    cases = [
        (["backtest", "--model-dir", str(tmp_path / "run"), *base, "--start", "2000-03-01"],
         "start at or after 2000-07-01"),
        (["backtest", "--model-dir", str(tmp_path / "run"), *base, "--start", "2001-12-01"],
         "start at or before 2001-10-01"),
        (["backtest", "--model-dir", str(tmp_path / "run"), *base, "--start", "2000-08-01", "--steps", "50"],
         "use steps of at most 18"),
        (["fit", "--model", "simple-rnn", *base, "--futr-exog", "big", "--out", str(tmp_path / "f")],
         "covariate column 'big' of CSV file one.csv holds -1e+300 in series"),
        (["fit", "--model", "simple-rnn", *base, "--hist-exog", "nope", "--out", str(tmp_path / "f")],
         "available columns: date, demand, big"),
    ]
    (tmp_path / "best.json").write_text(json.dumps({"model": "nbeats", "units": 4}))
    cases.append((["compare", "--models", "simple-rnn", *base, "--seeds", "0", "--tuned", str(tmp_path / "best.json"),
                   "--out", str(tmp_path / "c")], "is a search of nbeats, which is not compared here"))
    for args, message in cases:
        result = CliRunner().invoke(main, args + ["--out", str(tmp_path / "bt")] if args[0] == "backtest" else args)
        assert result.exit_code == 2 and message in result.output, (args, result.output)
        assert "__series__" not in result.output and "start earlier" not in result.output
        assert "least-squares" not in result.output and "--set" not in result.output


def test_a_static_csv_without_a_named_feature_is_named_with_its_columns(tmp_path):
    """--static-csv lacking a --stat-exog column said only "is not in the static frame"; it names the file now."""
    weeks = pd.date_range("2021-01-04", periods=40, freq="W-MON")
    pd.concat([pd.DataFrame({"store": s, "week": weeks, "units": np.arange(40.0) + 10 * k})
               for k, s in enumerate("ab")]).to_csv(tmp_path / "sales.csv", index=False)
    pd.DataFrame({"store": ["a", "b"], "size": [1, 2]}).to_csv(tmp_path / "stores.csv", index=False)
    result = _cli(["fit", "--model", "naive", "--csv", str(tmp_path / "sales.csv"), "--id-column", "store",
                   "--date-column", "week", "--column", "units", "--stat-exog", "region", "--static-csv",
                   str(tmp_path / "stores.csv"), "--horizon", "4", "--out", str(tmp_path / "run")])
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(lines) == 1 and not (tmp_path / "run").exists(), result.output
    assert re.search(r"covariate column 'region' is not in static CSV \S*stores.csv; available columns: store, "
                     r"size$", lines[0])


def test_tsattn_backtest_retrains_a_panel(tmp_path):
    """Found by a user-path check: on three hourly series ending together, `tsattn backtest --retrain 2` was refused
    ("the series of a panel end at different times", which was not so). A panel now refits on every series' values
    up to each block's first origin time, as cross_validation(refit=True) does (tests/test_panel.py)."""
    hours = pd.date_range("2024-03-01", periods=60, freq="h")
    pd.concat([pd.DataFrame({"meter": f"m{k}", "ds": hours, "y": np.arange(60.0) + k}) for k in range(3)]).to_csv(
        tmp_path / "meters.csv", index=False)
    data = ["--csv", str(tmp_path / "meters.csv"), "--id-column", "meter", "--date-column", "ds", "--column", "y"]
    fitted = _cli(["fit", "--model", "linear", *data, "--horizon", "4", "--out", str(tmp_path / "run"), "-q"])
    assert fitted.exit_code == 0, fitted.output
    result = _cli(["backtest", str(tmp_path / "run"), *data, "--start", "48", "--stride", "2", "--retrain", "2",
                   "--out", str(tmp_path / "bt")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "bt" / "backtest.csv", parse_dates=["origin", "trained_until"])
    assert table["meter"].nunique() == 3 and table["origin"].nunique() == 5  # origins 47, 49, ..., 55
    refits = table.groupby("origin")["trained_until"].unique()  # one refit per two origin times, on all 3 series
    assert [list(v) for v in refits] == [[hours[47]], [hours[47]], [hours[51]], [hours[51]], [hours[55]]]


def test_run_files_name_the_id_and_time_columns_as_the_data_does(tmp_path):
    """Found by a user-path check: a run on meters.csv (--id-column meter --date-column time) wrote forecast.csv
    with `meter, time` but predictions.csv with `unique_id, ds` and backtest.csv with `unique_id`. Every file and
    frame made from the model now names them as the data does (Forecaster.backtest and attention_weights too), and
    one series' forecast.csv and backtest.csv are a panel of one's (test_cli_output)."""
    hours = pd.date_range("2024-03-01", periods=60, freq="h")
    pd.concat([pd.DataFrame({"meter": f"m{k}", "time": hours, "kwh": np.arange(60.0) + k}) for k in range(2)]).to_csv(
        tmp_path / "meters.csv", index=False)
    data = ["--csv", str(tmp_path / "meters.csv"), "--id-column", "meter", "--date-column", "time", "--column", "kwh"]
    assert _cli(["fit", "--model", "linear", *data, "--horizon", "2", "--out", str(tmp_path / "run"), "-q"]).exit_code == 0
    predictions = pd.read_csv(tmp_path / "run" / "predictions.csv")
    assert list(predictions.columns[:5]) == ["meter", "time", "step", "actual", "predicted"]
    backtest = _cli(["backtest", str(tmp_path / "run"), *data, "--start", "50", "--out", str(tmp_path / "bt")])
    assert backtest.exit_code == 0  # the targets' time named as the data's (it was `timestamp`)
    assert list(pd.read_csv(tmp_path / "bt" / "backtest.csv").columns[:3]) == ["meter", "origin", "time"]
    # its table: the model's row once (it printed `linear` twice: the model and the linear baseline, equal)
    assert [line.split()[0] for line in backtest.output.splitlines() if line[:1].isalpha()] == [
        "linear", "naive", "seasonal-naive", "Wrote"]
    assert _cli(["predict", str(tmp_path / "run"), "--out", str(tmp_path / "f")]).exit_code == 0
    assert list(pd.read_csv(tmp_path / "f" / "forecast.csv").columns[:2]) == ["meter", "time"]

    frame = pd.read_csv(tmp_path / "meters.csv", parse_dates=["time"])
    forecaster = Forecaster("attention-rnn", horizon=2, window=6, epochs=1, units=2).fit(
        frame, id_column="meter", time_column="time", value_column="kwh")
    assert list(forecaster.backtest(frame, start=50).columns[:3]) == ["meter", "origin", "time"]
    assert forecaster.attention_weights(frame).columns[0] == "meter"
    # an id named like an output column falls back to Nixtla's name rather than write it twice
    clash = Forecaster("linear", horizon=2, window=6).fit(frame.rename(columns={"meter": "step"}),
                                                                  id_column="step", time_column="time",
                                                                  value_column="kwh")
    clashing = clash.backtest(frame.rename(columns={"meter": "step"}), start=50)
    assert list(clashing.columns[:3]) == ["unique_id", "origin", "ds"]


def test_cross_validation_reads_the_frame_by_the_columns_the_model_was_fitted_on():
    """Found by a user-path check: a model fitted with id_column="sku" (and covariates) took cross_validation(train)
    as a frame of unique_id, ds, y, and refused it with "covariates come in a long frame: unique_id, ds, y ...",
    which the frame was. It now reads the fitted columns, as predict does; names given still win, a Nixtla frame
    still reads, and a frame without its id column says which columns it has."""
    rng = np.random.default_rng(0)
    weeks = pd.date_range("2023-01-02", periods=40, freq="W-MON")
    frame = pd.concat([pd.DataFrame({"sku": f"s{k}", "week": weeks, "promo": (rng.random(40) < 0.3).astype(int)})
                       for k in range(2)], ignore_index=True)
    frame["units"] = 10 + 5 * frame["promo"] + rng.normal(0, 1, len(frame))
    f = Forecaster("linear", horizon=2, window=4, futr_exog=["promo"]).fit(frame, id_column="sku", time_column="week",
                                                                          value_column="units")
    windows = f.cross_validation(frame, n_windows=2, verbose=0)
    assert list(windows.columns) == ["sku", "week", "cutoff", "units", "linear"] and len(windows) == 2 * 2 * 2
    nixtla = frame.rename(columns={"sku": "unique_id", "week": "ds", "units": "y"})
    assert list(f.cross_validation(nixtla, n_windows=2, verbose=0).columns[:4]) == ["unique_id", "ds", "cutoff", "y"]
    pd.testing.assert_frame_equal(f.cross_validation(frame.rename(columns={"sku": "store"}), n_windows=2, verbose=0,
                                                     id_column="store").drop(columns="store"),
                                  windows.drop(columns="sku"))
    with pytest.raises(DataError, match=r"^id column 'unique_id' not found in the frame; available columns: store, "
                                        r"week, promo, units \(covariates come in a long frame: name its id"):
        Forecaster("linear", horizon=2, window=4, futr_exog=["promo"]).fit(frame.rename(columns={"sku": "store"}))


def test_static_features_are_keyed_by_the_datas_own_id_column_and_read_by_every_method(tmp_path):
    """Found by a user-path check: fit(frame, id_column="sku", static_df=static) with static keyed by "sku" (as the
    CLI's --static-csv with --id-column is, and NeuralForecast's static_df by id_col) said "static features have no
    row for 4 series". The data's id column keys it now, as unique_id or the index do."""
    weeks = pd.date_range("2023-01-02", periods=30, freq="W-MON")
    frame = pd.concat([pd.DataFrame({"sku": f"s{k}", "week": weeks, "units": 10.0 + k + np.sin(np.arange(30))})
                       for k in range(3)], ignore_index=True)
    static = pd.DataFrame({"sku": ["s0", "s1", "s2"], "cat": ["a", "b", "a"]})
    columns = {"id_column": "sku", "time_column": "week", "value_column": "units"}
    f = Forecaster("linear", horizon=2, window=4, stat_exog=["cat"]).fit(frame, static_df=static, **columns)
    g = Forecaster("linear", horizon=2, window=4, stat_exog=["cat"]).fit(frame, static_df=static.set_index("sku"),
                                                                          **columns)
    pd.testing.assert_frame_equal(f.predict(), g.predict())
    # a series not seen in fit: every method that reads data takes its static features (evaluate and backtest had no
    # static_df, so their "pass static_df" was a dead end); the future frame's skeleton needs none (df=, as NF)
    new = frame[frame["sku"] == "s0"].assign(sku="n1")
    known = pd.DataFrame({"sku": ["n1"], "cat": ["b"]})
    assert list(f.make_future_dataframe(df=new)["sku"]) == ["n1", "n1"] and f.get_missing_future(
        f.make_future_dataframe(df=new), df=new).empty
    assert f.evaluate(new, static_df=known)["count"] > 0
    assert len(f.backtest(new, start=25, static_df=known, retrain=2)) == 4 * 2  # origins 24-27, 2 steps each
    # one series with static features refits as a frame (it was passed on as a Series, which cannot carry them); a
    # long frame of one series comes back with its id, as a panel's
    one = Forecaster("linear", horizon=2, window=4, stat_exog=["cat"]).fit(new, static_df=known, **columns)
    assert list(one.backtest(new, start=25, retrain=2)["sku"]) == ["n1"] * 4 * 2

    # the CLI: predict and backtest of series not seen in fit take --static-csv (there was no way to give them)
    frame.to_csv(tmp_path / "skus.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    known.to_csv(tmp_path / "known.csv", index=False)
    static.to_csv(tmp_path / "static.csv", index=False)
    data = ["--id-column", "sku", "--date-column", "week", "--column", "units"]
    assert _cli(["fit", "--model", "linear", "--csv", str(tmp_path / "skus.csv"), *data, "--horizon", "2", "--window",
                 "4", "--stat-exog", "cat", "--static-csv", str(tmp_path / "static.csv"), "--out", str(tmp_path / "r"),
                 "-q"]).exit_code == 0
    lacking = _cli(["predict", str(tmp_path / "r"), "--csv", str(tmp_path / "new.csv"), *data])
    assert lacking.exit_code == 2 and "(CLI --static-csv)" in lacking.output and "Traceback" not in lacking.output
    given = _cli(["predict", str(tmp_path / "r"), "--csv", str(tmp_path / "new.csv"), *data, "--static-csv",
                  str(tmp_path / "known.csv"), "--json"])
    assert given.exit_code == 0 and {row["sku"] for row in json.loads(given.stdout)} == {"n1"}
    assert _cli(["backtest", str(tmp_path / "r"), "--csv", str(tmp_path / "new.csv"), *data, "--static-csv",
                 str(tmp_path / "known.csv"), "--start", "25", "--out", str(tmp_path / "b"), "-q"]).exit_code == 0
    assert set(pd.read_csv(tmp_path / "b" / "backtest.csv")["sku"]) == {"n1"}
    alone = _cli(["predict", str(tmp_path / "r"), "--static-csv", str(tmp_path / "known.csv")])
    assert alone.exit_code == 2 and "give those series with --csv" in alone.output
    for method in (f.evaluate, f.backtest):
        with pytest.raises(DataError, match="series 'n1' was not in fit, so its static features are unknown; pass "
                                            "static_df"):
            method(new)
    with pytest.raises(DataError, match=r"^static features have no row for 3 series \(s0, s1, s2\); they hold rows "
                                        r"for 0, 1, 2: give one row per series, keyed by the data's id column "
                                        r".*--static-csv"):
        Forecaster("linear", horizon=2, window=4, stat_exog=["cat"]).fit(
            frame, static_df=static.rename(columns={"sku": "store"}), **columns)


def test_a_panels_backtest_plot_draws_each_series_on_its_own(monkeypatch, tmp_path):
    """Found by a user-path check: backtest.png of three hourly series drew them as one line, which jumped back from
    each series' end to the next one's start. Now one axes per series (the first six), each line forward in time."""
    from tsattn import plots

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: drawn.append(fig) or path)
    hours = pd.date_range("2024-03-01", periods=10, freq="h")
    table = pd.concat([pd.DataFrame({"meter": f"m{k}", "origin": hours - pd.Timedelta("1h"), "timestamp": hours,
                                     "step": 1, "actual": k + np.arange(10.0), "predicted": k + np.arange(10.0),
                                     "naive": k + np.arange(10.0)}) for k in range(8)])
    plots.plot_backtest(table, tmp_path / "b.png", "linear backtest from 50")
    axes = drawn[0].axes
    assert len(axes) == 6 and [ax.get_title(loc="left") for ax in axes] == [f"m{k}" for k in range(6)]
    assert drawn[0]._suptitle.get_text() == "linear backtest from 50 (the first 6 of 8 series)"
    for ax in axes:
        for line in ax.get_lines():
            x = np.asarray(line.get_xdata(), dtype="datetime64[ns]")
            assert (np.diff(x) > np.timedelta64(0)).all()
    plots.plot_backtest(table[table["meter"] == "m0"].drop(columns="meter"), tmp_path / "one.png", "one")
    assert len(drawn[1].axes) == 1 and drawn[1].axes[0].get_title() == "one"
