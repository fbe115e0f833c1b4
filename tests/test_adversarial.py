"""Property-based adversarial tests: generated CSVs, settings and tampered artefacts either work or fail
with one TsattnError line; nothing else escapes (no traceback for the CLI, exit code 2)."""

import io
import json
import math
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import make_series
from tsattn.errors import TsattnError
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
    with pytest.raises(TsattnError, match="misses 2 step\\(s\\) of its MS frequency, first 2000-06-01.*--fill"):
        Forecaster("naive").fit(series)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = Forecaster("naive", fill="interpolate").fit(series)
    assert f.predict(1).index[0] == pd.Timestamp("2003-05-01")
