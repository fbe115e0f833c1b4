"""Nothing a user owns is lost: --out ownership, --force, symlinks, staging, SIGTERM / SIGKILL, compare --force."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tsattn.cli.main import main
from tsattn.errors import ConfigError
from tsattn.io import atomic_directory, check_output_directory, clean_stale_staging

FAST = ["--window", "8", "--epochs", "2", "--batch-size", "16", "--set", "units=4", "--quiet"]


def fit_args(csv, out, *extra):
    return ["fit", "--model", "simple-rnn", "--csv", str(csv), "--column", "demand", "--date-column", "date",
            *FAST, "--out", str(out), *extra]


def clean_error(result, pattern):
    import re

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.strip().splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and re.search(pattern, lines[0]), result.output


def no_staging(directory):
    return not [p for p in directory.rglob("*") if ".partial-" in p.name or ".old-" in p.name]


def test_force_never_deletes_files_tsattn_did_not_write(tmp_path, small_csv):
    runner = CliRunner()
    out = tmp_path / "out"
    out.mkdir()
    data = out / "demand.csv"
    data.write_bytes(small_csv.read_bytes())
    clean_error(runner.invoke(main, fit_args(data, out, "--force")), "holds the input .*demand.csv; choose another")
    assert data.read_bytes() == small_csv.read_bytes()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thesis.txt").write_text("mine")
    clean_error(runner.invoke(main, fit_args(small_csv, notes, "--force")),
                "holds files tsattn did not write \\(thesis.txt\\)")
    assert (notes / "thesis.txt").read_text() == "mine"
    run = tmp_path / "run"
    assert runner.invoke(main, fit_args(small_csv, run)).exit_code == 0
    clean_error(runner.invoke(main, fit_args(small_csv, run)), "already holds a run directory.*--force")
    (run / "plots" / "mine.txt").write_text("mine")  # a user's file inside a run directory
    clean_error(runner.invoke(main, fit_args(small_csv, run, "--force")), "did not write \\(plots/mine.txt\\)")
    (run / "plots" / "mine.txt").unlink()
    assert runner.invoke(main, fit_args(small_csv, run, "--force")).exit_code == 0
    assert no_staging(tmp_path)


@pytest.mark.parametrize("out", [".", "", "sub/..", "/"])
def test_out_that_names_the_working_directory_or_above_is_refused(tmp_path, small_csv, out, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    result = CliRunner().invoke(main, fit_args(small_csv, out))
    clean_error(result, "--out .*(empty|current directory)")


def test_symlinked_out_keeps_the_link_and_writes_where_it_points(tmp_path, small_csv):
    target = tmp_path / "elsewhere" / "run"
    target.parent.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    assert CliRunner().invoke(main, fit_args(small_csv, link)).exit_code == 0
    assert link.is_symlink() and (target / "metrics.json").is_file()
    assert no_staging(tmp_path)


def test_predict_out_follows_the_one_rule(tmp_path, small_csv):
    """predict's --out is a directory like every other command's, replaced only with --force and only when
    it holds a forecast tsattn wrote."""
    runner = CliRunner()
    run = tmp_path / "run"
    assert runner.invoke(main, fit_args(small_csv, run)).exit_code == 0
    forecast = tmp_path / "forecast"
    first = runner.invoke(main, ["predict", "--model-dir", str(run), "--steps", "2", "--out", str(forecast)])
    assert first.exit_code == 0, first.output
    assert {p.name for p in forecast.iterdir()} == {"forecast.csv", "forecast.png", "forecast.json"}
    clean_error(runner.invoke(main, ["predict", "--model-dir", str(run), "--out", str(forecast)]),
                "already holds a forecast of `tsattn predict`; choose another directory or pass --force")
    assert runner.invoke(main, ["predict", "--model-dir", str(run), "--out", str(forecast), "--force"]).exit_code == 0
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "budget.csv").write_text("month,amount\n1,2\n")
    clean_error(runner.invoke(main, ["predict", "--model-dir", str(run), "--out", str(mine), "--force"]),
                r"holds files tsattn did not write \(budget.csv\)")
    assert (mine / "budget.csv").read_text() == "month,amount\n1,2\n"
    clean_error(runner.invoke(main, ["predict", "--model-dir", str(run), "--out", str(tmp_path / "f.csv")]),
                "--out is a directory for every command")
    assert not (tmp_path / "f.csv").exists()
    assert no_staging(tmp_path)


def test_save_replaces_only_an_artefact(tmp_path):
    from conftest import make_series
    from tsattn.forecaster import Forecaster

    f = Forecaster("naive").fit(make_series())
    mine = tmp_path / "report.docx"
    mine.write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="not a file tsattn wrote"):
        f.save(mine)
    assert mine.read_bytes() == b"not a model"
    path = f.save(tmp_path / "m.tsattn")
    before = path.read_bytes()
    with pytest.raises(ConfigError, match=r"already exists; choose another name or pass overwrite=True to replace it"):
        f.save(path)  # never silently, even its own earlier file (issue 24)
    assert path.read_bytes() == before
    assert f.save(path, overwrite=True) == path  # its own artefact is replaced when asked
    with pytest.raises(ConfigError, match="not a file tsattn wrote"):
        f.save(mine, overwrite=True)  # and a file it did not write never is


def test_stale_staging_of_a_dead_process_is_removed(tmp_path):
    out = tmp_path / "run"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".run.partial-{pid}-abc"
    stale.mkdir()
    (stale / "metrics.json").write_text("{}")
    live = tmp_path / f".run.partial-{os.getpid()}-xyz"  # this process: still writing, left alone
    live.mkdir()
    assert clean_stale_staging(out) == [stale]
    assert not stale.exists() and live.exists()
    with pytest.raises(RuntimeError):
        with atomic_directory(out) as staging:
            (staging / "x").write_text("x")
            raise RuntimeError("crash")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == [live.name]


def _start_fit(tmp_path, csv, out):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    args = fit_args(csv, out)
    args = [a for a in args if a != "--quiet"]
    args[args.index("--epochs") + 1] = "2000"
    # without early stopping: the fit is still training when the signal comes (epochs on this tiny series are
    # fast enough that early stopping could end the run within the second the test waits)
    args[args.index("--out"):args.index("--out")] = ["--set", "early_stopping=false"]
    return subprocess.Popen([sys.executable, "-m", "tsattn", *args], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL])
def test_killed_fit_leaves_nothing_half_written(tmp_path, small_csv, kill):
    out = tmp_path / "run"
    process = _start_fit(tmp_path, small_csv, out)
    deadline = time.time() + 120
    line = ""
    while time.time() < deadline and "epoch" not in line:
        line = process.stderr.readline()  # the first epoch line: training has started, staging not yet made
    assert "epoch" in line
    time.sleep(1.0)
    process.send_signal(kill)
    _, stderr = process.communicate(timeout=60)
    assert not out.exists()
    if kill == signal.SIGTERM:
        assert process.returncode == 130 and "Interrupted" in stderr and "Traceback" not in stderr
        assert no_staging(tmp_path)
    # a later run cleans whatever a killed one left and writes the run
    assert CliRunner().invoke(main, fit_args(small_csv, out)).exit_code == 0
    assert no_staging(tmp_path)


def test_killed_while_writing_the_run_directory(tmp_path, small_csv, monkeypatch):
    # a crash (or SIGTERM, which now raises KeyboardInterrupt) inside the staging block keeps --out intact
    from tsattn import runs

    runner = CliRunner()
    out = tmp_path / "run"
    assert runner.invoke(main, fit_args(small_csv, out)).exit_code == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs, "write_plots", interrupted)
    result = runner.invoke(main, fit_args(small_csv, out, "--force"))
    assert result.exit_code == 130 and "Interrupted" in result.output
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert no_staging(tmp_path)


def test_compare_out_checks_and_interrupted_force(tmp_path, small_csv):
    from tsattn.compare import compare

    options = dict(models=["simple-rnn"], csv=[{"path": str(small_csv), "column": "demand", "date_column": "date",
                                                "name": "demand"}], window=8, epochs=1, settings={"units": 4},
                   echo=lambda line: None)
    report = tmp_path / "report"
    compare(seeds=[0], out=report, **options)
    # an interrupted --force with a new specification: the old spec is gone first, then its results
    (report / "comparison.json").unlink()
    with pytest.raises(ConfigError, match="files of an interrupted comparison; pass --force"):
        compare(seeds=[1], out=report, **options)
    compare(seeds=[1], out=report, force=True, **options)
    spec = json.loads((report / "comparison.json").read_text())["spec"]
    assert spec["seeds"] == [1] and [p.name for p in (report / "runs").iterdir()] == ["demand__simple-rnn__seed1.json"]
    # a record of the wrong shape (valid JSON) or not UTF-8 is run again, never trusted
    record = report / "runs" / "demand__simple-rnn__seed1.json"
    record.write_text(json.dumps({"config": 5}))
    lines = []
    compare(seeds=[1], out=report, **{**options, "echo": lines.append})
    assert any(line.startswith("[1/1]") for line in lines)
    record.write_bytes(b"\xff\xfe\x00garbage")
    compare(seeds=[1], out=report, **options)
    # a file as --out, and bad data: one line, nothing created
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a directory"):
        compare(seeds=[0], out=blocker, **options)
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"date": ["2000-01-01"] * 3, "demand": [1, 2, 3]}).to_csv(bad, index=False)
    from tsattn.errors import TsattnError

    with pytest.raises(TsattnError):
        compare(seeds=[0], out=tmp_path / "new", **{**options, "csv": [{"path": str(bad), "column": "demand",
                                                                         "date_column": "date"}]})
    assert not (tmp_path / "new").exists()


def test_check_output_directory_refuses_foreign_and_missing_key(tmp_path):
    out = tmp_path / "looks"
    (out / "plots").mkdir(parents=True)
    (out / "plots" / "forecast.png").write_bytes(b"png")
    with pytest.raises(ConfigError, match="is not a run directory of `tsattn fit` \\(no tsattn.json\\)"):
        check_output_directory(out, force=True)


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL])
def test_killed_compare_resumes_with_nothing_lost(tmp_path, small_csv, kill):
    out = tmp_path / "report"
    args = ["compare", "--models", "simple-rnn", "--csv", str(small_csv), "--column", "demand", "--date-column",
            "date", "--seeds", "0,1,2", "--window", "8", "--epochs", "300", "--set", "units=4", "--set", "patience=300",
            "--out", str(out)]
    process = subprocess.Popen([sys.executable, "-m", "tsattn", *args], stderr=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline, line = time.time() + 180, ""
    while time.time() < deadline and not line.startswith("[1/3]"):
        line = process.stderr.readline()  # the first run is recorded; the second is training
    assert line.startswith("[1/3]")
    time.sleep(1.0)
    process.send_signal(kill)
    _, stderr = process.communicate(timeout=60)
    if kill == signal.SIGTERM:
        assert process.returncode == 130 and "Traceback" not in stderr
    records = sorted(p.name for p in (out / "runs").iterdir())
    assert len(records) == 1 and records[0].endswith("__simple-rnn__seed0.json")  # finished run kept
    assert no_staging(tmp_path)
    lines = []
    from tsattn.compare import compare

    class Resumed(Exception):
        pass

    def echo(line):  # the first line says what resumes; the two runs left need not train again here
        lines.append(line)
        raise Resumed

    with pytest.raises(Resumed):
        compare(models=["simple-rnn"], csv=[{"path": str(small_csv), "column": "demand", "date_column": "date"}],
                seeds=[0, 1, 2], window=8, epochs=300, settings={"units": 4, "patience": 300}, out=out, echo=echo)
    assert lines[0].startswith("resuming: 1 of 3 runs already done")
    assert len(list((out / "runs").iterdir())) == 1 and no_staging(tmp_path)


def test_a_date_axis_of_a_few_days_labels_each_tick_briefly():
    """Twenty daily values: ticks read "03", "05", ... under one "2022-Mar" offset, not a full date each (they ran
    together on narrow figures)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from tsattn import plots

    figure = Figure(figsize=(4, 3))
    ax = figure.subplots()
    ax.plot(pd.date_range("2022-03-01", periods=20, freq="D"), np.arange(20.0))
    FigureCanvasAgg(plots.concise_dates(figure)).draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and max(map(len, labels)) <= 5 and ax.xaxis.get_offset_text().get_text() == "2022-Mar", labels


def test_a_loss_curve_within_one_decade_reads_as_plain_numbers():
    """Issue 38: the loss chart's axis read "1.55x10^1 ... 1.2x10^1"."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from tsattn import plots

    history = pd.DataFrame({"loss": np.geomspace(15.5, 12.0, 30), "val_loss": np.geomspace(16.0, 12.5, 30)},
                           index=pd.RangeIndex(1, 31))
    figure = plots.loss_figure(history, "loss")
    FigureCanvasAgg(figure).draw()
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels(minor=True) if t.get_text()]
    assert labels and all(text.replace(".", "").isdigit() for text in labels), labels  # 12, 13, ... not 1.2x10^1


def test_a_test_part_of_one_window_is_drawn_as_its_whole_path(tmp_path):
    """A single-series run whose test part is one horizon (BJsales: the last 12 values from one origin) drew one point
    and no line, titled "one-step forecasts"; it is drawn as the forecast's every step."""
    from tsattn import plots
    from tsattn.evaluation import PartForecast

    series = pd.Series(np.arange(20.0), index=pd.RangeIndex(20))
    path = np.array([[16.5, 17.5, 18.5, 19.5]])
    one = PartForecast(pd.Index([16]), path, path, path, path, {"naive": np.full((1, 4), 15.0)}, np.zeros(1, int))
    index, values = plots.drawn(series, one, one.predicted)
    assert list(index) == [16, 17, 18, 19] and values.tolist() == [16.5, 17.5, 18.5, 19.5]
    assert plots.forecast_kind({"test": one}) == "the 4-step forecast"
    many = PartForecast(pd.Index([14, 15, 16]), np.ones((3, 2)), np.ones((3, 2)) * 2, np.ones((3, 2)),
                        np.ones((3, 2)), {}, np.zeros(3, int))
    index, values = plots.drawn(series, many, many.predicted)
    assert list(index) == [14, 15, 16] and values.tolist() == [2, 2, 2]  # several windows: their first steps
    assert plots.forecast_kind({"test": many}) == "one-step forecasts"
    plots.plot_forecast(series, {"test": one}, tmp_path / "forecast.png", "t", test_start=16)
    assert (tmp_path / "forecast.png").stat().st_size > 0
