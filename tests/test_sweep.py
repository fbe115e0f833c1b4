"""An adversarial sweep (issue 39): over 300 bad inputs to the CLI (fit, predict, compare, tune, backtest, with
covariates and tuned settings) and the Python API (Forecaster, fit, predict, cross_validation, backtest), each run
in this process under a time limit. Every case must end cleanly: the CLI exits 2 with an ``Error:`` line and no
traceback and leaves no ``--out`` behind; the API raises one TsattnError line. A case that hangs, shows a
traceback, exits otherwise or writes a half result fails. Sized to run in seconds: every case is refused before
any training (the few that run fit for one epoch on 40 values).
"""

import json
import os
import signal
import zipfile
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import make_series
from tsattn.cli.main import main
from tsattn.errors import TsattnError
from tsattn.forecaster import Forecaster

LIMIT = 60  # seconds a case may take before it counts as a hang (the few that run a tune took 45 s on loaded cores)


class Hang(BaseException):
    """The time limit's alarm: not an Exception, so neither the CLI's error handling (which turns an OSError, such as
    TimeoutError, into one line and exit 2) nor the code under test takes it for an error of its own."""


@contextmanager
def time_limit(seconds=LIMIT):
    def hang(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The inputs the cases start from: a one-series CSV with two covariates, a panel CSV, static features, a
    search space, a best.json, a fitted run and odd files (empty, binary, a directory, a FIFO)."""
    root = tmp_path_factory.mktemp("sweep")
    series = make_series(n=60)
    one = pd.DataFrame({"date": series.index.strftime("%Y-%m-%d"), "demand": series.values.round(3),
                        "price": np.linspace(1, 2, 60).round(3), "promo": (np.arange(60) % 5 == 0).astype(int)})
    one.to_csv(root / "one.csv", index=False)
    panel = pd.concat([pd.DataFrame({"unique_id": uid, "ds": series.index.strftime("%Y-%m-%d")[:50],
                                     "y": (series.values[:50] * (1 + k)).round(3)}) for k, uid in enumerate("abc")])
    panel.to_csv(root / "panel.csv", index=False)
    pd.DataFrame({"unique_id": list("abc"), "size": [1.0, 2.0, 3.0]}).to_csv(root / "static.csv", index=False)
    (root / "space.json").write_text(json.dumps({"units": [2, 3], "learning_rate": {"float": [0.001, 0.01], "log": True}}))
    (root / "best.json").write_text(json.dumps({"model": "simple-rnn", "units": 3, "epochs": 1}))
    (root / "best_seed.json").write_text(json.dumps({"model": "simple-rnn", "units": 3, "epochs": 1, "seed": 4}))
    (root / "empty.csv").write_text("")
    (root / "header.csv").write_text("date,demand\n")
    (root / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (root / "list.json").write_text("[1, 2, 3]")
    (root / "broken.json").write_text('{"units": ')
    (root / "unknown.json").write_text(json.dumps({"model": "simple-rnn", "unitz": 3}))
    (root / "wrongtype.json").write_text(json.dumps({"model": "simple-rnn", "units": "many"}))
    (root / "notzip.tsattn").write_text("not an artefact")
    (root / "folder").mkdir()
    (root / "mine").mkdir()
    (root / "mine" / "thesis.docx").write_text("a user's own file")
    os.mkfifo(root / "pipe")
    run = root / "run"
    result = CliRunner().invoke(main, ["fit", "--model", "simple-rnn", "--csv", str(root / "one.csv"), "--column",
                                       "demand", "--date-column", "date", "--window", "6", "--horizon", "3",
                                       "--epochs", "1", "--set", "units=3", "--out", str(run), "-q"])
    assert result.exit_code == 0, result.output
    return root


ODD_FILES = ["missing.csv", "empty.csv", "header.csv", "binary.csv", "folder", "pipe", "/dev/zero", "list.json",
             "broken.json"]
BAD_INTS = ["0", "-1", "abc", "1.5", "", "99999999999", "nan"]
BAD_FLOATS = ["-1", "0", "abc", "nan", "inf", "1e400", ""]
BAD_SETS = ["units=0", "units=abc", "units=", "=3", "units", "unitz=3", "dropout=2", "learning_rate=-1",
            "learning_rate=nan", "loss=nonsense", "ensemble_losses=[smape,mase]", "dataset_options={n:100}",
            "window=1e9", "preset=nbeats-recipe", "horizon=0", "model=tft", "seed=-3", "epochs=0",
            "batch_size=0", "level=[80,80]", "quantiles=[0.5,1.5]", "lookback=abc"]
BAD_LEVELS = ["0", "100", "150", "-5", "abc", "", "80,95"]


def _fit_base(root, out):
    return ["fit", "--model", "simple-rnn", "--csv", str(root / "one.csv"), "--column", "demand", "--date-column",
            "date", "--window", "6", "--horizon", "3", "--epochs", "1", "--set", "units=3", "--out", str(out), "-q"]


def _replace(args, option, value):
    """``args`` with ``option``'s value replaced (or the option added), or removed when value is None."""
    args = list(args)
    if option in args:
        at = args.index(option)
        del args[at:at + 2]
    if value is not None:
        args += [option, value]
    return args


def cli_cases(root):
    """(name, args, out) for every CLI case; ``out`` is the result folder the case must not leave behind."""
    cases = []

    def add(name, args, out):
        cases.append((name, args, out))

    out = root / "new"
    fit = _fit_base(root, out)
    for value in BAD_INTS:
        for option in ("--window", "--horizon", "--epochs", "--batch-size", "--seed"):
            if option == "--seed" and value in ("0", "99999999999"):
                continue
            add(f"fit {option} {value!r}", _replace(fit, option, value), out)
    for value in BAD_FLOATS:
        add(f"fit --learning-rate {value!r}", _replace(fit, "--learning-rate", value), out)
    for value in BAD_SETS:
        if value not in ("preset=nbeats-recipe", "level=[80,80]"):  # valid: a preset, levels read as a set
            add(f"fit --set {value}", fit + ["--set", value], out)
    for value in BAD_LEVELS:
        add(f"fit --level {value!r}", fit + ["--level", value], out)
    for name in ODD_FILES:
        add(f"fit --csv {name}", _replace(fit, "--csv", str(root / name)), out)
        add(f"fit --config {name}", fit + ["--config", str(root / name)], out)
        add(f"fit --static-csv {name}", fit + ["--stat-exog", "size", "--static-csv", str(root / name)], out)
    for name in ("unknown.json", "wrongtype.json"):
        add(f"fit --config {name}", _replace(fit, "--set", None) + ["--config", str(root / name)], out)
    for option, value in [("--column", "nope"), ("--column", "date"), ("--column", "price,demand"),
                          ("--date-column", "nope"), ("--date-column", "demand"), ("--id-column", "nope"),
                          ("--id-column", "demand"), ("--model", "lstm"), ("--model", ""), ("--preset", "nope"),
                          ("--dataset", "nope"), ("--dataset", "sunspots"), ("--fill", "magic"),
                          ("--baselines", "nope"), ("--baselines", "naive,,theta"), ("--calendar", "moonphase"),
                          ("--out", str(root / "mine")), ("--out", str(root / "one.csv")), ("--out", ""),
                          ("--out", "/proc/forbidden/run")]:
        add(f"fit {option} {value!r}", _replace(fit, option, value), out if option != "--out" else None)
    for option in ("--hist-exog", "--futr-exog", "--stat-exog"):
        for value in ("nope", "demand", "date", "price,price", "", "price,nope"):
            add(f"fit {option} {value!r}", fit + [option, value], out)
    add("fit --hist-exog and --futr-exog the same", fit + ["--hist-exog", "price", "--futr-exog", "price"], out)
    add("fit --static-csv without --stat-exog", fit + ["--static-csv", str(root / "static.csv")], out)
    add("fit --dataset and --csv", fit + ["--dataset", "sunspots"], out)
    add("fit nothing to fit", ["fit", "--model", "simple-rnn", "--out", str(out)], out)
    add("fit --json with a bad horizon", _replace(fit, "--horizon", "0") + ["--json"], out)
    panel = _replace(_replace(_replace(fit, "--csv", str(root / "panel.csv")), "--column", "y"), "--date-column", "ds")
    panel += ["--id-column", "unique_id"]
    for option, value in [("--stat-exog", "nope"), ("--stat-exog", "size"), ("--id-column", "y"),
                          ("--id-column", "ds"), ("--window", "60"), ("--horizon", "60")]:
        add(f"fit panel {option} {value!r}", _replace(panel, option, value), out)

    run = str(root / "run")
    predict = ["predict", "--model-dir", run, "--out", str(root / "forecast.csv"), "-q"]
    for value in ("missing", "folder", "mine", "notzip.tsattn", "one.csv", "pipe"):
        add(f"predict --model-dir {value}", _replace(predict, "--model-dir", str(root / value)), None)
    for value in BAD_INTS:
        add(f"predict --steps {value!r}", predict + ["--steps", value], None)
    for value in BAD_LEVELS:
        add(f"predict --level {value!r}", predict + ["--level", value], None)
    for name in ODD_FILES:
        add(f"predict --csv {name}", predict + ["--csv", str(root / name), "--column", "demand"], None)
        add(f"predict --futr-csv {name}", predict + ["--futr-csv", str(root / name)], None)
    for value in ("", str(root / "mine"), str(root / "one.csv"), str(root / "folder")):
        add(f"predict --out {value!r}", _replace(predict, "--out", value), None)
    add("predict --dataset other", predict + ["--dataset", "sunspots"], None)

    backtest = ["backtest", "--model-dir", run, "--csv", str(root / "one.csv"), "--column", "demand",
                "--date-column", "date", "--out", str(root / "bt"), "-q"]
    for value in ("1800-01-01", "2100-01-01", "not a date", "", "-5", "2004-12-01", "0"):
        add(f"backtest --start {value!r}", backtest + ["--start", value], root / "bt")
    for option in ("--steps", "--stride", "--retrain", "--jobs"):
        for value in BAD_INTS:
            add(f"backtest {option} {value!r}", backtest + ["--start", "2003-01-01", option, value], root / "bt")
    for value in ("missing", "folder", "notzip.tsattn"):
        add(f"backtest --model-dir {value}", _replace(backtest, "--model-dir", str(root / value)), root / "bt")

    compare = ["compare", "--models", "simple-rnn", "--csv", str(root / "one.csv"), "--column", "demand",
               "--date-column", "date", "--window", "6", "--horizon", "3", "--epochs", "1", "--seeds", "0",
               "--out", str(root / "cmp"), "-q"]
    for value in ("", "0,0", "a", "-1", "0-", "0..2", "1e3", "0,,1"):
        add(f"compare --seeds {value!r}", _replace(compare, "--seeds", value), root / "cmp")
    for value in ("", "lstm", "simple-rnn,,nbeats", "simple-rnn,lstm", "naive"):
        add(f"compare --models {value!r}", _replace(compare, "--models", value), root / "cmp")
    for value in ("nope", "sunspots,nope"):
        add(f"compare --datasets {value!r}", compare + ["--datasets", value], root / "cmp")
    for name in ODD_FILES + ["unknown.json", "wrongtype.json"]:
        add(f"compare --tuned {name}", compare + ["--tuned", str(root / name)], root / "cmp")
        add(f"compare --config {name}", compare + ["--config", str(root / name)], root / "cmp")
    add("compare --tuned with a seed and two seeds", _replace(compare, "--seeds", "0,1")
        + ["--tuned", str(root / "best_seed.json")], root / "cmp")
    for value in BAD_INTS:
        add(f"compare --jobs {value!r}", compare + ["--jobs", value], root / "cmp")
        add(f"compare --cpus-per-run {value!r}", compare + ["--cpus-per-run", value], root / "cmp")
    for value in BAD_SETS[:12]:
        add(f"compare --set {value}", compare + ["--set", value], root / "cmp")
    for option in ("--hist-exog", "--futr-exog"):
        for value in ("nope", "demand", "price,price"):
            add(f"compare {option} {value!r}", compare + [option, value], root / "cmp")
    add("compare --engine ray without ray at a bad address", compare + ["--engine", "ray", "--address", "nohost:1",
                                                                        "--ray-timeout", "2"], root / "cmp")

    tune = ["tune", "--model", "simple-rnn", "--csv", str(root / "one.csv"), "--column", "demand",
            "--date-column", "date", "--horizon", "3", "--trials", "1", "--space", str(root / "space.json"),
            "--set", "epochs=1", "--out", str(root / "tune"), "-q"]
    for option in ("--trials", "--windows", "--step", "--jobs", "--horizon"):
        for value in BAD_INTS:
            add(f"tune {option} {value!r}", _replace(tune, option, value), root / "tune")
    for value in BAD_FLOATS:
        add(f"tune --timeout {value!r}", tune + ["--timeout", value], root / "tune")
    for value in ("nope://x", "sqlite:///" + str(root / "nodir" / "s.db"), "sqlite:///" + str(root / "one.csv"),
                  "sqlite:///" + str(root / "folder"), "mysql://u@127.0.0.1:1/db", "postgresql://u@127.0.0.1:1/db",
                  "", "sqlite://", "sqlite:///:memory:", "http://example.com"):
        add(f"tune --storage {value!r}", tune + ["--storage", value], root / "tune")
    for name in ODD_FILES + ["unknown.json", "wrongtype.json"]:
        add(f"tune --space {name}", _replace(tune, "--space", str(root / name)), root / "tune")
    for value in ("model=nbeats", "seed=5", "preset=nbeats-recipe", "units=0", "unitz=3", "epochs=abc",
                  "dataset_options={n:100}", "loss=nonsense"):
        add(f"tune --set {value}", tune + ["--set", value], root / "tune")
    add("tune --seed and --set seed", tune + ["--seed", "3", "--set", "seed=5"], root / "tune")
    add("tune --metric nope", tune + ["--metric", "nope"], root / "tune")
    add("tune --step without --windows", tune + ["--step", "2"], root / "tune")
    add("tune --windows too many", tune + ["--windows", "500"], root / "tune")
    add("tune --model auto", _replace(tune, "--model", "auto"), root / "tune")
    return cases


def _check_cli(name, args, out):
    existed = out is not None and out.exists()
    with time_limit():
        result = CliRunner().invoke(main, args, catch_exceptions=True)
    output = result.output
    assert result.exit_code in (0, 2), f"{name}: exit {result.exit_code}\n{output}\n{result.exc_info}"
    assert "Traceback" not in output, f"{name}: traceback\n{output}"
    if result.exit_code == 2:
        lines = [line for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]
        if "--json" in args:  # the one line is a JSON object on stdout (and the same words on stderr)
            assert json.loads(result.stdout)["exit_code"] == 2, f"{name}: no JSON error\n{output}"
        assert len(errors) == 1, f"{name}: not one error line\n{output}"
        assert len(errors[0]) > 20, f"{name}: an error that says nothing\n{output}"
        if out is not None and not existed:
            assert not out.exists(), f"{name}: refused but {out.name} was written"
    elif out is not None and out.exists() and out.is_dir():  # it ran: clean up for the next case
        import shutil

        shutil.rmtree(out)
    return result.exit_code


def test_the_cli_sweep_ends_cleanly_in_every_case(files):
    cases = cli_cases(files)
    assert len(cases) >= 300
    (files / "mine" / "thesis.docx").write_text("a user's own file")
    codes = {}
    failures = []
    for name, args, out in cases:
        try:
            codes[name] = _check_cli(name, args, out)
        except Hang as exc:
            failures.append(f"{name}: {exc}")
        except AssertionError as exc:
            failures.append(str(exc)[:600])
    assert not failures, f"{len(failures)} of {len(cases)} cases did not end cleanly:\n" + "\n\n".join(failures)
    assert (files / "mine" / "thesis.docx").read_text() == "a user's own file"  # nothing a user owns touched
    assert sum(code == 2 for code in codes.values()) >= 0.9 * len(cases)  # bad input is refused, not run


def _frame():
    series = make_series(n=40)
    return pd.DataFrame({"unique_id": "s", "ds": series.index, "y": series.values, "price": np.linspace(1, 2, 40)})


def api_cases():
    """(name, call) for every API case: each call must return or raise one TsattnError line."""
    frame = _frame()
    tiny = {"window": 6, "units": 3, "epochs": 1}
    cases = []

    def fit_with(name, data, **kwargs):
        cases.append((name, lambda: Forecaster("simple-rnn", horizon=3, **tiny).fit(data, **kwargs)))

    for column in ("unique_id", "ds", "y"):
        fit_with(f"fit without {column}", frame.drop(columns=column))
        fit_with(f"fit with {column} twice", pd.concat([frame, frame[[column]]], axis=1))
        fit_with(f"fit with {column} all missing", frame.assign(**{column: None}))
    fit_with("fit on an empty frame", frame.iloc[:0])
    fit_with("fit on text values", frame.assign(y="x"))
    fit_with("fit on infinite values", frame.assign(y=np.inf))
    fit_with("fit on one row", frame.iloc[:1])
    fit_with("fit on duplicate stamps", pd.concat([frame, frame]))
    fit_with("fit on a list", [1, 2, 3])
    fit_with("fit on None", None)
    fit_with("fit on a string", "data.csv")
    fit_with("fit on a 2-D array", np.ones((10, 3)))
    fit_with("fit on mixed-type ids", pd.concat([frame, frame.assign(unique_id=7, ds=frame["ds"])]).assign(
        unique_id=lambda f: [7] * 40 + ["7"] * 40))
    fit_with("fit with an unknown covariate", frame, hist_exog=["nope"])
    fit_with("fit with the target as covariate", frame, futr_exog=["y"])
    fit_with("fit with static without stat_exog", frame, static_df=pd.DataFrame({"unique_id": ["s"], "k": [1.0]}))
    fit_with("fit with stat_exog without static", frame, stat_exog=["k"])
    fit_with("fit with a bad val_size", frame, val_size=-1)
    fit_with("fit with an unknown keyword", frame, valsize=3)
    for key, value in [("horizon", 0), ("horizon", "3"), ("window", 1.5), ("units", -1), ("epochs", None),
                       ("level", [80, 80]), ("level", 100), ("loss", "nope"), ("h", 0), ("input_size", -2),
                       ("learning_rate", float("nan")), ("dropout", 1.0), ("seed", "a"), ("nonsense", 1)]:
        cases.append((f"Forecaster({key}={value!r})", lambda key=key, value=value: Forecaster(
            "simple-rnn", **{**tiny, "horizon": 3, key: value}).fit(frame)))
    for model in ("lstm", "", None, 3):
        cases.append((f"Forecaster({model!r})", lambda model=model: Forecaster(model).fit(frame)))
    fitted = Forecaster("simple-rnn", horizon=3, **tiny).fit(frame)
    for h in (0, -1, "3", 1.5, 10**9):
        cases.append((f"predict(h={h!r})", lambda h=h: fitted.predict(h=h)))
    for level in ([0], [100], ["80"], [80, 80], 150):
        cases.append((f"predict(level={level!r})", lambda level=level: fitted.predict(level=level)))
    cases.append(("predict(ids=['nope'])", lambda: fitted.predict(ids=["nope"])))
    cases.append(("predict(df=frame without y)", lambda: fitted.predict(df=frame.drop(columns="y"))))
    for kwargs in ({"h": 0}, {"n_windows": 0}, {"n_windows": 1000}, {"step_size": 0}, {"h": 3, "n_windows": "2"},
                   {"h": 50}):
        cases.append((f"cross_validation({kwargs})", lambda kwargs=kwargs: fitted.cross_validation(frame, **kwargs)))
    for kwargs in ({"start": "1800-01-01"}, {"start": "2100-01-01"}, {"start": "x"}, {"stride": 0},
                   {"retrain": -1}):
        cases.append((f"backtest({kwargs})", lambda kwargs=kwargs: fitted.backtest(frame, **kwargs)))
    promo = Forecaster("simple-rnn", horizon=3, futr_exog=["price"], **tiny).fit(frame)
    future = promo.make_future_dataframe().assign(price=1.5)
    for name, futr in [("no futr_df", None), ("futr_df without the covariate", future.drop(columns="price")),
                       ("futr_df with a missing step", future.iloc[:-1]), ("futr_df with NaN", future.assign(price=np.nan)),
                       ("futr_df with text", future.assign(price="x")), ("futr_df with another id", future.assign(
                           unique_id="other")), ("futr_df with the column twice", pd.concat([future, future[["price"]]],
                                                                                             axis=1)),
                       ("futr_df as a list", [1, 2, 3]), ("futr_df of 1e300", future.assign(price=1e300))]:
        cases.append((f"covariate predict: {name}", lambda futr=futr: promo.predict(futr_df=futr)))
    for kwargs in ({"h": 3, "n_windows": 50}, {"h": 0}, {"step_size": -1}, {"h": 3, "refit": "yes"},
                   {"h": 3, "level": [120]}):
        cases.append((f"covariate cross_validation({kwargs})",
                      lambda kwargs=kwargs: promo.cross_validation(frame, **kwargs)))
    cases.append(("covariate cross_validation without the column",
                  lambda: promo.cross_validation(frame.drop(columns="price"), h=3, refit=False)))
    return cases


def test_the_api_sweep_ends_cleanly_in_every_case():
    failures = []
    cases = api_cases()
    for name, call in cases:
        try:
            with time_limit():
                call()
        except TsattnError as exc:
            if "\n" in str(exc) or not str(exc):
                failures.append(f"{name}: not one line: {exc!r}")
        except Hang:
            failures.append(f"{name}: hangs")
        except Exception as exc:  # noqa: BLE001 -- any other exception is what the sweep looks for
            failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not failures, f"{len(failures)} of {len(cases)} API cases:\n" + "\n".join(failures)
