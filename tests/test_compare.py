import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tsattn.cli.main import main
from tsattn.compare import build_spec, compare, load_grid
from tsattn.report import summarise
from tsattn.errors import ConfigError

FAST = {"units": 4, "d_model": 8, "num_heads": 2, "ff_dim": 8, "num_blocks": 1, "batch_size": 32}


def run(out, **kwargs):
    lines = []
    options = dict(models=["simple-rnn", "attention-rnn", "transformer"], datasets=None,
                   csv=[{"path": kwargs.pop("csv"), "column": "demand", "date_column": "date", "name": "demand"}],
                   seeds=[0, 1], window=8, epochs=2, settings=dict(FAST), out=out, echo=lines.append)
    options.update(kwargs)
    return compare(**options), lines


def test_compare_writes_report_and_resumes(tmp_path, small_csv):
    out = tmp_path / "report"
    results, lines = run(out, csv=small_csv)
    assert len([line for line in lines if line.startswith("[")]) == 6
    assert "ETA" in lines[-1]
    runs = results[results["seed"].notna()]
    assert len(runs) == 6 and set(results["model"]) == {"simple-rnn", "attention-rnn", "transformer", "naive",
                                                         "seasonal-naive", "linear"}
    for column in ("parameters", "epochs_run", "fit_seconds", "predict_seconds", "validation_rmse", "test_rmse",
                   "test_mase", "test_scaled_rmse", "validation_scaled_mse"):
        assert runs[column].notna().all(), column
    for name in ("results.csv", "summary.csv", "report.md", "report.html", "comparison.json"):
        assert (out / name).is_file(), name
    page = (out / "report.html").read_text()
    # bars, overlay, loss, attention heatmap, head maps: each at full size and at a phone's width (<picture>)
    assert page.count("data:image/png;base64,") == 10 and page.count("<source media='(max-width: 600px)'") == 5
    for section in ("<h2>demand</h2>", "Test RMSE by model", "one-step forecasts of every model", "Loss curves",
                    "attention weights over the test windows", "attention of each head", "Verdict.",
                    "class=\"best\"", "naive"):
        assert section in page, section
    assert "src='figures" not in page and "http" not in page.replace("http-equiv", "")  # self-contained
    spec = json.loads((out / "comparison.json").read_text())["spec"]
    assert spec["seeds"] == [0, 1] and spec["models"][0] == "simple-rnn"
    record = json.loads((out / "runs" / "demand__simple-rnn__seed0.json").read_text())
    assert record["run_seconds"] >= record["fit_seconds"] > 0 and record["statistical"] == []

    # resume: delete one run record; only that run is trained again and the table is identical
    record = next((out / "runs").glob("demand__attention-rnn__seed1.json"))
    record.unlink()
    again, lines = run(out, csv=small_csv)
    assert lines[0].startswith("resuming: 5 of 6 runs already done")
    assert len([line for line in lines if line.startswith("[")]) == 1
    pd.testing.assert_frame_equal(again.drop(columns=["fit_seconds", "predict_seconds"]),
                                  results.drop(columns=["fit_seconds", "predict_seconds"]))

    # a record that other tsattn code made (an edited checkout, another version) is run again, said in a line
    path = out / "runs" / "demand__transformer__seed0.json"
    made = json.loads(path.read_text())
    assert made["code"] == json.loads((out / "comparison.json").read_text())["code"]
    path.write_text(json.dumps({**made, "code": "0123456789abcdef"}))
    again, lines = run(out, csv=small_csv)
    assert lines[0].startswith("resuming: 5 of 6 runs already done") and any(
        line.startswith("running again 1 finished run(s)") and "other tsattn code made" in line for line in lines)
    assert len([line for line in lines if line.startswith("[")]) == 1
    assert json.loads(path.read_text())["code"] == made["code"]
    pd.testing.assert_frame_equal(again.drop(columns=["fit_seconds", "predict_seconds"]),
                                  results.drop(columns=["fit_seconds", "predict_seconds"]))

    with pytest.raises(ConfigError, match="holds a different comparison; choose another directory or pass --force"):
        run(out, csv=small_csv, seeds=[0, 1, 2])
    assert not list(out.glob(".*partial*"))


def test_data_given_in_python_compares_as_its_csv_does_and_resumes_only_on_the_same_data(tmp_path, small_csv):
    """tsattn.compare(data=...) takes pandas data as Forecaster.fit does (a Series, a long frame with its own column
    names, a dict of datasets): the same runs as the CSV of the same values, a resume of the same data, and a
    refusal naming the data when it differs."""
    series = pd.read_csv(small_csv, parse_dates=["date"]).set_index("date")["demand"]
    options = dict(models=["simple-rnn"], seeds=[0], window=8, epochs=2, settings={"units": 4}, echo=lambda line: None)
    by_csv = compare(csv=[{"path": small_csv, "column": "demand", "date_column": "date", "name": "demand"}],
                     **options)
    in_python = compare(data=series, out=tmp_path / "r", **options)
    assert list(in_python["dataset"].unique()) == ["demand"]  # named after the Series
    pd.testing.assert_frame_equal(by_csv.filter(like="test_"), in_python.filter(like="test_"))
    lines = []
    compare(data=series, out=tmp_path / "r", **{**options, "echo": lines.append})
    assert lines[0].startswith("resuming: 1 of 1 runs already done")
    with pytest.raises(ConfigError, match="holds a comparison of other data"):
        compare(data=series + 1, out=tmp_path / "r", **options)
    long = series.rename_axis("week").reset_index(name="units").assign(store="s1")
    both = compare(data={"shop": long, "demand": series.to_frame()}, id_column="store", time_column="week",
                   value_column="units", **options)
    assert list(both["dataset"].unique()) == ["shop", "demand"]
    shop = both[both["dataset"] == "shop"].filter(like="test_").reset_index(drop=True)
    pd.testing.assert_frame_equal(shop, in_python.filter(like="test_").reset_index(drop=True))
    # static features of data given in Python: static_df, keyed by its id column; a dict of Series is one panel
    static = pd.DataFrame({"store": ["s1", "s2"], "size": [1.0, 2.0]})
    panel = pd.concat([long, long.assign(store="s2", units=long["units"] * 2)], ignore_index=True)
    ran = compare(data=panel, id_column="store", time_column="week", value_column="units", static_df=static,
                  **{**options, "settings": {"units": 4, "stat_exog": ["size"]}})
    assert set(ran["series"]) == {2}
    assert list(compare(data={"a": series, "b": series * 2}, **options)["dataset"].unique()) == ["data"]
    with pytest.raises(ConfigError, match="static_df is for data given in Python"):
        compare(static_df=static, **options)
    with pytest.raises(ConfigError, match=r"data takes pandas data .* not a file name; got '.*demand.csv': for a CSV "
                                          r"file pass csv=\[\{\"path\""):
        compare(data=str(small_csv), **options)


def test_summary_statistics():
    results = pd.DataFrame({
        "dataset": ["d"] * 5, "model": ["a", "a", "b", "b", "naive"], "seed": [0, 1, 0, 1, None],
        "parameters": [10, 10, 20, 20, 0], "epochs_run": [5, 7, 3, 3, 0], "fit_seconds": [1.0, 3.0, 2.0, 2.0, 0.0],
        "test_rmse": [2.0, 4.0, 1.0, 2.0, 5.0], "test_mae": [1.0] * 5, "test_mase": [1.0] * 5,
        "test_smape": [1.0] * 5, "validation_rmse": [1.0] * 5,
    })
    summary = summarise(results).set_index("model")
    assert summary.loc["a", "test_rmse_mean"] == 3.0
    assert summary.loc["a", "test_rmse_std"] == pytest.approx(np.sqrt(2.0))  # sample std over seeds
    assert summary.loc["b", "rank_test_rmse"] == 1 and summary.loc["naive", "rank_test_rmse"] == 3
    assert summary.loc["b", "ratio_to_naive"] == pytest.approx(1.5 / 5.0)
    assert summary.loc["a", "seeds"] == 2 and summary.loc["naive", "seeds"] == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"models": []}, "no models to compare"),
    ({"models": ["simple-rnn", "gpt"]}, "unknown model\\(s\\) gpt"),
    ({"models": ["linear", "nbeats"]}, "^linear is a baseline, not a network to compare: every comparison scores "
                                       "naive, seasonal-naive and linear beside each network.*--baselines theta"),
    ({"datasets": ["sunspot"]}, "unknown dataset 'sunspot'"),
    ({"seeds": [0, 0]}, "duplicate seeds"),
    ({"seeds": []}, "no seeds"),
    ({"settings": {"colour": 3}}, "unknown setting 'colour'"),
    ({"settings": {"transformer.units": 3}}, "transformer has no parameter 'units'"),
    ({"settings": {"units": 0}}, "units must be an integer in 1..4096; got 0"),
])
def test_spec_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        build_spec(**kwargs)


def test_settings_routing():
    spec = build_spec(models=["simple-rnn", "transformer"], settings={"units": 8, "simple-rnn.cell": "gru",
                                                                       "epochs": 4, "model.dropout": 0.2})
    from tsattn.compare import _run_config

    rnn = _run_config(spec, spec.sources[0], "simple-rnn", 0)
    transformer = _run_config(spec, spec.sources[0], "transformer", 0)
    assert rnn.model_params == {"units": 8, "cell": "gru", "dropout": 0.2} and rnn.epochs == 4
    assert transformer.model_params == {"dropout": 0.2} and transformer.epochs == 4


def test_grid_file_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("models = [simple-rnn\n")
    with pytest.raises(ConfigError, match="does not parse as TOML"):
        load_grid(bad)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('models = ["simple-rnn"]\nlayers = 3\n')
    with pytest.raises(ConfigError, match="unknown key\\(s\\) layers"):
        load_grid(unknown)
    with pytest.raises(ConfigError, match="does not exist"):
        load_grid(tmp_path / "none.toml")


def test_cli_compare(tmp_path, small_csv):
    grid = tmp_path / "grid.toml"
    grid.write_text('models = ["simple-rnn"]\nseeds = [0]\nwindow = 8\nepochs = 1\n[set]\nunits = 3\n')
    runner = CliRunner()
    out = tmp_path / "cmp"
    # a file of dates and values: no --column nor --date-column, as tsattn fit reads it; named by the file
    result = runner.invoke(main, ["compare", "--config", str(grid), "--csv", str(small_csv), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(out / "summary.csv")["dataset"]) == {"demand"}
    assert "simple-rnn" in result.output and (out / "report.html").exists()
    verdict = (out / "report.md").read_text().split("**Verdict.**")[1].strip().splitlines()[0].lstrip("- ")
    assert "Verdict:" in result.output and verdict.replace("**", "") in result.output  # the report's, on screen
    lines = result.output.splitlines()
    header = next(line for line in lines if line.startswith("model "))  # the report's labels, not summary.csv's names
    assert "test RMSE" in header and "ratio to naive" in header and "headline" not in header and "_" not in header
    assert header.split()[:3] == ["model", "rank", "test"]  # ranked on: the headline right after the rank
    naive_row = next(line for line in lines if line.startswith("naive "))
    assert naive_row.split()[1].isdigit()  # its rank
    seeds_at = header.index("seeds")  # a baseline has no seeds: blank, not 0
    assert naive_row[seeds_at:seeds_at + len("seeds")].strip() == ""
    assert "ranked on test RMSE" in result.output
    for args, message in [(["--models", ""], "--models is empty"), (["--seeds", "0,0"], "duplicate seeds"),
                          (["--seeds", "a"], "comma-separated integers"), (["--models", "foo"], "unknown model")]:
        failed = runner.invoke(main, ["compare", *args, "--out", str(tmp_path / "x")])
        assert failed.exit_code == 2 and message in failed.output and "Traceback" not in failed.output
    different = runner.invoke(main, ["compare", "--config", str(grid), "--seeds", "1", "--csv", str(small_csv),
                                     "--column", "demand", "--date-column", "date", "--out", str(out)])
    assert different.exit_code == 2 and "different comparison" in different.output


def test_parallel_jobs_match_sequential(tmp_path, small_csv):
    kwargs = dict(models=["simple-rnn"], datasets=None, seeds=[0, 1], window=8, epochs=2, settings={"units": 4},
                  csv=[{"path": small_csv, "column": "demand", "date_column": "date", "name": "demand"}],
                  echo=lambda line: None)
    sequential = compare(out=tmp_path / "one", jobs=1, **kwargs)
    parallel = compare(out=tmp_path / "two", jobs=2, **kwargs)
    np.testing.assert_allclose(parallel["test_rmse"].astype(float), sequential["test_rmse"].astype(float), rtol=1e-4)
    assert len(list((tmp_path / "two" / "runs").glob("*.json"))) == 2


def test_tsattn_compare_is_callable_whatever_was_imported_first():
    import subprocess
    import sys

    code = "import tsattn, tsattn.tuning; import tsattn.compare as m; print(callable(tsattn.compare), m.compare.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "compare"], done.stderr


def test_a_one_window_test_part_is_overlaid_as_its_whole_path(tmp_path, small_csv):
    """A single series whose test part is one horizon (a hold-out of 4: one origin) kept one point per model in the
    report's overlay (each record held first steps only): the records hold the whole 4-step path, as forecast.png
    draws it, and the report names it."""
    out = tmp_path / "report"
    run(out, csv=small_csv, models=["simple-rnn"], seeds=[0], epochs=1,
        settings={"units": 4, "batch_size": 32, "horizon": 4, "split": "holdout", "holdout": 4, "level": [80]})
    record = json.loads(next((out / "runs").glob("*.json")).read_text())
    test = record["test"]
    assert test["kind"] == "the 4-step forecast" and len(test["index"]) == 4
    assert len(test["predicted"]) == len(test["actual"]) == len(test["baselines"]["naive"]) == 4
    assert [len(bound) for bound in test["intervals"]["80"]] == [4, 4]
    frame = pd.read_csv(small_csv)
    assert test["actual"] == pytest.approx(frame["demand"].tail(4).tolist())
    assert "the 4-step forecast of every model" in (out / "report.html").read_text()


def test_a_panels_short_series_is_named_in_the_report(tmp_path):
    """compare on a panel with a series too short for a training window: its record names it, the report says it is
    forecast but not scored."""
    rng = np.random.default_rng(0)
    rows = [pd.DataFrame({"unique_id": uid, "ds": pd.date_range("2001-01-01", periods=n, freq="MS"),
                          "y": 10 + rng.normal(size=n).cumsum()}) for uid, n in (("long1", 40), ("long2", 40),
                                                                                  ("tiny", 3))]
    path = tmp_path / "panel.csv"
    pd.concat(rows).to_csv(path, index=False)
    with pytest.warns(UserWarning, match="left out of training and scoring"):
        source = {"path": str(path), "name": "shops", "id_column": "unique_id", "date_column": "ds", "column": "y"}
        compare(models=["simple-rnn"], datasets=None, csv=[source], seeds=[0], window=6, horizon=2, epochs=1,
                settings={"units": 2}, out=tmp_path / "r", echo=lambda line: None)
    record = json.loads(next((tmp_path / "r" / "runs").glob("*.json")).read_text())
    assert record["series_left_out"] == ["tiny"]
    assert "3 series, of which 1 is too short for a test window (forecast, not scored: tiny)" in \
        (tmp_path / "r" / "report.md").read_text()


def test_cli_compare_fills_gaps_and_ranks_a_baseline_with_no_forecast_last(tmp_path):
    """Found by a user-path check on weekly series of 30-50 values with a gap: `tsattn compare` had no --fill (the
    error about the gap advised it), and with `--set fill=interpolate` it stopped with a traceback ranking
    seasonal-naive, which has no forecast (no 52-week season before the test part); its verdict said "better than
    seasonal naive on 0 of 0 series"."""
    rng = np.random.default_rng(0)
    frame = pd.concat([pd.DataFrame({"store": f"s{k}", "week": pd.date_range("2020-01-06", periods=30 + 10 * k,
                                                                             freq="W-MON"),
                                     "sales": 100 + 10 * np.sin(np.arange(30 + 10 * k) / 3)
                                     + rng.normal(0, 2, 30 + 10 * k)}) for k in range(3)], ignore_index=True)
    frame.loc[5, "sales"] = np.nan
    path = tmp_path / "gap.csv"
    frame.to_csv(path, index=False)
    args = ["compare", "--models", "simple-rnn", "--csv", str(path), "--column", "sales", "--id-column", "store",
            "--date-column", "week", "--horizon", "4", "--seeds", "0", "--epochs", "1", "--set", "units=2"]
    refused = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "refused")])
    assert refused.exit_code == 2 and "--fill interpolate" in refused.output and "Traceback" not in refused.output
    result = CliRunner().invoke(main, [*args, "--fill", "interpolate", "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(tmp_path / "cmp" / "summary.csv")
    seasonal = summary.set_index("model").loc["seasonal-naive"]
    assert np.isnan(seasonal["headline_mean"]) and seasonal["rank"] == len(summary)  # no score: last
    assert "seasonal naive on 0 of 0" not in result.output and "better than naive on " in result.output
    assert re.search(rf"Best network: simple-rnn, rank \d of {len(summary) - 1},", result.output) or \
        "Best model on test sMAPE (mean over series): **simple-rnn**" in (tmp_path / "cmp" / "report.md").read_text()
    assert next(line for line in result.output.splitlines() if line.startswith("seasonal-naive")).split() == \
        ["seasonal-naive", str(len(summary)), "n/a"]


def test_a_run_line_says_when_the_run_took_much_longer_than_its_fit():
    """Found by a user-path check: with --futr-exog on hourly meters a comparison's first line said "3 epochs, 2.5s"
    after 71 s, the rest spent scoring beside statsforecast's AutoARIMA (added for the covariates, season 24)."""
    from tsattn.compare import slow_scoring

    record = {"fit_seconds": 2.5, "run_seconds": 71.2, "statistical": ["arima"]}
    assert slow_scoring(record) == " (the run 71s, scored beside statsforecast's arima)"
    assert slow_scoring({**record, "statistical": []}) == " (the run 71s)"
    assert slow_scoring({**record, "run_seconds": 7.0}) == ""
    assert slow_scoring({"fit_seconds": 2.5}) == ""  # a record saved before runs were timed
