"""What the CLI prints: --json documents, --quiet silence, consistent --out / --steps, completable names."""

import json
import shlex

import pandas as pd
import pytest
from click.testing import CliRunner

from tsattn.cli.main import main

FAST = ["--window", "8", "--epochs", "2", "--batch-size", "16", "--set", "units=4"]


def fit_args(csv, out, *extra):
    return ["fit", "--model", "attention-rnn", "--csv", str(csv), "--column", "demand", "--date-column", "date",
            *FAST, "--out", str(out), *extra]


def runner():
    try:  # click >= 8.2 keeps stderr apart by default; older releases need mix_stderr=False
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def test_models_and_datasets_json():
    models = runner().invoke(main, ["models", "--json"])
    assert models.exit_code == 0, models.output
    listed = json.loads(models.stdout)
    assert [m["name"] for m in listed] == ["simple-rnn", "attention-rnn", "transformer", "patch-transformer", "tft", "nbeats"]
    assert listed[2]["params"]["num_heads"]["default"] == 4 and listed[1]["attention"] == "rnn"
    datasets = runner().invoke(main, ["datasets", "--json"])
    assert datasets.exit_code == 0, datasets.output
    rows = {row["name"]: row for row in json.loads(datasets.stdout)}
    assert rows["sunspots"]["series"] == 1 and rows["sunspots"]["horizon"] is None
    assert runner().invoke(main, ["models", "--quiet"]).stdout == ""
    assert runner().invoke(main, ["datasets", "-q"]).stdout == ""


def test_fit_predict_backtest_json_and_quiet(tmp_path, small_csv):
    fitted = runner().invoke(main, fit_args(small_csv, tmp_path / "run", "--json"))
    assert fitted.exit_code == 0, fitted.output
    summary = json.loads(fitted.stdout)  # stdout is exactly one JSON document
    assert summary["model"] == "attention-rnn" and summary["epochs_run"] >= 1
    assert summary["metrics"]["test"]["model"]["rmse"] > 0 and "naive" in summary["metrics"]["test"]
    assert "metrics.json" in summary["files"] and summary["verdict"].startswith("Test RMSE")
    assert "Training attention-rnn" in fitted.stderr  # progress stays on stderr

    quiet = runner().invoke(main, fit_args(small_csv, tmp_path / "quiet", "--quiet"))
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""
    assert (tmp_path / "quiet" / "metrics.json").is_file()

    predicted = runner().invoke(main, ["predict", "--model-dir", str(tmp_path / "run"), "--steps", "3", "--json"])
    assert predicted.exit_code == 0, predicted.output
    rows = json.loads(predicted.stdout)
    assert len(rows) == 3 and list(rows[0]) == ["unique_id", "date", "attention-rnn"]  # a panel of one's columns
    assert pd.Timestamp(rows[0]["date"]) > pd.Timestamp("2013-01-01") and rows[0]["unique_id"] == "demand"
    written = runner().invoke(main, ["predict", str(tmp_path / "run"), "--steps", "3", "--out", str(tmp_path / "fc")])
    assert written.exit_code == 0, written.output  # the rows as forecast.csv writes them: monthly dates, no 00:00:00
    assert [row["date"] for row in rows] == pd.read_csv(tmp_path / "fc" / "forecast.csv")["date"].tolist()
    assert len(rows[0]["date"]) == 10

    backtest = runner().invoke(main, ["backtest", "--model-dir", str(tmp_path / "run"), "--csv", str(small_csv),
                                      "--column", "demand", "--date-column", "date", "--steps", "2",
                                      "--out", str(tmp_path / "bt"), "--json"])
    assert backtest.exit_code == 0, backtest.output
    document = json.loads(backtest.stdout)
    assert document["steps"] == 2 and len(document["per_step"]) == 2 and document["origins"] > 0
    assert "optimistic" in backtest.stderr  # the warning is not lost, and not in the JSON
    written = pd.read_csv(tmp_path / "bt" / "backtest.csv")  # a panel of one, keyed as predictions.csv and forecast.csv
    assert list(written.columns[:4]) == ["unique_id", "origin", "date", "step"]
    assert set(written["unique_id"]) == {"demand"}

    unnamed = runner().invoke(main, ["backtest", str(tmp_path / "run"), "--out", str(tmp_path / "bt0")])
    assert unnamed.exit_code == 2 and "Traceback" not in unnamed.output  # no series: the one the model was fitted on
    assert f"(the model was fitted on --csv {shlex.quote(str(small_csv))} --column demand --date-column date)" in \
        unnamed.output, unnamed.output
    refits = runner().invoke(main, ["backtest", "--model-dir", str(tmp_path / "run"), "--csv", str(small_csv),
                                    "--column", "demand", "--date-column", "date", "--start", "0.9", "--retrain",
                                    "8", "--epochs", "1", "--out", str(tmp_path / "bt2")])
    assert refits.exit_code == 0, refits.output
    header = next(line for line in refits.stdout.splitlines() if "RMSE" in line)  # one series: fit's columns
    assert header.split() == ["RMSE", "MAE", "MASE"], refits.stdout
    progress = [line for line in refits.stderr.splitlines() if line.startswith("backtest: refit ")]
    assert progress and progress[0].startswith("backtest: refit 1 of ") and ", ETA " in progress[0]
    words = progress[-1].split()  # the last line: "backtest: refit 3 of 3 done (origin ...)"
    assert words[2] == words[4] and len(progress) == int(words[4])


def test_consistent_names(tmp_path, small_csv):
    """backtest and predict both say --steps for how far to forecast; --horizon is fit's (what the model
    forecasts directly), so backtest refuses it in one line."""
    wrong = runner().invoke(main, ["backtest", "--model-dir", str(tmp_path), "--horizon", "2", "--out",
                                   str(tmp_path / "x")])
    assert wrong.exit_code == 2 and "No such option" in wrong.output and "--horizon" in wrong.output
    help_text = runner().invoke(main, ["backtest", "--help"]).output
    assert "--steps" in help_text and "as in predict" in help_text


def test_model_choice_is_checked_and_completed(tmp_path, small_csv):
    args = fit_args(small_csv, tmp_path / "run")
    args[args.index("attention-rnn")] = "transfomer"
    result = runner().invoke(main, args)
    assert result.exit_code == 2 and "transformer" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()

    from click.shell_completion import ShellComplete

    def complete(words, incomplete):
        return [item.value for item in ShellComplete(main, {}, "tsattn", "_TSATTN_COMPLETE").get_completions(
            words, incomplete)]

    assert complete(["fit", "--model"], "att") == ["attention-rnn"]
    assert complete(["compare", "--models"], "simple-rnn,tr") == ["simple-rnn,transformer"]
    assert "m3-monthly" in complete(["fit", "--dataset"], "m3")


def test_a_panels_forecasts_on_screen_read_without_e_notation_in_one_aligned_table(tmp_path):
    """Series of very different sizes: pandas alone printed 4.387883e+04 beside 9.758e+02; the screen shows six
    significant digits (the --json rows keep every digit), and the first and last rows line up as one table."""
    import re

    import numpy as np

    steps = np.arange(40)
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": pd.date_range("2000-01-01", periods=40, freq="MS"),
                                     "y": size * (1 + 0.1 * np.sin(steps / 3) + 0.01 * steps)})
                       for name, size in (("big", 1_708_896.2), ("mid", 43_878.83), ("small", 0.0123))])
    frame.to_csv(tmp_path / "sizes.csv", index=False)
    fitted = runner().invoke(main, ["fit", "--model", "naive", "--csv", str(tmp_path / "sizes.csv"), "--column", "y",
                                    "--date-column", "ds", "--id-column", "unique_id", "--horizon", "4",
                                    "--out", str(tmp_path / "run"), "--quiet"])
    assert fitted.exit_code == 0, fitted.output
    shown = runner().invoke(main, ["predict", "--model-dir", str(tmp_path / "run"), "--steps", "30"])
    rows = json.loads(runner().invoke(main, ["predict", "--model-dir", str(tmp_path / "run"), "--steps", "30",
                                             "--json"]).stdout)
    assert shown.exit_code == 0 and "e+" not in shown.stdout and "e-" not in shown.stdout, shown.stdout
    lines = shown.stdout.splitlines()
    assert lines[31] == "... 50 more rows ..." and len(lines) == 1 + 30 + 1 + 10
    table = lines[:31] + lines[32:]
    assert len({len(line) for line in table}) == 1, shown.stdout  # right-aligned columns: every row ends alike
    printed = {(row.split()[0], row.split()[1]): float(row.split()[2].replace(",", "")) for row in table[1:]}
    for row in rows:
        key = (row["unique_id"], row["ds"][:10])
        if key in printed:
            assert printed[key] == pytest.approx(row["naive"], rel=5e-6)
    assert re.search(r"\bsmall\b.*\s0\.0\d+$", table[-1])  # a small series keeps its digits beside the big one's
